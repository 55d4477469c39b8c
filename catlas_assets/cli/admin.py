"""Commands about the state store's schema and the settings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from catlas_assets.errors import StorageError

if TYPE_CHECKING:
    from sqlalchemy import Engine

from catlas_assets.cli.app import (
    Context,
    cli,
    console,
    pass_context,
    table,
)


# -- database ------------------------------------------------------------------------------
@cli.group()
def db() -> None:
    """The state store's schema."""


@contextmanager
def _state_engine(obj: Context) -> Iterator[Engine]:
    """An engine on the state database; an unreachable one is a StorageError, not a traceback."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    from resources.state.store import create_state_engine

    url = obj.settings.resolved_database_url
    engine = create_state_engine(url)
    try:
        yield engine
    except OperationalError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0]
        shown = make_url(url).render_as_string(hide_password=True)
        raise StorageError(f"cannot reach the state database {shown}: {first}") from None
    finally:
        engine.dispose()


@db.command("upgrade")
@pass_context
def db_upgrade(obj: Context) -> None:
    """Apply schema migrations up to head."""
    from resources.state import migrate

    with _state_engine(obj) as engine:
        before = migrate.current_revision(engine)
        migrate.upgrade(engine)
        console.print(f"schema at {migrate.head_revision()} (was {before or 'empty'})")


@db.command("current")
@pass_context
def db_current(obj: Context) -> None:
    """Print the database's schema revision and this catlas's head."""
    from resources.state import migrate

    with _state_engine(obj) as engine:
        console.print(
            f"current: {migrate.current_revision(engine) or 'empty'}  head: {migrate.head_revision()}"
        )


@cli.command("settings")
@click.option("--markdown", is_flag=True, help="Print the README's settings table.")
@pass_context
def settings_cmd(obj: Context, markdown: bool) -> None:
    """Show every setting with its current value (from CATLAS_* variables)."""
    from dataclasses import asdict

    from catlas_assets.settings import ENV_PREFIX, settings_markdown

    if markdown:
        click.echo(settings_markdown())
        return
    current = asdict(obj.settings)
    table(["variable", "value"], [(ENV_PREFIX + k.upper(), v) for k, v in current.items()])
