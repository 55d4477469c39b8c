"""Commands about the state store's schema and the settings."""

from __future__ import annotations

import click

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


@db.command("upgrade")
@pass_context
def db_upgrade(obj: Context) -> None:
    """Apply schema migrations up to head."""
    from catlas_assets.services.migrations import upgrade_schema

    revision = upgrade_schema(obj.settings)
    console.print(f"schema at {revision.head} (was {revision.current or 'empty'})")


@db.command("current")
@pass_context
def db_current(obj: Context) -> None:
    """Print the database's schema revision and this catlas's head."""
    from catlas_assets.services.migrations import schema_revision

    revision = schema_revision(obj.settings)
    console.print(f"current: {revision.current or 'empty'}  head: {revision.head}")


@cli.command("settings")
@click.option("--markdown", is_flag=True, help="Print the README's settings table.")
@pass_context
def settings_cmd(obj: Context, markdown: bool) -> None:
    """Show every setting with its current value (from CATLAS_* variables)."""
    from catlas_assets.settings import current_values, settings_markdown

    if markdown:
        click.echo(settings_markdown())
        return
    table(["variable", "value"], current_values(obj.settings))
