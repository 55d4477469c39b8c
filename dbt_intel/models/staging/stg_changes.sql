-- One row per detected change, typed, one row per change_id. `status` is renamed
-- status_at_write: lake rows are immutable, so it is the status the change was written with;
-- later delivery status lives in the state store, not here.
with lake_rows as (
    select * from {{ lake_table('changes') }} as lake_rows
),

deduplicated as (
    select *
    from lake_rows
    qualify row_number() over (partition by change_id order by detected_at) = 1
)

select
    cast(change_id as varchar) as change_id,
    cast(run_id as varchar) as run_id,
    cast(sensor_id as bigint) as sensor_id,
    cast(webpage_id as bigint) as webpage_id,
    cast(company_id as bigint) as company_id,
    cast(surface as varchar) as surface,
    cast(snapshot_id as varchar) as snapshot_id,
    cast(previous_snapshot_id as varchar) as previous_snapshot_id,
    cast(detected_at as timestamp with time zone) as detected_at,
    cast(timezone('UTC', cast(detected_at as timestamp with time zone)) as date) as detected_date,
    cast(significance as double) as significance,
    cast(kind as varchar) as kind,
    cast(status as varchar) as status_at_write,
    cast(summary as varchar) as summary,
    cast(structured_delta as json) as structured_delta
from deduplicated
