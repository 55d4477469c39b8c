"""Schema migrations: apply them, and refuse a database this catlas does not know."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect

from catlas_assets.errors import StorageError

MIGRATIONS = Path(__file__).with_name("migrations")


def _config(folder: Path | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(folder or MIGRATIONS))
    return config


@dataclass(frozen=True)
class _Scripts:
    """What this catlas's migration scripts say: every revision they know, and the head."""

    known: frozenset[str]
    head: str


def _scripts() -> _Scripts:
    return _scripts_in(MIGRATIONS)


@cache
def _scripts_in(folder: Path) -> _Scripts:
    # Alembic compiles every script from source to read them (8 ms of CPU; 35 ms of a
    # lane's start beside others): this code's own files, read once per process, and
    # inherited by a lane forked from it.
    script = ScriptDirectory.from_config(_config(folder))
    head = script.get_current_head()
    assert head is not None
    return _Scripts(frozenset(rev.revision for rev in script.walk_revisions()), head)


def head_revision() -> str:
    return _scripts().head


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
    scripts = _scripts()
    if current not in scripts.known:
        raise StorageError(
            f"the state database is at schema revision {current!r}, unknown to this catlas "
            f"(head {scripts.head!r}); upgrade catlas before using it"
        )
    if current != scripts.head:
        raise StorageError(
            f"the state database is at schema revision {current!r}, behind head "
            f"{scripts.head!r}: run `catlas db upgrade`"
        )
