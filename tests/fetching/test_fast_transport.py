"""The fetcher's transport on real servers: HTTP/1.1 over catlas's own pool, HTTP/2 over
httpcore where TLS negotiates it (the rule in `resources/fetcher.py::_Transport`).

A server that counts its connections shows which pool served a request: connections are
kept alive and reused, a body left early closes its connection, an https origin that
answered over HTTP/1.1 moves to the HTTP/1.1 pool, and one that negotiated h2 stays on
its single multiplexed connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http2 import HOST, TLSServer, _certificates

from catlas_assets.domain.vocabulary import FailureClass

SITE = "plain.fixture-keepalive.com"
BIG = b"x" * 200_000
UTF8_TAG = '"caf\u00e9"'.encode()  # a site's ETag in UTF-8 bytes, not ASCII


class CountingServer:
    """Plain HTTP/1.1 with keep-alive; `/big` is larger than the test's byte cap."""

    def __init__(self) -> None:
        self.connections = 0
        self.paths: list[str] = []
        self.heads: list[bytes] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> CountingServer:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0), self.loop
        ).result(10)
        self.port = server.sockets[0].getsockname()[1]
        self._server = server
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                path = head.split(b" ", 2)[1].decode()
                self.paths.append(path)
                self.heads.append(head)
                status, body = (404, b"none") if path == "/robots.txt" else (200, b"page")
                extra = b""
                if path == "/big":
                    body = BIG
                if path == "/utf8-etag":
                    extra = b"ETag: " + UTF8_TAG + b"\r\nVary: Accept\r\nVary: Cookie\r\n"
                    if b"\r\nif-none-match: " + UTF8_TAG + b"\r\n" in head.lower():
                        status, body = 304, b""
                writer.write(
                    f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\n".encode()
                    + extra
                    + b"\r\n"
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


class CountingTLSServer(TLSServer):
    def __init__(self, cert: Path, key: Path, protocols: list[str]) -> None:
        super().__init__(cert, key, protocols)
        self.connections = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await super()._handle(reader, writer)


@pytest.fixture
def plain() -> Iterator[CountingServer]:
    with CountingServer() as server:
        yield server


def _plain_runtime(make_runtime, tmp_path: Path, plain: CountingServer, **settings):
    hosts = tmp_path / "hosts-plain"
    hosts.write_text(f"127.0.0.1:{plain.port} {SITE}\n")
    return make_runtime(hosts=str(hosts), **settings)


def _fetch_all(runtime, urls: list[str]):
    async def go():
        async with runtime.fetcher() as fetcher:
            return [await fetcher.fetch(url) for url in urls]

    return asyncio.run(go())


def test_plain_http_keeps_one_connection_alive_for_sequential_fetches(
    make_runtime, tmp_path: Path, plain: CountingServer
) -> None:
    runtime = _plain_runtime(make_runtime, tmp_path, plain)
    fetched = _fetch_all(runtime, [f"http://{SITE}/p{i}" for i in range(5)])
    assert [(f.status, f.body) for f in fetched] == [(200, b"page")] * 5
    assert plain.paths == ["/robots.txt", *(f"/p{i}" for i in range(5))]
    assert plain.connections == 1


def test_a_body_over_the_cap_closes_its_connection_and_the_next_fetch_works(
    make_runtime, tmp_path: Path, plain: CountingServer
) -> None:
    runtime = _plain_runtime(make_runtime, tmp_path, plain, fetch_max_bytes=50_000)
    big, after = _fetch_all(runtime, [f"http://{SITE}/big", f"http://{SITE}/after"])
    assert big.failure_class is FailureClass.TOO_LARGE
    assert (after.status, after.body) == (200, b"page")
    # The connection left in the middle of /big was not reused for /after.
    assert plain.connections == 2


def test_headers_arrive_as_httpx_reads_them_and_a_utf8_validator_goes_back_unchanged(
    make_runtime, tmp_path: Path, plain: CountingServer
) -> None:
    runtime = _plain_runtime(make_runtime, tmp_path, plain)
    url = f"http://{SITE}/utf8-etag"

    async def go():
        async with runtime.fetcher() as fetcher:
            first = await fetcher.fetch(url)
            return first, await fetcher.fetch(url, etag=first.headers["etag"])

    first, again = asyncio.run(go())
    assert first.status == 200
    assert first.headers["etag"] == '"caf\u00e9"'
    assert first.headers["vary"] == "Accept, Cookie"
    assert (again.status, again.failure_class) == (304, None)
    assert b"\r\nIf-None-Match: " + UTF8_TAG + b"\r\n" in plain.heads[-1]


def test_a_url_outside_httpx_normal_form_is_sent_as_httpx_normalises_it(
    make_runtime, tmp_path: Path, plain: CountingServer
) -> None:
    runtime = _plain_runtime(make_runtime, tmp_path, plain)
    fetched = _fetch_all(runtime, [f"http://{SITE.upper()}/a/./b/../c d?q=\u00e9#top"])
    assert fetched[0].status == 200
    assert plain.paths[-1] == "/a/c%20d?q=%C3%A9"
    assert b"\r\nHost: " + SITE.encode() + b"\r\n" in plain.heads[-1]


def _tls_fetch_all(make_runtime, tmp_path: Path, server: TLSServer, ca: Path, n: int):
    hosts = tmp_path / "tls-hosts"
    hosts.write_text(f"127.0.0.1:{server.port} {HOST}\n")
    runtime = make_runtime(hosts=str(hosts), ca_bundle=str(ca))
    return _fetch_all(runtime, [f"https://{HOST}/page{i}" for i in range(n)])


def test_an_https_origin_on_http11_moves_to_the_http11_pool(make_runtime, tmp_path: Path) -> None:
    ca, cert, key = _certificates(tmp_path)
    with CountingTLSServer(cert, key, ["http/1.1"]) as server:
        fetched = _tls_fetch_all(make_runtime, tmp_path, server, ca, 4)
    assert [f.status for f in fetched] == [200] * 4
    assert [p for _, p in server.seen] == ["/robots.txt", *(f"/page{i}" for i in range(4))]
    # robots.txt over httpcore's connection (it offered h2, the server chose http/1.1);
    # every later request over one kept-alive connection of the HTTP/1.1 transport.
    assert server.connections == 2


def test_an_https_origin_that_negotiates_h2_stays_on_one_h2_connection(
    make_runtime, tmp_path: Path
) -> None:
    ca, cert, key = _certificates(tmp_path)
    with CountingTLSServer(cert, key, ["h2", "http/1.1"]) as server:
        fetched = _tls_fetch_all(make_runtime, tmp_path, server, ca, 4)
    assert [f.status for f in fetched] == [200] * 4
    assert {proto for proto, _ in server.seen} == {"h2"}
    assert server.connections == 1


def test_a_utf8_validator_goes_back_unchanged_over_h2(make_runtime, tmp_path: Path) -> None:
    ca, cert, key = _certificates(tmp_path)
    with CountingTLSServer(cert, key, ["h2", "http/1.1"]) as server:
        hosts = tmp_path / "tls-hosts"
        hosts.write_text(f"127.0.0.1:{server.port} {HOST}\n")
        runtime = make_runtime(hosts=str(hosts), ca_bundle=str(ca))

        async def go():
            async with runtime.fetcher() as fetcher:
                return await fetcher.fetch(f"https://{HOST}/page", etag=UTF8_TAG.decode())

        fetched = asyncio.run(go())
    assert fetched.status == 200
    assert server.h2_headers[-1]["if-none-match"] == UTF8_TAG.decode()


def test_a_one_off_fetch_over_https_checks_the_certificate_against_the_trust_store(
    make_runtime, tmp_path: Path
) -> None:
    # A one-off command's plain-http requests go through a pool whose TLS context loads no
    # certificates; https must still go through the one that loads the trust store.
    ca, cert, key = _certificates(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca, _, _ = _certificates(tmp_path / "other")
    hosts = tmp_path / "tls-hosts"
    with CountingTLSServer(cert, key, ["h2", "http/1.1"]) as server:
        hosts.write_text(f"127.0.0.1:{server.port} {HOST}\n")

        def one_off(bundle: Path):
            runtime = make_runtime(hosts=str(hosts), ca_bundle=str(bundle))

            async def go():
                async with runtime.fetcher(governed=False, one_off=True) as fetcher:
                    return await fetcher.fetch(f"https://{HOST}/page")

            return asyncio.run(go())

        trusted, untrusted = one_off(ca), one_off(other_ca)
    assert trusted.status == 200
    assert untrusted.skipped_reason == "robots_unavailable" and untrusted.status is None
    assert [p for _, p in server.seen] == ["/robots.txt", "/page"]
