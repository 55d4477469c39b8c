"""The HTTP/1.1 transport (`resources/h1_transport.py`) against servers that answer as the
test scripts them, byte for byte: framing (lengths, chunks, a body that ends with the
connection, interim answers), what is not HTTP, silence, the pool's reuse and its limit.

The framing property test feeds the protocol its bytes directly, cut at every place
hypothesis picks, as the event loop would hand them over; everything else goes over real
sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resources.answer import Answer
from resources.h1_transport import MAX_HEAD_BYTES, H1Transport, _Connection
from resources.request_url import request_url
from resources.resolver import HostMap, Resolver

HOST = "scripted.fixture-h1.com"
Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


class ScriptedServer:
    """Each connection runs `script(reader, writer, n)`, n counting connections from 1."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await self.script(reader, writer, self.connections)
        writer.close()


def _transport(server: ScriptedServer, **limits: float) -> H1Transport:
    resolver = Resolver(
        HostMap(
            {HOST: ("127.0.0.1", server.port), "other.fixture-h1.com": ("127.0.0.1", server.port)}
        )
    )
    timeout = httpx.Timeout(limits.get("read", 5.0), connect=5.0, pool=limits.get("pool", 5.0))
    return H1Transport(
        resolver,
        max_connections=int(limits.get("max_connections", 8)),
        max_idle=int(limits["max_idle"]) if "max_idle" in limits else None,
        tls_context=lambda: pytest.fail("no TLS here"),
        timeouts=timeout,
    )


async def _get(transport: H1Transport, path: str = "/", host: str = HOST) -> tuple[Answer, bytes]:
    answer = await transport.send(
        "GET", request_url(f"http://{host}{path}"), {"Accept": "*/*"}, None
    )
    try:
        body = b"".join([chunk async for chunk in answer.body])
    finally:
        await answer.close()
    return answer, body


def _serve_each(*answers: bytes, close: bool = False) -> Script:
    """Answer each request of a connection with the next of `answers`."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        for answer in answers:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
        if not close:
            await reader.read()  # until the client goes

    return script


def _run(case: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(case())


def test_a_kept_alive_connection_serves_the_next_request_and_the_head_is_as_sent() -> None:
    async def case() -> None:
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\nX-A: 2\r\n\r\nok"
        recorded: list[bytes] = []

        async def script(reader, writer, n):
            for _ in range(3):
                recorded.append(await reader.readuntil(b"\r\n\r\n"))
                writer.write(ok)
            await reader.read()

        async with ScriptedServer(script) as server:
            transport = _transport(server)
            for path in ("/a", "/b?q=1#frag", "?only=query"):
                answer, body = await _get(transport, path)
                assert (answer.status, body, answer.headers["x-a"]) == (200, b"ok", "1, 2")
                assert answer.http_version == "HTTP/1.1"
            await transport.aclose()
        assert server.connections == 1
        assert recorded[0] == (f"GET /a HTTP/1.1\r\nHost: {HOST}\r\nAccept: */*\r\n\r\n".encode())
        assert recorded[1].startswith(b"GET /b?q=1 HTTP/1.1\r\n")
        assert recorded[2].startswith(b"GET /?only=query HTTP/1.1\r\n")

    _run(case)


def test_a_chunked_body_and_a_body_that_ends_with_the_connection_arrive_whole() -> None:
    async def case() -> None:
        chunked = (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n"
        )
        async with ScriptedServer(_serve_each(chunked)) as server:
            transport = _transport(server)
            answer, body = await _get(transport)
            assert (answer.status, body) == (200, b"hello world")
            await transport.aclose()

        until_close = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>all of it</p>"
        async with ScriptedServer(_serve_each(until_close, close=True)) as server:
            transport = _transport(server)
            answer, body = await _get(transport)
            assert (answer.status, body, answer.http_version) == (
                200,
                b"<p>all of it</p>",
                "HTTP/1.0",
            )
            await _get(transport)  # a second request needs a new connection
            assert server.connections == 2
            await transport.aclose()

    _run(case)


def test_interim_answers_are_passed_over_for_the_final_one() -> None:
    async def case() -> None:
        answer_bytes = (
            b"HTTP/1.1 100 Continue\r\n\r\n"
            b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone"
        )
        async with ScriptedServer(_serve_each(answer_bytes)) as server:
            transport = _transport(server)
            answer, body = await _get(transport)
            await transport.aclose()
        assert (answer.status, body) == (404, b"gone")
        assert "link" not in answer.headers

    _run(case)


@pytest.mark.parametrize(
    ("sent", "error", "text"),
    [
        # A body shorter than its length, then the end of the connection.
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
            httpx.RemoteProtocolError,
            "disconnected",
        ),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", httpx.RemoteProtocolError, "not HTTP/1.1"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
            httpx.RemoteProtocolError,
            "not HTTP/1.1",
        ),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
            httpx.RemoteProtocolError,
            "upgrade",
        ),
        (
            b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"y" * MAX_HEAD_BYTES + b"\r\n\r\n",
            httpx.RemoteProtocolError,
            "head over",
        ),
        (b"", httpx.RemoteProtocolError, "disconnected"),
    ],
    ids=["truncated", "not-http", "two-lengths", "upgrade", "huge-head", "nothing"],
)
def test_what_is_not_a_whole_http_answer_is_the_httpx_error_of_its_meaning(
    sent: bytes, error: type[Exception], text: str
) -> None:
    async def case() -> None:
        async with ScriptedServer(_serve_each(sent, close=True)) as server:
            transport = _transport(server)
            with pytest.raises(error, match=text):
                await _get(transport)
            # The transport is still usable: a good answer on a new connection.
            server.script = _serve_each(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            answer, body = await _get(transport)
            assert (answer.status, body) == (200, b"ok")
            await transport.aclose()

    _run(case)


def test_silence_is_a_read_timeout_before_the_head_and_within_the_body() -> None:
    async def silent(reader, writer, n):
        await reader.readuntil(b"\r\n\r\n")
        if n == 2:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await asyncio.sleep(5)

    async def case() -> None:
        async with ScriptedServer(silent) as server:
            transport = _transport(server, read=0.3)
            with pytest.raises(httpx.ReadTimeout, match=r"no answer within 0\.3 s"):
                await _get(transport)
            with pytest.raises(httpx.ReadTimeout, match="no byte of the body"):
                await _get(transport)
            await transport.aclose()
        assert server.connections == 2  # a timed-out connection is never reused

    _run(case)


def test_an_idle_connection_the_server_closed_is_not_handed_out() -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def case() -> None:
        async with ScriptedServer(_serve_each(ok, close=True)) as server:
            transport = _transport(server)
            await _get(transport)
            await asyncio.sleep(0.2)  # the server's close reaches the idle connection
            answer, body = await _get(transport)
            await transport.aclose()
        assert (answer.status, body) == (200, b"ok")
        assert server.connections == 2

    _run(case)


def test_bytes_after_the_answer_or_a_connection_close_keep_the_connection_out_of_the_pool() -> None:
    extra = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"
    closing = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"

    async def case() -> None:
        for first in (extra, closing):
            ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes"
            async with ScriptedServer(_serve_each(first, ok)) as server:
                transport = _transport(server)
                assert (await _get(transport))[1] == b"ok"
                server.script = _serve_each(ok)
                assert (await _get(transport))[1] == b"yes"
                await transport.aclose()
            assert server.connections == 2

    _run(case)


def test_a_large_body_arrives_whole_through_paused_reading() -> None:
    body = bytes(range(256)) * 8192  # 2 MB, far over the pause mark

    async def case() -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        no_content = b"HTTP/1.1 204 No Content\r\n\r\n"
        async with ScriptedServer(_serve_each(head + body, no_content)) as server:
            transport = _transport(server)
            answer = await transport.send("GET", request_url(f"http://{HOST}/big"), {}, None)
            got = []
            async for chunk in answer.body:
                got.append(chunk)
                await asyncio.sleep(0)  # a slow reader
            await answer.close()
            await answer.close()  # a second close gives nothing back twice
            assert transport._in_use == 0
            assert b"".join(got) == body
            # Read to its end: the connection is reused.
            answer, rest = await _get(transport)
            assert (answer.status, rest, server.connections) == (204, b"", 1)
            await transport.aclose()

    _run(case)


def test_the_pool_opens_at_most_its_limit_and_waits_at_most_its_timeout() -> None:
    open_now = 0
    most = 0

    async def slow(reader, writer, n):
        nonlocal open_now, most
        open_now += 1
        most = max(most, open_now)
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                await asyncio.sleep(0.05)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        finally:
            open_now -= 1

    async def case() -> None:
        async with ScriptedServer(slow) as server:
            transport = _transport(server, max_connections=2)
            results = await asyncio.gather(*(_get(transport, f"/{i}") for i in range(6)))
            assert [body for _, body in results] == [b"ok"] * 6
            assert server.connections == 2 and most == 2
            # Idle connections do not count: another origin gets a connection at once.
            answer, _ = await _get(transport, host="other.fixture-h1.com")
            assert answer.status == 200 and server.connections == 3
            await transport.aclose()
            # Beyond `max_idle`, the least recently used idle connection is closed.
            few = _transport(server, max_idle=1)
            await _get(few)
            await _get(few, host="other.fixture-h1.com")  # HOST's idle one is closed
            await _get(few, host="other.fixture-h1.com")  # reused
            assert server.connections == 5
            await _get(few)
            assert server.connections == 6
            await few.aclose()
            # Both held by answers not yet closed: a third request waits, then gives up.
            tight = _transport(server, max_connections=2, pool=0.2)
            held = [
                await tight.send("GET", request_url(f"http://{HOST}/h{i}"), {}, None)
                for i in range(2)
            ]
            with pytest.raises(httpx.PoolTimeout):
                await _get(tight)
            await held[0].close()  # one comes back: the next request is served
            answer, body = await _get(tight)
            assert (answer.status, body) == (200, b"ok")
            await held[1].close()
            await tight.aclose()

    _run(case)


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\0b"])
def test_a_field_with_a_line_break_or_nul_is_never_sent(value: str) -> None:
    async def case() -> None:
        async with ScriptedServer(_serve_each(b"HTTP/1.1 304 Not Modified\r\n\r\n")) as server:
            transport = _transport(server)
            url = request_url(f"http://{HOST}/")
            with pytest.raises(httpx.LocalProtocolError):
                await transport.send("GET", url, {"If-None-Match": value}, None)
            await transport.aclose()
        assert server.connections == 0

    _run(case)


def test_a_post_carries_its_length_and_body() -> None:
    seen: list[bytes] = []

    async def script(reader, writer, n):
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head + await reader.readexactly(7))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        await reader.read()

    async def case() -> None:
        async with ScriptedServer(script) as server:
            transport = _transport(server)
            answer = await transport.send(
                "POST",
                request_url(f"http://{HOST}/api"),
                {"Content-Type": "application/json"},
                b'{"a":1}',
            )
            await answer.close()
            await transport.aclose()
        assert seen[0].startswith(b"POST /api HTTP/1.1\r\n")
        assert b"\r\nContent-Length: 7\r\n\r\n" in seen[0] and seen[0].endswith(b'{"a":1}')

    _run(case)


# -- framing, whatever the cuts --------------------------------------------------------------
class _Wire(asyncio.Transport):
    """What the protocol writes to and is read from: the bytes are the test's own."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


ANSWERS = [
    (
        b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\nETag: "v1"\r\n\r\nhello world',
        200,
        b"hello world",
    ),
    (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
        200,
        b"hello world",
    ),
    (b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n', 304, b""),
]


@settings(max_examples=150, deadline=None)
@given(which=st.sampled_from(range(len(ANSWERS))), cuts=st.lists(st.integers(0, 200), max_size=8))
def test_an_answer_parses_the_same_however_its_bytes_are_cut(which: int, cuts: list[int]) -> None:
    data, status, body = ANSWERS[which]

    async def case() -> None:
        loop = asyncio.get_running_loop()
        connection = _Connection(None, ("http", HOST, 80))  # type: ignore[arg-type]
        connection.connection_made(_Wire())
        exchange = connection.start(b"GET / HTTP/1.1\r\n\r\n", loop)
        points = sorted({c % (len(data) + 1) for c in cuts})
        for begin, end in zip([0, *points], [*points, len(data)], strict=True):
            if end > begin:
                connection.data_received(data[begin:end])
        assert exchange.head.done() and exchange.error is None
        assert (exchange.status, b"".join(exchange.chunks), exchange.complete) == (
            status,
            body,
            True,
        )
        assert exchange.keep_alive and connection.finish()

    asyncio.run(case())
