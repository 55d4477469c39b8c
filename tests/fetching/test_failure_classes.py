"""Every failure class, produced by a fixture page on the real server and run through the pipeline.

Each case asserts the class, the policy's next interval (current x multiplier, clamped),
the status the first failure leaves, and the lake's failures row; the request log shows
what the server was (and was not) asked.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from catlas_assets.domain.taxonomy import FAILURE_POLICY
from catlas_assets.domain.vocabulary import FailureClass, Outcome, ReviewKind, SensorStatus
from catlas_assets.services import sql
from resources.state.schema import sensors

F = "http://faultline.dev"

CASES = [
    # url, class, HTTP status of the final answer
    (f"{F}/slow", FailureClass.TIMEOUT, None),
    (f"{F}/error", FailureClass.HTTP_5XX, 500),
    (f"{F}/bad-gateway", FailureClass.HTTP_5XX, 502),
    (f"{F}/forbidden", FailureClass.HTTP_4XX, 403),
    (f"{F}/challenge", FailureClass.BOT_CHALLENGE, 403),
    (f"{F}/gone", FailureClass.PAGE_REMOVED, 410),
    (f"{F}/missing", FailureClass.PAGE_REMOVED, 404),
    (f"{F}/rate-limited", FailureClass.RATE_LIMIT, 429),
    (f"{F}/loop-a", FailureClass.REDIRECT, 302),
    (f"{F}/hop/1", FailureClass.REDIRECT, None),
    (f"{F}/bad-location", FailureClass.REDIRECT, 302),
    (f"{F}/to-loopback", FailureClass.BLOCKED_DESTINATION, 302),
    (f"{F}/to-metadata", FailureClass.BLOCKED_DESTINATION, 302),
    (f"{F}/to-ftp", FailureClass.BLOCKED_DESTINATION, 302),
    (f"{F}/oversized", FailureClass.TOO_LARGE, 200),
    (f"{F}/gzip-bomb", FailureClass.TOO_LARGE, 200),
    (f"{F}/brotli-bomb", FailureClass.TOO_LARGE, 200),
    (f"{F}/corrupt-gzip", FailureClass.PARSING, 200),
    (f"{F}/private/secret", FailureClass.ROBOTS, None),
    (f"{F}/to-private", FailureClass.ROBOTS, None),
    ("http://unlisted.example/", FailureClass.DNS, None),
    (f"{F}/reset", FailureClass.UNKNOWN, None),
]


@pytest.mark.parametrize(("url", "failure_class", "status"), CASES, ids=lambda v: str(v))
def test_each_fault_page_fails_with_its_class_and_the_policy_backoff(
    watch, url: str, failure_class: FailureClass, status: int | None
) -> None:
    # A short read timeout for the slow page only (a bomb takes the server a moment to build).
    w = watch(fetch_max_bytes=200_000, fetch_read_timeout_s=0.5 if "slow" in url else 20.0)
    sensor_id = w.sensor(url)
    base = w.row(sensor_id)["current_interval_s"]

    result = w.run(sensor_id)

    assert result.outcome is Outcome.FAILED
    assert result.failure_class is failure_class
    row = w.row(sensor_id)
    assert row["last_failure_class"] == failure_class
    assert row["consecutive_failures"] == 1
    assert row["last_failure_detail"]
    policy = FAILURE_POLICY[failure_class]
    limits = w.runtime.policy.limits
    assert row["current_interval_s"] == limits.clamp(base * policy.multiplier)
    expected = (
        SensorStatus.BLOCKED
        if failure_class is FailureClass.ROBOTS
        else SensorStatus.FAILING
        if policy.failures_before_failing <= 1
        else SensorStatus.ACTIVE
    )
    assert row["status"] == expected
    rows = sql.query(w.runtime, "select failure_class, http_status, detail from failures").rows
    assert [(r[0], r[1]) for r in rows] == [(failure_class.value, status)]
    assert rows[0][2]


def test_no_disallowed_url_and_no_refused_address_is_ever_requested(watch) -> None:
    w = watch()
    for path in ("/private/secret", "/to-private", "/not-for-catlas", "/to-loopback"):
        w.run(w.sensor(f"{F}{path}"))
    w.run(w.sensor("http://robots-moved.faultline.dev/private/secret"))
    w.run(w.sensor("http://robots-huge.faultline.dev/deep"))
    asked = w.requested()
    assert "faultline.dev/to-private" in asked  # the redirecting page itself
    assert not [a for a in asked if "/private/secret" in a or "/not-for-catlas" in a]
    assert not [a for a in asked if a.endswith("/deep")]
    # The loopback target is this very server: a request would be logged with its address.
    assert not [r for r in w.web.requests if r.host.startswith("127.")]


def test_a_robots_block_opens_one_review_item_and_blocks_at_once(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/private/secret")
    w.run(sensor_id)
    w.advance(timedelta(days=9))
    w.run(sensor_id)  # still disallowed: no second item
    assert w.row(sensor_id)["status"] == SensorStatus.BLOCKED
    items = w.reviews(ReviewKind.BLOCKED_SOURCE)
    assert [(i["sensor_id"], i["status"]) for i in items] == [(sensor_id, "open")]
    assert items[0]["detail"]["failure_class"] == FailureClass.ROBOTS


def test_page_removed_turns_failing_at_its_threshold_of_two(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/gone")
    statuses = []
    for _ in range(2):
        w.run(sensor_id)
        statuses.append(w.row(sensor_id)["status"])
    assert statuses == [SensorStatus.ACTIVE, SensorStatus.FAILING]


def test_repeated_bot_challenges_open_a_blocked_source_item(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/challenge")
    w.run(sensor_id)
    assert w.reviews(ReviewKind.BLOCKED_SOURCE) == []
    w.run(sensor_id)
    assert [i["sensor_id"] for i in w.reviews(ReviewKind.BLOCKED_SOURCE)] == [sensor_id]
    # Never bypassed: both attempts were plain requests, each answered by the challenge.
    assert w.requested().count("faultline.dev/challenge") == 2


def test_failures_go_stale_at_6_and_retired_at_30_with_review_items(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/error")
    seen = []
    for _ in range(30):
        w.run(sensor_id)  # run-sensor --force: what repair does to a stale sensor
        seen.append(w.row(sensor_id)["status"])
    assert seen[3] == SensorStatus.ACTIVE and seen[4] == SensorStatus.FAILING
    assert seen[5] == SensorStatus.STALE and seen[28] == SensorStatus.STALE
    assert seen[29] == SensorStatus.RETIRED
    assert w.row(sensor_id)["retired_at"] is not None
    kinds = [i["kind"] for i in w.reviews()]
    assert kinds == [ReviewKind.SENSOR_STALE, ReviewKind.SENSOR_RETIRED]


def test_a_success_after_failures_resets_the_counters_and_status(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/ok")
    with w.runtime.store.transaction() as conn:
        conn.execute(
            sensors.update()
            .where(sensors.c.id == sensor_id)
            .values(
                status="failing",
                consecutive_failures=4,
                last_failure_class="HTTP_5XX",
                last_failure_detail="HTTP 500",
            )
        )
    assert w.run(sensor_id).outcome is Outcome.OK
    row = w.row(sensor_id)
    assert (row["status"], row["consecutive_failures"]) == (SensorStatus.ACTIVE, 0)
    assert row["last_failure_class"] is None and row["last_failure_detail"] is None


def test_an_off_domain_redirect_is_redirected_without_asking_the_other_domain(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/offsite")
    assert w.run(sensor_id).outcome is Outcome.REDIRECTED
    row = w.row(sensor_id)
    assert row["status"] == SensorStatus.REDIRECTED
    assert row["config"]["redirect_url"] == "http://faultline-labs.com/"
    assert [i["kind"] for i in w.reviews()] == [ReviewKind.SENSOR_MIGRATION]
    assert w.requested("faultline-labs.com") == []


def test_an_undeclared_legacy_charset_is_detected(watch) -> None:
    w = watch()
    sensor_id = w.sensor(f"{F}/latin1")
    assert w.run(sensor_id).outcome is Outcome.OK
    text = w.runtime.archive.get(w.row(sensor_id)["last_text_key"]).decode()
    assert "Carrières chez Faultline" in text and "95 000 €" in text


def test_a_non_ascii_header_value_is_no_failure(watch) -> None:
    w = watch()
    assert w.run(w.sensor(f"{F}/odd-header")).outcome is Outcome.OK


def test_the_cost_ledger_counts_every_request_and_the_stored_bytes(watch) -> None:
    w = watch()
    first = w.sensor(f"{F}/ok")
    second = w.sensor("http://faultline.dev/hop/10")  # two redirect hops, then a page
    w.run(first)
    w.run(second)
    [entry] = w.ledger()
    # robots.txt once (cached), /ok, then /hop/10, /hop/11, /hop/12: every request counts.
    assert entry["fetch_units"] == len(w.requested()) == 5
    assert entry["bytes_stored"] > 0
    assert (entry["company_id"], entry["connector"]) == (w.company_id, "generic_html")


@pytest.mark.parametrize(("path", "attempts"), [("/reset", 3), ("/bad-gateway", 3), ("/gone", 1)])
def test_transient_failures_are_retried_within_the_run_and_others_are_not(
    watch, path: str, attempts: int
) -> None:
    w = watch(fetch_retries=2)
    result = w.run(w.sensor(f"{F}{path}"))
    assert result.outcome is Outcome.FAILED
    assert w.requested().count(f"faultline.dev{path}") == attempts
    assert result.requests == attempts + 1  # robots.txt counts too


def test_requests_carry_the_documented_user_agent_with_its_contact_url(watch) -> None:
    w = watch(user_agent="catlas/9.1", contact_url="https://ops.example/bot")
    w.run(w.sensor(f"{F}/ok"))
    assert {r.user_agent for r in w.web.requests} == {"catlas/9.1 (+https://ops.example/bot)"}


@pytest.mark.parametrize(
    ("url", "failure_class"),
    [
        ("http://bücher.faultline.dev/", FailureClass.DNS),  # an IDN: encoded, then resolved
        ("http://faultline.dev:8080/ok", None),  # an odd port: the host map still applies
    ],
)
def test_idns_and_odd_ports_get_a_clear_answer(watch, url: str, failure_class) -> None:
    w = watch()
    result = w.run(w.sensor(url))
    assert result.failure_class is failure_class
