"""Destination block: every spelling of an address names that address, and a private one
is refused before any connection (IPv4 literal forms, 6to4, Teredo, NAT64)."""

from __future__ import annotations

import asyncio

import pytest

from catlas_assets.domain.failures import forbidden_address, ip_literal
from catlas_assets.domain.vocabulary import FailureClass
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
