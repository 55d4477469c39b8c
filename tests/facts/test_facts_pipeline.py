"""The hand-off around extraction: SCHEMA failures, connector stats, the inbox, the webhook, CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from catlas_assets.cli import main
from catlas_assets.services import catalog
from catlas_assets.services.notify import deliver_pending
from catlas_assets.services.sensor_run import run_one
from fixture_web import at_day
from resources.state import inbox
from resources.state.connector_stats import all_stats
from tests.webhook_receiver import Receiver

WEB = Path(__file__).resolve().parents[2] / "fixtures" / "web"


def _at(sim, day: int) -> None:
    moment = at_day(day) + timedelta(hours=2)
    sim.clock.set(moment)
    sim.web.set_now(moment)


def _sensor(runtime, url: str, surface: str, connector: str = "generic_html") -> int:
    company = catalog.add_company(runtime, name="Kestrel Labs", website=None)
    return catalog.add_sensor(
        runtime, company_id=company, surface=surface, url=url, connector=connector
    )


def test_a_response_in_the_wrong_shape_fails_as_schema_and_counts_in_the_connectors_table(
    sim,
) -> None:
    runtime = sim.runtime
    sid = _sensor(runtime, "http://kestrel-labs.com/careers", "jobs_board", "greenhouse")
    result, _ = run_one(runtime, sid, force=True)
    assert result.outcome.value == "failed" and result.failure_class.value == "SCHEMA"
    row = runtime.store.sensor(sid)
    assert row["last_failure_class"] == "SCHEMA" and row["snapshot_version"] == 0
    [obs] = runtime.lake.connect().execute("SELECT failure_class FROM observations").fetchall()
    assert obs == ("SCHEMA",)
    stats = all_stats(runtime.store)["greenhouse"]["stats"]
    assert stats["runs"] == 1 and stats["schema_failures"] == 1


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


def test_the_notifier_posts_slack_json_retries_failures_and_never_duplicates(
    make_runtime, web, database_url: str, receiver: Receiver
) -> None:
    runtime = make_runtime(database_url, notify_webhook_url=receiver.url)
    sim = SimpleNamespace(clock=runtime.clock, web=web)
    sid = _sensor(runtime, "http://kestrel-labs.com/pricing", "pricing")
    for day in (0, 4, 11):
        _at(sim, day)
        run_one(runtime, sid, force=True)
    pending = inbox.list_changes(runtime.store, status="pending")
    assert [p["kind"] for p in pending] == ["major", "major"]
    first = deliver_pending(runtime)
    assert (first.delivered, first.failed, first.waiting) == (0, 2, 2)
    second = deliver_pending(runtime)
    assert (second.delivered, second.failed, second.waiting) == (2, 0, 0)
    third = deliver_pending(runtime)
    assert (third.delivered, third.failed) == (0, 0)
    keys = [key for key, _ in receiver.received]
    assert sorted(keys) == sorted(p["change_id"] for p in pending)  # once each
    texts = [body["text"] for _, body in receiver.received]
    assert any("Team: $29 → $35 per month" in t for t in texts)
    assert all(body["blocks"][0]["type"] == "section" for _, body in receiver.received)
    # The message carries the page's URL and a link to the diff written into the lake.
    assert all("http://kestrel-labs.com/pricing" in t and "(diff: file://" in t for t in texts)
    links = [t.split("(diff: file://", 1)[1].rstrip(")") for t in texts]
    assert all(Path(link).read_text().startswith("<!DOCTYPE html>") for link in links)
    rows = inbox.list_changes(runtime.store)
    assert {r["status"] for r in rows} == {"delivered"} and all(r["attempts"] == 2 for r in rows)


def test_catlas_changes_lists_the_inbox_by_status_company_and_since(
    sim, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = sim.runtime
    sid = _sensor(runtime, "http://kestrel-labs.com/pricing", "pricing")
    for day in (0, 4, 11):
        _at(sim, day)
        run_one(runtime, sid, force=True)
    settings = runtime.settings
    monkeypatch.setenv("CATLAS_STATE_DIR", settings.state_dir)
    monkeypatch.setenv("CATLAS_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("COLUMNS", "250")

    def run(*args: str) -> str:
        capsys.readouterr()
        try:
            main(list(args))
        except SystemExit as exc:
            assert not exc.code, capsys.readouterr()
        return capsys.readouterr().out

    everything = run("changes", "--pending", "--company", "Kestrel Labs")
    assert "2 changes" in everything and "Team: $29 → $35 per month" in everything
    later = run("changes", "--since", "2026-01-12T00:00:00Z")
    assert "1 changes" in later and "new plan Scale" in later
    connectors = run("connectors")
    assert "generic_html" in connectors and "smartrecruiters" in connectors


def test_diff_and_run_sensor_file_work_on_local_files_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CATLAS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("CATLAS_DATABASE_URL", raising=False)
    old, new = (
        WEB / "kestrel-labs.com" / "pricing.html",
        WEB / "kestrel-labs.com" / "pricing.d04.html",
    )
    main(["diff", str(old), str(new), "--surface", "pricing", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["kind"] == "major" and result["summary"] == "Team: $29 → $35 per month"
    assert result["structured_delta"]["updated"]["pricing_plan"][0]["changes"]["price"] == [
        29.0,
        35.0,
    ]
    main(
        ["run-sensor", "--file", str(WEB / "kestrel-labs.com" / "team.html"), "--surface", "people"]
    )
    printed = json.loads(capsys.readouterr().out)
    assert sorted(p["name"] for p in printed["extraction"]["entities"]["person"]) == [
        "Ava Brooks", "Luis Ortega", "Maya Chen", "Sam Patel"
    ]  # fmt: skip
    assert not (tmp_path / "state").exists()  # nothing written
    with pytest.raises(SystemExit) as exc:
        main(["run-sensor", "--file", str(tmp_path / "missing.html")])
    assert exc.value.code == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_pending_changes_sensor_requests_a_delivery_only_when_the_notifier_is_on(
    sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dagster as dg

    from catlas_assets.defs.resources import CatlasResource
    from sensors_dag.notifications import pending_changes

    runtime = sim.runtime
    sid = _sensor(runtime, "http://kestrel-labs.com/pricing", "pricing")
    for day in (0, 4):
        _at(sim, day)
        run_one(runtime, sid, force=True)
    s = runtime.settings
    resource = CatlasResource(state_dir=s.state_dir, database_url=s.database_url, lake_url="")
    with dg.DagsterInstance.ephemeral() as instance:
        monkeypatch.delenv("CATLAS_NOTIFY_WEBHOOK_URL", raising=False)
        with dg.build_sensor_context(instance=instance, resources={"catlas": resource}) as ctx:
            off = pending_changes(ctx)
        assert not off.run_requests and "off" in (
            off.skip_reason.skip_message if off.skip_reason else ""
        )
        monkeypatch.setenv("CATLAS_NOTIFY_WEBHOOK_URL", "http://127.0.0.1:9/hook")
        with dg.build_sensor_context(instance=instance, resources={"catlas": resource}) as ctx:
            on = pending_changes(ctx)
        assert len(on.run_requests) == 1
        with dg.build_sensor_context(
            instance=instance, resources={"catlas": resource}, cursor=on.cursor
        ) as ctx:
            again = pending_changes(ctx)
        assert not again.run_requests
