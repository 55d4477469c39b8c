"""site crawls (spec 003): crawl_configs, webpages, run_events, site-crawl run columns

Revision ID: 0003_site_crawl
Revises: 0001
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from resources.state.url_authority import url_authority

revision: str = "0003_site_crawl"
down_revision: str | None = "0002_repair"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CRAWL_STATUS = "'PENDING', 'CRAWLING', 'CRAWLED', 'CRAWL_FAILED', 'SKIPPED'"
PROCESSING = "'uploaded', 'processing', 'extracted', 'failed'"
MODES = (
    "'resume', 'changed_new', 'full', 'retry_failed', 'single_page', 'path_scope',"
    " 'reprocess_failed', 'reindex_existing'"
)
RUN_STATUS = "'PENDING', 'RUNNING', 'COMPLETED', 'FAILED'"
EVENTS = "'new', 'unchanged', 'changed', 'failed', 'skipped', 'redirected'"
FAILURE_CLASSES = (
    "'DNS', 'TIMEOUT', 'HTTP_4XX', 'HTTP_5XX', 'BOT_CHALLENGE', 'PARSING', 'SCHEMA',"
    " 'REDIRECT', 'PAGE_REMOVED', 'RATE_LIMIT', 'ROBOTS', 'BLOCKED_DESTINATION', 'TOO_LARGE',"
    " 'UNKNOWN'"
)
SURFACES = (
    "'homepage', 'careers', 'jobs_board', 'pricing', 'blog', 'newsroom', 'feed', 'docs',"
    " 'developer', 'status', 'investors', 'people', 'products', 'locations'"
)


def _ts(name: str, nullable: bool = True) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "crawl_configs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("company_id", sa.Integer(), nullable=False),
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column("allowed_domains", sa.JSON(), nullable=False),
        sa.Column("max_pages", sa.Integer(), nullable=True),
        sa.Column("surface", sa.String(length=20), nullable=False),
        _ts("created_at", nullable=False),
        _ts("updated_at", nullable=False),
        sa.CheckConstraint(f"surface IN ({SURFACES})", name=op.f("ck_crawl_configs_surface_known")),
        sa.CheckConstraint(
            "max_pages IS NULL OR max_pages > 0", name=op.f("ck_crawl_configs_max_pages_positive")
        ),
        sa.ForeignKeyConstraint(
            ["company_id"], ["companies.id"], name=op.f("fk_crawl_configs_company_id_companies")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crawl_configs")),
        sa.UniqueConstraint("name", name=op.f("uq_crawl_configs_name")),
    )
    _create_webpages()
    with op.batch_alter_table("crawl_runs", recreate="always") as batch:
        batch.add_column(sa.Column("mode", sa.String(length=20), nullable=True))
        batch.add_column(sa.Column("config_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("url_input", sa.Text(), nullable=True))
        batch.add_column(sa.Column("path_input", sa.Text(), nullable=True))
        batch.add_column(sa.Column("status", sa.String(length=12), nullable=True))
        batch.add_column(sa.Column("error_message", sa.Text(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_crawl_runs_config_id_crawl_configs"), "crawl_configs", ["config_id"], ["id"]
        )
        for name, condition in _run_checks():
            batch.create_check_constraint(op.f(f"ck_crawl_runs_{name}"), condition)
    op.create_table(
        "run_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("webpage_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("event", sa.String(length=12), nullable=False),
        sa.Column("transition", sa.String(length=12), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        _ts("at", nullable=False),
        sa.CheckConstraint(f"event IN ({EVENTS})", name=op.f("ck_run_events_event_known")),
        sa.CheckConstraint(
            "transition IS NULL OR transition IN ('regression', 'recovery')",
            name=op.f("ck_run_events_transition_known"),
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["crawl_runs.id"], name=op.f("fk_run_events_run_id_crawl_runs")
        ),
        sa.ForeignKeyConstraint(
            ["webpage_id"], ["webpages.id"], name=op.f("fk_run_events_webpage_id_webpages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_events")),
    )
    op.create_index(op.f("ix_run_events_run_id_id"), "run_events", ["run_id", "id"])
    op.create_index(op.f("ix_run_events_webpage_id"), "run_events", ["webpage_id"])


def _create_webpages() -> None:
    op.create_table(
        "webpages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("host", sa.Text(), sa.Computed(url_authority(sa.column("url")), persisted=True)),
        sa.Column("crawl_status", sa.String(length=12), nullable=False),
        sa.Column("redirects_to", sa.Text(), nullable=True),
        sa.Column("skip_reason", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("processing_status", sa.String(length=12), nullable=True),
        sa.Column("object_key", sa.Text(), nullable=True),
        sa.Column("content_type", sa.String(length=200), nullable=True),
        sa.Column("text_key", sa.Text(), nullable=True),
        sa.Column("blocks_key", sa.Text(), nullable=True),
        sa.Column("extraction_key", sa.Text(), nullable=True),
        sa.Column("etag", sa.Text(), nullable=True),
        sa.Column("last_modified", sa.Text(), nullable=True),
        sa.Column("normalized_hash", sa.String(length=64), nullable=True),
        sa.Column("structured_hash", sa.String(length=64), nullable=True),
        sa.Column("snapshot_version", sa.Integer(), nullable=False),
        sa.Column("last_snapshot_id", sa.String(length=40), nullable=True),
        sa.Column("last_outcome", sa.String(length=8), nullable=True),
        sa.Column("last_run_id", sa.String(length=40), nullable=True),
        sa.Column("failure_class", sa.String(length=24), nullable=True),
        sa.Column("failure_detail", sa.Text(), nullable=True),
        _ts("last_crawled_at"),
        _ts("created_at", nullable=False),
        _ts("updated_at", nullable=False),
        sa.CheckConstraint(
            f"crawl_status IN ({CRAWL_STATUS})", name=op.f("ck_webpages_crawl_status_known")
        ),
        sa.CheckConstraint(
            f"processing_status IS NULL OR processing_status IN ({PROCESSING})",
            name=op.f("ck_webpages_processing_status_known"),
        ),
        sa.CheckConstraint(
            f"failure_class IS NULL OR failure_class IN ({FAILURE_CLASSES})",
            name=op.f("ck_webpages_failure_class_known"),
        ),
        sa.CheckConstraint(
            "last_outcome IS NULL OR last_outcome IN ('success', 'failure')",
            name=op.f("ck_webpages_last_outcome_known"),
        ),
        sa.CheckConstraint(
            "redirects_to IS NULL OR length(trim(redirects_to)) > 0",
            name=op.f("ck_webpages_redirects_to_not_blank"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webpages")),
        sa.UniqueConstraint("url", name=op.f("uq_webpages_url")),
    )
    op.create_index(op.f("ix_webpages_host"), "webpages", ["host"])
    op.create_index(op.f("ix_webpages_crawl_status"), "webpages", ["crawl_status"])


def _run_checks() -> list[tuple[str, str]]:
    return [
        ("mode_known", f"mode IS NULL OR mode IN ({MODES})"),
        ("status_known", f"status IS NULL OR status IN ({RUN_STATUS})"),
        ("launcher_known", "launcher IN ('local', 'dagster')"),
        (
            "site_crawl_complete",
            "kind <> 'site_crawl' OR (mode IS NOT NULL AND config_id IS NOT NULL"
            " AND status IS NOT NULL)",
        ),
        (
            "final_has_completed_at",
            "status IS NULL OR status NOT IN ('COMPLETED', 'FAILED') OR completed_at IS NOT NULL",
        ),
        (
            "failed_has_error_message",
            "status IS NULL OR status <> 'FAILED'"
            " OR (error_message IS NOT NULL AND length(trim(error_message)) > 0)",
        ),
    ]


def downgrade() -> None:
    op.drop_table("run_events")
    with op.batch_alter_table("crawl_runs", recreate="always") as batch:
        for name, _ in _run_checks():
            batch.drop_constraint(op.f(f"ck_crawl_runs_{name}"), type_="check")
        batch.drop_constraint(op.f("fk_crawl_runs_config_id_crawl_configs"), type_="foreignkey")
        for column in ("error_message", "status", "path_input", "url_input", "config_id", "mode"):
            batch.drop_column(column)
    op.drop_table("webpages")
    op.drop_table("crawl_configs")
