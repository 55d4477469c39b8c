-- Delivered changes as of the latest dimension snapshot (what `catlas changes` shows).
select
    cast(change_id as varchar) as change_id,
    cast(company_id as bigint) as company_id,
    cast(delivered_at as timestamp with time zone) as delivered_at,
    cast(channel as varchar) as channel
from {{ lake_dimension('change_deliveries') }} as change_deliveries
