"""`catlas robots check`: may catlas fetch a URL, and which robots.txt rule decided."""

from __future__ import annotations

import click

from catlas_assets.cli.app import EXIT_RUN_FAILED, Context, cli, console, pass_context


@cli.group()
def robots() -> None:
    """robots.txt: what catlas may fetch."""


@robots.command("check")
@click.argument("url")
@click.option("--agent", default=None, help="User-agent product token (default: catlas's).")
@pass_context
def robots_check(obj: Context, url: str, agent: str | None) -> None:
    """Say whether URL may be fetched and which rule decided (exit 0 allowed, 1 not)."""
    from catlas_assets.services.robots_check import check_robots

    obj.runtime.check_ready(lake=False)  # it fetches robots.txt, and stores nothing
    result = check_robots(obj.runtime, url, agent)
    for line in result.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if not result.allowed:
        raise SystemExit(EXIT_RUN_FAILED)
