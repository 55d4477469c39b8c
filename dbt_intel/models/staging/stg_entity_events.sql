-- One row per entity event, typed, one row per event_id; attributes is typed JSON and
-- entity_label the readable name (job title, plan, person, news title).
with lake_rows as (
    select * from {{ lake_table('entity_events') }} as lake_rows
),

deduplicated as (
    select *
    from lake_rows
    qualify row_number() over (partition by event_id order by observed_at) = 1
)

select
    cast(event_id as varchar) as event_id,
    cast(run_id as varchar) as run_id,
    cast(company_id as bigint) as company_id,
    cast(sensor_id as bigint) as sensor_id,
    cast(webpage_id as bigint) as webpage_id,
    cast(entity_type as varchar) as entity_type,
    cast(entity_key as varchar) as entity_key,
    cast(coalesce(entity_label, entity_key) as varchar) as entity_label,
    cast(event as varchar) as event,
    cast(observed_at as timestamp with time zone) as observed_at,
    cast(timezone('UTC', cast(observed_at as timestamp with time zone)) as date) as observed_date,
    cast(snapshot_id as varchar) as snapshot_id,
    cast(attributes as json) as attributes
from deduplicated
