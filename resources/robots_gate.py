"""robots.txt as the fetcher obeys it: one fetch per origin and TTL, then allow or refuse.

Every request the fetcher sends, redirect hops included, first passes `RobotsGate.check`:
the origin's robots.txt (RFC 9309; rules in domain/robots.py) is read once, cached per
origin until its expiry on the runtime's clock, and decides. An origin's answer is one
`RobotsEntry`: usable rules (a 2xx file, or allow-all after a 4xx) or `unavailable` (5xx,
429, unreachable, too many redirects), which postpones every fetch of that origin until
the entry expires. A URL the rules disallow is never requested: it fails with `ROBOTS`.

The cache outlives a tick (the runtime holds it), and a worker's cache is backed by the
state store (`resources/state/robots_files.py`): a new process finds the files the others
fetched, so an origin's robots.txt is fetched once per TTL by all of catlas, not once per
tick or process. The gate sends nothing itself: the fetcher hands it a `get` that sends the
robots.txt request through the same politeness as any other.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.vocabulary import FailureClass
from resources.fetch_failure import FetchFailure
from resources.governor import Postponed
from resources.redirects import REDIRECT_STATUSES, redirect_target

if TYPE_CHECKING:  # the store (SQLAlchemy) is imported only by a cache that uses it
    from resources.state.robots_files import RobotsFiles

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
    """The robots.txt entries of one process, over the files every process shares when
    `files` is given (it is called at the first miss: the store is opened only then)."""

    def __init__(self, files: Callable[[], RobotsFiles] | None = None) -> None:
        self._entries: dict[str, RobotsEntry] = {}
        self._lock = threading.Lock()
        self._files_factory = files
        self._files: RobotsFiles | None = None

    @property
    def shared(self) -> bool:
        return self._files_factory is not None

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

    def load(self, origin: str, now: datetime) -> RobotsEntry | None:
        """The origin's file from the shared store, unless it expired (blocking: a thread's)."""
        stored = self._shared_files().load(origin, now) if self.shared else None
        if stored is None:
            return None
        entry = RobotsEntry(
            origin=stored.origin,
            robots=rules_of(stored.status, stored.unavailable, stored.body),
            fetched_at=stored.fetched_at,
            expires_at=stored.expires_at,
            status=stored.status,
            unavailable=stored.unavailable,
            source_url=stored.source_url,
        )
        self.put(entry)
        return entry

    def save(self, entry: RobotsEntry, body: bytes) -> None:
        """Share `entry` (and its file's bytes) with every process (blocking: a thread's)."""
        if not self.shared:
            return
        from resources.state.robots_files import StoredRobots

        self._shared_files().save(
            StoredRobots(
                origin=entry.origin,
                source_url=entry.source_url,
                status=entry.status,
                unavailable=entry.unavailable,
                body=body,
                fetched_at=entry.fetched_at,
                expires_at=entry.expires_at,
            )
        )

    def _shared_files(self) -> RobotsFiles:
        if self._files is None:
            assert self._files_factory is not None
            self._files = self._files_factory()
        return self._files


def rules_of(status: int | None, unavailable: str, body: bytes) -> RobotsTxt:
    """The rules an answer means (RFC 9309 2.3.1): a 2xx file's own; none after a 4xx;
    everything disallowed while the file is unavailable (429, 5xx, unreachable)."""
    if unavailable:
        return RobotsTxt.disallow_all()
    if status is not None and 200 <= status < 300:
        return RobotsTxt.parse(body)
    return RobotsTxt.allow_all()


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
            if entry is None and self.cache.shared:
                entry = await asyncio.to_thread(self.cache.load, origin, self._now())
            if entry is None:
                entry, body = await self._fetch(url, origin, get)
                self.cache.put(entry)
                if self.cache.shared:
                    await asyncio.to_thread(self.cache.save, entry, body)
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

    async def _fetch(self, url: str, origin: str, get: RobotsGet) -> tuple[RobotsEntry, bytes]:
        """The origin's entry, and the bytes of a 2xx file (b"" for any other answer)."""
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
                ), b""
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
        ), b""

    def _answered(
        self, origin: str, source: str, status: int, body: bytes
    ) -> tuple[RobotsEntry, bytes]:
        """RFC 9309 2.3.1: a 2xx is the rules; a 4xx means none; 429 and 5xx unavailable."""
        if 200 <= status < 300:
            return self._entry(origin, source, rules_of(status, "", body), status), body
        if 400 <= status < 500 and status != 429:
            return self._entry(origin, source, RobotsTxt.allow_all(), status), b""
        return self._entry(
            origin,
            source,
            RobotsTxt.disallow_all(),
            status,
            f"robots.txt at {source} answered HTTP {status}",
        ), b""
