"""robots files: each origin's robots.txt kept until it expires, for every worker process

Revision ID: 0009_robots_files
Revises: 0008_domain_turns

A worker process kept the robots.txt files it fetched in memory only, so every new process
(a `catlas schedule --once`, a lane of a tick) asked each site for its robots.txt again,
whatever `CATLAS_ROBOTS_TTL_S` said. The files now live in the state store until they
expire, shared by every process.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_robots_files"
down_revision: str | None = "0008_domain_turns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "robots_files",
        sa.Column("origin", sa.String(length=300), nullable=False),
        sa.Column("source_url", sa.Text(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("unavailable", sa.Text(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        _ts("fetched_at"),
        _ts("expires_at"),
        sa.PrimaryKeyConstraint("origin", name=op.f("pk_robots_files")),
    )


def downgrade() -> None:
    op.drop_table("robots_files")
