"""repair_pass: find failing, stale and redirected sensors' pages again (spec: Repair).

Per sensor, within `repair_max_requests` (6) requests counted inside the fetches
(robots.txt and redirect hops too), politely and under robots.txt like every fetch:
retry the URL through the pipeline (so the attempt is an ordinary run: its observation,
failure counting and the status ladder up to `retired`) → candidates for the same surface
from the redirect target, the sitemap and the homepage navigation (discovery's
classification, domain/candidates.py) → content identity with the last snapshot's text
(domain/repair.py) → migrate, review, retire or wait. A dry run asks the same questions
and writes nothing. The pass is one `crawl_runs` row of kind `repair`.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

from catlas_assets.domain import repair as rules
from catlas_assets.domain.candidates import CandidateBook, origin, same_url
from catlas_assets.domain.normalize import normalize
from catlas_assets.domain.page_links import extract_links
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.domain.sitemap import SitemapError, parse_sitemap
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import (
    SUCCESSES,
    ReviewKind,
    RunKind,
    SensorStatus,
    Stop,
    Surface,
)
from catlas_assets.errors import CatlasError
from catlas_assets.services import event_loop, lake_sync
from catlas_assets.services.pipeline import run_sensor, sensor_state
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from resources.fetcher import Fetcher
from resources.state import repair_store

HTML_TYPES = ("text/html", "application/xhtml")


class RequestBudget:
    """A fetcher that refuses to send more than `limit` requests in all (discovery's rule:
    every fetch is capped by what is left, robots.txt and hops included)."""

    def __init__(self, fetcher: Fetcher, limit: int) -> None:
        self._fetcher = fetcher
        self.limit = limit
        self.used = 0

    @property
    def left(self) -> int:
        return self.limit - self.used

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fetcher, name)

    async def fetch(self, url: str, **kwargs: Any) -> Fetched:
        kwargs["max_requests"] = min(self.left, kwargs.get("max_requests") or self.left)
        if self.left < 1:
            return Fetched(url, url, None, {}, b"", 0, 0, skipped_reason="request_budget")
        fetched = await self._fetcher.fetch(url, **kwargs)
        self.used += fetched.requests
        return fetched


@dataclass
class Attempt:
    """One sensor's repair attempt: what was found and what was decided."""

    sensor_id: int
    company_id: int
    surface: str
    url: str
    status: str
    decision: rules.Decision
    candidates: list[rules.Scored] = field(default_factory=list)
    requests: int = 0
    successor_id: int | None = None
    review_id: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "sensor_id": self.sensor_id,
            "surface": self.surface,
            "url": self.url,
            "status": self.status,
            "action": self.decision.action.value,
            "successor": self.decision.successor,
            "successor_id": self.successor_id,
            "reason": self.decision.reason,
            "requests": self.requests,
            "candidates": [c.as_json() for c in self.candidates],
        }


@dataclass
class RepairResult:
    attempts: list[Attempt]
    report: RunReport | None  # None for a dry run
    dry_run: bool = False

    def count(self, action: rules.Action) -> int:
        return sum(1 for a in self.attempts if a.decision.action is action)


def thresholds(runtime: Runtime) -> rules.Thresholds:
    s = runtime.settings
    return rules.Thresholds(
        max_distance=s.repair_simhash_max_distance,
        min_ratio=s.repair_min_ratio,
        retire_after_failures=s.retire_after_failures,
        cooldown_s=s.repair_cooldown_s,
    )


def repair_pass(
    runtime: Runtime,
    *,
    dry_run: bool = False,
    sensor_id: int | None = None,
    control: RunControl | None = None,
    launch_handle: str | None = None,
) -> RepairResult:
    """One repair pass over the due sensors (or the one `sensor_id`, cool-down ignored)."""
    control = control or RunControl()
    if control.stop_before_start() or control.budget_stop():
        return RepairResult([], unstarted_report(RunKind.REPAIR, runtime.clock.now()), dry_run)
    rows = due_sensors(runtime, sensor_id)
    recorder = None if dry_run else RunRecorder(runtime, RunKind.REPAIR, launch_handle)
    run_id = recorder.run_id if recorder else "dry-run"

    async def go() -> tuple[list[Attempt], Stop]:
        attempts: list[Attempt] = []
        async with runtime.fetcher(governed=not dry_run) as fetcher:
            for row in rows:
                if control.budget_stop() or control.interruption():
                    return attempts, Stop.INTERRUPTED
                try:
                    attempts.append(await _attempt(runtime, fetcher, row, run_id, dry_run))
                except CatlasError:
                    continue  # claimed by a worker right now: its run decides, not ours
        return attempts, Stop.QUEUE_EMPTY

    attempts, stop = event_loop.run(go())
    if recorder is None:
        return RepairResult(attempts, None, True)
    lake_sync.flush(runtime)
    return RepairResult(attempts, _finish(recorder, attempts, stop), False)


def due_sensors(runtime: Runtime, sensor_id: int | None = None) -> list[dict[str, Any]]:
    if sensor_id is not None:
        row = runtime.store.sensor(sensor_id)
        if row["status"] == SensorStatus.RETIRED:
            raise CatlasError(f"sensor {sensor_id} is retired: nothing to repair")
        return [row]
    now = runtime.clock.now()
    cooldown = runtime.settings.repair_cooldown_s
    due = repair_store.repair_due(runtime.store, limit=runtime.settings.repair_batch * 4)
    ready = [r for r in due if rules.cooled_down(r["config"] or {}, now, cooldown)]
    return ready[: runtime.settings.repair_batch]


def _finish(recorder: RunRecorder, attempts: list[Attempt], stop: Stop) -> RunReport:
    by_action = {a.value: sum(1 for x in attempts if x.decision.action is a) for a in rules.Action}
    recovered, migrated = by_action["recover"], by_action["migrate"]
    counters = {
        "claimed": len(attempts),
        "requests": sum(a.requests for a in attempts),
        **{f"repair_{k}": v for k, v in by_action.items()},
    }
    detail = ", ".join(f"{v} {k}" for k, v in by_action.items() if v) or "nothing to repair"
    return recorder.finish(
        stop=stop,
        tally=Tally(succeeded=len(attempts), productive=bool(recovered or migrated)),
        counters=counters,
        detail=detail,
    )


async def _attempt(
    runtime: Runtime, fetcher: Fetcher, row: dict[str, Any], run_id: str, dry_run: bool
) -> Attempt:
    budget = RequestBudget(fetcher, runtime.settings.repair_max_requests)
    t = thresholds(runtime)
    now = runtime.clock.now()
    attempt = Attempt(
        row["id"],
        row["company_id"],
        row["surface"],
        row["url"],
        row["status"],
        rules.Decision(rules.Action.WAIT),
    )
    recovered, retry_target, row = await _retry(runtime, budget, row, run_id, dry_run)
    failures = row["consecutive_failures"] + (1 if dry_run and not recovered else 0)
    if not recovered and row["status"] != SensorStatus.RETIRED:
        last_text = await asyncio.to_thread(_last_text, runtime, row)
        found = await _candidates(runtime, budget, row, retry_target)
        attempt.candidates = await _scored(budget, found, last_text, t)
    attempt.decision = rules.decide(
        recovered=recovered, scored=attempt.candidates, failures=failures, t=t
    )
    if row["status"] == SensorStatus.RETIRED and not recovered:
        attempt.decision = rules.Decision(rules.Action.RETIRE, reason="the retry retired it")
    attempt.requests = budget.used
    if not dry_run:
        await asyncio.to_thread(_apply, runtime, row, attempt, now)
    return attempt


async def _retry(
    runtime: Runtime, budget: RequestBudget, row: dict[str, Any], run_id: str, dry_run: bool
) -> tuple[bool, str | None, dict[str, Any]]:
    """Fetch the URL again: (recovered, where it redirected to, the sensor row after)."""
    redirect = (row["config"] or {}).get("redirect_url")
    if dry_run:
        fetched = await budget.fetch(row["url"])
        ok = fetched.failure_class is None and fetched.status == 200
        left = ok and registrable_domain(fetched.final_url) != registrable_domain(row["url"])
        target = fetched.final_url if fetched.final_url != row["url"] else redirect
        return ok and not left, target, row
    claimed = await asyncio.to_thread(
        runtime.store.claim_sensor,
        row["id"],
        now=runtime.clock.now(),
        worker=runtime.worker,
        claim_timeout_s=runtime.settings.claim_timeout_s,
    )
    result = await run_sensor(
        runtime, cast(Fetcher, budget), sensor_state(claimed), run_id, force=True
    )
    after = await asyncio.to_thread(runtime.store.sensor, row["id"])
    if not result.committed:
        return False, redirect, after
    recovered = result.outcome in SUCCESSES
    target = (after["config"] or {}).get("redirect_url") or redirect
    return recovered, target, after


def _last_text(runtime: Runtime, row: dict[str, Any]) -> str:
    key = row.get("last_text_key")
    if not key:
        return ""
    return runtime.archive.get(key).decode("utf-8", errors="replace")


async def _candidates(
    runtime: Runtime, budget: RequestBudget, row: dict[str, Any], redirect: str | None
) -> list[tuple[str, str]]:
    """(url, source) for the sensor's surface: redirect target, sitemap, homepage nav."""
    surface = Surface(row["surface"])
    domain = registrable_domain(row["url"])
    own = {row["url"], *((row["config"] or {}).get("previous_urls") or [])}
    taken = {s["url"] for s in runtime.store.list_sensors(company_id=row["company_id"])}
    found: list[tuple[str, str]] = []

    def keep(url: str, source: str) -> None:
        if any(same_url(url, u) for u in own | taken) or any(same_url(url, u) for u, _ in found):
            return
        found.append((url, source))

    if redirect:
        keep(redirect, "redirect")
    if surface is Surface.HOMEPAGE:
        return found
    site = _home_of(origin(row["url"]), domain)
    book = CandidateBook()
    sitemap = await budget.fetch(f"{site}/sitemap.xml")
    if sitemap.failure_class is None and sitemap.status == 200:
        with contextlib.suppress(SitemapError):
            book.add_sitemap_urls(parse_sitemap(sitemap.body, max_urls=500).urls, domain)
    home = await budget.fetch(f"{site}/")
    if home.failure_class is None and home.status == 200:
        book.add_links(extract_links(home.body, home.content_type, home.final_url), domain)
    ranked = sorted(
        (c for c in book.candidates if c.surface is surface and not c.rejected),
        key=lambda c: -c.score,
    )
    for candidate in ranked:
        keep(candidate.url, candidate.method.value)
    return found


def _home_of(site: str, domain: str) -> str:
    """The registrable domain's own site: a `careers.` sensor's home is the main host."""
    scheme = site.split("://", 1)[0]
    host = site.split("://", 1)[1]
    if host.removeprefix("www.") == domain:
        return site
    return f"{scheme}://{domain}"


async def _scored(
    budget: RequestBudget, found: list[tuple[str, str]], last_text: str, t: rules.Thresholds
) -> list[rules.Scored]:
    scored: list[rules.Scored] = []
    for url, source in found:
        fetched = await budget.fetch(url) if budget.left > 0 else None
        if fetched is None or fetched.failure_class is not None or fetched.status != 200:
            scored.append(rules.unreachable(url, source))
            continue
        if registrable_domain(fetched.final_url) != registrable_domain(url):
            scored.append(rules.unreachable(url, source))
            continue
        text = normalize(fetched.body, fetched.content_type).text
        scored.append(replace(rules.score(url, source, last_text, text, t), url=fetched.final_url))
    return scored


def _apply(runtime: Runtime, row: dict[str, Any], attempt: Attempt, now: datetime) -> None:
    store = runtime.store
    stamp = {"last_repair_at": now.isoformat()}
    decision = attempt.decision
    detail = {
        "from": row["url"],
        "reason": decision.reason,
        "candidates": [c.as_json() for c in attempt.candidates],
    }
    if decision.action is rules.Action.RECOVER:
        repair_store.update_sensor(store, row["id"], now=now, config=stamp, next_run_at=now)
        return
    repair_store.update_sensor(store, row["id"], now=now, config=stamp)
    if decision.action is rules.Action.MIGRATE and decision.successor:
        try:
            attempt.successor_id = migrate_sensor(
                runtime, row["id"], decision.successor, note="migrated by repair", now=now
            )
            return
        except CatlasError as exc:  # the successor URL is watched already: a person decides
            attempt.decision = rules.Decision(rules.Action.REVIEW, reason=str(exc))
            detail["reason"] = str(exc)
    if attempt.decision.action is rules.Action.REVIEW:
        attempt.review_id = repair_store.open_review(
            store, ReviewKind.SENSOR_MIGRATION, row, detail, now
        )
    elif decision.action is rules.Action.RETIRE and row["status"] != SensorStatus.RETIRED:
        repair_store.retire(store, row["id"], detail=detail, now=now)


def migrate_sensor(
    runtime: Runtime,
    sensor_id: int,
    url: str,
    *,
    note: str,
    now: datetime,
    keep_item: int | None = None,
) -> int:
    """Move a sensor's watch to `url`: a new `pending` sensor continuing its lineage.
    The sensor's open migration items are closed, but `keep_item` (its caller closes it)."""
    old = runtime.store.sensor(sensor_id)
    config = rules.successor_config(sensor_id, old["config"] or {}, now)
    return repair_store.migrate(
        runtime.store, old, url=url, new_config=config, note=note, now=now, keep_item=keep_item
    )
