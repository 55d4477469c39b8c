"""The candidate book on plain inputs: one entry per find, found surfaces, marks, rejects."""

from __future__ import annotations

from catlas_assets.domain.candidates import (
    Candidate,
    CandidateBook,
    board_candidate,
    probe_candidate,
    same_url,
    website_variants,
)
from catlas_assets.domain.page_links import extract_links
from catlas_assets.domain.taxonomy import FOUND_SCORE
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface


def _candidate(url: str, method: DiscoveryMethod, confidence: float) -> Candidate:
    return Candidate(
        url=url,
        surface=Surface.CAREERS,
        method=method,
        confidence=confidence,
        verified=False,
        depth=1,
    )


def test_the_same_url_surface_and_method_is_kept_once() -> None:
    book = CandidateBook()
    book.add(_candidate("https://e.com/careers", DiscoveryMethod.NAV, 0.9))
    book.add(_candidate("https://e.com/careers", DiscoveryMethod.NAV, 0.5))
    book.add(_candidate("https://e.com/careers", DiscoveryMethod.LINK, 0.9))
    assert [(c.method, c.confidence) for c in book.candidates] == [
        (DiscoveryMethod.NAV, 0.9),
        (DiscoveryMethod.LINK, 0.9),
    ]


def test_a_surface_is_found_once_a_candidate_is_verified_or_scores_the_found_score() -> None:
    guess = CandidateBook()
    guess.add(_candidate("https://e.com/life", DiscoveryMethod.LINK, 0.5))
    assert guess.candidates[0].score < FOUND_SCORE and not guess.has(Surface.CAREERS)
    nav = CandidateBook()
    nav.add(_candidate("https://e.com/careers", DiscoveryMethod.NAV, 0.9))
    assert nav.candidates[0].score >= FOUND_SCORE and nav.has(Surface.CAREERS)
    probed = CandidateBook()
    probed.add(probe_candidate("https://e.com/jobs", Surface.CAREERS))
    assert probed.has(Surface.CAREERS)
    refused = CandidateBook()
    refused.add(probe_candidate("https://e.com/jobs", Surface.CAREERS, rejected="soft-404"))
    assert not refused.has(Surface.CAREERS) and refused.best(Surface.CAREERS) is None


def test_mark_reaches_the_candidate_whatever_www_or_a_trailing_slash_say() -> None:
    book = CandidateBook()
    book.add(_candidate("https://www.e.com/careers/", DiscoveryMethod.NAV, 0.9))
    book.mark("https://e.com/careers", Surface.CAREERS, verified=True)
    assert book.candidates[0].verified
    assert same_url("https://www.e.com/a/", "https://e.com/a")
    assert not same_url("https://e.com/a?x=1", "https://e.com/a")


def test_reject_sets_the_reason_on_eligible_candidates_and_names_the_urls() -> None:
    book = CandidateBook()
    book.add(_candidate("https://e.com/private/careers", DiscoveryMethod.NAV, 0.9))
    book.add(_candidate("https://e.com/careers", DiscoveryMethod.NAV, 0.9))
    book.add(board_candidate("https://api/x", "lever", ok=False, rejected="no answer"))
    refused = book.reject(lambda url: "private" in url or "api" in url, "robots.txt disallows it")
    assert refused == ["https://e.com/private/careers"]  # the rejected board keeps its reason
    reasons = {c.url: c.rejected for c in book.candidates}
    assert reasons == {
        "https://e.com/private/careers": "robots.txt disallows it",
        "https://e.com/careers": "",
        "https://api/x": "no answer",
    }


def test_links_become_nav_or_link_candidates_and_own_domain_feeds() -> None:
    html = b"""<html><head><link rel="alternate" type="application/rss+xml" href="/feed.xml">
    <link rel="alternate" type="application/rss+xml" href="https://other.com/feed.xml"></head>
    <body><nav><a href="/careers">Careers</a></nav><main><a href="/pricing">Pricing</a>
    <a href="/">Home</a></main></body></html>"""
    book = CandidateBook()
    book.add_links(extract_links(html, "text/html", "https://e.com/"), "e.com")
    found = {(c.url, c.surface, c.method) for c in book.candidates}
    assert found == {
        ("https://e.com/careers", Surface.CAREERS, DiscoveryMethod.NAV),
        ("https://e.com/pricing", Surface.PRICING, DiscoveryMethod.LINK),
        ("https://e.com/feed.xml", Surface.FEED, DiscoveryMethod.FEED),
    }


def test_website_variants_try_www_and_the_other_scheme_after_the_url_given() -> None:
    assert website_variants("https://e.com/start") == [
        "https://e.com/start",
        "https://www.e.com/",
        "http://e.com/",
        "http://www.e.com/",
    ]
