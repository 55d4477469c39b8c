"""Destination block: every spelling of an address names that address, and a private one
is refused before any connection (IPv4 literal forms, 6to4, Teredo, NAT64)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from catlas_assets.domain.failures import forbidden_address, ip_literal
from catlas_assets.domain.vocabulary import FailureClass
from fixture_web import FixtureWeb
from resources.fetch_failure import FetchFailure
from resources.redirects import redirect_target

LOOPBACK_SPELLINGS = ["0177.0.0.1", "0x7f.0.0.1", "0x7f.1", "127.1", "2130706433", "017700000001"]


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_every_ipv4_literal_spelling_names_the_address_it_spells(spelling: str) -> None:
    assert str(ip_literal(spelling)) == "127.0.0.1"
    assert forbidden_address(spelling) is not None


@pytest.mark.parametrize(
    "address",
    [
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
        "::ffff:10.1.2.3",
    ],
)
def test_ipv6_addresses_embedding_a_private_ipv4_address_are_refused(address: str) -> None:
    reason = forbidden_address(address)
    assert reason is not None and "embedding" in reason


def test_public_addresses_stay_allowed_in_every_spelling() -> None:
    for address in ("8.8.8.8", "134744072", "0x8080808", "::ffff:8.8.8.8", "2002:808:808::1"):
        assert forbidden_address(address) is None, address
    assert ip_literal("example.com") is None and ip_literal("1.2.3.4.5") is None
    assert ip_literal("08.1.1.1") is None  # 8 is no octal digit: a name, as resolvers say


@pytest.mark.parametrize(
    "url",
    [
        "http://0177.0.0.1/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://[2002:7f00:1::1]/",
        "http://[64:ff9b::7f00:1]/",
    ],
)
def test_a_url_spelling_a_private_address_is_blocked_before_any_request(watch, url) -> None:
    w = watch()
    fetched = asyncio.run(_fetch(w.runtime, url))
    assert fetched.failure_class is FailureClass.BLOCKED_DESTINATION, fetched.failure_detail
    assert fetched.requests == 0
    assert not fetched.skipped_reason  # never "robots.txt unavailable"


@pytest.mark.parametrize(
    "location", ["http://exa\x00mple.com/", "http://\u2603.com/", "http://a b.com/", "http://[::1"]
)
def test_a_malformed_location_is_a_redirect_failure(location: str) -> None:
    with pytest.raises(FetchFailure) as raised:
        redirect_target("http://a.com/", location, 302)
    assert raised.value.failure_class is FailureClass.REDIRECT


async def _fetch(runtime, url: str):
    async with runtime.fetcher() as fetcher:
        return await fetcher.fetch(url)


PRIVATE_TARGETS = {
    "/octal": "http://0177.0.0.1/admin",
    "/hex-short": "http://0x7f.1/admin",
    "/integer": "http://2130706433/admin",
    "/sixtofour": "http://[2002:a00:1::1]/admin",
    "/teredo": "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/admin",
    "/nat64": "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
}
MALFORMED_TARGETS = {"/bad-bracket": "http://[::1", "/bad-port": "http://a.example:99999/"}


@pytest.fixture(scope="module")
def redirect_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    root = tmp_path_factory.mktemp("redirect-web")
    site = root / "redirects-inward.com"
    site.mkdir()
    (site / "index.html").write_text("<p>home</p>")
    (site / "_site.toml").write_text(
        "\n".join(
            f'[[route]]\npath = "{path}"\nstatus = 302\nheaders = {{ "Location" = "{target}" }}\n'
            for path, target in {**PRIVATE_TARGETS, **MALFORMED_TARGETS}.items()
        )
    )
    with FixtureWeb(root=root) as web:
        yield web


@pytest.mark.parametrize("path", sorted(PRIVATE_TARGETS))
def test_a_redirect_to_a_private_spelling_is_blocked_before_the_hop(
    make_runtime, redirect_web: FixtureWeb, tmp_path: Path, path: str
) -> None:
    runtime = make_runtime(hosts=str(redirect_web.write_hosts_file(tmp_path / "inward-hosts")))
    redirect_web.clear_requests()
    fetched = asyncio.run(_fetch(runtime, f"http://redirects-inward.com{path}"))
    assert fetched.failure_class is FailureClass.BLOCKED_DESTINATION, fetched.failure_detail
    # The fixture server (itself on 127.0.0.1) saw robots.txt and the redirect, nothing else.
    assert [r.path for r in redirect_web.requests] == ["/robots.txt", path]


@pytest.mark.parametrize("path", sorted(MALFORMED_TARGETS))
def test_a_malformed_location_served_for_real_is_redirect_and_not_retried(
    make_runtime, redirect_web: FixtureWeb, tmp_path: Path, path: str
) -> None:
    runtime = make_runtime(
        hosts=str(redirect_web.write_hosts_file(tmp_path / "inward-hosts")), fetch_retries=2
    )
    redirect_web.clear_requests()
    fetched = asyncio.run(_fetch(runtime, f"http://redirects-inward.com{path}"))
    assert fetched.failure_class is FailureClass.REDIRECT, fetched.failure_detail
    assert [r.path for r in redirect_web.requests] == ["/robots.txt", path]  # asked once
