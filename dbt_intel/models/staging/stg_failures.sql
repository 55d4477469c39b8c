-- One row per failed fetch, typed (failure_class is one of the fourteen classes).
with lake_rows as (
    select * from {{ lake_table('failures') }} as lake_rows
),

deduplicated as (
    select *
    from lake_rows
    qualify row_number() over (partition by observation_id order by "at") = 1
)

select
    cast(observation_id as varchar) as observation_id,
    cast(run_id as varchar) as run_id,
    cast(sensor_id as bigint) as sensor_id,
    cast(company_id as bigint) as company_id,
    cast("at" as timestamp with time zone) as failed_at,
    cast(failure_class as varchar) as failure_class,
    cast(http_status as integer) as http_status,
    cast(detail as varchar) as detail
from deduplicated
