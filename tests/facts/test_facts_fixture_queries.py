"""The fixture web serves one file per query string (paginated vendor APIs)."""

from __future__ import annotations

import httpx

from fixture_web import FixtureWeb


def _get(web: FixtureWeb, host: str, path: str) -> httpx.Response:
    return httpx.get(f"http://{web.address}{path}", headers={"Host": host}, timeout=10)


def test_a_query_file_answers_its_exact_query_in_any_parameter_order(web: FixtureWeb) -> None:
    web.set_day(7)
    host = "wren.wd1.myworkdayjobs.com"
    first = _get(web, host, "/wday/cxs/wren/External/jobs?offset=0&limit=20").json()
    second = _get(web, host, "/wday/cxs/wren/External/jobs?limit=20&offset=20").json()
    assert first["total"] == second["total"] == 24
    assert len(first["jobPostings"]) == 20 and len(second["jobPostings"]) == 4


def test_a_request_with_fewer_parameters_finds_the_file_that_includes_them(web: FixtureWeb) -> None:
    response = _get(web, "api.lever.co", "/v0/postings/larkspur?mode=json")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert isinstance(response.json(), list)
    assert (
        _get(web, "boards-api.greenhouse.io", "/v1/boards/kestrel/jobs").json()["meta"]["total"]
        == 3
    )
    assert _get(web, "api.lever.co", "/v0/postings/larkspur?mode=xml").status_code == 404
    assert _get(web, "api.lever.co", "/v0/postings/unknown?mode=json").status_code == 404
