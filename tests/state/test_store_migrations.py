"""Opening a state database: created at head when empty, refused when it is not ours."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from catlas_assets.errors import StorageError
from resources.state import migrate
from resources.state.schema import metadata
from resources.state.store import StateStore, create_state_engine
from tests.conftest import reset_postgres

HEAD = "0011_archive_packs"


def _revision_of(url: str) -> str | None:
    engine = create_state_engine(url)
    try:
        return migrate.current_revision(engine)
    finally:
        engine.dispose()


def test_open_creates_every_table_at_head_on_an_empty_database(database_url: str) -> None:
    store = StateStore.open(database_url)
    try:
        tables = set(inspect(store.engine).get_table_names())
    finally:
        store.close()
    assert migrate.head_revision() == HEAD
    assert _revision_of(database_url) == HEAD
    assert set(metadata.tables) <= tables


def test_migrated_schema_matches_the_declared_tables(database_url: str) -> None:
    store = StateStore.open(database_url)
    try:
        with store.engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            differences = compare_metadata(context, metadata)
    finally:
        store.close()
    assert differences == []


def test_reopening_a_current_database_keeps_it_at_head(database_url: str) -> None:
    StateStore.open(database_url).close()
    StateStore.open(database_url).close()
    assert _revision_of(database_url) == HEAD


def test_the_migration_scripts_are_read_once_per_process(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every open checks the database's revision; the scripts it is checked against are
    this code's own files, read once (a tick's lanes, forked, open their stores without
    compiling them again)."""
    StateStore.open(database_url).close()

    def read_again(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the migration scripts were read again")

    monkeypatch.setattr(migrate.ScriptDirectory, "from_config", read_again)
    StateStore.open(database_url).close()
    assert migrate.head_revision() == HEAD
    assert _revision_of(database_url) == HEAD


def test_empty_database_without_auto_create_asks_for_db_upgrade(database_url: str) -> None:
    with pytest.raises(StorageError, match="catlas db upgrade"):
        StateStore.open(database_url, auto_create=False)
    assert _revision_of(database_url) is None


def test_unknown_revision_is_refused_and_asks_to_upgrade_catlas(database_url: str) -> None:
    store = StateStore.open(database_url)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'zzzz'"))
    store.close()
    with pytest.raises(StorageError) as refused:
        StateStore.open(database_url)
    message = str(refused.value)
    assert "'zzzz'" in message
    assert "unknown" in message
    assert "upgrade catlas" in message


def test_tables_without_a_schema_revision_are_refused(database_url: str) -> None:
    engine = create_state_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE somebody_elses (id INTEGER PRIMARY KEY)"))
    engine.dispose()
    with pytest.raises(StorageError, match="no catlas schema revision"):
        StateStore.open(database_url)
    engine = create_state_engine(database_url)
    try:
        assert inspect(engine).get_table_names() == ["somebody_elses"]
    finally:
        engine.dispose()


NEXT_REVISION = '''"""A later revision used to put a database behind head."""

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
'''


@pytest.fixture
def later_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A migrations folder whose head is one revision past the real one."""
    folder = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    later = NEXT_REVISION.replace('down_revision = "0001"', f'down_revision = "{HEAD}"')
    (folder / "versions" / "0002_later.py").write_text(later)
    monkeypatch.setattr(migrate, "MIGRATIONS", folder)
    return "0002"


def test_database_behind_head_is_refused_until_upgraded(
    database_url: str, later_head: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_state_engine(database_url)
    try:
        migrate.upgrade(engine, HEAD)
        with pytest.raises(StorageError) as refused:
            migrate.ensure_current(engine, auto_create=True)
        message = str(refused.value)
        assert "behind head '0002'" in message
        assert "catlas db upgrade" in message
        assert migrate.current_revision(engine) == HEAD  # refusing never migrates on its own

        migrate.upgrade(engine)
        migrate.ensure_current(engine, auto_create=False)
        assert migrate.current_revision(engine) == later_head
    finally:
        engine.dispose()


UNREACHABLE = [
    "postgresql+psycopg://postgres@127.0.0.1:1/x",
    "postgresql+psycopg://postgres:sekret@127.0.0.1:1/x",
]


@pytest.mark.parametrize("url", UNREACHABLE)
def test_unreachable_database_gives_one_line_without_password(url: str) -> None:
    with pytest.raises(StorageError) as refused:
        StateStore.open(url)
    message = str(refused.value)
    assert "cannot reach the state database" in message
    assert "127.0.0.1:1" in message
    assert "\n" not in message
    assert "sekret" not in message


MALFORMED = [
    "not a database url",
    "",
    "postgresql+psycopg://postgres:sekret@127.0.0.1:notaport/x",
    "postgresql+psycopg://postgres:sekret@[::1/x",
    "postgresql+nodriver://postgres:sekret@127.0.0.1/x",
    "mysql://postgres:sekret@127.0.0.1/x",
]


@pytest.mark.parametrize("url", MALFORMED)
def test_malformed_url_gives_one_line_storage_error_without_password(url: str) -> None:
    with pytest.raises(StorageError) as refused:
        StateStore.open(url)
    message = str(refused.value)
    assert message.startswith("CATLAS_DATABASE_URL")
    assert "\n" not in message
    assert "sekret" not in message


def _hot_tables() -> dict[str, dict[str, str]]:
    """Every table a migration tunes, with the storage parameters it sets."""
    from alembic.script import ScriptDirectory

    tuned: dict[str, dict[str, str]] = {}
    script = ScriptDirectory.from_config(migrate._config())
    for revision in reversed(list(script.walk_revisions())):  # oldest first
        for table, params in getattr(revision.module, "HOT_TABLES", {}).items():
            tuned.setdefault(table, {}).update(params)
    return tuned


def test_the_hot_tables_carry_their_autovacuum_settings_on_postgresql(
    postgres_database: str,
) -> None:
    reset_postgres(postgres_database)
    store = StateStore.open(postgres_database)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(
                text("select relname, reloptions from pg_class where relkind = 'r'")
            ).all()
    finally:
        store.close()
    options = {name: dict(o.split("=", 1) for o in opts or []) for name, opts in rows}
    tuned = _hot_tables()
    assert {"sensors", "lake_outbox", "change_inbox", "webpages"} <= set(tuned)
    for table, params in tuned.items():
        assert options[table] == params, table
