"""A POST with a JSON body through the real fetcher: politeness kept, redirects, no repeats.

The fixture server's request log is the witness of what was sent, and with which method.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from catlas_assets.domain.vocabulary import FailureClass

RELAY = "relay.wd3.myworkdayjobs.com"
BASE = f"http://{RELAY}/wday/cxs/relay"
BODY = {"appliedFacets": {}, "limit": 20, "offset": 0, "searchText": ""}


def _fetch(runtime, url: str, **kwargs):
    async def go():
        async with runtime.fetcher() as fetcher:
            return await fetcher.fetch(url, **kwargs)

    return asyncio.run(go())


def _sent(web) -> list[tuple[str, str, object]]:
    """(method, path, JSON body or None) of every request to the relay host but robots.txt."""
    return [
        (r.method, r.path, json.loads(r.request_body) if r.request_body else None)
        for r in web.requests
        if r.host == RELAY and r.path != "/robots.txt"
    ]


def test_a_post_sends_its_json_body_and_no_conditional_headers(watch) -> None:
    w = watch()
    fetched = _fetch(
        w.runtime,
        f"{BASE}/External/jobs",
        method="POST",
        json_body=BODY,
        etag='"v1"',
        last_modified="Mon, 05 Jan 2026 00:00:00 GMT",
    )
    assert fetched.status == 200 and fetched.failure_class is None
    assert json.loads(fetched.body)["total"] == 2
    assert not fetched.conditional and not fetched.not_modified
    assert _sent(w.web) == [("POST", "/wday/cxs/relay/External/jobs", BODY)]
    [record] = [r for r in w.web.requests if r.method == "POST"]
    assert record.if_none_match is None and record.if_modified_since is None
    assert w.web.requests[0].path == "/robots.txt"  # robots.txt first, as for a GET


def test_robots_txt_forbids_a_post_as_it_forbids_a_get(watch) -> None:
    w = watch()
    fetched = _fetch(w.runtime, f"{BASE}/Private/jobs", method="POST", json_body=BODY)
    assert fetched.failure_class is FailureClass.ROBOTS
    assert _sent(w.web) == []


def test_307_and_308_repeat_the_post_with_its_body(watch) -> None:
    w = watch()
    for name in ("Moved", "Relocated"):
        w.web.clear_requests()
        fetched = _fetch(w.runtime, f"{BASE}/{name}/jobs", method="POST", json_body=BODY)
        assert fetched.status == 200 and fetched.final_url == f"{BASE}/External/jobs"
        assert _sent(w.web) == [
            ("POST", f"/wday/cxs/relay/{name}/jobs", BODY),
            ("POST", "/wday/cxs/relay/External/jobs", BODY),
        ]


def test_303_turns_the_post_into_a_get_without_a_body(watch) -> None:
    w = watch()
    fetched = _fetch(w.runtime, f"{BASE}/SeeOther/jobs", method="POST", json_body=BODY)
    assert fetched.status == 200 and json.loads(fetched.body)["total"] == 2
    assert _sent(w.web) == [
        ("POST", "/wday/cxs/relay/SeeOther/jobs", BODY),
        ("GET", "/wday/cxs/relay/External/jobs", None),
    ]


def test_a_post_answered_with_a_retryable_status_is_not_sent_again(watch) -> None:
    w = watch(fetch_retries=2)
    posted = _fetch(w.runtime, f"{BASE}/Busy/jobs", method="POST", json_body=BODY)
    assert posted.status == 503 and posted.failure_class is not None
    assert [m for m, _, _ in _sent(w.web)] == ["POST"]
    # The same answer to a GET is retried: the rule is the method's, not the status's.
    w.web.clear_requests()
    _fetch(w.runtime, f"{BASE}/Busy/jobs")
    assert [m for m, _, _ in _sent(w.web)] == ["GET", "GET", "GET"]


def test_a_json_body_without_post_and_unknown_methods_are_programming_errors(watch) -> None:

    w = watch()
    with pytest.raises(ValueError, match="POST only"):
        _fetch(w.runtime, f"{BASE}/External/jobs", json_body=BODY)
    with pytest.raises(ValueError, match="GET or POST"):
        _fetch(w.runtime, f"{BASE}/External/jobs", method="DELETE")
    assert _sent(w.web) == []
