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
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_PART = {"0x": 16, "0X": 16}


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a URL host names when it is an IP literal in any spelling a resolver
    accepts (inet_aton: `0177.0.0.1` octal, `0x7f.1` hex, `127.1` and `2130706433` short
    forms), or None for a name."""
    name = host.strip("[]").split("%", 1)[0].rstrip(".")
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    parts = name.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        base = 16 if part[:2] in _IPV4_PART else 8 if len(part) > 1 and part[0] == "0" else 10
        digits = part[2:] if base == 16 else part
        try:
            numbers.append(int(digits, base) if digits else 0 if base == 16 else -1)
        except ValueError:
            return None
        if numbers[-1] < 0:
            return None
    # All but the last part are one octet each; the last fills the remaining bytes.
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    return ipaddress.IPv4Address(value * 256 ** (4 - len(head)) + last)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries: mapped, 6to4, Teredo, NAT64."""
    out: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip.ipv4_mapped is not None:
        out.append(("IPv4-mapped", ip.ipv4_mapped))
    if ip.sixtofour is not None:
        out.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        out.extend((("Teredo", server), ("Teredo", client)))
    if any(ip in net for net in _NAT64):
        out.append(("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    return out


def forbidden_address(address: str) -> str | None:
    """Why connecting to this IP would be unsafe (SSRF), or None when it is a public address."""
    ip = ip_literal(address)
    if ip is None:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        for how, inner in _embedded_ipv4(ip):
            reason = _forbidden_ip(inner)
            if reason is not None:
                return f"{how} address {ip} embedding {reason}"
        if ip.ipv4_mapped is not None:
            return None  # a public IPv4 address, mapped
    return _forbidden_ip(ip)


def _forbidden_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
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
