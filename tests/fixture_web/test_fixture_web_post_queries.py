"""POST on Workday's list endpoint: the body's paging picks the page file; POST elsewhere is 405."""

from __future__ import annotations

import json

import httpx

from fixture_web import FixtureWeb

WREN = "wren.wd1.myworkdayjobs.com"
JOBS = "/wday/cxs/wren/External/jobs"


def _post(web: FixtureWeb, host: str, path: str, body: object) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"http://{web.address}{path}",
        content=content,
        headers={"Host": host, "Content-Type": "application/json"},
        timeout=10,
    )


def _body(offset: int, limit: int = 20) -> dict:
    return {"appliedFacets": {}, "limit": limit, "offset": offset, "searchText": ""}


def test_a_workday_post_serves_the_page_file_its_body_names(client, web: FixtureWeb) -> None:
    web.set_day(7)
    for offset in (0, 20):
        posted = _post(web, WREN, JOBS, _body(offset))
        got = client.get(WREN, f"{JOBS}?limit=20&offset={offset}")
        assert posted.status_code == got.status_code == 200
        assert posted.content == got.content
        assert posted.headers["content-type"] == "application/json"
    assert [len(_post(web, WREN, JOBS, _body(o)).json()["jobPostings"]) for o in (0, 20)] == [
        20,
        4,
    ]


def test_the_request_log_keeps_the_method_and_the_posted_body(client, web: FixtureWeb) -> None:
    body = _body(20)
    _post(web, WREN, JOBS, body)
    client.get(WREN, f"{JOBS}?limit=20&offset=0")
    posted, got = web.requests
    assert (posted.method, posted.path, json.loads(posted.request_body or "")) == (
        "POST",
        JOBS,
        body,
    )
    assert (got.method, got.request_body) == ("GET", None)
    logged = httpx.get(f"http://{web.address}/__fixture__/log", timeout=10).json()
    assert [(r["method"], r["request_body"] is not None) for r in logged] == [
        ("POST", True),
        ("GET", False),
    ]


def test_post_is_still_refused_everywhere_but_a_workday_list(web: FixtureWeb) -> None:
    for host, path in (
        ("northwind-robotics.com", "/careers"),
        (WREN, "/wday/cxs/wren/External/job/Berlin/Site-Reliability-Engineer_R-2000"),
        ("api.lever.co", "/v0/postings/larkspur"),
    ):
        response = _post(web, host, path, _body(0))
        assert response.status_code == 405, (host, path)
        assert response.headers["allow"] == "GET, HEAD"


def test_a_malformed_workday_body_is_a_400_not_a_page(web: FixtureWeb) -> None:
    for body in (b"not json", b"[]", {"limit": 20}, _body(0, limit=50), _body(-1)):
        response = _post(web, WREN, JOBS, body)
        assert response.status_code == 400, body
        assert "message" in response.json()
