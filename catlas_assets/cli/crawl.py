"""Site crawls (spec 003): `crawl-configs`, `crawl`, `webpages`, `runs` and `runs show`."""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any

import click
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

from catlas_assets.cli.app import Context, cli, console, emit, finish, pass_context, table, when
from catlas_assets.cli.output import format_option
from catlas_assets.domain.vocabulary import (
    CrawlMode,
    CrawlStatus,
    PageEvent,
    RunLauncher,
    Surface,
    Transition,
)
from catlas_assets.option_types import count
from catlas_assets.run_options import control_from, run_options


@cli.group("crawl-configs")
def crawl_configs() -> None:
    """Site-crawl configs: a company's base URL, its allowed domains and limits."""


@crawl_configs.command("add")
@click.argument("name")
@click.option("--company", required=True, help="The company (created when unknown).")
@click.option("--base-url", required=True, help="Where crawls start, e.g. https://acme.com/blog")
@click.option(
    "--allow-domain",
    "allow_domains",
    multiple=True,
    help="A regex over a URL's authority (repeatable). Default: the base URL's registrable "
    "domain and its subdomains.",
)
@click.option("--max-pages", type=count(), default=None, help="Pages per run at most.")
@click.option(
    "--surface",
    type=click.Choice([s.value for s in Surface]),
    default=Surface.BLOG.value,
    show_default=True,
    help="The surface its pages' observations carry.",
)
@pass_context
def crawl_configs_add(
    obj: Context,
    name: str,
    company: str,
    base_url: str,
    allow_domains: tuple[str, ...],
    max_pages: int | None,
    surface: str,
) -> None:
    """Add a crawl config."""
    from catlas_assets.services.crawl_configs import add_config

    config_id = add_config(
        obj.runtime, name, company=company, base_url=base_url,
        allow_domains=list(allow_domains), max_pages=max_pages, surface=surface,
    )  # fmt: skip
    console.print(f"crawl config {config_id} {name}: {base_url}")


@crawl_configs.command("list")
@pass_context
def crawl_configs_list(obj: Context) -> None:
    """The crawl configs."""
    from catlas_assets.services.crawl_configs import list_configs

    table(
        ["id", "name", "company", "base url", "allowed domains", "max pages", "surface"],
        [
            (c["id"], c["name"], c["company"], c["base_url"], " ".join(c["allowed_domains"]),
             c["max_pages"] or "", c["surface"])
            for c in list_configs(obj.runtime)
        ],
    )  # fmt: skip


@cli.command("crawl")
@click.option("--config", "config_name", required=True, help="The crawl config's name.")
@click.option("--mode", required=True, type=click.Choice([m.value for m in CrawlMode]))
@click.option("--url", default=None, help="single_page: the page to fetch now.")
@click.option("--path", default=None, help="path_scope: the path prefix, e.g. /news.")
@run_options
@pass_context
def crawl(
    obj: Context,
    config_name: str,
    mode: str,
    url: str | None,
    path: str | None,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Crawl a config's site in MODE; prints the event counts and the run's verdict."""
    from catlas_assets.services.run_control import signals_stop
    from catlas_assets.services.site_crawl import CrawlRequest, prepare, run_site_crawl

    runtime = obj.runtime
    prepared = prepare(runtime, CrawlRequest(config_name, mode, url, path))  # refused: exit 2
    runtime.check_ready()
    control = control_from(max_requests, deadline)
    # The queue grows as links are found: the bar pulses, the counts move with each URL.
    with Progress(SpinnerColumn(), TextColumn("[bold]crawling[/]"), BarColumn(),
                  TextColumn("{task.description}"), console=console, transient=True) as progress:  # fmt: skip
        task = progress.add_task("", total=None)
        seen: dict[str, int] = {}

        def on_event(event: PageEvent) -> None:
            seen[event.value] = seen.get(event.value, 0) + 1
            progress.update(task, description=" ".join(f"{k}={v}" for k, v in sorted(seen.items())))

        with signals_stop(control):
            result = run_site_crawl(
                runtime, prepared, control=control, on_event=on_event,
                launcher=RunLauncher.LOCAL, launch_handle=str(os.getpid()),
            )  # fmt: skip
    console.print("events: " + " ".join(f"{k}={v}" for k, v in result.events.items()))
    finish(result.report, fail_when=fail_when)


@cli.command("webpages")
@click.option("--config", "config_name", required=True, help="The crawl config's name.")
@click.option("--status", type=click.Choice([s.value for s in CrawlStatus]), default=None)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
    show_default=True,
)  # fmt: skip
@pass_context
def webpages_cmd(obj: Context, config_name: str, status: str | None, fmt: str) -> None:
    """The crawl queue's pages in a config's scope."""
    from catlas_assets.services.crawl_configs import config_webpages

    columns = ["id", "url", "host", "crawl_status", "processing_status", "redirects_to",
               "skip_reason", "content_hash", "last_outcome", "last_crawled_at"]  # fmt: skip
    rows = [{c: r[c] for c in columns} for r in config_webpages(obj.runtime, config_name, status)]
    _emit(columns, rows, fmt)


def _emit(columns: list[str], rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows, default=str, indent=2))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
        click.echo(out.getvalue(), nl=False)
    else:
        table(columns, [[r[c] for c in columns] for r in rows])


@cli.group("runs", invoke_without_command=True)
@click.option("--kind", default=None, help="Only runs of this kind, e.g. site_crawl.")
@click.option("--limit", type=count(), default=20, show_default=True)
@format_option()
@click.pass_context
def runs(ctx: click.Context, kind: str | None, limit: int, fmt: str) -> None:
    """Recent runs (`runs show RUN_ID` for one run and its events)."""
    if ctx.invoked_subcommand is not None:
        return
    from catlas_assets.services.run_history import recent_runs

    obj = ctx.find_object(Context)
    assert obj is not None
    emit(
        fmt,
        ["run", "kind", "mode", "status", "started", "stop", "outcome", "new", "changed",
         "unchanged", "failed", "skipped", "redirected", "launcher", "handle"],
        [
            (r["id"], r["kind"], r["mode"] or "", r["status"] or "",
             when(r["started_at"]) if fmt == "table" else r["started_at"],
             r["stop"], r["outcome"], (r["counters"] or {}).get("new", r["ok"]), r["changed"],
             r["unchanged"], r["failed"], r["skipped"], r["redirected"], r["launcher"],
             r["launch_handle"] or "")
            for r in recent_runs(obj.runtime, limit=limit, kind=kind)
        ],
    )  # fmt: skip


@runs.command("show")
@click.argument("run_id")
@click.option("--events", "with_events", is_flag=True, help="List the run's per-URL events.")
@click.option("--transition", type=click.Choice([t.value for t in Transition]), default=None)
@pass_context
def runs_show(obj: Context, run_id: str, with_events: bool, transition: str | None) -> None:
    """One run: its verdict, mode, inputs, status and (with --events) its events."""
    from catlas_assets.errors import NotFoundError
    from catlas_assets.services.crawl_configs import run_events
    from catlas_assets.services.run_history import run_row

    row = run_row(obj.runtime, run_id)
    if row is None:
        raise NotFoundError(f"no run {run_id!r}")
    fields = ["id", "kind", "mode", "config_id", "url_input", "path_input", "status",
              "error_message", "launcher", "launch_handle", "started_at", "completed_at",
              "stop", "outcome", "detail", "coverage_gaps", "empty_streak", "counters"]  # fmt: skip
    table(["field", "value"], [(f, row.get(f)) for f in fields])
    if with_events or transition:
        events = run_events(obj.runtime, run_id, transition)
        table(
            ["at", "event", "transition", "url", "detail"],
            [(when(e["at"]), e["event"], e["transition"] or "", e["url"], e["detail"] or "")
             for e in events],
            title=f"events: {len(events)}",
        )  # fmt: skip
