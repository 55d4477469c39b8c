"""A caller's request cap holds for everything one fetch sends: robots.txt, its redirects
and the page's own hops (discovery's budget relies on it)."""

from __future__ import annotations

import asyncio

import pytest

from fixture_web import FixtureWeb

HOST = "robots-moved.faultline.dev"  # robots.txt answers with a redirect: two requests


def _sent_to(web: FixtureWeb, host: str) -> list[str]:
    return [r.path for r in web.requests if r.host == host or r.host == "faultline.dev"]


@pytest.mark.parametrize("cap", [1, 2])
def test_a_fetch_never_sends_more_requests_than_its_cap(
    make_runtime, web: FixtureWeb, cap: int
) -> None:
    runtime = make_runtime()

    async def go():
        async with runtime.fetcher() as fetcher:
            return await fetcher.fetch(f"http://{HOST}/", max_requests=cap)

    fetched = asyncio.run(go())
    assert fetched.skipped_reason == "request_budget"
    assert fetched.requests == cap
    assert len(_sent_to(web, HOST)) == cap
    assert "/" not in [p for p in _sent_to(web, HOST) if p != "/robots.txt"]


def test_a_cap_large_enough_lets_the_fetch_complete(make_runtime, web: FixtureWeb) -> None:
    runtime = make_runtime()

    async def go():
        async with runtime.fetcher() as fetcher:
            return await fetcher.fetch(f"http://{HOST}/", max_requests=3)

    fetched = asyncio.run(go())
    assert not fetched.skipped_reason
    assert fetched.status == 200
    assert fetched.requests == 3  # robots.txt, its redirect target, the page
    assert len(_sent_to(web, HOST)) == 3
