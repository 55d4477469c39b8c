"""archive packs: where each object of a pack file lies

Revision ID: 0011_archive_packs
Revises: 0010_outbox_arrow

Every new archive object was a file of its own, written, flushed and renamed before the
commit that names it: four files, four flushes and four renames for a page's first fetch.
A run's new objects are now one pack file (one flush), and `archive_objects` says where in
which pack each key's bytes are. Objects written before stay files of their own and are
read as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_archive_packs"
down_revision: str | None = "0010_outbox_arrow"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "archive_objects",
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("pack", sa.String(length=100), nullable=False),
        sa.Column("byte_offset", sa.BigInteger(), nullable=False),
        sa.Column("byte_length", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_archive_objects")),
    )


def downgrade() -> None:
    op.drop_table("archive_objects")
