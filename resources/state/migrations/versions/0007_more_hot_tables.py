"""more hot tables: autovacuum for the change inbox, crawled webpages and the job queue

Revision ID: 0007_more_hot_tables
Revises: 0006_domain_slots

0004 tuned the tables every sensor run rewrites. Three more churn in steady operation:
each change is inserted into `change_inbox` and updated once when delivered; each page of
a site crawl rewrites its `webpages` row, as a run does its sensor row; onboarding claims,
retries and finishes `queue_jobs` rows. A share-based threshold lets them bloat for a long
time on a large database; these get a fixed dead-row threshold (and room for HOT updates
where a row is rewritten in place). SQLite has no autovacuum of this kind: nothing to do.
"""

from collections.abc import Sequence

from resources.state.migrations.storage_params import reset_params, set_params

revision: str = "0007_more_hot_tables"
down_revision: str | None = "0006_domain_slots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HOT_TABLES: dict[str, dict[str, str]] = {
    "change_inbox": {
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "2000",
        "autovacuum_analyze_scale_factor": "0.02",
    },
    "webpages": {
        "fillfactor": "85",
        "autovacuum_vacuum_scale_factor": "0.02",
        "autovacuum_vacuum_threshold": "1000",
        "autovacuum_analyze_scale_factor": "0.01",
    },
    "queue_jobs": {
        "fillfactor": "80",
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "500",
    },
}


def upgrade() -> None:
    set_params(HOT_TABLES)


def downgrade() -> None:
    reset_params(HOT_TABLES)
