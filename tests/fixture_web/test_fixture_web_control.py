"""The virtual clock, the request log, the hosts file and the HTTP control endpoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest

from fixture_web import DEFAULT_NOW, EPOCH, FixtureWeb, day_of

NORTHWIND = "northwind-robotics.com"


def test_day_of_counts_whole_days_since_epoch_and_clamps_at_zero() -> None:
    assert datetime(2026, 1, 5, tzinfo=UTC) == EPOCH
    assert day_of(EPOCH) == 0
    assert day_of(EPOCH + timedelta(hours=23, minutes=59)) == 0
    assert day_of(EPOCH + timedelta(days=3)) == 3
    assert day_of(EPOCH - timedelta(days=10)) == 0
    # Another offset, same instant: 2026-01-08T01:00+02:00 is 2026-01-07T23:00Z, day 2.
    assert day_of(datetime(2026, 1, 8, 1, tzinfo=timezone(timedelta(hours=2)))) == 2


def test_clock_defaults_to_day_0_morning_and_can_be_moved(web: FixtureWeb) -> None:
    assert web.now == DEFAULT_NOW == EPOCH + timedelta(hours=8)
    assert web.day == 0
    web.set_now(datetime(2026, 1, 12, 15, 30, tzinfo=UTC))
    assert web.day == 7
    web.set_now(datetime(2026, 1, 10, 12))  # naive: read as UTC
    assert web.now == datetime(2026, 1, 10, 12, tzinfo=UTC) and web.day == 5


def test_clock_is_readable_and_settable_over_http(web: FixtureWeb) -> None:
    base = f"http://{web.address}/__fixture__/now"
    assert httpx.get(base).json() == {"now": "2026-01-05T08:00:00+00:00", "day": 0}
    assert httpx.post(base, json={"day": 9}).json() == {
        "now": "2026-01-14T08:00:00+00:00",
        "day": 9,
    }
    assert web.day == 9
    moved = httpx.post(base, json={"now": "2026-01-07T20:00:00Z"}, headers={"Host": NORTHWIND})
    assert moved.json()["day"] == 2 and web.day == 2
    for bad in ({}, {"day": "x"}, {"now": "soon"}, {"day": 1, "now": "2026-01-07T00:00:00Z"}):
        response = httpx.post(base, json=bad)
        assert response.status_code == 400 and "error" in response.json()
    assert httpx.post(base, content=b"not json").status_code == 400
    assert httpx.get(f"http://{web.address}/__fixture__/nope").status_code == 404
    assert web.requests == []  # control requests are never logged


def test_each_request_is_recorded_with_the_virtual_clock(client, web: FixtureWeb) -> None:
    web.set_day(4)
    first = client.get(NORTHWIND, "/careers?ref=x", user_agent="catlas-test/1.0")
    client.get(
        NORTHWIND,
        "/careers",
        if_none_match=first.headers["etag"],
        if_modified_since=first.headers["last-modified"],
    )
    client.head("Orbitpay.com:443", "/")
    client.get("unknown.test", "/")
    records = web.requests
    assert [(r.host, r.method, r.path, r.status) for r in records] == [
        (NORTHWIND, "GET", "/careers?ref=x", 200),
        (NORTHWIND, "GET", "/careers", 304),
        ("orbitpay.com", "HEAD", "/", 200),
        ("unknown.test", "GET", "/", 404),
    ]
    assert records[0].at == web.now and records[0].day == 4
    assert records[0].user_agent == "catlas-test/1.0"
    assert records[0].response_bytes == len(first.content)
    assert records[1].if_none_match == first.headers["etag"]
    assert records[1].if_modified_since == first.headers["last-modified"]
    assert records[1].response_bytes == 0 and records[2].response_bytes == 0

    logged = httpx.get(f"http://{web.address}/__fixture__/log").json()
    assert [entry["path"] for entry in logged] == [r.path for r in records]
    assert logged[0]["at"] == "2026-01-09T08:00:00+00:00" and logged[0]["day"] == 4

    web.clear_requests()
    assert web.requests == []
    client.get(NORTHWIND, "/")
    assert httpx.delete(f"http://{web.address}/__fixture__/log").json() == {"cleared": 1}
    assert web.requests == []


def test_an_answer_finished_after_a_clear_stays_out_of_the_log_it_did_not_arrive_in(
    client, web: FixtureWeb
) -> None:
    # A slow page still in flight when its test ends must not show up in the next one's log.
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(client.get, "swarm-load.com", "/slow/1")
        deadline = time.monotonic() + 2
        while web.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        web.clear_requests()
        client.get(NORTHWIND, "/careers")
        assert slow.result(timeout=10).status_code == 200
    assert [(r.host, r.path) for r in web.requests] == [(NORTHWIND, "/careers")]


def test_requests_are_appended_to_the_log_file(tmp_path) -> None:
    log = tmp_path / "requests.jsonl"
    with FixtureWeb(log_path=log) as web:
        for path in ("/", "/pricing"):
            httpx.get(f"http://{web.address}{path}", headers={"Host": NORTHWIND})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["path"] for line in lines] == ["/", "/pricing"]
    assert set(lines[0]) == {
        "at",
        "day",
        "host",
        "method",
        "path",
        "status",
        "if_none_match",
        "if_modified_since",
        "user_agent",
        "response_bytes",
        "received",
        "request_body",
    }


def test_hosts_file_maps_every_host_to_the_address_on_one_line(web: FixtureWeb, tmp_path) -> None:
    path = web.write_hosts_file(tmp_path / "nested" / "hosts")
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    assert lines == [f"127.0.0.1:{web.port} " + " ".join(web.hosts)]
    address, *hosts = lines[0].split()
    assert address == web.address and "www.northwind-robotics.com" in hosts


def test_start_and_stop_are_clean_and_repeatable() -> None:
    web = FixtureWeb(now=EPOCH + timedelta(days=6, hours=1))
    with pytest.raises(RuntimeError):
        _ = web.port
    with web:
        assert web.day == 6
        port = web.port
        assert httpx.get(f"http://{web.address}/", headers={"Host": NORTHWIND}).status_code == 200
    web.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": NORTHWIND})


def test_standalone_server_serves_until_sigterm(tmp_path) -> None:
    hosts_file = tmp_path / "hosts"
    process = subprocess.Popen(
        [sys.executable, "-m", "fixture_web", "--hosts-file", str(hosts_file), "--day", "3"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        address = first.strip().rsplit("http://", 1)[1]
        assert f"hosts file: {hosts_file}" in process.stdout.readline()
        assert hosts_file.read_text().splitlines()[-1].startswith(address + " ")
        assert httpx.get(f"http://{address}/__fixture__/now").json()["day"] == 3
        page = httpx.get(f"http://{address}/careers", headers={"Host": NORTHWIND})
        assert "Staff Robotics Engineer" in page.text
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert "fixture web stopped" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
