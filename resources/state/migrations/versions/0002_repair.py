"""repair: review items about failed Dagster runs (review_queue.kind 'run_failed')

Revision ID: 0002_repair
Revises: 0001
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002_repair"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "kind IN ('blocked_source', 'sensor_migration', 'sensor_stale', 'sensor_retired')"
NEW = (
    "kind IN ('blocked_source', 'sensor_migration', 'sensor_stale', 'sensor_retired', 'run_failed')"
)


def _replace(expr: str) -> None:
    # SQLite cannot alter a CHECK constraint: batch mode rebuilds the table.
    with op.batch_alter_table("review_queue", recreate="auto") as batch:
        batch.drop_constraint(op.f("ck_review_queue_kind_known"), type_="check")
        batch.create_check_constraint("kind_known", expr)


def upgrade() -> None:
    _replace(NEW)


def downgrade() -> None:
    op.execute("DELETE FROM review_queue WHERE kind = 'run_failed'")
    _replace(OLD)
