-- News and blog items as catlas first saw them: title, link, published date, company.
select
    md5(concat_ws('|', e.company_id, e.entity_key)) as news_id,
    e.company_id,
    co.company_name,
    min(e.sensor_id) as sensor_id,
    min(s.surface) as surface,
    any_value(e.entity_label) as title,
    any_value(e.attributes ->> 'url') as url,
    try_cast(any_value(e.attributes ->> 'published_at') as date) as published_date,
    min(e.observed_at) as first_seen_at,
    cast(date_trunc('week', timezone('UTC', min(e.observed_at))) as date) as first_seen_week
from {{ ref('stg_entity_events') }} as e
left join {{ ref('stg_companies') }} as co on co.company_id = e.company_id
left join {{ ref('stg_sensors') }} as s on s.sensor_id = e.sensor_id
where e.entity_type = 'news' and e.event = 'added'
group by e.company_id, co.company_name, e.entity_key
