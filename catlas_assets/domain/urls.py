"""URL checks and registrable domains (public suffix list bundled, never downloaded)."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from catlas_assets.errors import CatlasError

if TYPE_CHECKING:
    import tldextract


@cache
def _extractor() -> tldextract.TLDExtract:
    # Imported at first use: tldextract brings `requests` along, a tenth of a second that
    # a command checking one URL (`catlas robots check`) would pay for nothing.
    import tldextract

    # suffix_list_urls=() keeps tldextract on its bundled snapshot: no download at run time.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


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


# A path segment that names a language (`en`, `de-ch`, `pt_BR`): the root of that
# language's site, not a section.
_LOCALE = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2})?$", re.IGNORECASE)


def is_locale(segment: str) -> bool:
    return bool(_LOCALE.match(segment))


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""  # "http://[::1" names no host


def registrable_domain(host_or_url: str) -> str:
    """`www.shop.example.co.uk` -> `example.co.uk`; an IP or bare host is returned as is."""
    host = host_of(host_or_url) if "://" in host_or_url else host_or_url.lower()
    return _domain_of_host(host)


@lru_cache(maxsize=65536)
def _domain_of_host(host: str) -> str:
    # A tick asks for the same few hosts many times per sensor; the suffix-trie walk and
    # its result object cost more than the lookup.
    return _extractor()(host).top_domain_under_public_suffix or host


_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\]")


def _ascii_host(host: str, given: str) -> str:
    """A host as DNS reads it: lower case, IDN labels in punycode (`bücher.de` -> `xn--...`)."""
    host = host.strip().rstrip(".").lower()
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise BadURL(f"website {given!r} has a host that is not a valid name") from None


def normalize_website(website: str) -> str:
    """A website as people write it -> one canonical URL, or BadURL.

    `acme.com`, `Acme.COM/`, `//acme.com`, `www.acme.com`, `acme.com/en/` and
    `https://ACME.com/en` are all accepted: no scheme means https (discovery then tries
    http too, see candidates.website_variants); the host is lower-cased and an IDN becomes
    punycode; a trailing slash, the query and the fragment go; a path like `/en` stays (it
    is where that site's homepage lives). `www.` is kept as written: some sites answer only
    on one of the two names, and discovery tries the other one anyway.
    """
    text = website.strip()
    if not text:
        raise BadURL("website is empty")
    if "://" not in text:
        scheme_less = text.removeprefix("//")
        head = scheme_less.split("/", 1)[0]
        if ":" in head and not head.split(":", 1)[1].split("/")[0].isdigit():
            # `mailto:x`, `javascript:...`: a scheme, and not an http one.
            return check_url(text)
        text = "https://" + scheme_less
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    check_url(urlunsplit((scheme, parts.netloc, parts.path, "", "")))
    host = _ascii_host(parts.hostname or "", website)
    if not _HOST.fullmatch(host):
        raise BadURL(f"website {website!r} has a host that is not a valid name")
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))
