"""Failure classes of HTTP answers, and the addresses a fetch must never connect to."""

from __future__ import annotations

import pytest

from catlas_assets.domain.failures import classify_status, forbidden_address, is_bot_challenge
from catlas_assets.domain.vocabulary import FailureClass


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (200, None),
        (204, None),
        (404, FailureClass.PAGE_REMOVED),
        (410, FailureClass.PAGE_REMOVED),
        (429, FailureClass.RATE_LIMIT),
        (400, FailureClass.HTTP_4XX),
        (401, FailureClass.HTTP_4XX),
        (403, FailureClass.HTTP_4XX),
        (451, FailureClass.HTTP_4XX),
        (500, FailureClass.HTTP_5XX),
        (503, FailureClass.HTTP_5XX),
        (599, FailureClass.HTTP_5XX),
        (301, FailureClass.REDIRECT),
    ],
)
def test_status_without_a_vendor_marker_maps_to_its_class(
    status: int, expected: FailureClass | None
) -> None:
    assert classify_status(status, {}, b"<html>Forbidden: challenge yourself</html>") is expected


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (403, {"cf-mitigated": "challenge"}, b""),
        (503, {}, b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate'></script>"),
        (403, {"x-datadome": "protected"}, b""),
        (429, {}, b"<iframe src='https://geo.captcha-delivery.com/captcha/'></iframe>"),
        (403, {"x-amzn-waf-action": "CAPTCHA"}, b""),
        (403, {}, b"<div id='px-captcha'></div>"),
    ],
)
def test_challenge_status_with_a_vendor_marker_is_a_bot_challenge(
    status: int, headers: dict[str, str], body: bytes
) -> None:
    assert is_bot_challenge(status, headers, body)
    assert classify_status(status, headers, body) is FailureClass.BOT_CHALLENGE


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (403, {}, b"Access denied", FailureClass.HTTP_4XX),
        (429, {"retry-after": "120"}, b"slow down", FailureClass.RATE_LIMIT),
        (503, {"retry-after": "60"}, b"maintenance", FailureClass.HTTP_5XX),
        (200, {"cf-mitigated": "challenge"}, b"cf-chl-", None),  # not a challenge status
        (404, {"cf-mitigated": "challenge"}, b"", FailureClass.PAGE_REMOVED),
        (403, {"cf-mitigated": "bypass"}, b"", FailureClass.HTTP_4XX),  # marker value differs
    ],
)
def test_a_challenge_needs_both_the_status_and_the_marker(
    status: int, headers: dict[str, str], body: bytes, expected: FailureClass | None
) -> None:
    assert not is_bot_challenge(status, headers, body)
    assert classify_status(status, headers, body) is expected


REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.254",
    "224.0.0.1",
    "239.255.255.250",
    "0.0.0.0",
    "::1",
    "::",
    "fc00::1",
    "fd12:3456::1",
    "fdff:ffff::1",  # the top of fc00::/7
    "fe80::1",
    "fe80::1%eth0",
    "febf::1",  # the top of fe80::/10
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "::ffff:169.254.169.254",
    "::ffff:100.64.0.1",
    "not-an-ip",
]


@pytest.mark.parametrize("address", REFUSED)
def test_private_and_special_addresses_are_refused(address: str) -> None:
    assert forbidden_address(address) is not None


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("169.254.169.254", "metadata"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fe80::1", "link-local"),
    ],
)
def test_the_refusal_says_why(address: str, reason: str) -> None:
    assert reason in (forbidden_address(address) or "")


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "8.8.8.8", "100.128.0.1", "2606:4700::1111", "::ffff:93.184.216.34"],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert forbidden_address(address) is None
