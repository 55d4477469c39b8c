"""Onboarding: queue a company's discovery, run it, and store sensors, domains and rows.

`onboard_pending` is the batch (CLI `catlas onboard --pending`, the Dagster onboarding job);
`onboard_company` runs one company now (`catlas onboard --company X`). Both claim the
company's `queue_jobs(kind='discover')` job first, so two workers never discover the same
company at the same time, and both end with one `crawl_runs` verdict (kind `discovery`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from catlas_assets.domain.batch_bound import BatchBound
from catlas_assets.domain.candidates import Candidate
from catlas_assets.domain.onboarding_rules import (
    DomainPlan,
    SensorPlan,
    after_failed_attempt,
    after_interruption,
)
from catlas_assets.domain.seeding import seed_sensor
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import (
    DomainKind,
    OnboardingStatus,
    RunKind,
    SensorStatus,
    Stop,
)
from catlas_assets.ids import new_id
from catlas_assets.services import event_loop, lake_sync
from catlas_assets.services.catalog import resolve_company
from catlas_assets.services.discovery import DiscoveryResult, discover_async
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from resources.state import onboarding_store as queue
from resources.state.onboarding_release import release_discover_jobs


@dataclass
class CompanyOutcome:
    company_id: int
    name: str
    status: str  # active | no_website | failed (this attempt) | lost
    job_status: str
    result: DiscoveryResult | None
    created: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    error: str = ""


@dataclass
class OnboardingReport:
    report: RunReport
    companies: list[CompanyOutcome]

    @property
    def sensors_created(self) -> int:
        return sum(len(c.created) for c in self.companies)


def enqueue(runtime: Runtime, company_id: int, *, fetch_now: bool = False) -> int:
    """Queue (or find) the company's discover job; the company becomes `pending`."""
    return queue.enqueue_discover(
        runtime.store,
        company_id,
        now=runtime.clock.now(),
        max_attempts=runtime.settings.onboarding_max_attempts,
        payload={"fetch_now": fetch_now},
    )


def _plans(
    runtime: Runtime, company: dict[str, Any], selected: list[Candidate], *, fetch_now: bool
) -> list[SensorPlan]:
    s = runtime.settings
    now = runtime.clock.now()
    plans = []
    for candidate in selected:
        seed = seed_sensor(
            surface=candidate.surface,
            connector=candidate.connector,
            company_importance=company["importance"],
            company_tier=company["tier"],
            confidence=candidate.confidence,
            min_interval_s=s.min_interval_s,
            max_interval_s=s.max_interval_s,
            now=now,
            fetch_now=fetch_now,
            rng=runtime.rng,
        )
        plans.append(
            SensorPlan(
                surface=candidate.surface.value,
                url=candidate.url,
                connector=candidate.connector,
                method=candidate.method.value,
                confidence=candidate.confidence,
                values={
                    "status": SensorStatus.PENDING,
                    "tier": seed.tier,
                    "base_interval_s": seed.base_interval_s,
                    "current_interval_s": seed.base_interval_s,
                    "next_run_at": seed.next_run_at,
                    "priority": seed.priority,
                    "quality_score": seed.quality_score,
                },
            )
        )
    return plans


def _domains(
    runtime: Runtime, company: dict[str, Any], result: DiscoveryResult
) -> tuple[list[DomainPlan], dict[str, Any]]:
    """Domain rows, and the company's new canonical domain when the move is certain."""
    if not result.domain:
        return [], {}
    if result.redirected_from is None:
        return [DomainPlan(result.domain, DomainKind.CANONICAL)], {"domain": result.domain}
    plans = [DomainPlan(result.redirected_from, DomainKind.REDIRECT)]
    owner = queue.domain_owner(runtime.store, result.domain)
    # Unambiguous (the homepage answered on one registrable domain) and unique (no other
    # company already has it): only then does the canonical domain change.
    if owner is None or owner == company["id"]:
        plans.append(DomainPlan(result.domain, DomainKind.CANONICAL))
        return plans, {"domain": result.domain}
    plans.append(DomainPlan(result.domain, DomainKind.ALIAS))
    return plans, {}


def _lake_rows(
    runtime: Runtime, company_id: int, run_id: str, result: DiscoveryResult
) -> list[dict[str, Any]]:
    now = runtime.clock.now()
    return [
        {
            "candidate_id": new_id("dc", now),
            "run_id": run_id,
            "company_id": company_id,
            "discovered_at": now,
            "url": c.url,
            "surface": c.surface.value,
            "method": c.method.value,
            "confidence": c.confidence,
            "verified": c.verified,
            "depth": c.depth,
            "selected": c.selected,
            "reason": c.reason,
        }
        for c in result.candidates
    ]


def _store(
    runtime: Runtime, job: dict[str, Any], result: DiscoveryResult, run_id: str, fetch_now: bool
) -> CompanyOutcome:
    store = runtime.store
    company = store.company(job["company_id"])
    now = runtime.clock.now()
    if result.status == OnboardingStatus.FAILED:
        attempt = after_failed_attempt(
            attempts=job["attempts"],
            max_attempts=job["max_attempts"],
            now=now,
            backoff=timedelta(seconds=runtime.settings.onboarding_retry_backoff_s),
        )
        recorded = queue.record_failed_attempt(
            store,
            job,
            worker=runtime.worker,
            error=result.error or "discovery failed",
            now=now,
            attempt=attempt,
        )
        job_status = attempt.job_status.value if recorded else "lost"
        return CompanyOutcome(
            company["id"], company["name"], "failed", job_status, result, error=result.error
        )
    status = result.status  # active or no_website
    domain_plans, company_values = _domains(runtime, company, result)
    applied = queue.complete_discover_job(
        store,
        job,
        worker=runtime.worker,
        now=now,
        onboarding_status=status,
        company_values=company_values,
        stats=result.stats(),
        same_as=result.same_as,
        plans=_plans(runtime, company, result.selected, fetch_now=fetch_now),
        domain_plans=domain_plans,
        run_id=run_id,
        lake_rows=_lake_rows(runtime, company["id"], run_id, result),
        onboarding_error=result.error or None,  # no_website: which name did not resolve
    )
    if not applied.committed:
        return CompanyOutcome(company["id"], company["name"], "lost", "lost", result)
    return CompanyOutcome(
        company["id"],
        company["name"],
        status.value,
        "done",
        result,
        applied.created,
        applied.updated,
    )


def _run_jobs(
    runtime: Runtime,
    jobs: list[dict[str, Any]],
    run_id: str,
    *,
    fetch_now: bool | None,
    on_company: Callable[[CompanyOutcome], None] | None,
    control: RunControl | None = None,
    bound: BatchBound | None = None,
) -> tuple[list[CompanyOutcome], list[dict[str, Any]]]:
    """Discover the jobs' companies; returns the outcomes and the jobs never reached.

    With a `control`, `bound` decides before each company whether it may start (the run
    options bound the whole batch; each discovery keeps its own budget).
    """
    not_reached: list[dict[str, Any]] = []

    async def one(
        job: dict[str, Any], gate: asyncio.Semaphore
    ) -> tuple[dict, DiscoveryResult | None]:
        company = runtime.store.company(job["company_id"])
        async with gate:
            if (
                control is not None
                and bound is not None
                and not bound.may_start(control.interruption())
            ):
                not_reached.append(job)
                return job, None
            # One fetcher per company: discovery adjusts its fetcher's redirect budget.
            async with runtime.fetcher() as fetcher:
                try:
                    result = await discover_async(runtime, company["website"], fetcher)
                except Exception as exc:
                    # One company's unexpected error fails its job (retried later), not the
                    # batch.
                    result = DiscoveryResult(
                        website=company["website"],
                        status=OnboardingStatus.FAILED,
                        error=f"{type(exc).__name__}: {exc}",
                    )
            # Counted before the gate opens, so the next company sees what this one spent.
            if control is not None and bound is not None:
                bound.finished(result.requests)
                control.spend(result.requests)
            return job, result

    async def run_all() -> list[CompanyOutcome]:
        gate = asyncio.Semaphore(runtime.settings.onboarding_concurrency)
        outcomes = []
        # Tasks made in queue order wait on the gate in that order: the batch bound then
        # cuts the end of the queue, never a company picked at random.
        tasks = [asyncio.ensure_future(one(job, gate)) for job in jobs]
        for task in asyncio.as_completed(tasks):
            job, result = await task
            if result is None:
                continue
            now_flag = fetch_now if fetch_now is not None else bool(job["payload"].get("fetch_now"))
            outcome = _store(runtime, job, result, run_id, now_flag)
            outcomes.append(outcome)
            if on_company is not None:
                on_company(outcome)
        return outcomes

    return (event_loop.run(run_all()) if jobs else []), not_reached


def _finish(
    recorder: RunRecorder,
    outcomes: list[CompanyOutcome],
    runtime: Runtime,
    *,
    bound: BatchBound | None = None,
    released: int = 0,
) -> RunReport:
    lake_sync.flush(runtime)
    onboarded = [
        o for o in outcomes if o.status in (OnboardingStatus.ACTIVE, OnboardingStatus.NO_WEBSITE)
    ]
    failed = [o for o in outcomes if o.status == "failed"]
    created = sum(len(o.created) for o in outcomes)
    counters = {
        "claimed": len(outcomes),
        "ok": len(onboarded),
        "failed": len(failed),
        "skipped": len([o for o in outcomes if o.status == "lost"]),
        "requests": sum(o.result.requests for o in outcomes if o.result),
        "sensors_created": created,
        "sensors_updated": sum(len(o.updated) for o in outcomes),
        "dead": len([o for o in outcomes if o.job_status == "dead"]),
        "released": released,
    }
    detail = f"{len(onboarded)} companies onboarded, {created} sensors created"
    if failed:
        detail += f", {len(failed)} failed ({failed[0].name}: {failed[0].error})"
    if released:
        detail += f", {released} released to the next batch"
    stop = Stop.QUEUE_EMPTY
    if bound is not None and bound.stop is not None:
        stop = bound.stop
        detail = f"{bound.verdict_detail}; {detail}"
    return recorder.finish(
        stop=stop,
        tally=Tally(
            succeeded=len(onboarded),
            failures=len(failed),
            # A company not reached is a coverage gap, as a due sensor not reached is.
            coverage_gaps=len(failed) + released,
            productive=bool(onboarded),
        ),
        counters=counters,
        detail=detail,
    )


def onboard_pending(
    runtime: Runtime,
    *,
    limit: int | None = None,
    launch_handle: str | None = None,
    fetch_now: bool | None = None,
    on_company: Callable[[CompanyOutcome], None] | None = None,
    control: RunControl | None = None,
) -> OnboardingReport:
    """Claim a batch of due discover jobs, discover each company, store what was found.

    `fetch_now` (None: as each job asked) makes the new sensors' first run now. `control`
    (`-n`, `--deadline`, a signal) bounds the whole batch: no company starts once it says
    stop, and the companies not reached are released to wait for the next batch.
    """
    control = control or RunControl()
    if (unstarted := _unstarted(runtime, control)) is not None:
        return OnboardingReport(unstarted, [])
    bound = BatchBound(max_requests=control.budget_left())
    recorder = RunRecorder(runtime, RunKind.DISCOVERY, launch_handle=launch_handle)
    jobs = queue.claim_discover_jobs(
        runtime.store,
        now=runtime.clock.now(),
        worker=runtime.worker,
        limit=limit or runtime.settings.onboarding_batch_size,
        lease_s=runtime.settings.onboarding_claim_timeout_s,
    )
    try:
        outcomes, not_reached = _run_jobs(
            runtime,
            jobs,
            recorder.run_id,
            fetch_now=fetch_now,
            on_company=on_company,
            control=control,
            bound=bound,
        )
    except BaseException:
        for job in jobs:  # interrupted: the jobs go back to the queue as they were
            now = runtime.clock.now()
            queue.record_failed_attempt(
                runtime.store,
                job,
                worker=runtime.worker,
                error="interrupted",
                now=now,
                attempt=after_interruption(
                    attempts=job["attempts"], max_attempts=job["max_attempts"], now=now
                ),
            )
        raise
    released = _release(runtime, not_reached, bound)
    report = _finish(recorder, outcomes, runtime, bound=bound, released=released)
    return OnboardingReport(report, outcomes)


def _unstarted(runtime: Runtime, control: RunControl) -> RunReport | None:
    """A failed "Not started" verdict, written nowhere, when the batch may not even begin."""
    if (budget := control.budget_stop()) is not None:
        return unstarted_report(RunKind.DISCOVERY, runtime.clock.now(), stop=budget[0])
    if control.stop_before_start() is not None:
        return unstarted_report(RunKind.DISCOVERY, runtime.clock.now())
    return None


def _release(runtime: Runtime, not_reached: list[dict[str, Any]], bound: BatchBound) -> int:
    if not not_reached:
        return 0
    bound.settle(len(not_reached))
    return release_discover_jobs(
        runtime.store, not_reached, worker=runtime.worker, now=runtime.clock.now()
    )


def onboard_company(
    runtime: Runtime, ref: str, *, fetch_now: bool = False, control: RunControl | None = None
) -> OnboardingReport:
    """Discover one company now, whatever its queue position (bounded by `control`)."""
    control = control or RunControl()
    company = resolve_company(runtime, ref)
    if (unstarted := _unstarted(runtime, control)) is not None:
        return OnboardingReport(unstarted, [])
    enqueue(runtime, company["id"], fetch_now=fetch_now)
    job = queue.claim_company_job(
        runtime.store,
        company["id"],
        now=runtime.clock.now(),
        worker=runtime.worker,
        lease_s=runtime.settings.onboarding_claim_timeout_s,
    )
    recorder = RunRecorder(runtime, RunKind.DISCOVERY)
    bound = BatchBound(max_requests=control.budget_left())
    outcomes, not_reached = _run_jobs(
        runtime,
        [job],
        recorder.run_id,
        fetch_now=fetch_now,
        on_company=None,
        control=control,
        bound=bound,
    )
    released = _release(runtime, not_reached, bound)
    report = _finish(recorder, outcomes, runtime, bound=bound, released=released)
    return OnboardingReport(report, outcomes)


def pending_jobs(runtime: Runtime, now: datetime | None = None) -> int:
    return queue.pending_count(runtime.store, now=now or runtime.clock.now())
