"""ETag / Last-Modified validators and conditional requests (304), for GET and HEAD."""

from __future__ import annotations

import hashlib

from fixture_web import FixtureWeb

NORTHWIND = "northwind-robotics.com"


def test_etag_is_a_strong_tag_of_the_body_hash(client) -> None:
    response = client.get(NORTHWIND, "/careers")
    expected = '"' + hashlib.sha256(response.content).hexdigest()[:16] + '"'
    assert response.headers["etag"] == expected


def test_last_modified_is_the_day_the_served_version_started(client) -> None:
    client.web.set_day(4)
    # careers.d03.html is live on day 4: Last-Modified is the start of day 3.
    assert client.get(NORTHWIND, "/careers").headers["last-modified"] == (
        "Thu, 08 Jan 2026 00:00:00 GMT"
    )
    assert client.get(NORTHWIND, "/").headers["last-modified"] == "Mon, 05 Jan 2026 00:00:00 GMT"


def test_matching_if_none_match_answers_304_with_validators_and_no_body(client) -> None:
    first = client.get(NORTHWIND, "/pricing")
    again = client.get(NORTHWIND, "/pricing", if_none_match=first.headers["etag"])
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["last-modified"] == first.headers["last-modified"]


def test_if_none_match_accepts_lists_weak_tags_and_star(client) -> None:
    etag = client.get(NORTHWIND, "/pricing").headers["etag"]
    for header in (f'"0000000000000000", {etag}', f"W/{etag}", "*"):
        assert client.get(NORTHWIND, "/pricing", if_none_match=header).status_code == 304
    assert client.get(NORTHWIND, "/pricing", if_none_match='"stale"').status_code == 200


def test_if_none_match_takes_precedence_over_if_modified_since(client) -> None:
    response = client.get(
        NORTHWIND,
        "/pricing",
        if_none_match='"stale"',
        if_modified_since="Fri, 01 Jan 2027 00:00:00 GMT",
    )
    assert response.status_code == 200


def test_if_modified_since_compares_with_last_modified(client) -> None:
    last_modified = client.get(NORTHWIND, "/pricing").headers["last-modified"]
    assert client.get(NORTHWIND, "/pricing", if_modified_since=last_modified).status_code == 304
    earlier = "Sun, 04 Jan 2026 00:00:00 GMT"
    assert client.get(NORTHWIND, "/pricing", if_modified_since=earlier).status_code == 200
    assert client.get(NORTHWIND, "/pricing", if_modified_since="yesterday").status_code == 200


def test_head_sends_the_get_headers_without_a_body(client) -> None:
    get = client.get(NORTHWIND, "/careers")
    head = client.head(NORTHWIND, "/careers")
    assert head.status_code == 200
    assert head.content == b""
    for name in ("etag", "last-modified", "content-type", "content-length"):
        assert head.headers[name] == get.headers[name]
    conditional = client.head(NORTHWIND, "/careers", if_none_match=get.headers["etag"])
    assert conditional.status_code == 304


def test_a_new_version_invalidates_the_old_validators(client, web: FixtureWeb) -> None:
    day5 = client.on_day(5, NORTHWIND, "/pricing")
    web.set_day(6)
    after = client.get(NORTHWIND, "/pricing", if_none_match=day5.headers["etag"])
    assert after.status_code == 200
    assert after.headers["etag"] != day5.headers["etag"]
    stale_date = client.get(NORTHWIND, "/pricing", if_modified_since=day5.headers["last-modified"])
    assert stale_date.status_code == 200


def test_an_unchanged_page_keeps_answering_304_for_weeks(client, web: FixtureWeb) -> None:
    etag = client.get("orbitpay.com", "/blog").headers["etag"]
    for day in (1, 7, 14, 30):
        web.set_day(day)
        assert client.get("orbitpay.com", "/blog", if_none_match=etag).status_code == 304


def test_errors_and_redirects_carry_no_validators(client, web: FixtureWeb) -> None:
    assert "etag" not in client.get(NORTHWIND, "/missing").headers
    web.set_day(5)
    redirect = client.get("bluefin-analytics.io", "/careers", if_none_match="*")
    assert redirect.status_code == 301
    assert "etag" not in redirect.headers
