"""Secrets never leave catlas in clear: not in `catlas settings`, not in an error line, not
in a run's detail (what `catlas report`, log lines and Dagster run metadata show)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from catlas_assets.defs.verdict_metadata import verdict_metadata
from catlas_assets.domain.masking import masked
from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import RunKind, Stop
from catlas_assets.errors import StorageError
from catlas_assets.services.runs import RunRecorder
from tests.cli.cli_harness import Catlas

SECRETS = ("s3cret", "tok123", "wJalrXUtnFEMI", "XXXXsecretXXXX")
DATABASE = "postgresql+psycopg://catlas:s3cret@127.0.0.1:1/catlas"
WEBHOOK = "https://hooks.example/in?token=tok123&channel=ops"
SLACK = "https://hooks.slack.com/services/T0001/B0002/XXXXsecretXXXX"
LAKE = "s3://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/catlas"
DETAIL = f"cannot write to the lake at {LAKE}/observations: access denied; notify {WEBHOOK}"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (DATABASE, "postgresql+psycopg://catlas:***@127.0.0.1:1/catlas"),
        (WEBHOOK, "https://hooks.example/in?token=***&channel=ops"),
        (SLACK, "https://hooks.slack.com/services/***"),
        (f"lake at '{LAKE}/x': denied", "lake at 's3://AKIAEXAMPLE:***@bucket/catlas/x': denied"),
        ("http://example.com/a?page=2 and user@example.com", None),  # nothing secret
    ],
)
def test_one_function_masks_every_secret_a_url_carries(text: str, shown: str | None) -> None:
    assert masked(text) == (shown if shown is not None else text)


def test_an_error_message_is_masked_wherever_it_is_shown() -> None:
    error = StorageError(f"cannot write to the lake at {LAKE}")
    assert "wJalrXUtnFEMI" not in str(error) and "AKIAEXAMPLE:***@bucket" in str(error)


def test_catlas_settings_and_an_error_line_show_no_secret(tmp_path: Path) -> None:
    cli = Catlas(
        tmp_path,
        {
            "CATLAS_DATABASE_URL": DATABASE,
            "CATLAS_NOTIFY_WEBHOOK_URL": SLACK,
            "CATLAS_LAKE_URL": LAKE,
        },
    )
    shown = cli.ok("settings").out
    assert "catlas:***@127.0.0.1" in shown and "services/***" in shown
    failed = cli.run("sensors")  # the database does not answer: one error line naming it
    assert failed.code == 3 and "127.0.0.1:1" in failed.err
    for secret in SECRETS:
        assert secret not in shown and secret not in failed.err


@pytest.mark.postgres
def test_a_run_detail_is_masked_in_the_store_the_report_and_dagster_metadata(
    make_runtime, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    recorder = RunRecorder(runtime, RunKind.TICK)
    report = recorder.finish(stop=Stop.ERROR, tally=Tally(), counters={}, detail=DETAIL)
    stored = runtime.store.run(recorder.run_id)["detail"]
    last_run = (Path(runtime.settings.state_dir) / ".last_run.json").read_text()
    metadata = json.dumps({k: str(v) for k, v in verdict_metadata(report).items()})
    channels = {
        "state": stored,
        "report": report.detail,
        "log line": report.summary_line,
        ".last_run.json": last_run,
        "dagster metadata": metadata,
    }
    for channel, text in channels.items():
        assert "AKIAEXAMPLE:***@bucket" in text, channel
        for secret in SECRETS:
            assert secret not in text, channel


def test_masking_stays_linear_on_hostile_text() -> None:
    # Error details may quote a page: a megabyte of scheme-like dots must not take minutes.
    started = time.perf_counter()
    for text in ("a." * 500_000, "x://" + "a:" * 300_000, "http://" + "a" * 1_000_000):
        assert masked(text) == text
    assert time.perf_counter() - started < 20  # a quadratic pattern takes minutes
