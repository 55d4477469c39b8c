"""Fuzzing every parser and connector with wrong types, deep nesting, odd encodings and
odd bytes: each returns a result or raises the project's own error (ParseError for an
unreadable body, SchemaError for the wrong shape) — never a raw Python exception.

The fast subset runs in the suite; `CATLAS_FUZZ_EXAMPLES` raises the number of examples
(`make reliability`)."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catlas_assets.domain.connectors import registry
from catlas_assets.domain.extract.extraction import ParseError, SchemaError
from catlas_assets.domain.observe import extract
from catlas_assets.domain.page_links import extract_links
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.sitemap import SitemapError, parse_sitemap
from catlas_assets.domain.vocabulary import SensorStatus

EXAMPLES = int(os.environ.get("CATLAS_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=EXAMPLES <= 30,  # the suite's subset is the same every run
)
NOW = datetime(2026, 1, 5, tzinfo=UTC)
URLS = {
    "generic_html": "http://fuzz.example/careers",
    "feed": "http://fuzz.example/feed.xml",
    "sitemap": "http://fuzz.example/sitemap.xml",
    "statuspage": "http://status.fuzz.example/api/v2/summary.json",
    "greenhouse": "https://boards-api.greenhouse.io/v1/boards/fuzz/jobs",
    "lever": "https://api.lever.co/v0/postings/fuzz",
    "ashby": "https://api.ashbyhq.com/posting-api/job-board/fuzz",
    "workable": "https://apply.workable.com/api/v1/widget/accounts/fuzz",
    "workday": "https://fuzz.wd3.myworkdayjobs.com/wday/cxs/fuzz/site/jobs",
    "recruitee": "https://fuzz.recruitee.com/api/offers/",
    "personio": "https://fuzz.jobs.personio.de/xml",
    "teamtailor": "https://fuzz.teamtailor.com/jobs",
    "smartrecruiters": "https://api.smartrecruiters.com/v1/companies/fuzz/postings",
}
CHARSETS = ["utf-8", "hex", "base64", "rot13", "uu", "idna", "utf-7", "latin-1", "nope", ""]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)
# Field names the connectors read, so wrong types reach the code that reads them.
FIELDS = [
    "jobs", "id", "title", "text", "name", "departments", "location", "offices", "categories",
    "createdAt", "updated_at", "absolute_url", "hostedUrl", "components", "status", "page",
    "incidents", "content", "jobPostings", "total", "offers", "results", "data", "postedOn",
]  # fmt: skip
shaped = st.recursive(
    json_values,
    lambda inner: (
        st.dictionaries(st.sampled_from(FIELDS), inner, max_size=6) | st.lists(inner, max_size=4)
    ),
    max_leaves=40,
)


def _sensor(connector: str) -> SensorState:
    return SensorState(
        id=1, company_id=1, surface="careers", url=URLS[connector], connector=connector,
        status=SensorStatus.ACTIVE, base_interval_s=3600, current_interval_s=3600,
        quality_score=1.0, etag=None, last_modified=None, normalized_hash=None,
        structured_hash=None, simhash=None, snapshot_version=0, last_snapshot_id=None,
        last_blocks_key=None, last_text_key=None, last_extraction_key=None,
        consecutive_unchanged=0, consecutive_failures=0, last_full_fetch_at=None,
        last_failure_class=None, config={}, domain="fuzz.example",
    )  # fmt: skip


def _extract(connector: str, body: bytes, content_type: str) -> None:
    url = URLS[connector]
    fetched = Fetched(
        url=url, final_url=url, status=200, headers={"content-type": content_type},
        body=body, elapsed_ms=1, requests=1,
    )  # fmt: skip
    # The project's own errors (PARSING or SCHEMA for that sensor) are the allowed failures.
    with contextlib.suppress(ParseError, SchemaError):
        extract(_sensor(connector), fetched, NOW)


def test_every_connector_is_fuzzed() -> None:
    assert set(URLS) == set(registry.CONNECTORS)


@pytest.mark.parametrize("connector", sorted(URLS))
@FUZZ
@given(data=shaped)
def test_connectors_meet_wrong_types_with_their_own_errors(connector: str, data: object) -> None:
    _extract(connector, json.dumps(data).encode(), "application/json")


@pytest.mark.parametrize("connector", ["generic_html", "feed", "sitemap", "personio"])
@FUZZ
@given(body=st.binary(max_size=400), charset=st.sampled_from(CHARSETS))
def test_markup_parsers_meet_odd_bytes_and_charsets(
    connector: str, body: bytes, charset: str
) -> None:
    ctype = "application/xml" if connector != "generic_html" else "text/html"
    _extract(connector, body, f"{ctype}; charset={charset}" if charset else ctype)


@FUZZ
@given(
    depth=st.integers(min_value=0, max_value=3000),
    tag=st.sampled_from(["div", "ul", "span", "section", "li"]),
    jsonld=shaped,
)
def test_html_meets_deep_nesting_and_odd_json_ld(depth: int, tag: str, jsonld: object) -> None:
    script = f'<script type="application/ld+json">{json.dumps(jsonld)}</script>'
    page = (
        f"<{tag} class='job'>" * depth
        + "<h3>x</h3><a href='http://[::1'>a</a>"
        + f"</{tag}>" * depth
    )
    _extract("generic_html", (script + page).encode(), "text/html")
    extract_links((script + page).encode(), "text/html", "http://fuzz.example/")


@FUZZ
@given(text=st.text(max_size=300), path=st.text(max_size=60))
def test_robots_txt_answers_for_any_file_and_path(text: str, path: str) -> None:
    rules = RobotsTxt.parse("User-agent: *\n" + text)
    rules.decide("/" + path, "catlas/0.1")


@FUZZ
@given(body=st.binary(max_size=300), encoding=st.sampled_from(CHARSETS))
def test_sitemaps_answer_or_raise_their_error(body: bytes, encoding: str) -> None:
    head = f'<?xml version="1.0" encoding="{encoding}"?>'.encode()
    with contextlib.suppress(SitemapError):
        parse_sitemap(head + b"<urlset>" + body + b"</urlset>", max_urls=100)
