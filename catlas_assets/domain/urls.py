"""URL checks and registrable domains (public suffix list bundled, never downloaded)."""

from __future__ import annotations

from urllib.parse import urlsplit

import tldextract

from catlas_assets.errors import CatlasError

# suffix_list_urls=() keeps tldextract on its bundled snapshot: no download at run time.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


class BadURL(CatlasError):
    pass


def check_url(url: str) -> str:
    """Return the URL if it is an absolute http(s) URL with a host, else raise BadURL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # raises ValueError on a malformed port
    except ValueError as exc:
        raise BadURL(f"malformed URL {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise BadURL(f"URL {url!r} must use http or https")
    if not parts.hostname:
        raise BadURL(f"URL {url!r} has no host")
    if port == 0:
        raise BadURL(f"URL {url!r} has port 0")
    return url.strip()


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""  # "http://[::1" names no host


def registrable_domain(host_or_url: str) -> str:
    """`www.shop.example.co.uk` -> `example.co.uk`; an IP or bare host is returned as is."""
    host = host_of(host_or_url) if "://" in host_or_url else host_or_url.lower()
    parts = _EXTRACT(host)
    return parts.top_domain_under_public_suffix or host
