-- The sensors as of the latest dimension snapshot, with their company's name and lineage.
select
    cast(sensor_id as bigint) as sensor_id,
    cast(company_id as bigint) as company_id,
    cast(company_name as varchar) as company_name,
    cast(surface as varchar) as surface,
    cast(url as varchar) as url,
    cast(connector as varchar) as connector,
    cast(status as varchar) as status,
    cast(current_interval_s as bigint) as current_interval_s,
    cast(consecutive_failures as integer) as consecutive_failures,
    cast(last_failure_class as varchar) as last_failure_class,
    cast(last_fetched_at as timestamp with time zone) as last_fetched_at,
    cast(last_success_at as timestamp with time zone) as last_success_at,
    cast(last_change_at as timestamp with time zone) as last_change_at,
    cast(created_at as timestamp with time zone) as created_at,
    cast(predecessor_sensor_id as bigint) as predecessor_sensor_id,
    cast(lineage_id as bigint) as lineage_id
from {{ lake_dimension('sensors') }} as sensors
