-- Every meaningful-or-above change with its company's name, the page's URL and whether it
-- was delivered: the change inbox as SQL.
select
    c.change_id,
    c.detected_at,
    c.detected_date,
    c.company_id,
    co.company_name,
    c.sensor_id,
    c.surface,
    c.kind,
    c.significance,
    c.summary,
    s.url,
    case when d.change_id is not null then 'delivered' else c.status_at_write end as status,
    d.delivered_at,
    c.structured_delta
from {{ ref('stg_changes') }} as c
left join {{ ref('stg_companies') }} as co on co.company_id = c.company_id
left join {{ ref('stg_sensors') }} as s on s.sensor_id = c.sensor_id
left join {{ ref('stg_change_deliveries') }} as d on d.change_id = c.change_id
where c.kind in ('meaningful', 'major', 'critical')
