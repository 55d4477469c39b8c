"""Parsed robots.txt files per origin, each until its expiry (on the runtime's clock).

The cache outlives a tick (the runtime holds it), so a domain's robots.txt is fetched once
per TTL, not once per tick. Fetching lives in the fetcher, which owns the HTTP client; an
origin's answer is one `RobotsEntry`: usable rules (a 2xx file, or allow-all after a 4xx)
or `unavailable` (5xx, unreachable, too many redirects), which postpones every fetch of
that origin until the entry expires.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from catlas_assets.domain.robots import RobotsTxt


@dataclass(frozen=True)
class RobotsEntry:
    origin: str
    robots: RobotsTxt
    fetched_at: datetime
    expires_at: datetime
    status: int | None  # the robots.txt answer's status (None: no answer)
    unavailable: str = ""  # why the rules are unknown; "" when they are usable
    source_url: str = ""  # where the file came from after redirects


def origin_of(url: str) -> str:
    """`http://Example.com:80/a?b` -> `http://example.com:80` (scheme, host, port)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    host = (parts.hostname or "").lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


class RobotsCache:
    def __init__(self) -> None:
        self._entries: dict[str, RobotsEntry] = {}
        self._lock = threading.Lock()

    def get(self, origin: str, now: datetime) -> RobotsEntry | None:
        with self._lock:
            entry = self._entries.get(origin)
        if entry is None or entry.expires_at <= now:
            return None
        return entry

    def put(self, entry: RobotsEntry) -> None:
        with self._lock:
            self._entries[entry.origin] = entry

    def forget(self, origin: str) -> None:
        with self._lock:
            self._entries.pop(origin, None)
