"""Schema migrations: apply them, and refuse a database this catlas does not know."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

from catlas_assets.errors import StorageError

MIGRATIONS = Path(__file__).with_name("migrations")


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    config = _config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def is_empty(engine: Engine) -> bool:
    return not inspect(engine).get_table_names()


def ensure_current(engine: Engine, *, auto_create: bool) -> None:
    """Open only a database at this catlas's head revision.

    An empty database is created when ``auto_create`` (the embedded default); a database
    behind head asks for ``catlas db upgrade``; one at a revision this catlas has never
    heard of (written by a newer catlas) is refused rather than misread.
    """
    script = ScriptDirectory.from_config(_config())
    current = current_revision(engine)
    if current is None:
        if is_empty(engine) and auto_create:
            upgrade(engine)
            return
        if is_empty(engine):
            raise StorageError("the state database is empty: run `catlas db upgrade` first")
        raise StorageError(
            "the state database has tables but no catlas schema revision; refusing to use it"
        )
    known = {rev.revision for rev in script.walk_revisions()}
    if current not in known:
        raise StorageError(
            f"the state database is at schema revision {current!r}, unknown to this catlas "
            f"(head {script.get_current_head()!r}); upgrade catlas before using it"
        )
    if current != script.get_current_head():
        raise StorageError(
            f"the state database is at schema revision {current!r}, behind head "
            f"{script.get_current_head()!r}: run `catlas db upgrade`"
        )
