"""Each ATS connector on responses in its vendor's real shape (fixture files and inline)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catlas_assets.domain.connectors import registry
from catlas_assets.domain.connectors.base import Page, bundle, unbundle
from catlas_assets.domain.connectors.lever import Lever
from catlas_assets.domain.connectors.smartrecruiters import SmartRecruiters
from catlas_assets.domain.connectors.workday import Workday, posted_date
from catlas_assets.domain.extract.extraction import SchemaError

WEB = Path(__file__).resolve().parents[2] / "fixtures" / "web"
NOW = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)


def parse(name: str, *bodies: tuple[str, bytes | str], surface: str = "jobs_board"):
    pages = [Page(url, body.encode() if isinstance(body, str) else body) for url, body in bodies]
    return registry.get(name).parse(pages, surface, NOW).canonical()


def fixture(host: str, name: str) -> bytes:
    return (WEB / host / name).read_bytes()


def jobs(extraction) -> list[dict]:
    return extraction.entities.get("job", [])


def test_greenhouse_reads_the_jobs_envelope_and_unescapes_escaped_html_content() -> None:
    body = fixture("boards-api.greenhouse.io", "v1/boards/kestrel/jobs@content=true.d02.json")
    result = parse("greenhouse", ("http://boards-api.greenhouse.io/v1/boards/kestrel/jobs", body))
    assert result.structured and result.confidence == 1.0
    by_title = {j["title"]: j for j in jobs(result)}
    assert len(by_title) == 5
    staff = by_title["Staff Data Engineer"]
    assert staff["key"] == "greenhouse:4000004"
    assert staff["locations"] == ["Berlin, Germany"] and staff["department"] == "Engineering"
    assert staff["requisition_id"] == "REQ-104"
    # `content` is entity-escaped HTML ("&lt;h2&gt;"): it reads as plain text.
    assert staff["summary"] == "About Pipelines & lakes."
    assert by_title["Backend Engineer"]["summary"] == "Build APIs & services."


def test_greenhouse_pay_ranges_become_compensation() -> None:
    body = json.dumps(
        {
            "jobs": [
                {
                    "id": 1,
                    "title": "SRE",
                    "location": {"name": "Remote"},
                    "absolute_url": "https://x/1",
                    "pay_input_ranges": [
                        {"min_cents": 15000000, "max_cents": 18000000, "currency_type": "USD"}
                    ],
                }
            ],
            "meta": {"total": 1},
        }
    )
    [job] = jobs(parse("greenhouse", ("http://gh/jobs", body)))
    assert job["compensation"] == {
        "min": 150000.0,
        "max": 180000.0,
        "currency": "USD",
        "interval": "year",
    }
    assert job["remote"] is True


@pytest.mark.parametrize(
    ("connector", "host", "name"),
    [
        ("greenhouse", "boards-api.greenhouse.io", "v1/boards/quietco/jobs@content=true.json"),
        ("personio", "empty-co.jobs.personio.de", "xml.html"),
    ],
)
def test_an_empty_board_is_a_trusted_empty_answer(connector: str, host: str, name: str) -> None:
    result = parse(connector, (f"http://{host}/", fixture(host, name)))
    assert result.structured and jobs(result) == []


@pytest.mark.parametrize(
    ("connector", "empty"),
    [
        ("lever", "[]"),
        ("ashby", '{"apiVersion": "v0.1", "jobs": []}'),
        ("workable", '{"name": "X", "description": "", "jobs": []}'),
        ("workday", '{"total": 0, "jobPostings": []}'),
        ("recruitee", '{"offers": []}'),
        ("smartrecruiters", '{"offset": 0, "limit": 100, "totalFound": 0, "content": []}'),
        ("teamtailor", '<rss version="2.0"><channel><title>x</title></channel></rss>'),
    ],
)
def test_empty_boards_of_every_vendor_parse_to_no_jobs(connector: str, empty: str) -> None:
    result = parse(connector, ("http://x.example/wday/cxs/x/site/jobs", empty))
    assert result.structured and jobs(result) == []


@pytest.mark.parametrize(
    ("connector", "wrong"),
    [
        ("greenhouse", '{"postings": []}'),
        ("greenhouse", "<html>Not found</html>"),
        ("lever", '{"jobs": []}'),
        ("ashby", "[]"),
        ("workable", '{"jobs": "none"}'),
        ("workday", '{"total": 1}'),
        ("recruitee", '{"offers": [{"name": "no id"}]}'),
        ("smartrecruiters", '{"content": []}'),
        ("personio", "<jobs><position/></jobs>"),
        ("personio", "not xml at all"),
        ("teamtailor", "<feed xmlns='http://www.w3.org/2005/Atom'/>"),
        ("statuspage", '{"status": "ok"}'),
    ],
)
def test_a_response_that_is_not_the_vendor_shape_is_a_schema_error(
    connector: str, wrong: str
) -> None:
    with pytest.raises(SchemaError, match=connector):
        parse(connector, ("http://x.example/wday/cxs/x/site/jobs", wrong))


def test_lever_reads_a_bare_array_and_pages_with_skip_and_limit() -> None:
    lever = Lever(page_size=2)
    first = lever.first_url("http://api.lever.co/v0/postings/larkspur?mode=json")
    assert first == "http://api.lever.co/v0/postings/larkspur?limit=2&mode=json&skip=0"
    full = fixture("api.lever.co", "v0/postings/larkspur@limit=100&mode=json&skip=0.d03.json")
    postings = json.loads(full)
    page1 = Page(first, json.dumps(postings[:2]).encode())
    second = lever.next_url(page1, 0)
    assert second == "http://api.lever.co/v0/postings/larkspur?limit=2&mode=json&skip=2"
    page2 = Page(second, json.dumps(postings[2:]).encode())
    assert lever.next_url(page2, 1) is None  # a short page is the last
    result = lever.parse([page1, page2], "jobs_board", NOW).canonical()
    titles = sorted(j["title"] for j in jobs(result))
    assert titles == ["Data Scientist", "Mobile Engineer", "Security Engineer"]
    security = next(j for j in jobs(result) if j["title"] == "Security Engineer")
    assert security["compensation"] == {
        "min": 120000.0, "max": 150000.0, "currency": "USD", "interval": "per-year-salary"
    }  # fmt: skip
    assert security["employment_type"] == "Full-time" and security["workplace_type"] == "hybrid"
    assert security["posted_at"].startswith("2025-12-")  # createdAt is epoch milliseconds


def test_smartrecruiters_pages_with_offset_and_limit_until_total_found() -> None:
    sr = SmartRecruiters(page_size=2)
    url = sr.first_url("http://api.smartrecruiters.com/v1/companies/Tern/postings")
    assert url.endswith("postings?limit=2&offset=0")
    content = json.loads(
        fixture("api.smartrecruiters.com", "v1/companies/Tern/postings@limit=100&offset=0.d12.json")
    )["content"]
    pages = []
    offset = 0
    while url is not None:
        body = {
            "offset": offset,
            "limit": 2,
            "totalFound": 4,
            "content": content[offset : offset + 2],
        }
        pages.append(Page(url, json.dumps(body).encode()))
        url = sr.next_url(pages[-1], len(pages) - 1)
        offset += 2
    assert [p.url.rsplit("=", 1)[1] for p in pages] == ["0", "2"]
    result = sr.parse(pages, "jobs_board", NOW).canonical()
    store = next(j for j in jobs(result) if j["title"] == "Store Manager")
    assert store["locations"] == ["Dublin, Ireland"] and store["requisition_id"] == "TERN-001"
    assert store["url"] == "https://jobs.smartrecruiters.com/Tern/7440000000001"
    assert len(jobs(result)) == 4


def test_workday_pages_by_20_in_post_bodies_and_dates_relative_dates_at_fetch_time() -> None:
    wd = Workday()
    base = "http://wren.wd1.myworkdayjobs.com/wday/cxs/wren/External/jobs"
    body = {"appliedFacets": {}, "limit": 20, "offset": 0, "searchText": ""}
    first = wd.first_request(base)
    assert (first.url, first.method, first.json_body) == (base, "POST", body)
    # Paging parameters left on an old sensor URL are not sent: the body pages.
    assert wd.first_request(base + "?limit=20&offset=20") == first
    host = "wren.wd1.myworkdayjobs.com"
    page1 = Page(
        first.url,
        fixture(host, "wday/cxs/wren/External/jobs@limit=20&offset=0.d07.json"),
        method="POST",
        json_body=first.json_body,
    )
    second = wd.next_request(page1, 0)
    assert second is not None
    assert (second.url, second.method, second.json_body) == (base, "POST", {**body, "offset": 20})
    page2 = Page(
        second.url,
        fixture(host, "wday/cxs/wren/External/jobs@limit=20&offset=20.d07.json"),
        method="POST",
        json_body=second.json_body,
    )
    assert wd.next_request(page2, 1) is None
    # The archived bundle keeps each page's POST body, so paging can be replayed from it.
    restored = unbundle(bundle([page1, page2]), base, "")
    assert restored == [page1, page2]
    assert wd.next_request(restored[0], 0) == second
    now = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)  # fixture day 7
    result = wd.parse([page1, page2], "jobs_board", now).canonical()
    assert len(jobs(result)) == 24
    sre = next(j for j in jobs(result) if j["title"] == "Site Reliability Engineer")
    assert sre["posted_at"] == "2026-01-12"  # "Posted Today"
    assert sre["requisition_id"] == "R-2000" and sre["locations"] == ["Berlin, Germany"]
    assert (
        sre["url"]
        == "http://wren.wd1.myworkdayjobs.com/External/job/Berlin/Site-Reliability-Engineer_R-2000"
    )
    # The same posting read a day later says "1 Day Ago" but keeps its date.
    later = datetime(2026, 1, 13, 9, 0, tzinfo=UTC)
    assert posted_date("Posted Yesterday", later) == "2026-01-12"
    assert posted_date("Posted 3 Days Ago", now) == "2026-01-09"
    assert posted_date("Posted 30+ Days Ago", now) is None


def test_ashby_workable_recruitee_personio_and_teamtailor_map_to_the_job_schema() -> None:
    ashby = jobs(
        parse(
            "ashby",
            (
                "http://a/",
                fixture(
                    "api.ashbyhq.com", "posting-api/job-board/heron@includeCompensation=true.json"
                ),
            ),
        )
    )
    ml = next(j for j in ashby if j["title"] == "ML Engineer")
    assert ml["compensation"] == {
        "min": 150000.0,
        "max": 190000.0,
        "currency": "USD",
        "interval": "1 YEAR",
    }
    assert ml["employment_type"] == "FullTime" and ml["workplace_type"] == "OnSite"

    workable = jobs(
        parse(
            "workable",
            (
                "http://w/",
                fixture(
                    "apply.workable.com", "api/v1/widget/accounts/osprey@details=true.d05.json"
                ),
            ),
        )
    )
    qa = next(j for j in workable if j["title"] == "QA Engineer")
    assert qa["remote"] is True and qa["key"] == "workable:P6Q7R8S9T0"
    assert qa["url"] == "https://apply.workable.com/j/P6Q7R8S9T0"

    recruitee = jobs(
        parse("recruitee", ("http://r/", fixture("swift.recruitee.com", "api/offers.d08.html")))
    )
    analyst = next(j for j in recruitee if j["title"] == "Data Analyst")
    assert analyst["posted_at"] == "2025-12-30T09:15:00Z"
    assert analyst["compensation"]["currency"] == "PLN" and analyst["workplace_type"] == "hybrid"

    personio = jobs(
        parse(
            "personio",
            ("http://plover.jobs.personio.de/xml", fixture("plover.jobs.personio.de", "xml.html")),
        )
    )
    python = next(j for j in personio if j["title"] == "Senior Python Developer")
    assert python["locations"] == ["Linz", "Vienna"]
    assert python["url"] == "http://plover.jobs.personio.de/job/10001"
    assert python["employment_type"] == "permanent full-time"

    teamtailor = jobs(
        parse("teamtailor", ("http://f/", fixture("finch.teamtailor.com", "jobs.d11.rss")))
    )
    community = next(j for j in teamtailor if j["title"] == "Community Manager")
    assert community["remote"] is True and community["locations"] == ["Stockholm, Sweden"]
    assert community["posted_at"] == "2025-12-03T09:00:00+01:00"


def test_statuspage_reads_indicator_components_and_incidents() -> None:
    body = fixture("status.kestrel-labs.com", "api/v2/summary.d13.json")
    result = parse("statuspage", ("http://status/", body), surface="status")
    assert result.status["indicator"] == "critical"
    assert {c["name"]: c["status"] for c in result.status["components"]}["API"] == "major_outage"
    [incident] = result.entities["incident"]
    assert incident["name"] == "API unavailable" and incident["impact"] == "critical"


def test_feeds_in_rss_1_and_atom_become_news_items_keyed_by_canonical_url() -> None:
    atom = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
    <entry><title>Hello</title><link href="http://x.com/a?utm_source=rss"/><id>1</id>
    <updated>2026-01-02T00:00:00Z</updated></entry></feed>"""
    rdf = """<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    xmlns="http://purl.org/rss/1.0/"><channel rdf:about="http://x.com/"><title>t</title>
    <link>http://x.com/</link><description>d</description></channel>
    <item rdf:about="http://x.com/b"><title>Bye</title><link>http://x.com/b/</link></item></rdf:RDF>"""
    [a] = parse("feed", ("http://x.com/feed", atom), surface="feed").entities["news"]
    assert a["key"] == "http://x.com/a" and a["title"] == "Hello"
    [b] = parse("feed", ("http://x.com/feed", rdf), surface="feed").entities["news"]
    assert b["key"] == "http://x.com/b"
    with pytest.raises(SchemaError):
        parse("feed", ("http://x.com/feed", "<html><body>no feed</body></html>"), surface="feed")


def test_several_pages_are_archived_as_one_bundle_and_split_back() -> None:
    pages = [Page("http://a/1", b"[1]"), Page("http://a/2", b"[2]")]
    assert unbundle(bundle(pages), "http://a/1", "") == [
        Page("http://a/1", b"[1]"),
        Page("http://a/2", b"[2]"),
    ]
    assert bundle(pages[:1]) == b"[1]"


def test_an_unknown_connector_name_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="unknown connector 'nope'"):
        registry.get("nope")
