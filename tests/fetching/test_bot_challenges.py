"""Bot challenges: a challenge status *and* a vendor's signature, never a status alone."""

from __future__ import annotations

import pytest

from catlas_assets.domain.failures import classify_status
from catlas_assets.domain.vocabulary import FailureClass

CLOUDFLARE_PAGE = b"<html><head><title>Just a moment...</title></head><body>...</body></html>"


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (403, {"cf-mitigated": "challenge"}, b""),
        (503, {}, CLOUDFLARE_PAGE),
        (429, {"x-vercel-mitigated": "challenge"}, b""),
        (429, {"x-kpsdk-ct": "token"}, b""),
        (403, {"x-sucuri-id": "11005"}, b"<h1>Access Denied - Sucuri Website Firewall</h1>"),
        (403, {}, b'<script src="https://ct.captcha-delivery.com/c.js"></script>'),
        (403, {}, b'<div id="px-captcha"></div>'),
    ],
)
def test_vendor_signatures_on_a_challenge_status_are_bot_challenges(status, headers, body) -> None:
    assert classify_status(status, headers, body) is FailureClass.BOT_CHALLENGE


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (200, {"cf-mitigated": "challenge"}, CLOUDFLARE_PAGE, None),  # not a challenge status
        (404, {"x-sucuri-id": "1"}, b"", FailureClass.PAGE_REMOVED),
        (403, {"server": "cloudflare"}, b"<h1>Forbidden</h1>", FailureClass.HTTP_4XX),
        (429, {"retry-after": "60"}, b"slow down", FailureClass.RATE_LIMIT),
    ],
)
def test_a_status_or_a_vendor_alone_is_not_a_challenge(status, headers, body, expected) -> None:
    assert classify_status(status, headers, body) is expected
