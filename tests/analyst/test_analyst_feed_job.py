"""The daily Dagster job that refreshes the Atom feed of changes in the demo lake, and its
schedule: the lake's feed is the document `catlas feed` writes, each entry linking its diff."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import feedparser
import pytest
from click.testing import CliRunner

from catlas_assets.cli import cli
from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.change_feed import FEED_KEY
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

# The first test to run also lives through the session's demo (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def test_the_daily_schedule_asks_for_yesterdays_feed() -> None:
    schedule = defs.resolve_schedule_def("refresh_change_feed_schedule")
    when = datetime(2026, 3, 10, 3, 0, tzinfo=UTC)
    with dg.build_schedule_context(scheduled_execution_time=when) as context:
        (request,) = schedule.evaluate_tick(context).run_requests or []
    assert schedule.job_name == "refresh_change_feed"
    assert request.partition_key == "2026-03-09"


def test_the_daily_job_writes_the_feed_into_the_lake(demo_copy: Path) -> None:
    runtime = Runtime(Settings(state_dir=str(demo_copy)))
    try:
        assert not runtime.storage.exists(FEED_KEY)
    finally:
        runtime.close()
    yesterday = f"{datetime.now(UTC) - timedelta(days=1):%Y-%m-%d}"  # the schedule's key
    result = defs.resolve_job_def("refresh_change_feed").execute_in_process(
        partition_key=yesterday, resources={"catlas": CatlasResource(state_dir=str(demo_copy))}
    )
    assert result.success
    (materialization,) = result.asset_materializations_for_node("change_feed")
    runtime = Runtime(Settings(state_dir=str(demo_copy)))
    try:
        document = runtime.storage.read(FEED_KEY)
    finally:
        runtime.close()
    parsed = feedparser.parse(document)
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.version == "atom10"
    assert materialization.metadata["entries"].value == len(parsed.entries) > 0
    # The same entries as `catlas feed`, and the job published every entry's diff.
    out = demo_copy / "cli.atom"
    shown = CliRunner().invoke(
        cli, ["feed", "--out", str(out)], env={"CATLAS_STATE_DIR": str(demo_copy)}
    )
    assert shown.exit_code == 0, shown.output
    assert [e.id for e in feedparser.parse(out.read_bytes()).entries] == [
        e.id for e in parsed.entries
    ]
    for entry in parsed.entries:
        diffs = [link.href for link in entry.links if link.href != entry.link]
        assert diffs, json.dumps(entry, default=str)[:500]
