"""domain turns: the next request to a spaced domain waits for the last one's answer

Revision ID: 0008_domain_turns
Revises: 0007_more_hot_tables

Booked start slots spaced the starts of requests, but a request whose bytes were late on
their way (a busy machine, a new connection) could still reach the site just before
another worker's. A spaced domain now hands out turns: `turns` holds the requests in flight
of every worker, each until its answer is read (or its hold expires), and the next
request asks only once a turn is free and the spacing has passed.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_domain_turns"
down_revision: str | None = "0007_more_hot_tables"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("domain_budgets") as batch:
        batch.add_column(sa.Column("turns", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("domain_budgets") as batch:
        batch.drop_column("turns")
