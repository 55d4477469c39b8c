-- Changes per UTC day, company, surface and kind: how many, and how significant the
-- strongest one was. Grain: (change_date, company_id, surface, kind).
select
    detected_date as change_date,
    company_id,
    surface,
    kind,
    count(*) as change_count,
    max(significance) as max_significance,
    min(detected_at) as first_detected_at,
    max(detected_at) as last_detected_at
from {{ ref('stg_changes') }}
group by detected_date, company_id, surface, kind
