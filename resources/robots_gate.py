"""robots.txt as the fetcher obeys it: one fetch per origin and TTL, then allow or refuse.

Every request the fetcher sends, redirect hops included, first passes `RobotsGate.check`:
the origin's robots.txt (RFC 9309; rules in domain/robots.py) is read once, cached per
origin until its expiry on the runtime's clock, and decides. An origin's answer is one
`RobotsEntry`: usable rules (a 2xx file, or allow-all after a 4xx) or `unavailable` (5xx,
429, unreachable, too many redirects), which postpones every fetch of that origin until
the entry expires. A URL the rules disallow is never requested: it fails with `ROBOTS`.

The cache outlives a tick (the runtime holds it), so a domain's robots.txt is fetched once
per TTL, not once per tick. The gate sends nothing itself: the fetcher hands it a `get`
that sends the robots.txt request through the same politeness as any other.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.vocabulary import FailureClass
from resources.fetch_failure import FetchFailure
from resources.governor import Postponed
from resources.redirects import REDIRECT_STATUSES, redirect_target

# RFC 9309 2.3.1.2: follow at least five redirects for robots.txt, then call it unavailable.
ROBOTS_MAX_REDIRECTS = 5
# Sends one GET of a robots.txt URL (the fetcher keeps the first 512 KiB of its body):
# (status, lowercase headers, body); raises FetchFailure.
RobotsGet = Callable[[str], Awaitable[tuple[int, dict[str, str], bytes]]]


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


class RobotsGate:
    """The robots.txt check before every request, over a shared `RobotsCache`."""

    def __init__(
        self,
        cache: RobotsCache,
        *,
        agent: str,
        ttl_s: float,
        unavailable_retry_s: float,
        now: Callable[[], datetime],
    ) -> None:
        self.cache = cache
        self.agent = agent
        self.ttl_s = ttl_s
        self.unavailable_retry_s = unavailable_retry_s
        self._now = now
        self._locks: dict[str, asyncio.Lock] = {}

    async def check(self, url: str, get: RobotsGet) -> RobotsEntry:
        """The entry that allows `url`; Postponed when unavailable, FetchFailure(ROBOTS) when
        the rules disallow it."""
        entry = await self.entry(url, get)
        if entry.unavailable:
            raise Postponed("robots_unavailable", entry.unavailable, entry.expires_at)
        decision = entry.robots.decide(url, self.agent)
        if not decision.allowed:
            raise FetchFailure(
                FailureClass.ROBOTS, f"{url} {decision.describe()} of {entry.source_url}"
            )
        return entry

    async def entry_for(self, url: str, get: RobotsGet) -> RobotsEntry:
        """The entry that governs `url`, never raising: an origin that cannot be reached (DNS,
        a refused destination) is an unavailable entry that expires at once."""
        try:
            return await self.entry(url, get)
        except FetchFailure as failure:
            now = self._now()
            return RobotsEntry(
                origin=origin_of(url),
                robots=RobotsTxt.disallow_all(),
                fetched_at=now,
                expires_at=now,
                status=failure.status,
                unavailable=f"{failure.failure_class}: {failure}",
            )

    async def entry(self, url: str, get: RobotsGet) -> RobotsEntry:
        """The cached entry of `url`'s origin, or a fresh one (one fetch at a time per origin)."""
        origin = origin_of(url)
        entry = self.cache.get(origin, self._now())
        if entry is not None:
            return entry
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:  # concurrent sensors of one origin wait for one robots.txt fetch
            entry = self.cache.get(origin, self._now())
            if entry is None:
                entry = await self._fetch(url, origin, get)
                self.cache.put(entry)
            return entry

    def _entry(
        self, origin: str, source: str, robots: RobotsTxt, status: int | None, unavailable: str = ""
    ) -> RobotsEntry:
        now = self._now()
        ttl = self.unavailable_retry_s if unavailable else self.ttl_s
        return RobotsEntry(
            origin=origin,
            robots=robots,
            fetched_at=now,
            expires_at=now + timedelta(seconds=ttl),
            status=status,
            unavailable=unavailable,
            source_url=source,
        )

    async def _fetch(self, url: str, origin: str, get: RobotsGet) -> RobotsEntry:
        parts = urlsplit(url)
        current = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/robots.txt"
        source = current
        seen = {current}
        for _hop in range(ROBOTS_MAX_REDIRECTS + 1):
            source = current
            try:
                status, headers, body = await get(current)
            except FetchFailure as failure:
                if failure.failure_class in (FailureClass.DNS, FailureClass.BLOCKED_DESTINATION):
                    raise  # the page itself would fail the same way: report that, not a skip
                return self._entry(
                    origin,
                    source,
                    RobotsTxt.disallow_all(),
                    failure.status,
                    f"robots.txt at {current} unreachable ({failure.failure_class}: {failure})",
                )
            if status in REDIRECT_STATUSES and "location" in headers:
                target = redirect_target(current, headers["location"], status)
                if target in seen:
                    break
                seen.add(target)
                current = target
                continue
            return self._answered(origin, source, status, body)
        return self._entry(
            origin,
            source,
            RobotsTxt.disallow_all(),
            None,
            f"robots.txt at {source}: more than {ROBOTS_MAX_REDIRECTS} redirects or a loop",
        )

    def _answered(self, origin: str, source: str, status: int, body: bytes) -> RobotsEntry:
        """RFC 9309 2.3.1: a 2xx is the rules; a 4xx means none; 429 and 5xx unavailable."""
        if 200 <= status < 300:
            return self._entry(origin, source, RobotsTxt.parse(body), status)
        if 400 <= status < 500 and status != 429:
            return self._entry(origin, source, RobotsTxt.allow_all(), status)
        return self._entry(
            origin,
            source,
            RobotsTxt.disallow_all(),
            status,
            f"robots.txt at {source} answered HTTP {status}",
        )
