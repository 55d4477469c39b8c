"""The HTTP fetcher: httpx requests over one pooled transport per worker, politely bounded.

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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from catlas_assets.domain.failures import (
    RETRYABLE_STATUSES,
    classify_status,
    forbidden_address,
    ip_literal,
)
from catlas_assets.domain.pipeline_data import Fetched
from catlas_assets.domain.robots import MAX_PARSE_BYTES
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import FailureClass
from resources.answer import Answer
from resources.body_decoding import (
    ACCEPT_ENCODING,
    BodyTooLarge,
    CappedDecoder,
    UndecodableBody,
)
from resources.fetch_failure import TRANSPORT_ERRORS, FetchFailure, transport_failure
from resources.governor import DomainGovernor, Postponed
from resources.redirects import (
    REDIRECT_STATUSES,
    redirect_target,
)
from resources.request_url import request_url
from resources.resolver import ResolutionError, Resolver, UnsafeDestination
from resources.robots_gate import RobotsCache, RobotsEntry, RobotsGate, RobotsGet

if TYPE_CHECKING:
    from resources.h1_transport import H1Transport
    from resources.negotiated_transport import NegotiatedTransport


class _Transport:
    """Plain http and HTTP/1.1 https over catlas's HTTP/1.1 transport; https with what TLS
    negotiates over httpcore.

    The first request to an https origin goes through httpcore, which offers h2 and
    http/1.1 by ALPN (`resources/negotiated_transport.py`); an origin that answers over
    HTTP/1.1 is remembered and served by `resources/h1_transport.py` from then on, one
    that negotiated HTTP/2 stays on httpcore (one multiplexed connection). Plain http is
    HTTP/1.1 (no h2c), so it goes to the HTTP/1.1 transport at once. Either way the
    fetcher gets an `Answer`, and errors are httpx's. Each side is built, and its modules
    imported, at its first request: a command that asks one plain-http URL (`catlas robots
    check`) never loads httpcore, anyio or a trust store.

    `one_off`: a command that asks a site once sends https through httpcore only: nothing
    would be remembered for a next request.
    """

    _MAX_ORIGINS = 100_000  # a bound on what is remembered, not a limit on fetching

    def __init__(
        self,
        resolver: Resolver,
        limits: httpx.Limits,
        timeouts: httpx.Timeout,
        ca_bundle: str,
        *,
        one_off: bool = False,
    ) -> None:
        self._resolver = resolver
        self._limits = limits
        self._timeouts = timeouts
        self._ca_bundle = ca_bundle
        self._one_off = one_off
        self._negotiated: NegotiatedTransport | None = None
        self._h1: H1Transport | None = None
        self._http11_origins: set[tuple[str, int | None]] = set()

    async def send(
        self, method: str, url: str, headers: dict[str, str], content: bytes | None
    ) -> Answer:
        target = request_url(url)
        if target.scheme == "http":
            return await self._h1_transport().send(method, target, headers, content)
        if target.scheme != "https":
            raise httpx.UnsupportedProtocol(f"unsupported scheme {target.scheme!r}")
        origin = (target.host, target.port)
        if origin in self._http11_origins:
            return await self._h1_transport().send(method, target, headers, content)
        answer = await self._negotiated_transport().send(method, target, headers, content)
        if answer.http_version != "HTTP/2" and not self._one_off:
            if len(self._http11_origins) >= self._MAX_ORIGINS:
                self._http11_origins.clear()
            self._http11_origins.add(origin)
        return answer

    def _h1_transport(self) -> H1Transport:
        if self._h1 is None:
            from resources.h1_transport import H1Transport

            ca_bundle = self._ca_bundle
            self._h1 = H1Transport(
                self._resolver,
                max_connections=self._limits.max_connections or 64,
                # Built at the first https request: loading the trust store takes tens of
                # ms, which a tick of plain http would pay for nothing.
                tls_context=lambda: httpx.create_ssl_context(verify=ca_bundle or True),
                timeouts=self._timeouts,
            )
        return self._h1

    def _negotiated_transport(self) -> NegotiatedTransport:
        if self._negotiated is None:
            from resources.negotiated_transport import NegotiatedTransport

            self._negotiated = NegotiatedTransport(
                self._resolver, self._limits, self._timeouts, self._ca_bundle
            )
        return self._negotiated

    async def aclose(self) -> None:
        for transport in (self._h1, self._negotiated):
            if transport is not None:
                await transport.aclose()


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


def _outgoing(
    method: str, json_body: Any, etag: str | None, last_modified: str | None
) -> tuple[_Outgoing, dict[str, str], bool]:
    """What a fetch sends: the method and body, its conditional headers (GET only), and
    whether it was asked conditionally."""
    method = method.upper()
    if method not in FETCH_METHODS:
        raise ValueError(f"the fetcher sends GET or POST, not {method}")
    if method == "POST":
        body_bytes = json.dumps(json_body, ensure_ascii=False, separators=(",", ":"))
        return _Outgoing("POST", body_bytes.encode()), {}, False
    if json_body is not None:
        raise ValueError("a JSON body is sent with a POST only")
    headers: dict[str, str] = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return GET, headers, etag is not None or last_modified is not None


def _refuse_private_literal(url: str) -> None:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return  # a malformed URL fails where it is sent, with its own class
    if (reason := _literal_refusal(host)) is not None:
        raise FetchFailure(FailureClass.BLOCKED_DESTINATION, f"{host}: {reason}", None)


@lru_cache(maxsize=4096)
def _literal_refusal(host: str) -> str | None:
    """Why `host`, when it spells an IP address, may not be asked (None: a name, or a public
    address). Every request asks it of a host a tick asks many times."""
    return forbidden_address(host) if ip_literal(host) is not None else None


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
        one_off: bool = False,
    ) -> None:
        """`one_off`: for a command that sends a request or two (`_Transport`)."""
        self.config = config
        self._resolver = resolver
        self.robots = robots if robots is not None else RobotsCache()
        self.governor = governor
        self._now = now or (lambda: datetime.now(UTC))
        self.robots_gate = RobotsGate(
            self.robots,
            agent=config.user_agent,
            ttl_s=config.robots_ttl_s,
            unavailable_retry_s=config.robots_unavailable_retry_s,
            now=self._now,
        )
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
        )
        timeouts = httpx.Timeout(
            config.read_timeout_s, connect=config.connect_timeout_s, pool=config.total_timeout_s
        )
        # No client around the transport: a fetch follows its own redirects, keeps no
        # cookies between sites (each fetch stands alone, as it would after a restart), and
        # sets its headers and timeouts once here; httpx's client layers (URL merging, auth
        # and redirect flows, cookie extraction, hooks) were a sixth of a 304's cost.
        self._transport = _Transport(resolver, limits, timeouts, config.ca_bundle, one_off=one_off)
        self._headers = {
            "Accept": "*/*",
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": config.user_agent,
        }

    async def aclose(self) -> None:
        try:
            if self.governor is not None:
                await self.governor.release()  # unused budget units go back
        finally:
            await self._transport.aclose()

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
        domain: str | None = None,
        follow: Callable[[str], bool] | None = None,
    ) -> Fetched:
        """GET `url` (conditionally with the validators given) and classify what came back.

        With `method="POST"` the request carries `json_body` as JSON and no validators
        (`etag`/`last_modified` are ignored: a POST answer is never "not modified").
        A redirect that leaves the URL's registrable domain is not followed unless
        `follow_off_domain`: its target is reported as `final_url` (the `redirected`
        outcome) without asking the other domain. `max_requests` caps every request this
        fetch may send (robots.txt and hops included); reaching it postpones the fetch
        with reason `request_budget` instead of sending one more. `domain` is `url`'s
        registrable domain when the caller already knows it (a claimed sensor carries it);
        it is computed otherwise. `follow`, when given, is asked about every redirect target
        as well: a target it refuses is reported as `final_url` without being requested (a
        site crawl never fetches outside its scope).
        """
        outgoing, headers, conditional = _outgoing(method, json_body, etag, last_modified)
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
                status, final_url, final_domain, response_headers, body = await self._follow(
                    url,
                    headers,
                    state,
                    follow_off_domain=follow_off_domain,
                    outgoing=outgoing,
                    domain=domain or registrable_domain(url),
                    follow=follow,
                )
        except FetchFailure as failure:
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
            final_domain=final_domain,
            redirect_status=state.redirect_status,
        )

    # -- robots.txt ----------------------------------------------------------------------
    async def robots_for(self, url: str) -> RobotsEntry:
        """The robots.txt entry that governs `url` (cached per origin until its TTL)."""
        state = _Attempts(final_url=url)
        return await self.robots_gate.entry_for(url, self._robots_get(url, state, None))

    def _robots_get(self, url: str, state: _Attempts, domain: str | None) -> RobotsGet:
        """How the gate sends a robots.txt request for `url`: with every check, truncated.
        (Built for every check, called only when the file is not cached: nothing is parsed
        before the call.)"""

        async def get(robots_url: str) -> tuple[int, dict[str, str], bytes]:
            # The page's domain holds for its own host; a robots.txt redirected elsewhere
            # is governed by the domain it moved to.
            same_host = urlsplit(robots_url).hostname == urlsplit(url).hostname
            return await self._with_retries(
                robots_url,
                {},
                state,
                max_bytes=MAX_PARSE_BYTES,
                truncate=True,
                domain=domain if same_host else None,
            )

        return get

    async def _check_robots(self, url: str, state: _Attempts, domain: str) -> None:
        entry = await self.robots_gate.check(url, self._robots_get(url, state, domain))
        if self.governor is not None:
            await self.governor.set_crawl_delay(
                entry.origin, entry.robots.crawl_delay(self.config.user_agent), domain=domain
            )

    async def _check_destination(self, url: str, status: int | None) -> None:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            await self._resolver.resolve(parts.hostname or "", port)
        except UnsafeDestination as exc:
            raise FetchFailure(FailureClass.BLOCKED_DESTINATION, str(exc), status) from None
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
        domain: str,
        follow: Callable[[str], bool] | None = None,
    ) -> tuple[int, str, str, dict[str, str], bytes]:
        """Follow `url`'s redirects; (status, final URL, its domain, headers, body)."""
        seen = {url}
        current, current_domain = url, domain
        for _hop in range(self.config.max_redirects + 1):
            state.final_url = current
            # An address spelled out in the URL (`0177.0.0.1`, a 6to4 of a private one) is
            # refused before anything is asked, its robots.txt included.
            _refuse_private_literal(current)
            # A disallowed URL is never requested.
            await self._check_robots(current, state, current_domain)
            status, response_headers, body = await self._with_retries(
                current,
                headers,
                state,
                max_bytes=self.config.max_bytes,
                outgoing=outgoing,
                domain=current_domain,
            )
            location = response_headers.get("location")
            if status in REDIRECT_STATUSES and location is not None:
                target = redirect_target(current, location, status)
                if state.redirect_status is None:
                    state.redirect_status = status
                if target in seen:
                    raise FetchFailure(FailureClass.REDIRECT, f"redirect loop at {target}", status)
                seen.add(target)
                target_domain = registrable_domain(target)
                refused = follow is not None and not follow(target)
                if refused or (not follow_off_domain and target_domain != domain):
                    # Not followed, yet a target that is a refused address is still refused.
                    await self._check_destination(target, status)
                    state.final_url = target
                    return status, target, target_domain, response_headers, b""
                current, current_domain = target, target_domain
                outgoing = outgoing.after_redirect(status)
                continue
            if status in (429, 503) and self.governor is not None:
                # The whole domain waits as asked; this fetch still fails with its class.
                await self.governor.retry_after(
                    current, response_headers.get("retry-after"), domain=current_domain
                )
            if status == 304:
                return status, current, current_domain, response_headers, b""
            failure = classify_status(status, response_headers, body)
            if failure is not None:
                raise FetchFailure(failure, f"HTTP {status} from {current}", status)
            return status, current, current_domain, response_headers, body
        raise FetchFailure(
            FailureClass.REDIRECT, f"more than {self.config.max_redirects} redirects"
        )

    async def _with_retries(
        self,
        url: str,
        headers: dict[str, str],
        state: _Attempts,
        *,
        max_bytes: int,
        truncate: bool = False,
        outgoing: _Outgoing = GET,
        domain: str | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        attempt = 0
        repeatable = outgoing.method == "GET"
        while True:
            try:
                status, response_headers, body = await self._once(
                    url,
                    headers,
                    state,
                    max_bytes=max_bytes,
                    truncate=truncate,
                    outgoing=outgoing,
                    domain=domain,
                )
            except FetchFailure as failure:
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
        domain: str | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request under the governor."""
        waited_from = time.monotonic()
        governed = self.governor.permit(url, domain=domain) if self.governor else None
        async with governed or contextlib.nullcontext():
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
            except FetchFailure as failure:
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
            answer = await self._transport.send(
                outgoing.method, url, {**self._headers, **headers}, outgoing.content
            )
            try:
                status = answer.status
                response_headers = answer.headers
                try:
                    decoder = CappedDecoder(response_headers.get("content-encoding"), max_bytes)
                except UndecodableBody as exc:
                    raise FetchFailure(FailureClass.PARSING, f"{exc} at {url}", status) from None
                chunks: list[bytes] = []
                raw = 0
                try:
                    async for chunk in answer.body:
                        raw += len(chunk)
                        if raw > max_bytes:
                            raise BodyTooLarge
                        chunks.append(decoder.feed(chunk))
                    chunks.append(decoder.finish())
                except BodyTooLarge:
                    if not truncate:
                        # Leaving the block closes the connection: the rest is never read.
                        raise FetchFailure(
                            FailureClass.TOO_LARGE,
                            f"body over {max_bytes} bytes (decoded) at {url}",
                            status,
                        ) from None
                except UndecodableBody as exc:
                    raise FetchFailure(FailureClass.PARSING, f"{exc} at {url}", status) from None
                # The decoded body no longer carries its transfer encoding.
                response_headers.pop("content-encoding", None)
                return status, response_headers, b"".join(chunks)
            finally:
                await answer.close()
        except TRANSPORT_ERRORS as exc:
            raise transport_failure(exc, url) from None


@dataclass
class _Attempts:
    requests: int = 0  # every request sent: robots.txt, retries and redirect hops included
    final_url: str = ""
    limit: int | None = None  # the caller's cap on `requests` (discovery's budget)
    deadline: asyncio.Timeout | None = None
    redirect_status: int | None = None  # the first hop's status when the URL redirected


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
