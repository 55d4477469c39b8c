"""domain slots: request starts spaced across every worker, not within one process only

Revision ID: 0006_domain_slots
Revises: 0005_page_changes

Each reservation of a spaced domain books the next start slot in `next_start_at`, so
several schedulers asking one domain keep its spacing between them too.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_domain_slots"
down_revision: str | None = "0005_page_changes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("domain_budgets") as batch:
        batch.add_column(sa.Column("next_start_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("domain_budgets") as batch:
        batch.drop_column("next_start_at")
