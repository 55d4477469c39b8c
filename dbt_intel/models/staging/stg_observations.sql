-- One row per fetch, typed, one row per observation_id (an hour not yet compacted may hold
-- a row twice). The date=/hour= partition columns are dropped; fetched_date is the UTC day.
with lake_rows as (
    select * from {{ lake_table('observations') }} as lake_rows
),

deduplicated as (
    select *
    from lake_rows
    qualify row_number() over (partition by observation_id order by fetched_at) = 1
)

select
    cast(observation_id as varchar) as observation_id,
    cast(run_id as varchar) as run_id,
    cast(sensor_id as bigint) as sensor_id,
    cast(webpage_id as bigint) as webpage_id,
    cast(company_id as bigint) as company_id,
    cast(surface as varchar) as surface,
    cast(url as varchar) as url,
    cast(final_url as varchar) as final_url,
    cast(fetched_at as timestamp with time zone) as fetched_at,
    cast(timezone('UTC', cast(fetched_at as timestamp with time zone)) as date) as fetched_date,
    cast(outcome as varchar) as outcome,
    cast(http_status as integer) as http_status,
    cast(not_modified as boolean) as not_modified,
    cast(changed as boolean) as changed,
    cast(noise as boolean) as noise,
    cast(failure_class as varchar) as failure_class,
    cast(elapsed_ms as integer) as elapsed_ms,
    cast(bytes as bigint) as response_bytes,
    cast(requests as integer) as requests,
    cast(etag as varchar) as etag,
    cast(last_modified as varchar) as last_modified,
    cast(content_hash as varchar) as content_hash,
    cast(normalized_hash as varchar) as normalized_hash,
    cast(structured_hash as varchar) as structured_hash,
    cast(object_key as varchar) as object_key,
    cast(text_key as varchar) as text_key,
    cast(blocks_key as varchar) as blocks_key,
    cast(extractor_version as varchar) as extractor_version,
    cast(connector as varchar) as connector
from deduplicated
