"""The state store's schema revision: `catlas db upgrade` and `catlas db current`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from catlas_assets.domain.masking import masked
from catlas_assets.errors import StorageError
from catlas_assets.settings import Settings
from resources.state import migrate
from resources.state.store import create_state_engine


@dataclass(frozen=True)
class SchemaRevision:
    current: str | None  # None: an empty database
    head: str  # the newest revision this catlas knows


@contextmanager
def _state_engine(settings: Settings) -> Iterator[Engine]:
    """An engine on the state database; an unreachable one is a StorageError, not a traceback."""
    url = settings.resolved_database_url
    engine = create_state_engine(url)
    try:
        yield engine
    except OperationalError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0]
        raise StorageError(f"cannot reach the state database {masked(url)}: {first}") from None
    finally:
        engine.dispose()


def schema_revision(settings: Settings) -> SchemaRevision:
    with _state_engine(settings) as engine:
        return SchemaRevision(migrate.current_revision(engine), migrate.head_revision())


def upgrade_schema(settings: Settings) -> SchemaRevision:
    """Apply the migrations up to head; returns the revision the database was at before."""
    with _state_engine(settings) as engine:
        before = migrate.current_revision(engine)
        migrate.upgrade(engine)
        return SchemaRevision(before, migrate.head_revision())
