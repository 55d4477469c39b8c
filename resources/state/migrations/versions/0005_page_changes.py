"""page changes: the change inbox holds a site crawl's changes beside a sensor's

Revision ID: 0005_page_changes
Revises: 0004_hot_tables

A change comes from a sensor or from a crawled webpage, never both: `sensor_id` becomes
nullable, `webpage_id` is added, and one CHECK keeps exactly one of them set.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_page_changes"
down_revision: str | None = "0004_hot_tables"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ONE_SOURCE = "(sensor_id IS NULL) <> (webpage_id IS NULL)"


def upgrade() -> None:
    with op.batch_alter_table("change_inbox", recreate="always") as batch:
        batch.add_column(sa.Column("webpage_id", sa.Integer(), nullable=True))
        batch.alter_column("sensor_id", existing_type=sa.Integer(), nullable=True)
        batch.create_foreign_key(
            op.f("fk_change_inbox_webpage_id_webpages"), "webpages", ["webpage_id"], ["id"]
        )
        batch.create_check_constraint(op.f("ck_change_inbox_one_source"), ONE_SOURCE)


def downgrade() -> None:
    with op.batch_alter_table("change_inbox", recreate="always") as batch:
        batch.drop_constraint(op.f("ck_change_inbox_one_source"), type_="check")
        batch.drop_constraint(op.f("fk_change_inbox_webpage_id_webpages"), type_="foreignkey")
        batch.drop_column("webpage_id")
        batch.alter_column("sensor_id", existing_type=sa.Integer(), nullable=False)
