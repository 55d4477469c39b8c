"""The HTTP fetcher: one pooled httpx.AsyncClient per worker, politely bounded.

Every hop of a fetch, redirects included, is checked before it is requested: robots.txt
of its origin (cached per origin; a disallowed URL is never requested, an unavailable
robots.txt postpones the fetch), the DomainGovernor (spacing, concurrency, daily budget,
Retry-After blocks) and destination safety (the resolver refuses private addresses).
Conditional GET with the sensor's validators, at most `max_redirects` hops, bodies
streamed under a byte cap both on the wire and after Content-Encoding decoding,
connect/read/total timeouts and in-run retries of transient failures. Every outcome is
a `Fetched`: a success, a failure with exactly one failure class, or a postponement
(`skipped_reason`).

A fetch may also be a POST with a JSON body (an API that is only queried that way, such as
Workday's job list). Every politeness check applies to it unchanged; it never carries
conditional headers; it is retried within the run only when the connection could not be
opened (nothing was sent), never after a status or a broken answer, because the server
may already have acted on it. A 307/308 redirect repeats the POST with its body; a
301/302/303 turns it into a GET without a body (what browsers do).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from catlas_assets.domain.failures import RETRYABLE_STATUSES, classify_status
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.domain.robots import MAX_PARSE_BYTES, RobotsTxt
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import FailureClass
from resources.body_decoding import (
    ACCEPT_ENCODING,
    BodyTooLarge,
    CappedDecoder,
    UndecodableBody,
)
from resources.governor import DomainGovernor, Postponed
from resources.resolver import ResolutionError, Resolver, UnsafeDestination
from resources.robots_cache import RobotsCache, RobotsEntry, origin_of


class _ResolvingBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer with our resolver in front: connect where it says."""

    def __init__(self, resolver: Resolver) -> None:
        self._resolver = resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            destination = await self._resolver.resolve(host, port)
        except (ResolutionError, UnsafeDestination) as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return await self._inner.connect_tcp(
            destination.address,
            destination.port or port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Transport(httpx.AsyncHTTPTransport):
    def __init__(self, resolver: Resolver, limits: httpx.Limits, ca_bundle: str = "") -> None:
        super().__init__(limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            # The system's trust store, or a PEM bundle (a private CA, the TLS test server).
            ssl_context=httpx.create_ssl_context(verify=ca_bundle or True),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_ResolvingBackend(resolver),
            # HTTP/2 where the server offers it (ALPN on https); plain http stays HTTP/1.1.
            http1=True,
            http2=True,
        )


@dataclass(frozen=True)
class FetchConfig:
    user_agent: str
    connect_timeout_s: float
    read_timeout_s: float
    total_timeout_s: float
    max_bytes: int
    retries: int
    max_redirects: int
    retry_backoff_s: float = 0.25
    max_connections: int = 64
    robots_ttl_s: float = 86400.0
    robots_unavailable_retry_s: float = 3600.0
    ca_bundle: str = ""


# RFC 9309 2.3.1.2: follow at least five redirects for robots.txt, then call it unavailable.
ROBOTS_MAX_REDIRECTS = 5
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
# Only these keep a POST a POST (RFC 9110 15.4); the others are followed with a GET.
METHOD_KEEPING_REDIRECTS = (307, 308)
FETCH_METHODS = ("GET", "POST")


@dataclass(frozen=True)
class _Outgoing:
    """What one hop sends besides the URL: the method and, for a POST, its JSON bytes."""

    method: str = "GET"
    content: bytes | None = None

    def after_redirect(self, status: int) -> _Outgoing:
        if self.method == "GET" or status in METHOD_KEEPING_REDIRECTS:
            return self
        return _Outgoing()


GET = _Outgoing()


class _Failure(Exception):
    def __init__(
        self,
        failure_class: FailureClass,
        detail: str,
        status: int | None = None,
        *,
        transient: bool = False,
        unsent: bool = False,
    ) -> None:
        super().__init__(detail)
        self.failure_class = failure_class
        self.status = status
        self.transient = transient  # worth another try within this run
        self.unsent = unsent  # failed before a byte of the request left: safe for a POST


class Fetcher:
    """Fetch URLs politely: robots.txt, the DomainGovernor and destination safety on every hop."""

    def __init__(
        self,
        config: FetchConfig,
        resolver: Resolver,
        *,
        robots: RobotsCache | None = None,
        governor: DomainGovernor | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.config = config
        self._resolver = resolver
        self.robots = robots if robots is not None else RobotsCache()
        self.governor = governor
        self._now = now or (lambda: datetime.now(UTC))
        self._robots_locks: dict[str, asyncio.Lock] = {}
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
        )
        self._client = httpx.AsyncClient(
            transport=_Transport(resolver, limits, config.ca_bundle),
            timeout=httpx.Timeout(
                config.read_timeout_s, connect=config.connect_timeout_s, pool=config.total_timeout_s
            ),
            headers={"User-Agent": config.user_agent, "Accept-Encoding": ACCEPT_ENCODING},
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        follow_off_domain: bool = False,
        method: str = "GET",
        json_body: Any = None,
        max_requests: int | None = None,
    ) -> Fetched:
        """GET `url` (conditionally with the validators given) and classify what came back.

        With `method="POST"` the request carries `json_body` as JSON and no validators
        (`etag`/`last_modified` are ignored: a POST answer is never "not modified").
        A redirect that leaves the URL's registrable domain is not followed unless
        `follow_off_domain`: its target is reported as `final_url` (the `redirected`
        outcome) without asking the other domain. `max_requests` caps every request this
        fetch may send (robots.txt and hops included); reaching it postpones the fetch
        with reason `request_budget` instead of sending one more.
        """
        method = method.upper()
        if method not in FETCH_METHODS:
            raise ValueError(f"the fetcher sends GET or POST, not {method}")
        if method == "POST":
            body_bytes = json.dumps(json_body, ensure_ascii=False, separators=(",", ":"))
            outgoing = _Outgoing("POST", body_bytes.encode())
            etag = last_modified = None
        else:
            if json_body is not None:
                raise ValueError("a JSON body is sent with a POST only")
            outgoing = GET
        conditional = etag is not None or last_modified is not None
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        started = time.monotonic()
        state = _Attempts(final_url=url, limit=max_requests)

        def failed(failure_class: FailureClass, detail: str, status: int | None) -> Fetched:
            return Fetched(
                url=url,
                final_url=state.final_url,
                status=status,
                headers={},
                body=b"",
                elapsed_ms=_ms(started),
                requests=state.requests,
                failure_class=failure_class,
                failure_detail=detail,
                conditional=conditional,
            )

        try:
            async with asyncio.timeout(self.config.total_timeout_s) as deadline:
                state.deadline = deadline
                status, final_url, response_headers, body = await self._follow(
                    url, headers, state, follow_off_domain=follow_off_domain, outgoing=outgoing
                )
        except _Failure as failure:
            return failed(failure.failure_class, str(failure), failure.status)
        except Postponed as postponed:
            return Fetched(
                url=url,
                final_url=url,
                status=None,
                headers={},
                body=b"",
                elapsed_ms=_ms(started),
                requests=state.requests,
                failure_detail=postponed.detail,
                conditional=conditional,
                skipped_reason=postponed.reason,
                retry_at=postponed.retry_at,
            )
        except TimeoutError:
            detail = f"no complete answer within {self.config.total_timeout_s:g} s"
            return failed(FailureClass.TIMEOUT, detail, None)
        return Fetched(
            url=url,
            final_url=final_url,
            status=status,
            headers=response_headers,
            body=body,
            elapsed_ms=_ms(started),
            requests=state.requests,
            not_modified=status == 304,
            conditional=conditional,
        )

    # -- robots.txt ----------------------------------------------------------------------
    async def robots_for(self, url: str) -> RobotsEntry:
        """The robots.txt entry that governs `url` (cached per origin until its TTL)."""
        state = _Attempts(final_url=url)
        try:
            return await self._robots_entry(url, state)
        except _Failure as failure:
            # DNS or a refused destination: the rules cannot be known, and neither can the page.
            now = self._now()
            return RobotsEntry(
                origin=origin_of(url),
                robots=RobotsTxt.disallow_all(),
                fetched_at=now,
                expires_at=now,
                status=failure.status,
                unavailable=f"{failure.failure_class}: {failure}",
            )

    async def _robots_entry(self, url: str, state: _Attempts) -> RobotsEntry:
        origin = origin_of(url)
        entry = self.robots.get(origin, self._now())
        if entry is not None:
            return entry
        lock = self._robots_locks.setdefault(origin, asyncio.Lock())
        async with lock:  # concurrent sensors of one origin wait for one robots.txt fetch
            entry = self.robots.get(origin, self._now())
            if entry is None:
                entry = await self._fetch_robots(url, origin, state)
                self.robots.put(entry)
            return entry

    async def _fetch_robots(self, url: str, origin: str, state: _Attempts) -> RobotsEntry:
        parts = urlsplit(url)
        current = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/robots.txt"
        source = current

        def entry(
            robots: RobotsTxt, status: int | None, unavailable: str = "", ttl: float | None = None
        ) -> RobotsEntry:
            now = self._now()
            if ttl is None:
                ttl = (
                    self.config.robots_unavailable_retry_s
                    if unavailable
                    else self.config.robots_ttl_s
                )
            return RobotsEntry(
                origin=origin,
                robots=robots,
                fetched_at=now,
                expires_at=now + timedelta(seconds=ttl),
                status=status,
                unavailable=unavailable,
                source_url=source,
            )

        seen = {current}
        for _hop in range(ROBOTS_MAX_REDIRECTS + 1):
            source = current
            try:
                status, headers, body = await self._with_retries(
                    current, {}, state, max_bytes=MAX_PARSE_BYTES, truncate=True
                )
            except _Failure as failure:
                if failure.failure_class in (FailureClass.DNS, FailureClass.BLOCKED_DESTINATION):
                    raise  # the page itself would fail the same way: report that, not a skip
                return entry(
                    RobotsTxt.disallow_all(),
                    failure.status,
                    f"robots.txt at {current} unreachable ({failure.failure_class}: {failure})",
                )
            if status in REDIRECT_STATUSES and "location" in headers:
                target = _redirect_target(current, headers["location"], status)
                if target in seen:
                    break
                seen.add(target)
                current = target
                continue
            if 200 <= status < 300:
                return entry(RobotsTxt.parse(body), status)
            if status == 429 or status >= 500:
                return entry(
                    RobotsTxt.disallow_all(),
                    status,
                    f"robots.txt at {current} answered HTTP {status}",
                )
            if 400 <= status < 500:
                return entry(RobotsTxt.allow_all(), status)  # RFC 9309 2.3.1.3: no rules
            return entry(
                RobotsTxt.disallow_all(), status, f"robots.txt at {current} answered HTTP {status}"
            )
        return entry(
            RobotsTxt.disallow_all(),
            None,
            f"robots.txt at {source}: more than {ROBOTS_MAX_REDIRECTS} redirects or a loop",
        )

    async def _check_robots(self, url: str, state: _Attempts) -> None:
        entry = await self._robots_entry(url, state)
        if entry.unavailable:
            raise Postponed("robots_unavailable", entry.unavailable, entry.expires_at)
        decision = entry.robots.decide(url, self.config.user_agent)
        if not decision.allowed:
            raise _Failure(
                FailureClass.ROBOTS, f"{url} {decision.describe()} of {entry.source_url}"
            )
        if self.governor is not None:
            self.governor.set_crawl_delay(
                entry.origin, entry.robots.crawl_delay(self.config.user_agent)
            )

    async def _check_destination(self, url: str, status: int | None) -> None:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            await self._resolver.resolve(parts.hostname or "", port)
        except UnsafeDestination as exc:
            raise _Failure(FailureClass.BLOCKED_DESTINATION, str(exc), status) from None
        except ResolutionError:
            pass  # an unknown name is the redirect's news, not a danger

    # -- the page ------------------------------------------------------------------------
    async def _follow(
        self,
        url: str,
        headers: dict[str, str],
        state: _Attempts,
        *,
        follow_off_domain: bool,
        outgoing: _Outgoing = GET,
    ) -> tuple[int, str, dict[str, str], bytes]:
        seen = {url}
        current = url
        domain = registrable_domain(url)
        for _hop in range(self.config.max_redirects + 1):
            state.final_url = current
            await self._check_robots(current, state)  # a disallowed URL is never requested
            status, response_headers, body = await self._with_retries(
                current, headers, state, max_bytes=self.config.max_bytes, outgoing=outgoing
            )
            if status in REDIRECT_STATUSES and "location" in response_headers:
                target = _redirect_target(current, response_headers["location"], status)
                if target in seen:
                    raise _Failure(FailureClass.REDIRECT, f"redirect loop at {target}", status)
                seen.add(target)
                if not follow_off_domain and registrable_domain(target) != domain:
                    # Not followed, yet a target that is a refused address is still refused.
                    await self._check_destination(target, status)
                    state.final_url = target
                    return status, target, response_headers, b""
                current = target
                outgoing = outgoing.after_redirect(status)
                continue
            if status in (429, 503) and self.governor is not None:
                # The whole domain waits as asked; this fetch still fails with its class.
                await self.governor.retry_after(current, response_headers.get("retry-after"))
            if status == 304:
                return status, current, response_headers, b""
            failure = classify_status(status, response_headers, body)
            if failure is not None:
                raise _Failure(failure, f"HTTP {status} from {current}", status)
            return status, current, response_headers, body
        raise _Failure(FailureClass.REDIRECT, f"more than {self.config.max_redirects} redirects")

    async def _with_retries(
        self,
        url: str,
        headers: dict[str, str],
        state: _Attempts,
        *,
        max_bytes: int,
        truncate: bool = False,
        outgoing: _Outgoing = GET,
    ) -> tuple[int, dict[str, str], bytes]:
        attempt = 0
        repeatable = outgoing.method == "GET"
        while True:
            try:
                status, response_headers, body = await self._once(
                    url, headers, state, max_bytes=max_bytes, truncate=truncate, outgoing=outgoing
                )
            except _Failure as failure:
                if not failure.transient or attempt >= self.config.retries:
                    raise
                if not repeatable and not failure.unsent:
                    raise  # the server may have received the POST: never sent twice
            else:
                # A Retry-After is the server's own schedule: never retried within the run.
                if (
                    not repeatable
                    or status not in RETRYABLE_STATUSES
                    or attempt >= self.config.retries
                    or "retry-after" in response_headers
                ):
                    return status, response_headers, body
            attempt += 1
            await asyncio.sleep(self.config.retry_backoff_s * 2 ** (attempt - 1))

    async def _once(
        self,
        url: str,
        headers: dict[str, str],
        state: _Attempts,
        *,
        max_bytes: int,
        truncate: bool = False,
        outgoing: _Outgoing = GET,
    ) -> tuple[int, dict[str, str], bytes]:
        waited_from = time.monotonic()
        async with self.governor.permit(url) if self.governor else contextlib.nullcontext():
            if state.deadline is not None:
                # Politeness waits are not the server's slowness: they extend the deadline.
                waited = time.monotonic() - waited_from
                when = state.deadline.when()
                if waited > 0 and when is not None:
                    state.deadline.reschedule(when + waited)
            if state.limit is not None and state.requests >= state.limit:
                raise Postponed(
                    "request_budget", f"request budget of {state.limit} spent before {url}", None
                )
            state.requests += 1
            try:
                return await self._request(
                    url, headers, max_bytes=max_bytes, truncate=truncate, outgoing=outgoing
                )
            except _Failure as failure:
                if failure.failure_class in (FailureClass.DNS, FailureClass.BLOCKED_DESTINATION):
                    state.requests -= 1  # refused before connecting: nothing was sent
                raise

    async def _request(
        self,
        url: str,
        headers: dict[str, str],
        *,
        max_bytes: int,
        truncate: bool,
        outgoing: _Outgoing = GET,
    ) -> tuple[int, dict[str, str], bytes]:
        if outgoing.content is not None:
            headers = {
                **headers,
                "Content-Type": "application/json",
                "Accept": "application/json",
            }
        try:
            async with self._client.stream(
                outgoing.method, url, headers=headers, content=outgoing.content
            ) as response:
                status = response.status_code
                response_headers = {k.lower(): v for k, v in response.headers.items()}
                try:
                    decoder = CappedDecoder(response_headers.get("content-encoding"), max_bytes)
                except UndecodableBody as exc:
                    raise _Failure(FailureClass.PARSING, f"{exc} at {url}", status) from None
                chunks: list[bytes] = []
                raw = 0
                try:
                    async for chunk in response.aiter_raw():
                        raw += len(chunk)
                        if raw > max_bytes:
                            raise BodyTooLarge
                        chunks.append(decoder.feed(chunk))
                    chunks.append(decoder.finish())
                except BodyTooLarge:
                    if not truncate:
                        # Leaving the block closes the connection: the rest is never read.
                        raise _Failure(
                            FailureClass.TOO_LARGE,
                            f"body over {max_bytes} bytes (decoded) at {url}",
                            status,
                        ) from None
                except UndecodableBody as exc:
                    raise _Failure(FailureClass.PARSING, f"{exc} at {url}", status) from None
                # The decoded body no longer carries its transfer encoding.
                response_headers.pop("content-encoding", None)
                return status, response_headers, b"".join(chunks)
        except httpx.ConnectError as exc:
            cause = _resolver_cause(exc)
            if isinstance(cause, UnsafeDestination):
                raise _Failure(FailureClass.BLOCKED_DESTINATION, str(cause)) from None
            if isinstance(cause, ResolutionError):
                raise _Failure(FailureClass.DNS, str(cause)) from None
            raise _Failure(
                FailureClass.UNKNOWN, f"cannot connect to {url}: {exc}", transient=True, unsent=True
            ) from None
        except (httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # No connection yet, so nothing of the request was sent.
            raise _Failure(
                FailureClass.TIMEOUT, f"{type(exc).__name__} at {url}", transient=True, unsent=True
            ) from None
        except httpx.TimeoutException as exc:
            raise _Failure(
                FailureClass.TIMEOUT, f"{type(exc).__name__} at {url}", transient=True
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            # A reset, a truncated answer or bytes that are not HTTP (invalid header bytes).
            raise _Failure(
                FailureClass.UNKNOWN,
                f"connection broken at {url}: {exc or type(exc).__name__}",
                transient=True,
            ) from None
        except httpx.UnsupportedProtocol:
            raise _Failure(
                FailureClass.BLOCKED_DESTINATION, f"only http and https are fetched: {url}"
            ) from None
        except httpx.InvalidURL as exc:
            raise _Failure(FailureClass.UNKNOWN, f"malformed URL {url!r}: {exc}") from None
        except httpx.HTTPError as exc:
            raise _Failure(FailureClass.UNKNOWN, f"{type(exc).__name__} at {url}: {exc}") from None


def _resolver_cause(exc: BaseException) -> BaseException | None:
    """The resolver's own error behind httpx's and httpcore's wrappers, if it is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ResolutionError | UnsafeDestination):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _redirect_target(current: str, location: str, status: int) -> str:
    """The absolute URL a Location header names; a malformed or non-http one is refused."""
    try:
        target = urljoin(current, location.strip())
        parts = urlsplit(target)
        _ = parts.port  # a malformed port raises ValueError
    except ValueError:
        raise _Failure(
            FailureClass.REDIRECT, f"malformed redirect Location {location[:200]!r}", status
        ) from None
    if parts.scheme not in ("http", "https"):
        raise _Failure(
            FailureClass.BLOCKED_DESTINATION, f"redirect to a non-http URL {target[:200]!r}", status
        )
    if not parts.hostname:
        raise _Failure(FailureClass.REDIRECT, f"redirect without a host {target[:200]!r}", status)
    return target


@dataclass
class _Attempts:
    requests: int = 0  # every request sent: robots.txt, retries and redirect hops included
    final_url: str = ""
    limit: int | None = None  # the caller's cap on `requests` (discovery's budget)
    deadline: asyncio.Timeout | None = None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
