-- Status-page incidents: when catlas saw each open and resolve, its impact and company.
with incidents as (
    select
        company_id,
        sensor_id,
        entity_key,
        any_value(entity_label) as name,
        min(observed_at) filter (where event = 'added') as opened_at,
        max(observed_at) filter (where event = 'removed') as resolved_at,
        arg_max(attributes ->> 'impact', observed_at) as impact,
        arg_max(attributes ->> 'status', observed_at) as last_status,
        any_value(attributes ->> 'url') as url
    from {{ ref('stg_entity_events') }}
    where entity_type = 'incident'
    group by all
)

select
    md5(concat_ws('|', i.company_id, i.sensor_id, i.entity_key)) as incident_id,
    i.company_id,
    co.company_name,
    i.sensor_id,
    i.entity_key as incident_key,
    i.name,
    coalesce(i.impact, 'none') as impact,
    i.last_status,
    i.url,
    i.opened_at,
    i.resolved_at,
    date_diff('minute', i.opened_at, i.resolved_at) as minutes_open
from incidents as i
left join {{ ref('stg_companies') }} as co on co.company_id = i.company_id
