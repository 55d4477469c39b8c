-- Per sensor: status, failure-class mix, days since its last change and since its last
-- success, relative to the lake's latest fetch (so a replayed or old lake reads sensibly).
with lake_now as (
    select coalesce(max(fetched_at), now()) as as_of from {{ ref('stg_observations') }}
),

fetches as (
    select
        sensor_id,
        count(*) as fetches,
        count(*) filter (where outcome = 'failed') as failures,
        max(fetched_at) filter (where outcome <> 'failed') as last_success_at
    from {{ ref('stg_observations') }}
    group by sensor_id
),

failure_mix as (
    select sensor_id, to_json(map(list(failure_class), list(n))) as failure_classes
    from (
        select sensor_id, failure_class, count(*) as n
        from {{ ref('stg_failures') }}
        group by all
    ) as per_class
    group by sensor_id
)

select
    s.sensor_id,
    s.company_id,
    s.company_name,
    s.surface,
    s.url,
    s.connector,
    s.status,
    s.lineage_id,
    coalesce(f.fetches, 0) as fetches,
    coalesce(f.failures, 0) as failures,
    coalesce(m.failure_classes, to_json(map())) as failure_classes,
    s.last_change_at,
    date_diff('day', s.last_change_at, n.as_of) as days_since_last_change,
    coalesce(f.last_success_at, s.last_success_at) as last_success_at,
    case
        when s.status in ('stale', 'retired', 'blocked', 'redirected') then 'stale'
        when s.status = 'failing' then 'failing'
        when coalesce(f.last_success_at, s.last_success_at) is null then 'never_fetched'
        when date_diff('second', coalesce(f.last_success_at, s.last_success_at), n.as_of)
            > 2 * greatest(s.current_interval_s, 86400) then 'stale'
        else 'fresh'
    end as staleness,
    n.as_of
from {{ ref('stg_sensors') }} as s
cross join lake_now as n
left join fetches as f on f.sensor_id = s.sensor_id
left join failure_mix as m on m.sensor_id = s.sensor_id
