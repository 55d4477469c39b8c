-- The companies as of the latest dimension snapshot.
select
    cast(company_id as bigint) as company_id,
    cast(company_name as varchar) as company_name,
    cast(website as varchar) as website,
    cast(domain as varchar) as domain,
    cast(importance as double) as importance,
    cast(tier as integer) as tier,
    cast(onboarding_status as varchar) as onboarding_status,
    cast(sensor_count as integer) as sensor_count,
    cast(exported_at as timestamp with time zone) as exported_at
from {{ lake_dimension('companies') }} as companies
