"""Politeness arithmetic and bounded decoding, with plain inputs (no network, no clock)."""

from __future__ import annotations

import gzip
import zlib
from datetime import UTC, datetime, timedelta

import brotli
import pytest

from catlas_assets.domain.failures import forbidden_address
from catlas_assets.domain.pacing import budget_day, retry_after_until, spacing_s
from resources.body_decoding import BodyTooLarge, CappedDecoder, UndecodableBody

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
DAY = 86400


def test_retry_after_delta_seconds_counts_from_now() -> None:
    assert retry_after_until("120", NOW, max_s=DAY) == NOW + timedelta(seconds=120)


def test_retry_after_http_date_is_an_absolute_instant() -> None:
    until = retry_after_until("Mon, 05 Jan 2026 10:00:00 GMT", NOW, max_s=DAY)
    assert until == datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", ["Thu, 01 Jan 2015 00:00:00 GMT", "0", "", "soon", None, "-5"])
def test_retry_after_in_the_past_or_unreadable_asks_for_no_wait(value: str | None) -> None:
    assert retry_after_until(value, NOW, max_s=DAY) is None


@pytest.mark.parametrize("value", ["99999999999", "9" * 40, "Fri, 01 Jan 2100 00:00:00 GMT"])
def test_an_absurd_retry_after_is_capped(value: str) -> None:
    assert retry_after_until(value, NOW, max_s=DAY) == NOW + timedelta(seconds=DAY)


def test_crawl_delay_raises_spacing_up_to_its_cap_never_lowers_it() -> None:
    assert spacing_s(1.0, None, max_delay_s=60) == 1.0
    assert spacing_s(1.0, 5, max_delay_s=60) == 5
    assert spacing_s(1.0, 3600, max_delay_s=60) == 60
    assert spacing_s(2.0, 0.5, max_delay_s=60) == 2.0


def test_the_budget_day_is_the_utc_day() -> None:
    late = datetime(2026, 1, 5, 23, 30, tzinfo=UTC)
    assert budget_day(late) == "2026-01-05"
    assert budget_day(late + timedelta(hours=1)) == "2026-01-06"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("172.16.5.4", "private"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.1.1", "carrier-grade NAT"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped IPv6
        ("fc00::5", "private"),
    ],
)
def test_refused_destinations(address: str, reason: str) -> None:
    found = forbidden_address(address)
    # An address carried inside another (IPv4-mapped, 6to4) says how, then the reason.
    assert found is not None and reason in found


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:4700::1111", "::ffff:8.8.8.8"])
def test_public_destinations_pass(address: str) -> None:
    assert forbidden_address(address) is None


# -- decoding under a cap ---------------------------------------------------------------------
PAYLOAD = b"<p>hello decoded world</p>" * 200


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("gzip", gzip.compress(PAYLOAD, mtime=0)),
        ("x-gzip", gzip.compress(PAYLOAD, mtime=0)),
        ("deflate", zlib.compress(PAYLOAD)),
        ("deflate", zlib.compress(PAYLOAD)[2:-4]),  # raw deflate, as some servers send it
        ("br", brotli.compress(PAYLOAD)),
        ("identity", PAYLOAD),
        (None, PAYLOAD),
    ],
    # Named ids: the test ids must be the same in every xdist worker's collection.
    ids=["gzip", "x-gzip", "deflate", "raw-deflate", "br", "identity", "none"],
)
def test_bodies_decode_in_small_chunks(encoding: str | None, data: bytes) -> None:
    decoder = CappedDecoder(encoding, max_bytes=len(PAYLOAD))
    out = b"".join(decoder.feed(data[i : i + 97]) for i in range(0, len(data), 97))
    assert out + decoder.finish() == PAYLOAD


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_bomb_stops_at_the_cap_without_inflating(encoding: str) -> None:
    inflated = b"\0" * (64 << 20)
    bomb = (
        gzip.compress(inflated, 9) if encoding == "gzip" else brotli.compress(inflated, quality=5)
    )
    assert len(bomb) < 200_000
    decoder = CappedDecoder(encoding, max_bytes=1_000_000)
    with pytest.raises(BodyTooLarge):
        decoder.feed(bomb)
    assert decoder.size <= 1_000_000


def test_corrupt_or_unknown_encodings_are_undecodable() -> None:
    with pytest.raises(UndecodableBody):
        CappedDecoder("gzip", 1000).feed(b"not gzip at all")
    with pytest.raises(UndecodableBody):
        CappedDecoder("compress", 1000)
