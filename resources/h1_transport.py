"""HTTP/1.1 requests over asyncio protocols, parsed by llhttp (httptools), answered as an
`Answer`.

A tick's requests are small and many: a conditional GET answered 304 is a few hundred bytes
each way. Through aiohttp's client (its session, request and response objects, timers,
the connector's bookkeeping) one cost ~130 µs of CPU in a tick's pattern (64 at once, 8 per
host, the connections' opening included); this transport writes the request head as one
string and reads the answer with llhttp's C parser straight into a field list and a body
buffer: ~50 µs (bench/README.md). It does only what the fetcher asks of a transport:

- the name is resolved by catlas's resolver (host map, destination safety) for every new
  connection, and the connection goes to the address it checked;
- connections are kept alive per origin and reused most-recent first; at most
  `max_connections` are in use at once, and a request waits for one at most the pool
  timeout (`H1Transport` says how many wait idle);
- the body is handed over raw (the fetcher decodes it under its byte cap), in the chunks
  that arrived, reading paused while the fetcher has not taken them; an answer left before
  its end closes its connection;
- the read timeout is the longest silence; connect covers resolving, connecting and TLS;
- every error is the httpx error of the same meaning, so the failure classes of
  `resources/fetch_failure.py` apply unchanged (the resolver's own error is chained).

A connection dropped while idle is never handed out; one dropped by the server as a request
went out fails that request (`RemoteProtocolError`): the fetcher's own retries decide, as
they must for a POST.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable, Mapping
from typing import Any

import httptools
import httpx

from resources.answer import Answer, header_dict
from resources.request_url import RequestURL
from resources.resolver import ResolutionError, Resolver, UnsafeDestination

# A head (status line and fields) larger than this, or with more fields, is not HTTP a
# fetcher reads (httpcore allowed 100 KB, aiohttp 1,000 fields of 64 KB lines).
MAX_HEAD_BYTES = 256 * 1024
MAX_FIELDS = 1000
# An idle connection older than this is closed, not reused: servers drop idle ones after
# 5-75 s, and a request sent as the server drops its connection fails.
KEEPALIVE_S = 15.0
# Reading pauses while this much of a body waits for the fetcher to take it.
_PAUSE_BYTES = 256 * 1024

_Origin = tuple[str, str, int]  # scheme, host, port


class _Exchange:
    """One request's answer as it arrives: the head, then the body's chunks."""

    __slots__ = (
        "buffered",
        "chunks",
        "complete",
        "error",
        "fields",
        "final",
        "head",
        "keep_alive",
        "status",
        "until_close",
        "version",
        "waiter",
    )

    def __init__(self, head: asyncio.Future[None]) -> None:
        self.status = 0
        self.fields: list[tuple[bytes, bytes]] = []
        self.version = "1.1"
        self.head = head  # done when the final head has arrived (or the exchange failed)
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.complete = False  # the whole answer has arrived
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None  # the body reader, waiting for more
        self.until_close = False  # a body without a length: it ends when the connection does
        self.final = False  # the final head (not a 1xx) has arrived
        self.keep_alive = False  # the answer lets the connection serve another request


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one exchange at a time."""

    def __init__(self, pool: H1Transport, origin: _Origin) -> None:
        self._pool = pool
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.broken = False  # never reused: closed, or something arrived out of turn
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._head_bytes = 0
        self._paused = False

    # -- the request ----------------------------------------------------------------------
    def start(self, request: bytes, loop: asyncio.AbstractEventLoop) -> _Exchange:
        exchange = _Exchange(loop.create_future())
        self.exchange = exchange
        self._head_bytes = 0
        assert self.transport is not None
        self.transport.write(request)
        return exchange

    def finish(self) -> bool:
        """The exchange is over; whether the connection may serve another."""
        exchange, self.exchange = self.exchange, None
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        reusable = (
            exchange is not None
            and exchange.complete
            and exchange.error is None
            and not exchange.until_close
            and exchange.keep_alive
            and not self.broken
        )
        return reusable

    def taken(self, exchange: _Exchange) -> None:
        """The reader took the buffered chunks: reading goes on if it had paused."""
        exchange.buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        self.broken = True
        if self.transport is not None:
            self.transport.abort()

    # -- asyncio.Protocol -----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None or exchange.complete:
            # Bytes nobody asked for: the connection's framing is not to be trusted.
            self.close()
            return
        if not exchange.final:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail(httpx.RemoteProtocolError("answer head over 256 KB"))
                return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("an upgrade that was not asked for"))
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"not HTTP/1.1: {exc}"))

    def eof_received(self) -> bool:
        return False  # the transport closes itself; connection_lost says what it meant

    def connection_lost(self, exc: Exception | None) -> None:
        self.broken = True
        self._pool._forget(self)
        exchange = self.exchange
        if exchange is None or exchange.complete or exchange.error is not None:
            return
        if exc is None and exchange.final and exchange.until_close:
            exchange.complete = True  # the body had no length: its end is the connection's
            _wake(exchange)
        elif exc is None:
            self._fail(
                httpx.RemoteProtocolError("server disconnected before the end of the answer")
            )
        else:
            self._fail(httpx.ReadError(str(exc) or type(exc).__name__))

    def pause_writing(self) -> None:  # a request is a few hundred bytes: nothing to pause
        pass

    def resume_writing(self) -> None:
        pass

    # -- llhttp's callbacks ---------------------------------------------------------------
    def _current(self) -> _Exchange | None:
        """The exchange the parsed bytes belong to (None: they belong to none)."""
        exchange = self.exchange
        if exchange is None or exchange.complete or exchange.error is not None:
            return None
        return exchange

    def on_message_begin(self) -> None:
        exchange = self._current()
        if exchange is None:
            self.broken = True  # a second answer to one request: framing is lost
        else:
            exchange.fields = []

    def on_header(self, name: bytes, value: bytes) -> None:
        exchange = self._current()
        if exchange is not None and not exchange.final:  # a chunked body's trailer is not read
            exchange.fields.append((name, value))
            if len(exchange.fields) > MAX_FIELDS:
                self._fail(httpx.RemoteProtocolError(f"more than {MAX_FIELDS} header fields"))

    def on_headers_complete(self) -> None:
        exchange = self._current()
        if exchange is None:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            return  # an interim answer (100 Continue, 103 Early Hints): the final one follows
        exchange.status = status
        exchange.version = self._parser.get_http_version()
        exchange.final = True
        if status not in (204, 304):
            exchange.until_close = _length_unknown(exchange.fields)
        if not exchange.head.done():
            exchange.head.set_result(None)

    def on_body(self, body: bytes) -> None:
        exchange = self._current()
        if exchange is None:
            return
        exchange.chunks.append(body)
        exchange.buffered += len(body)
        if exchange.buffered > _PAUSE_BYTES and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        _wake(exchange)

    def on_message_complete(self) -> None:
        exchange = self._current()
        if exchange is None or not exchange.final:
            return
        # Read here: llhttp forgets it once the message is parsed.
        exchange.keep_alive = self._parser.should_keep_alive()
        exchange.complete = True
        _wake(exchange)

    def _fail(self, error: BaseException) -> None:
        exchange = self.exchange
        if exchange is not None and exchange.error is None and not exchange.complete:
            exchange.error = error
            if not exchange.head.done():
                exchange.head.set_exception(error)
                exchange.head.exception()  # read here too: a request given up never awaits it
            _wake(exchange)
        self.close()


def _length_unknown(fields: list[tuple[bytes, bytes]]) -> bool:
    """Whether a body's end is the connection's: no Content-Length, not chunked."""
    for name, value in fields:
        lowered = name.lower()
        if lowered == b"content-length":
            return False
        if lowered == b"transfer-encoding" and value.lower().rstrip().endswith(b"chunked"):
            return False
    return True


def _wake(exchange: _Exchange) -> None:
    waiter = exchange.waiter
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class _Body:
    """The body's chunks as they arrive (an async iterator object: an async generator per
    answer costs the event loop's bookkeeping of generators)."""

    __slots__ = ("_connection", "_exchange", "_read_s")

    def __init__(self, connection: _Connection, exchange: _Exchange, read_s: float | None):
        self._connection = connection
        self._exchange = exchange
        self._read_s = read_s

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        exchange = self._exchange
        while True:
            if exchange.chunks:
                chunks = exchange.chunks
                exchange.chunks = []
                self._connection.taken(exchange)
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            if exchange.error is not None:
                raise exchange.error
            if exchange.complete:
                raise StopAsyncIteration
            waiter = asyncio.get_running_loop().create_future()
            exchange.waiter = waiter
            try:
                await _within(waiter, self._read_s, "no byte of the body")
            finally:
                exchange.waiter = None


async def _within(future: asyncio.Future[Any], seconds: float | None, what: str) -> None:
    """Wait for `future` at most `seconds` of silence (httpx's ReadTimeout after that)."""
    if seconds is None:
        await future
        return
    loop = asyncio.get_running_loop()
    timer = loop.call_later(seconds, _expire, future, what, seconds)
    try:
        await future
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[Any], what: str, seconds: float) -> None:
    if not future.done():
        future.set_exception(httpx.ReadTimeout(f"{what} within {seconds:g} s"))


class H1Transport:
    """HTTP/1.1 over asyncio's transports: a request's parts in, an `Answer` out.

    At most `max_connections` connections are in use at once (a request waits for one at
    most the pool timeout); besides those, up to `max_idle` (4 × `max_connections` unless
    given) wait idle for their origin, the least recently used closed first beyond that. A
    tick asks many origins a few connections each (40 hosts at 8 each want 320 while 64
    are in use): an idle limit equal to the in-use one would close connections that their
    origin asks for again a moment later.
    """

    def __init__(
        self,
        resolver: Resolver,
        *,
        max_connections: int,
        tls_context: Callable[[], ssl.SSLContext],
        timeouts: httpx.Timeout,
        max_idle: int | None = None,
    ) -> None:
        self._resolver = resolver
        self._max = max(1, max_connections)
        self._max_idle = 4 * self._max if max_idle is None else max_idle
        self._tls_factory = tls_context
        self._tls: ssl.SSLContext | None = None
        # httpx's meanings: `pool` waits for a connection, `connect` opens one (resolving
        # and TLS included), `read` is the longest silence.
        self._pool_s = timeouts.pool
        self._connect_s = timeouts.connect
        self._read_s = timeouts.read
        self._in_use = 0  # handed to a request, or being opened for one
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._idle_order: dict[_Connection, None] = {}  # the least recently idle first
        self._open: set[_Connection] = set()  # every connection not closed yet
        self._waiting: list[asyncio.Future[None]] = []
        self._closed = False

    def _tls_now(self) -> ssl.SSLContext:
        # Its own context, built at the first https request: it offers http/1.1 only.
        if self._tls is None:
            self._tls = self._tls_factory()
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls

    async def send(
        self, method: str, url: RequestURL, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """Send one request; raises the httpx error that means what went wrong."""
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported scheme {url.scheme!r}")
        request = _request_bytes(method, url, headers, content)
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        connection = await self._acquire(origin)
        exchange = connection.start(request, asyncio.get_running_loop())
        try:
            await _within(exchange.head, self._read_s, "no answer")
        except BaseException:
            self._release(connection)
            raise
        body = _Body(connection, exchange, self._read_s)
        released = False

        async def close() -> None:
            nonlocal released
            if not released:  # a second close must not give the connection back twice
                released = True
                self._release(connection)

        return Answer(
            exchange.status,
            header_dict(exchange.fields),
            body,
            close,
            f"HTTP/{exchange.version}",
        )

    # -- the pool -------------------------------------------------------------------------
    async def _acquire(self, origin: _Origin) -> _Connection:
        """A connection to `origin` for one exchange: an idle one, else a new one."""
        if self._in_use >= self._max:
            await self._wait_for_room()
        if self._closed:
            raise httpx.ConnectError("the transport is closed")
        self._in_use += 1
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            del self._idle_order[connection]
            if (
                not connection.broken
                and now - connection.idle_since < KEEPALIVE_S
                and connection.transport is not None
                and not connection.transport.is_closing()
            ):
                return connection
            self._close(connection)
        try:
            return await self._connect(origin)
        except BaseException:
            self._in_use -= 1
            self._wake_one()
            raise

    async def _wait_for_room(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = None if self._pool_s is None else loop.time() + self._pool_s
        while self._in_use >= self._max and not self._closed:
            waiter = loop.create_future()
            self._waiting.append(waiter)
            try:
                left = None if deadline is None else deadline - loop.time()
                async with asyncio.timeout(left):
                    await waiter
            except TimeoutError:
                raise httpx.PoolTimeout(f"no connection free within {self._pool_s:g} s") from None
            finally:
                if waiter in self._waiting:
                    self._waiting.remove(waiter)

    async def _connect(self, origin: _Origin) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_s):
                try:
                    destination = await self._resolver.resolve(host, port)
                except (ResolutionError, UnsafeDestination) as exc:
                    raise httpx.ConnectError(str(exc)) from exc
                tls = self._tls_now() if scheme == "https" else None
                try:
                    _, connection = await loop.create_connection(
                        lambda: _Connection(self, origin),
                        destination.address,
                        destination.port or port,
                        ssl=tls,
                        server_hostname=host if tls is not None else None,
                    )
                except (OSError, ssl.SSLError) as exc:
                    raise httpx.ConnectError(f"{host}:{port}: {exc}") from exc
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"no connection to {host}:{port} within {self._connect_s:g} s"
            ) from None
        if self._closed:
            connection.close()
            raise httpx.ConnectError("the transport is closed")
        self._open.add(connection)
        return connection

    def _release(self, connection: _Connection) -> None:
        """The exchange is over: the connection waits idle for its origin, or is closed."""
        self._in_use -= 1
        if connection.finish() and not self._closed:
            connection.idle_since = time.monotonic()
            self._idle.setdefault(connection.origin, []).append(connection)
            self._idle_order[connection] = None
            if len(self._idle_order) > self._max_idle:
                oldest = next(iter(self._idle_order))
                self._idle[oldest.origin].remove(oldest)
                del self._idle_order[oldest]
                self._close(oldest)
        else:
            self._close(connection)
        self._wake_one()

    def _close(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)

    def _forget(self, connection: _Connection) -> None:
        """`connection` has closed: it no longer waits idle."""
        self._open.discard(connection)
        if self._idle_order.pop(connection, 0) is None:
            self._idle[connection.origin].remove(connection)

    def _wake_one(self) -> None:
        while self._waiting:
            waiter = self._waiting.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        self._closed = True
        for connection in list(self._open):
            self._close(connection)
        self._idle.clear()
        self._idle_order.clear()
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_result(None)


def _request_bytes(
    method: str, url: RequestURL, headers: Mapping[str, str], content: bytes | None
) -> bytes:
    """The request as it goes on the wire: its head, in UTF-8 (a validator a site sent in
    UTF-8 goes back unchanged), then the body."""
    rest = url.text[len(url.scheme) + 3 :]
    cut = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    target = rest[cut:].partition("#")[0]  # a fragment is never sent
    if not target.startswith("/"):
        target = "/" + target
    host = f"[{url.host}]" if ":" in url.host else url.host
    if url.port is not None:
        host = f"{host}:{url.port}"
    lines = [f"{method} {target} HTTP/1.1\r\n", f"Host: {host}\r\n"]
    for name, value in headers.items():
        lines.append(f"{name}: {value}\r\n")
    if content is not None:
        lines.append(f"Content-Length: {len(content)}\r\n")
    # A field holds no line break nor NUL (a hostile validator sent back, say): the request
    # would become two. Each field's own CRLF is counted out.
    fields = "".join(lines)
    if fields.count("\r") != len(lines) or fields.count("\n") != len(lines) or "\0" in fields:
        raise httpx.LocalProtocolError("a request field holds a line break or NUL")
    data = (fields + "\r\n").encode("utf-8")
    return data + content if content else data
