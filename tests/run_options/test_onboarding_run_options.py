"""-n and --deadline bound a whole onboarding batch (a run of kind `discovery`), on SQLite and
PostgreSQL against the fixture web: no company starts once they say stop, the companies not
reached go back to the queue as they were, and the verdict says why."""

from __future__ import annotations

from urllib.parse import urlsplit

from catlas_assets.services import catalog
from catlas_assets.services.onboarding import onboard_company, onboard_pending
from catlas_assets.services.run_control import RunControl
from resources.state import onboarding_store as queue

COMPANIES = (
    ("Harborlight", "http://harborlight.com"),
    ("Lanternfish", "http://lanternfish.ai"),
    ("Cobalt Mills", "http://cobaltmills.com"),
)


class DeadlineDuringFirstCompany(RunControl):
    """A deadline that passes while the first company is discovered (time as an input, not a
    wait): the batch looks once before it begins and once before each company."""

    def __init__(self) -> None:
        super().__init__(deadline_s=60)
        self.looks = 0

    def deadline_passed(self) -> bool:
        self.looks += 1
        return self.looks > 2


def add_companies(runtime) -> dict[str, int]:
    return {name: catalog.add_company(runtime, name=name, website=url) for name, url in COMPANIES}


def hosts_asked(web) -> set[str]:
    return {r.host for r in web.requests}


def asked_only(web, name: str) -> bool:
    """The company's own site was asked, no other company's site was (ATS hosts aside)."""
    sites = {n: urlsplit(url).hostname for n, url in COMPANIES}
    asked = hosts_asked(web)
    return sites[name] in asked and not asked & {h for n, h in sites.items() if n != name}


def assert_waiting_as_before(runtime, company_ids: list[int]) -> None:
    for company_id in company_ids:
        [job] = queue.list_jobs(runtime.store, company_id=company_id)
        assert (job["status"], job["attempts"], job["claimed_by"]) == ("pending", 0, None)
        assert runtime.store.company(company_id)["onboarding_status"] == "pending"
        assert runtime.store.list_sensors(company_id=company_id) == []


def test_a_spent_request_budget_stops_the_batch_before_the_next_company(sim) -> None:
    runtime = sim.runtime
    ids = add_companies(runtime)
    control = RunControl(max_requests=1)

    batch = onboard_pending(runtime, control=control)

    # The first company keeps its own discovery budget; the others never start.
    assert [c.name for c in batch.companies] == ["Harborlight"]
    assert batch.companies[0].status == "active"
    assert asked_only(sim.web, "Harborlight")
    report = batch.report
    assert (report.stop.value, report.outcome.value) == ("max_requests", "success")
    assert report.detail.startswith("Reached max requests limit (1)")
    assert report.counters["released"] == 2 and report.coverage_gaps == 2
    assert control.requests_used == report.counters["requests"] > 1
    row = runtime.store.last_run("discovery")
    assert (row["stop"], row["outcome"], row["coverage_gaps"]) == ("max_requests", "success", 2)
    assert_waiting_as_before(runtime, [ids["Lanternfish"], ids["Cobalt Mills"]])

    # The released companies wait in the queue for the next batch, which takes them.
    following = onboard_pending(runtime)
    assert sorted(c.name for c in following.companies) == ["Cobalt Mills", "Lanternfish"]
    assert following.report.stop.value == "queue_empty"
    assert {c.status for c in following.companies} == {"active"}


def test_a_deadline_passed_mid_batch_interrupts_it_and_releases_the_rest(sim) -> None:
    runtime = sim.runtime
    ids = add_companies(runtime)

    batch = onboard_pending(runtime, control=DeadlineDuringFirstCompany())

    assert [c.name for c in batch.companies] == ["Harborlight"]
    assert asked_only(sim.web, "Harborlight")
    report = batch.report
    # Something was stored before the interruption: the run is partial, not failed.
    assert (report.stop.value, report.outcome.value) == ("interrupted", "partial")
    assert report.detail.startswith("Reached the deadline (60 s)")
    assert report.counters["released"] == 2
    assert_waiting_as_before(runtime, [ids["Lanternfish"], ids["Cobalt Mills"]])


def test_a_batch_stopped_before_its_first_company_is_not_started_and_touches_nothing(
    sim,
) -> None:
    runtime = sim.runtime
    ids = add_companies(runtime)

    for control, stop in (
        (RunControl(max_requests=0), "max_requests"),
        (RunControl(deadline_s=0), "interrupted"),
    ):
        batch = onboard_pending(runtime, control=control)
        report = batch.report
        assert (report.stop.value, report.outcome.value, report.detail) == (
            stop,
            "failed",
            "Not started",
        )
        assert batch.companies == [] and report.run_id == "-"

    assert sim.web.requests == []
    assert runtime.store.runs(kind="discovery") == []  # written nowhere
    assert_waiting_as_before(runtime, list(ids.values()))


def test_a_signal_after_the_claim_releases_every_company_and_says_not_started(sim) -> None:
    runtime = sim.runtime
    ids = add_companies(runtime)
    control = RunControl()
    control.request_stop("Interrupted by SIGTERM")
    # The signal arrives after the pre-start check: the claimed jobs must all go back.
    control.stop_before_start = lambda: None  # type: ignore[method-assign]

    batch = onboard_pending(runtime, control=control)

    report = batch.report
    assert (report.stop.value, report.outcome.value, report.detail.split(";")[0]) == (
        "interrupted",
        "failed",
        "Not started",
    )
    assert report.counters["released"] == 3 and report.coverage_gaps == 3
    assert sim.web.requests == []
    assert_waiting_as_before(runtime, list(ids.values()))


def test_onboard_company_obeys_the_run_options_too(sim) -> None:
    runtime = sim.runtime
    ids = add_companies(runtime)

    refused = onboard_company(runtime, "Lanternfish", control=RunControl(max_requests=0))
    assert (refused.report.detail, refused.report.outcome.value) == ("Not started", "failed")
    assert sim.web.requests == []
    assert_waiting_as_before(runtime, [ids["Lanternfish"]])

    control = RunControl(max_requests=1)
    done = onboard_company(runtime, "Lanternfish", control=control)
    # One company is one unit: its discovery runs whole on its own budget.
    assert done.companies[0].status == "active"
    assert asked_only(sim.web, "Lanternfish")
    assert control.budget_stop() is not None
    assert done.report.outcome.value == "success"
