"""hot tables: autovacuum tuned for the rows every run rewrites; sensors.raw_hash, rate sums

Revision ID: 0004_hot_tables
Revises: 0001
Create Date: 2026-12-02 02:45:00

PostgreSQL's defaults vacuum a table once a fifth of it is dead rows: on a million
sensors that is 200,000 dead versions before the claim index is cleaned, and the outbox
(inserted then deleted by every run) and the small counter rows (ledger, connector
stats, domain budgets: one row rewritten by many runs) bloat long before that. These
tables get a fixed dead-row threshold instead of a share, a higher cost limit so a
vacuum keeps up with the writers, and room in each page (fillfactor) for HOT updates
of the sensor rows. SQLite has no autovacuum of this kind: only the column is added.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from resources.state.migrations.storage_params import reset_params, set_params

revision: str = "0004_hot_tables"
down_revision: str | None = "0003_site_crawl"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The rate_estimate scheduling policy's running sums (catlas_assets/domain/rate_estimate.py).
RATE_COLUMNS = ("rate_fetches", "rate_changes", "rate_observed_s")

# table -> storage parameters (PostgreSQL `ALTER TABLE ... SET (...)`)
HOT_TABLES: dict[str, dict[str, str]] = {
    # Every run updates its sensor row: vacuum every 2 % (plus 1,000 rows), keep 15 % of
    # each page free so the update stays on its page (HOT: no index entry rewritten).
    "sensors": {
        "fillfactor": "85",
        "autovacuum_vacuum_scale_factor": "0.02",
        "autovacuum_vacuum_threshold": "1000",
        "autovacuum_analyze_scale_factor": "0.01",
        "autovacuum_vacuum_cost_limit": "2000",
    },
    # A queue: each row inserted by a run, deleted when the lake has it.
    "lake_outbox": {
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "5000",
        "autovacuum_vacuum_insert_scale_factor": "0",
        "autovacuum_vacuum_insert_threshold": "10000",
        "autovacuum_vacuum_cost_limit": "2000",
    },
    # Few rows, each rewritten by many runs a day.
    "cost_ledger": {
        "fillfactor": "70",
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "500",
    },
    "connectors": {
        "fillfactor": "70",
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "500",
    },
    "domain_budgets": {
        "fillfactor": "70",
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "1000",
    },
    "task_leases": {
        "fillfactor": "70",
        "autovacuum_vacuum_scale_factor": "0",
        "autovacuum_vacuum_threshold": "200",
    },
    # One row per run, updated when it ends.
    "crawl_runs": {
        "autovacuum_vacuum_scale_factor": "0.05",
        "autovacuum_analyze_scale_factor": "0.02",
    },
}


def upgrade() -> None:
    op.add_column("sensors", sa.Column("raw_hash", sa.String(length=64), nullable=True))
    for name in RATE_COLUMNS:
        op.add_column("sensors", sa.Column(name, sa.Float(), nullable=True))
    set_params(HOT_TABLES)


def downgrade() -> None:
    reset_params(HOT_TABLES)
    for name in RATE_COLUMNS:
        op.drop_column("sensors", name)
    op.drop_column("sensors", "raw_hash")
