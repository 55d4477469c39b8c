"""Reprocess: snapshots, changes and entity events re-derived from the archive with the
current extractor, over a range of hours, without one network request; from the CLI's
service and as a Dagster range run of the `reprocess` job."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain import lake_rows
from catlas_assets.domain.extract.extraction import EXTRACTOR_VERSION
from catlas_assets.services import catalog, compaction, reprocess
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.lake import Lake
from resources.storage import Storage

DAYS = (0, 7, 14)
URLS = ("http://kestrel-labs.com/pricing", "http://kestrel-labs.com/careers")


class Tripwire:
    """An HTTP server every fixture host resolves to: any request is a test failure."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(f"{self.headers.get('host')}{self.path}")
                self.send_error(500, "reprocess must not fetch")

            do_HEAD = do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def hosts_file(self, path: Path, hosts: list[str]) -> Path:
        port = self.server.server_address[1]
        path.write_text(f"127.0.0.1:{port} {' '.join(hosts)}\n", encoding="utf-8")
        return path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def lived(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """Kestrel Labs watched on days 0, 7 and 14 (a price change, a job gone); then every
    host points at a tripwire."""
    monkeypatch.setenv("CATLAS_DOMAIN_SPACING_S", "0")
    state = str(tmp_path / "state")
    live_hosts = str(web.write_hosts_file(tmp_path / "hosts"))
    sensors = []
    for day in DAYS:
        moment = DEFAULT_NOW + timedelta(days=day)
        web.set_now(moment)
        monkeypatch.setenv("CATLAS_NOW", moment.isoformat())
        runtime = CatlasResource(state_dir=state, hosts=live_hosts).build()
        try:
            if day == 0:
                company = catalog.add_company(
                    runtime, name="Kestrel Labs", website="http://kestrel-labs.com", tier=1
                )
                sensors = [
                    catalog.add_sensor(
                        runtime, company_id=company, surface=u.rsplit("/", 1)[1], url=u
                    )
                    for u in URLS
                ]
            for sensor_id in sensors:
                run_one(runtime, sensor_id, force=True)
        finally:
            runtime.close()
    tripwire = Tripwire()
    hosts = str(tripwire.hosts_file(tmp_path / "tripwire-hosts", web.hosts))
    yield {"state": state, "hosts": hosts, "tripwire": tripwire}
    tripwire.close()
    assert tripwire.seen == [], f"reprocess made network requests: {tripwire.seen}"


def _counts(runtime: Runtime) -> dict[str, int]:
    con = runtime.lake.connect()
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
            for t in ("observations", "snapshots", "changes", "entity_events")
        }
    finally:
        con.close()


def test_reprocess_rederives_the_same_rows_from_the_archive_offline(lived: dict) -> None:
    runtime = CatlasResource(state_dir=lived["state"], hosts=lived["hosts"]).build()
    try:
        before = _counts(runtime)
        assert before["changes"] > 0 and before["entity_events"] > 0
        snapshots_before = (
            runtime.lake.connect()
            .sql("SELECT snapshot_id, normalized_hash, structured_hash FROM snapshots ORDER BY 1")
            .fetchall()
        )
        scope = reprocess.scope_of(
            runtime,
            f"{DEFAULT_NOW:%Y-%m-%d}",
            f"{DEFAULT_NOW + timedelta(days=15):%Y-%m-%d}",
        )
        result = reprocess.reprocess(runtime, scope)
        assert result.report.outcome.value == "success", result.report.summary_line
        assert result.report.kind == "reprocess"
        assert _counts(runtime) == before
        assert (
            runtime.lake.connect()
            .sql("SELECT snapshot_id, normalized_hash, structured_hash FROM snapshots ORDER BY 1")
            .fetchall()
            == snapshots_before
        )
        run = runtime.store.run(result.report.run_id)
        assert run is not None and run["kind"] == "reprocess"
        assert run["counters"]["snapshots_old"] == run["counters"]["snapshots_new"]
        assert result.old_extractor_versions == [result.new_extractor_version]
    finally:
        runtime.close()


def test_a_new_extractor_version_is_written_and_a_scope_keeps_other_rows(
    lived: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = CatlasResource(state_dir=lived["state"], hosts=lived["hosts"]).build()
    try:
        before = _counts(runtime)
        monkeypatch.setattr(lake_rows, "EXTRACTOR_VERSION", "extract-next")
        monkeypatch.setattr(reprocess, "EXTRACTOR_VERSION", "extract-next")
        scope = reprocess.scope_of(
            runtime,
            f"{DEFAULT_NOW:%Y-%m-%d}",
            f"{DEFAULT_NOW + timedelta(days=15):%Y-%m-%d}",
            surface="pricing",
            company="Kestrel Labs",
        )
        result = reprocess.reprocess(runtime, scope)
        assert result.new_extractor_version == "extract-next"
        assert result.old_extractor_versions == [EXTRACTOR_VERSION]
        versions = dict(
            runtime.lake.connect()
            .sql("SELECT surface, string_agg(DISTINCT extractor_version) FROM snapshots GROUP BY 1")
            .fetchall()
        )
        assert versions == {"pricing": "extract-next", "careers": EXTRACTOR_VERSION}
        assert _counts(runtime) == before
    finally:
        runtime.close()


def test_a_reader_sees_each_hour_wholly_old_or_wholly_new(
    lived: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While reprocess replaces the hours (compacted, as maintenance leaves them), a reader
    never sees an hour with rows missing or with old and new rows side by side."""
    runtime = CatlasResource(state_dir=lived["state"], hosts=lived["hosts"]).build()
    lake = Lake(Storage(str(Path(lived["state"]) / "lake")))
    per_hour = (
        "SELECT date, hour, count(*), list(DISTINCT extractor_version) FROM snapshots GROUP BY 1, 2"
    )
    seen: list[dict[tuple, tuple]] = []  # one reading of every hour at a time
    errors: list[Exception] = []
    done = threading.Event()

    def hours() -> list[tuple]:
        con = lake.connect()  # a new connection lists the files as they are now
        try:
            return con.execute(per_hour).fetchall()
        finally:
            con.close()

    def read() -> None:
        while not done.is_set():
            try:
                rows = hours()
            except duckdb.Error as exc:  # a file gone or unreadable is the failure here
                errors.append(exc)
                break
            seen.append({(d, h): (n, v) for d, h, n, v in rows})

    try:
        compaction.compact_all(runtime)
        before = {(d, h): n for d, h, n, _ in hours()}
        monkeypatch.setattr(lake_rows, "EXTRACTOR_VERSION", "extract-next")
        monkeypatch.setattr(reprocess, "EXTRACTOR_VERSION", "extract-next")
        reader = threading.Thread(target=read)
        reader.start()
        try:
            scope = reprocess.scope_of(
                runtime,
                f"{DEFAULT_NOW:%Y-%m-%d}",
                f"{DEFAULT_NOW + timedelta(days=15):%Y-%m-%d}",
            )
            assert reprocess.reprocess(runtime, scope).report.outcome.value == "success"
        finally:
            done.set()
            reader.join()
    finally:
        runtime.close()
    assert errors == [] and seen
    for reading in seen:
        assert reading.keys() == before.keys()  # no hour ever missing
        for hour, (count, versions) in reading.items():
            assert count == before[hour], hour
            assert versions in ([EXTRACTOR_VERSION], ["extract-next"]), (hour, versions)
    final = hours()
    assert {tuple(v) for *_, v in final} == {("extract-next",)}


def test_the_reprocess_job_over_three_hours_records_old_and_new_counts(lived: dict) -> None:
    resource = CatlasResource(state_dir=lived["state"], hosts=lived["hosts"])
    first = DEFAULT_NOW.replace(minute=0, second=0, microsecond=0) + timedelta(days=14)
    keys = [(first + timedelta(hours=h)).strftime("%Y-%m-%d-%H:00") for h in (-1, 0, 1)]
    result = defs.resolve_job_def("reprocess").execute_in_process(
        resources={"catlas": resource},
        tags={
            "dagster/asset_partition_range_start": keys[0],
            "dagster/asset_partition_range_end": keys[-1],
        },
    )
    assert result.success
    mats = {}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization  # type: ignore[union-attr]
        mats[(mat.asset_key.to_user_string(), mat.partition)] = mat.metadata
    assert mats[("snapshots", keys[0])]["snapshots/rows_new"].value == 0
    hour = mats[("snapshots", keys[1])]
    assert hour["snapshots/rows_old"].value == hour["snapshots/rows_new"].value > 0
    assert hour["changes/rows_new"].value > 0
    tags = result.dagster_run.tags
    runtime = resource.build()
    try:
        run = runtime.store.runs(limit=1, kind="reprocess")[0]
        assert run["launch_handle"] == result.run_id
        assert run["outcome"] == "success"
    finally:
        runtime.close()
    assert tags["catlas/kind"] == "reprocess"
