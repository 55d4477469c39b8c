"""`catlas crawl`: one site-crawl run of a config in a mode (spec 003), with its verdict.

`prepare` refuses bad input before anything is sent or recorded (an unknown mode, a
missing input, `--url` with `--path`, a URL or path outside the config's scope). The run
then resets the scoped queue as its mode says and drains it in batches, the scope's
`host IN (...)` list rebuilt for every batch so hosts found mid-crawl join it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from catlas_assets.domain.crawl_events import event_counts
from catlas_assets.domain.crawl_modes import (
    Command,
    Inputs,
    ModeSpec,
    Needs,
    parse_mode,
    required_inputs,
)
from catlas_assets.domain.crawl_scope import ConfigScope, CrawlScope, PathScope
from catlas_assets.domain.run_guard import RunGuard
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import (
    CrawlMode,
    Outcome,
    PageEvent,
    ProcessingStatus,
    RunKind,
    RunLauncher,
    RunStatus,
    Stop,
)
from catlas_assets.errors import CatlasError, NotFoundError
from catlas_assets.services import dimensions, event_loop, lake_sync
from catlas_assets.services.dead_runs import settle
from catlas_assets.services.notify import announce_run, announce_start
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_page import CrawlState, crawl_row, process_stored
from resources.fetcher import Fetcher
from resources.state import site_crawl_store as pages

Row = dict[str, Any]
BATCH = 50


@dataclass(frozen=True)
class CrawlRequest:
    config: str
    mode: str
    url: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class PreparedCrawl:
    config: Row
    spec: ModeSpec
    inputs: Inputs
    scope: CrawlScope
    seeds: tuple[str, ...]


@dataclass
class SiteCrawlResult:
    report: RunReport
    events: dict[str, int]


def prepare(runtime: Runtime, request: CrawlRequest, *, strict: bool = True) -> PreparedCrawl:
    """Validate a crawl request; raises CatlasError (CrawlScopeError for scope) and sends nothing.

    `strict` (the CLI) refuses `--url` together with `--path`; the run-config front drops
    the input a mode does not require instead.
    """
    if strict and request.url and request.path is not None:
        raise CatlasError("--url and --path cannot be combined: a single page has no path scope")
    spec = parse_mode(request.mode)
    config = pages.config_by_name(runtime.store, request.config)
    if config is None:
        raise NotFoundError(f"no crawl config named {request.config!r}")
    inputs = required_inputs(spec, request.url, request.path)
    path_scope = PathScope(inputs.path, config["base_url"]) if inputs.path is not None else None
    scope = CrawlScope(ConfigScope(tuple(config["allowed_domains"])), path_scope)
    if spec.command is Command.PROCESS:
        seeds: tuple[str, ...] = ()
    elif spec.requires is Needs.URL:
        seeds = (scope.require(str(inputs.url)),)
    elif path_scope is not None:
        seeds = (scope.require(path_scope.seed()),)
    else:
        seeds = (scope.require(config["base_url"]),)
    return PreparedCrawl(config, spec, inputs, scope, seeds)


def run_site_crawl(
    runtime: Runtime,
    prepared: PreparedCrawl,
    *,
    control: RunControl | None = None,
    launch_handle: str | None = None,
    launcher: RunLauncher | None = None,
    on_event: Callable[[PageEvent], None] | None = None,
) -> SiteCrawlResult:
    """One run; `launcher`/`launch_handle` say what started it (default: Dagster when a
    handle is given, else this process)."""
    control = control or RunControl()
    recorder = RunRecorder(
        runtime,
        RunKind.SITE_CRAWL,
        launch_handle=launch_handle,
        launcher=launcher.value if launcher else None,
        extra={
            "mode": prepared.spec.mode.value,
            "config_id": prepared.config["id"],
            "url_input": prepared.inputs.url,
            "path_input": prepared.inputs.path,
            "status": RunStatus.RUNNING.value,
        },
    )
    state = CrawlState(
        runtime, recorder.run_id, prepared.spec, prepared.config, prepared.scope,
        seed=prepared.seeds[0] if prepared.seeds else None, on_event=on_event,
    )  # fmt: skip
    announce_start(runtime, recorder.run_id, _title(prepared))
    guard = control.guard(runtime.settings)
    settle(runtime)  # a crawl killed before this one gets its verdict
    _release_orphans(runtime, recorder.run_id)
    try:
        if prepared.spec.command is Command.PROCESS:
            event_loop.run(_process(state, prepared))
        else:
            event_loop.run(_crawl(state, prepared, control, guard))
    except Exception as exc:
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        lake_sync.flush(runtime, run_id=recorder.run_id)
        report = recorder.finish(
            stop=Stop.ERROR, tally=_tally(state, 0), counters=_counters(state), detail=message,
            extra={"status": RunStatus.FAILED.value, "error_message": message},
        )  # fmt: skip
        announce_run(runtime, report, _title(prepared))
        return SiteCrawlResult(report, event_counts(state.events))
    lake_sync.flush(runtime, run_id=recorder.run_id)
    export_webpages(runtime)
    left = pages.count_pending(runtime.store, _hosts(state), _path_regex(state))
    stop, detail = _stop(state, guard, prepared)
    report = recorder.finish(
        stop=stop, tally=_tally(state, left), counters=_counters(state), detail=detail,
        extra={"status": RunStatus.COMPLETED.value},
    )  # fmt: skip
    # Its changes wait in the inbox like a sensor's (`catlas notify`, the Dagster sensor).
    announce_run(runtime, report, _title(prepared))
    return SiteCrawlResult(report, event_counts(state.events))


def _release_orphans(runtime: Runtime, run_id: str) -> None:
    """Pages a dead crawl had taken go back to PENDING, unless another crawl is running (a
    page does not say which run took it): none stays CRAWLING for ever."""
    others = [
        r
        for r in runtime.store.open_runs()
        if r["kind"] == RunKind.SITE_CRAWL and r["id"] != run_id
    ]
    if not others:
        pages.requeue_orphans(runtime.store, runtime.clock.now())


def _title(prepared: PreparedCrawl) -> str:
    return f"site crawl {prepared.config['name']} ({prepared.spec.mode.value})"


def _hosts(state: CrawlState) -> list[str]:
    # Rebuilt on every call: hosts found mid-crawl join the scope.
    return state.scope.config.hosts_in(pages.distinct_hosts(state.runtime.store))


def _path_regex(state: CrawlState) -> str | None:
    return state.scope.path.pattern if state.scope.path is not None else None


def _reset(state: CrawlState, prepared: PreparedCrawl) -> None:
    store, now = state.runtime.store, state.runtime.clock.now()
    spec = prepared.spec
    if spec.requires is Needs.URL:
        return  # a single page is taken directly; the queue is not reset
    if spec.force_fetch:
        pages.reset(store, pages.FORCE_RESET, _hosts(state), _path_regex(state), now)
    elif spec.retry_failed:
        pages.reset(store, pages.RETRY_RESET, _hosts(state), _path_regex(state), now)


async def _crawl(
    state: CrawlState, prepared: PreparedCrawl, control: RunControl, guard: RunGuard
) -> None:
    runtime = state.runtime
    store = runtime.store
    pages.insert_urls(store, prepared.seeds, runtime.clock.now())
    _reset(state, prepared)
    single = prepared.spec.requires is Needs.URL
    async with runtime.fetcher() as fetcher:
        while True:
            if single:
                seed = pages.page_by_url(store, prepared.seeds[0])
                assert seed is not None
                batch = (
                    []
                    if seed["id"] in state.seen
                    else [pages.take_page(store, seed["id"], runtime.clock.now())]
                )
            else:
                batch = pages.take_pending(store, _hosts(state), _path_regex(state), limit=BATCH,
                                           exclude=state.seen, now=runtime.clock.now())  # fmt: skip
            if not batch or await _drain(state, fetcher, batch, control, guard, prepared):
                return


async def _drain(
    state: CrawlState,
    fetcher: Fetcher,
    batch: list[Row],
    control: RunControl,
    guard: RunGuard,
    prepared: PreparedCrawl,
) -> bool:
    """Crawl one batch, up to `site_crawl_concurrency` pages at once; True when the run stops.

    The fetcher's governor keeps per-domain spacing and concurrency whatever the width;
    a page only starts when the run guard lets it (a request budget reserves one request
    per page in flight). A stop lets the pages in flight finish and re-queues the rest.
    """
    width = max(1, state.runtime.settings.site_crawl_concurrency)
    max_pages = prepared.config.get("max_pages")
    waiting = list(batch)
    running: set[asyncio.Task[None]] = set()
    stopping = False
    try:
        while waiting or running:
            while waiting and not stopping and len(running) < width:
                row = waiting[0]
                if row["id"] in state.seen:
                    waiting.pop(0)  # reached meanwhile as a followed redirect's destination
                    continue
                domain = registrable_domain(row["url"])
                if _before_page(state, guard, control, max_pages):
                    stopping = True
                    break
                if not guard.may_start(domain):
                    # Refused while pages are in flight only for the budget they reserve:
                    # wait for one of them; otherwise the guard has ended the run.
                    stopping = guard.stopped or domain in guard.stopped_domains or not running
                    break
                waiting.pop(0)
                state.seen.add(row["id"])
                page = _page(state, fetcher, row, domain, control, guard)
                running.add(asyncio.create_task(page))
            if not running:
                break
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
            if state.postponed or state.budget_spent or guard.stopped or guard.stopped_domains:
                stopping = True
    except BaseException:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    if stopping:
        pages.requeue(state.runtime.store, [r["id"] for r in waiting], state.runtime.clock.now())
    return stopping


async def _page(
    state: CrawlState,
    fetcher: Fetcher,
    row: Row,
    domain: str,
    control: RunControl,
    guard: RunGuard,
) -> None:
    # Every other page in flight has reserved one request of the budget.
    budget = (
        guard.max_requests - guard.requests - (guard.in_flight - 1)
        if guard.max_requests is not None
        else None
    )
    fetched = await crawl_row(state, fetcher, row, budget)
    requests = fetched.requests if fetched is not None else 0
    control.spend(requests)
    guard.finished(domain, outcome=_outcome(fetched),
                   failure_class=fetched.failure_class if fetched else None,
                   requests=requests)  # fmt: skip


def _before_page(
    state: CrawlState, guard: RunGuard, control: RunControl, max_pages: int | None
) -> bool:
    reason = control.interruption()
    if reason is not None:
        guard.interrupt(reason)
        return True
    if max_pages is not None and len(state.seen) >= max_pages:
        guard.limit(f"Reached max pages ({max_pages})")
        return True
    return False


def _outcome(fetched: Any) -> Outcome:
    if fetched is None or fetched.skipped_reason:
        return Outcome.SKIPPED
    return Outcome.FAILED if fetched.failure_class is not None else Outcome.OK


async def _process(state: CrawlState, prepared: PreparedCrawl) -> None:
    wanted = ProcessingStatus.FAILED if prepared.spec.retry_failed else ProcessingStatus.EXTRACTED
    rows = pages.files_to_process(state.runtime.store, wanted, _hosts(state), _path_regex(state))
    for row in rows:
        state.seen.add(row["id"])
        await process_stored(state, row, fresh=prepared.spec.reindex_extracted)


def _stop(state: CrawlState, guard: RunGuard, prepared: PreparedCrawl) -> tuple[Stop, str]:
    if state.postponed:
        return Stop.BLOCKED, f"politeness ended the run ({state.postponed})"
    if state.robots_skips and not state.answered:
        return Stop.BLOCKED, "robots.txt disallows every remaining URL"
    if state.budget_spent and guard.stop is None:
        return Stop.MAX_REQUESTS, f"Reached max requests limit ({guard.max_requests})"
    if guard.stop is None and guard.stopped_domains:
        guard.settle(set(guard.stopped_domains))
    return guard.stop or Stop.QUEUE_EMPTY, guard.detail


def _tally(state: CrawlState, left: int) -> Tally:
    e = state.events
    return Tally(
        succeeded=e[PageEvent.NEW]
        + e[PageEvent.UNCHANGED]
        + e[PageEvent.CHANGED]
        + e[PageEvent.REDIRECTED],
        failures=e[PageEvent.FAILED],
        coverage_gaps=e[PageEvent.FAILED] + left,
        productive=e[PageEvent.NEW] + e[PageEvent.CHANGED] > 0,
        fetched_start_url=state.fetched_seed and state.spec.mode is not CrawlMode.SINGLE_PAGE,
        listing_yielded=state.seed_yielded,
    )


def _counters(state: CrawlState) -> dict[str, int]:
    e = state.events
    counters = event_counts(e)
    counters.update(claimed=len(state.seen), ok=e[PageEvent.NEW], requests=state.requests,
                    observations=state.observations)  # fmt: skip
    return counters


def export_webpages(runtime: Runtime) -> None:
    """The queue as a Parquet snapshot, read by DuckDB as the `webpages` view."""
    dimensions.export_webpages(runtime)
