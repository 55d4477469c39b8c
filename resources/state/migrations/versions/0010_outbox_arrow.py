"""outbox arrow: a commit group's lake rows wait as Arrow tables, converted where committed

Revision ID: 0010_outbox_arrow
Revises: 0009_robots_files

A run's lake rows waited in the outbox as JSON, so every flush parsed them back and
converted each row to Arrow, one core's serial work at the end of a tick. A commit group
now converts its rows once, where it is committed (a tick's lanes, in parallel), and keeps
them as packed Arrow tables in `arrow`; rows written before wait as JSON and are flushed
as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_outbox_arrow"
down_revision: str | None = "0009_robots_files"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("lake_outbox") as batch:
        batch.add_column(sa.Column("arrow", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lake_outbox") as batch:
        batch.drop_column("arrow")
