"""Following a redirect: which statuses are one, and the target a Location header names."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import httpx

from catlas_assets.domain.failures import forbidden_address, ip_literal
from catlas_assets.domain.vocabulary import FailureClass
from resources.fetch_failure import FetchFailure

REDIRECT_STATUSES = (301, 302, 303, 307, 308)


def redirect_target(current: str, location: str, status: int) -> str:
    """The absolute URL a Location header names; a malformed or non-http one is refused."""
    try:
        target = urljoin(current, location.strip())
        parts = urlsplit(target)
        _ = parts.port  # a malformed port raises ValueError
        if any(ord(c) < 32 or ord(c) == 127 for c in target) or " " in (parts.hostname or ""):
            raise ValueError("control character or space")
        host = parts.hostname or ""
        if ip_literal(host) is not None and (reason := forbidden_address(host)) is not None:
            # An address spelled so that httpx cannot parse it still names that address.
            raise FetchFailure(FailureClass.BLOCKED_DESTINATION, f"{host}: {reason}", status)
        httpx.URL(target)  # what the next request would be built from (IDNA, characters)
    except (ValueError, httpx.InvalidURL):
        raise FetchFailure(
            FailureClass.REDIRECT, f"malformed redirect Location {location[:200]!r}", status
        ) from None
    if parts.scheme not in ("http", "https"):
        raise FetchFailure(
            FailureClass.BLOCKED_DESTINATION, f"redirect to a non-http URL {target[:200]!r}", status
        )
    if not parts.hostname:
        raise FetchFailure(
            FailureClass.REDIRECT, f"redirect without a host {target[:200]!r}", status
        )
    return target
