"""HTTP/1.1 requests over an aiohttp connection pool, answered as an `Answer`.

httpcore's pool scans every connection on every request (`_assign_requests_to_connections`),
which made it the largest cost of a tick with many connections; aiohttp's connector keeps
idle connections per origin and hands one out in constant time. The fetcher sends the URL
as httpx parses it (`RequestURL`) and reads errors as httpx's; building an `httpx.Request`
and `httpx.Response` around each exchange cost a seventh of a 304's CPU and carried nothing
the fetcher reads, so this transport takes the request's parts and returns an `Answer`.

What the fetcher relies on is kept: the name is resolved by catlas's resolver (host map,
destination safety) and the connection goes to the address it checked; the body is handed
over raw (no decoding here: the fetcher decodes it under its byte cap); a response left
before its end closes its connection; every aiohttp error arrives as the httpx error of the
same meaning, so the failure classes of `resources/fetch_failure.py` apply unchanged.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from resources.answer import Answer, header_dict
from resources.request_url import RequestURL
from resources.resolver import ResolutionError, Resolver, UnsafeDestination

# Generous header limits: a page with large cookies or many headers is the site's data,
# not a protocol error (httpcore accepted up to 100 KB of headers).
_MAX_LINE = 65536
_MAX_HEADERS = 1000
_CHUNK = 65536


class _ResolverError(OSError):
    """Carries the resolver's refusal through aiohttp's connector (which wraps OSErrors)."""

    def __init__(self, cause: ResolutionError | UnsafeDestination) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _CheckedResolver(AbstractResolver):
    """aiohttp asks catlas's resolver: the address it returns is the one connected to."""

    def __init__(self, resolver: Resolver) -> None:
        self._resolver = resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            destination = await self._resolver.resolve(host, port)
        except (ResolutionError, UnsafeDestination) as exc:
            raise _ResolverError(exc) from exc
        address = destination.address
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=destination.port or port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


class _CheckedConnector(aiohttp.TCPConnector):
    """A connector that resolves every host through catlas's resolver, IP literals too.

    aiohttp connects to an IP literal without asking its resolver; a URL naming a private
    address must still be refused, so the shortcut is closed here.
    """

    def __init__(self, resolver: _CheckedResolver, **kwargs: Any) -> None:
        super().__init__(resolver=resolver, **kwargs)
        self._checked = resolver

    async def _resolve_host(self, host: str, port: int, traces: Any = None) -> list[ResolveResult]:
        return await self._checked.resolve(host, port)


class _Body:
    """The body's chunks, as an async iterator object (an async generator per response
    costs the event loop's bookkeeping of generators on every request)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._response.content.read(_CHUNK)
        except Exception as exc:  # mapped to the httpx error of the same meaning
            raise _as_httpx_error(exc) from exc
        if not chunk:
            raise StopAsyncIteration
        return chunk

    async def aclose(self) -> None:
        if self._response.content.at_eof():
            self._response.release()  # read to its end: the connection is reused
        else:
            self._response.close()  # left early: the rest is never read


class AiohttpTransport:
    """HTTP/1.1 over aiohttp: a request's parts in, an `Answer` out."""

    def __init__(
        self,
        resolver: Resolver,
        *,
        max_connections: int,
        tls_context: Callable[[], ssl.SSLContext],
        timeouts: httpx.Timeout,
    ) -> None:
        self._resolver = resolver
        self._max_connections = max_connections
        self._tls_factory = tls_context
        self._tls: ssl.SSLContext | None = None
        self._session: aiohttp.ClientSession | None = None
        # httpx's meanings: `pool` waits for a connection, `connect` opens one, `read` is
        # the longest silence; the fetch's total deadline is the fetcher's own.
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            connect=timeouts.pool,
            sock_connect=timeouts.connect,
            sock_read=timeouts.read,
        )

    def _tls_now(self) -> ssl.SSLContext:
        # Its own context, built at the first https request: httpcore sets ALPN (h2) on the
        # context it is given, and this transport speaks HTTP/1.1 only.
        if self._tls is None:
            self._tls = self._tls_factory()
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls

    def _session_now(self) -> aiohttp.ClientSession:
        # Built on first use, inside the event loop that will run it.
        if self._session is None:
            connector = _CheckedConnector(
                _CheckedResolver(self._resolver),
                limit=self._max_connections,
                limit_per_host=0,  # per-domain concurrency is the governor's
                use_dns_cache=False,  # every new connection is resolved and checked
                enable_cleanup_closed=False,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),  # a fetch keeps no cookies
                auto_decompress=False,  # the fetcher decodes under its byte cap
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
                timeout=aiohttp.ClientTimeout(total=None),
                max_line_size=_MAX_LINE,
                max_field_size=_MAX_LINE,
                max_headers=_MAX_HEADERS,
                read_bufsize=_CHUNK,
            )
            # aiohttp resends an idempotent request once when a kept-alive connection
            # drops; retries are the fetcher's own (counted, backed off, never for a POST).
            self._session._retry_connection = False
        return self._session

    async def send(
        self, method: str, url: RequestURL, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """Send one request; raises the httpx error that means what went wrong."""
        session = self._session_now()
        try:
            response = await session.request(
                method,
                URL(url.text, encoded=True),
                headers=headers,
                data=content or None,
                allow_redirects=False,
                compress=None,
                ssl=self._tls_now() if url.scheme == "https" else True,
                timeout=self._timeout,
            )
        except Exception as exc:  # mapped to the httpx error of the same meaning
            raise _as_httpx_error(exc) from exc
        body = _Body(response)
        return Answer(
            response.status, header_dict(response.raw_headers), body, body.aclose, "HTTP/1.1"
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _as_httpx_error(exc: BaseException) -> BaseException:
    """The httpx error that means what `exc` means (the failure classes are keyed on them)."""
    error = _mapped(exc)
    if error is None:
        return exc
    kind, message = error
    return kind(message)


def _mapped(exc: BaseException) -> tuple[type[httpx.HTTPError], str] | None:
    cause = _resolver_cause(exc)
    if cause is not None:
        # A ConnectError whose chain holds the resolver's error: DNS or BLOCKED_DESTINATION.
        return httpx.ConnectError, str(cause)
    text = str(exc) or type(exc).__name__
    for kinds, target in _ERRORS:
        if isinstance(exc, kinds):
            return target, text
    return None


# First match wins: the more specific aiohttp errors come before the ones they specialise.
_ERRORS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Any], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    ((aiohttp.SocketTimeoutError, aiohttp.ServerTimeoutError), httpx.ReadTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    ((aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError), httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),  # bytes that are not HTTP
    ((aiohttp.ClientOSError, ConnectionError), httpx.ReadError),
    (aiohttp.NonHttpUrlClientError, httpx.UnsupportedProtocol),
    (aiohttp.InvalidURL, httpx.LocalProtocolError),
    (asyncio.TimeoutError, httpx.ReadTimeout),
    (aiohttp.ClientError, httpx.TransportError),
)


def _resolver_cause(exc: BaseException) -> ResolutionError | UnsafeDestination | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _ResolverError):
            return current.cause
        if isinstance(current, ResolutionError | UnsafeDestination):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
