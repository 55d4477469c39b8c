-- Jobs posted and no longer listed per company, department, location and ISO week (UTC).
-- The jobs listed when a sensor first read its board are its baseline, not postings.
with baselines as (
    select snapshot_id from {{ ref('stg_snapshots') }} where version = 1
),

job_events as (
    select
        e.company_id,
        coalesce(e.attributes ->> 'department', e.attributes ->> 'team', '(none)') as department,
        coalesce(e.attributes -> 'locations' ->> 0, e.attributes ->> 'location', '(none)') as location,
        cast(date_trunc('week', timezone('UTC', e.observed_at)) as date) as week,
        e.event,
        b.snapshot_id is not null as at_baseline
    from {{ ref('stg_entity_events') }} as e
    left join baselines as b on b.snapshot_id = e.snapshot_id
    where e.entity_type = 'job' and e.event in ('added', 'no_longer_listed', 'removed')
)

select
    j.company_id,
    co.company_name,
    j.department,
    j.location,
    j.week,
    count(*) filter (where j.event = 'added' and not j.at_baseline) as jobs_posted,
    count(*) filter (where j.event in ('no_longer_listed', 'removed')) as jobs_no_longer_listed,
    count(*) filter (where j.event = 'added' and j.at_baseline) as jobs_at_baseline,
    count(*) filter (where j.event = 'added' and not j.at_baseline)
    - count(*) filter (where j.event in ('no_longer_listed', 'removed')) as net_change
from job_events as j
left join {{ ref('stg_companies') }} as co on co.company_id = j.company_id
group by all
