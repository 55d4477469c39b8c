-- One row per content version of a sensor, typed, one row per snapshot_id. JSON documents
-- (stored as text in the lake) are typed JSON here; read them with ->> and json_extract.
with lake_rows as (
    select * from {{ lake_table('snapshots') }} as lake_rows
),

deduplicated as (
    select *
    from lake_rows
    qualify row_number() over (partition by snapshot_id order by captured_at) = 1
)

select
    cast(snapshot_id as varchar) as snapshot_id,
    cast(run_id as varchar) as run_id,
    cast(sensor_id as bigint) as sensor_id,
    cast(company_id as bigint) as company_id,
    cast(surface as varchar) as surface,
    cast(version as integer) as version,
    cast(previous_snapshot_id as varchar) as previous_snapshot_id,
    cast(observation_id as varchar) as observation_id,
    cast(captured_at as timestamp with time zone) as captured_at,
    cast(timezone('UTC', cast(captured_at as timestamp with time zone)) as date) as captured_date,
    cast(normalized_hash as varchar) as normalized_hash,
    cast(structured_hash as varchar) as structured_hash,
    cast(simhash as bigint) as simhash,
    cast(object_key as varchar) as object_key,
    cast(text_key as varchar) as text_key,
    cast(blocks_key as varchar) as blocks_key,
    cast(extraction_key as varchar) as extraction_key,
    cast(extracted as json) as extracted,
    cast(extracted_summary as json) as extracted_summary,
    cast(extractor_version as varchar) as extractor_version
from deduplicated
