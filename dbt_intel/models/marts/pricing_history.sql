-- Plan prices over time as SCD2: one row per version of a plan, valid_from to valid_to
-- (null while current). A version opens at `added` or `updated` and ends at the next
-- version or at `removed`.
with plan_events as (
    select *
    from {{ ref('stg_entity_events') }}
    where entity_type = 'pricing_plan' and event in ('added', 'updated', 'removed')
),

versions as (
    select
        *,
        lead(observed_at) over (
            partition by company_id, sensor_id, entity_key order by observed_at, event_id
        ) as next_event_at
    from plan_events
)

select
    md5(concat_ws('|', v.company_id, v.sensor_id, v.entity_key, v.observed_at)) as plan_version_id,
    v.company_id,
    co.company_name,
    v.sensor_id,
    v.entity_key as plan_key,
    v.entity_label as plan_name,
    try_cast(v.attributes ->> 'price' as double) as price,
    v.attributes ->> 'currency' as currency,
    v.attributes ->> 'billing_period' as billing_period,
    v.attributes ->> 'price_text' as price_text,
    v.observed_at as valid_from,
    v.next_event_at as valid_to,
    v.next_event_at is null as is_current
from versions as v
left join {{ ref('stg_companies') }} as co on co.company_id = v.company_id
where v.event in ('added', 'updated')
