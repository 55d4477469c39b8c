"""Which failure class a response or a transport error belongs to (spec: failure policies)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from catlas_assets.domain.vocabulary import FailureClass

# Transient answers worth one more try within the same run.
RETRYABLE_STATUSES = frozenset({502, 503, 504})

# Vendor challenge signatures: a challenge is a status code *and* a vendor marker.
CHALLENGE_STATUSES = frozenset({403, 429, 503})
CHALLENGE_HEADERS = {
    "cf-mitigated": "challenge",  # Cloudflare managed challenge
    "x-datadome": "",  # DataDome
    "x-amzn-waf-action": "captcha",  # AWS WAF
    "x-vercel-mitigated": "challenge",  # Vercel firewall
    "x-kpsdk-ct": "",  # Kasada
    "x-sucuri-id": "",  # Sucuri firewall (on a challenge status only)
}
CHALLENGE_BODY_MARKERS = (
    b"cf-chl-",  # Cloudflare challenge platform scripts
    b"challenge-platform",
    b"_incapsula_resource",  # Imperva
    b"px-captcha",  # PerimeterX / HUMAN
    b"captcha-delivery.com",  # DataDome
    b"ak_bmsc",  # Akamai Bot Manager cookie in an interstitial
    b"<title>just a moment...</title>",  # Cloudflare interstitial page
    b"sucuri website firewall",
    b"kpsdk",  # Kasada scripts
)


def is_bot_challenge(status: int, headers: Mapping[str, str], body: bytes) -> bool:
    if status not in CHALLENGE_STATUSES:
        return False
    for name, marker in CHALLENGE_HEADERS.items():
        value = headers.get(name)
        if value is not None and marker in value.lower():
            return True
    head = body[:65536].lower()
    return any(marker in head for marker in CHALLENGE_BODY_MARKERS)


def classify_status(status: int, headers: Mapping[str, str], body: bytes) -> FailureClass | None:
    """The failure class of a final (non-redirect) HTTP answer, or None for a success."""
    if is_bot_challenge(status, headers, body):
        return FailureClass.BOT_CHALLENGE
    if status in (404, 410):
        return FailureClass.PAGE_REMOVED
    if status == 429:
        return FailureClass.RATE_LIMIT
    if 400 <= status < 500:
        return FailureClass.HTTP_4XX
    if status >= 500:
        return FailureClass.HTTP_5XX
    if status >= 300:
        return FailureClass.REDIRECT  # a redirect without a usable Location
    return None


_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


def forbidden_address(address: str) -> str | None:
    """Why connecting to this IP would be unsafe (SSRF), or None when it is a public address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in _METADATA:
        return "cloud metadata address"
    checks = (
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "carrier-grade NAT"),
        (ip.is_multicast, "multicast"),
        (ip.is_unspecified, "unspecified"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "not globally routable"),
    )
    for hit, reason in checks:
        if hit:
            return f"{reason} address {ip}"
    return None
