"""HTTP/2 where the server offers it: over TLS, ALPN picks h2 when the server speaks it and
HTTP/1.1 when it does not. The fixture web is plain HTTP, so these tests run their own TLS
server (a real socket, a real handshake, certificates made here) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "secure.fixture-tls.com"
BODY = b"hello over TLS"


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for HOST signed by it."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "catlas test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


class TLSServer:
    """Answers every GET: 404 for /robots.txt (no rules), BODY elsewhere; logs the protocol."""

    def __init__(self, cert: Path, key: Path, protocols: list[str]) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.context.set_alpn_protocols(protocols)
        self.seen: list[tuple[str, str]] = []  # (protocol, path)
        self.h2_headers: list[dict[str, str]] = []  # each h2 request's header fields
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> TLSServer:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.context), self.loop
        ).result(10)
        self.port = server.sockets[0].getsockname()[1]
        self._server = server
        return self

    def __exit__(self, *exc: object) -> None:
        # The server is closed on its own loop: closing it from this thread races the loop's
        # bookkeeping of a connection that is just ending.
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        self._server.close()

    @staticmethod
    def _answer(path: str) -> tuple[int, bytes]:
        return (404, b"no rules") if path == "/robots.txt" else (200, BODY)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        protocol = writer.get_extra_info("ssl_object").selected_alpn_protocol() or "http/1.1"
        try:
            if protocol == "h2":
                await self._serve_h2(reader, writer)
            else:
                await self._serve_http11(reader, writer)
        finally:
            writer.close()

    async def _serve_h2(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        while data := await reader.read(65536):
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    path = dict(event.headers)[":path"]
                    self.seen.append(("h2", path))
                    self.h2_headers.append(dict(event.headers))
                    status, body = self._answer(path)
                    conn.send_headers(
                        event.stream_id,
                        [(":status", str(status)), ("content-length", str(len(body)))],
                    )
                    conn.send_data(event.stream_id, body, end_stream=True)
            writer.write(conn.data_to_send())
            await writer.drain()

    async def _serve_http11(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while head := await reader.readuntil(b"\r\n\r\n"):
            path = head.split(b" ", 2)[1].decode()
            self.seen.append(("http/1.1", path))
            status, body = self._answer(path)
            writer.write(
                f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body
            )
            await writer.drain()


@pytest.fixture
def certificates(tmp_path: Path) -> tuple[Path, Path, Path]:
    return _certificates(tmp_path)


def _fetch(make_runtime, tmp_path: Path, server: TLSServer, ca: Path):
    hosts = tmp_path / "tls-hosts"
    hosts.write_text(f"127.0.0.1:{server.port} {HOST}\n")
    runtime = make_runtime(hosts=str(hosts), ca_bundle=str(ca))

    async def go():
        async with runtime.fetcher() as fetcher:
            return await fetcher.fetch(f"https://{HOST}/page")

    return asyncio.run(go())


@pytest.fixture
def h2_server(certificates) -> Iterator[TLSServer]:
    _, cert, key = certificates
    with TLSServer(cert, key, ["h2", "http/1.1"]) as server:
        yield server


def test_https_uses_http2_when_the_server_offers_it(
    make_runtime, tmp_path: Path, certificates, h2_server: TLSServer
) -> None:
    fetched = _fetch(make_runtime, tmp_path, h2_server, certificates[0])
    assert (fetched.status, fetched.body) == (200, BODY)
    assert h2_server.seen == [("h2", "/robots.txt"), ("h2", "/page")]


def test_https_falls_back_to_http11_when_the_server_speaks_only_that(
    make_runtime, tmp_path: Path, certificates
) -> None:
    _, cert, key = certificates
    with TLSServer(cert, key, ["http/1.1"]) as server:
        fetched = _fetch(make_runtime, tmp_path, server, certificates[0])
    assert (fetched.status, fetched.body) == (200, BODY)
    assert server.seen == [("http/1.1", "/robots.txt"), ("http/1.1", "/page")]


def test_a_certificate_from_an_unknown_authority_is_refused(
    make_runtime, tmp_path: Path, h2_server: TLSServer
) -> None:
    (tmp_path / "other").mkdir()
    other_ca, _, _ = _certificates(tmp_path / "other")
    fetched = _fetch(make_runtime, tmp_path, h2_server, other_ca)
    # Even robots.txt cannot be read over an untrusted connection: the fetch is postponed.
    assert fetched.skipped_reason == "robots_unavailable"
    assert fetched.status is None and fetched.body == b""
    assert h2_server.seen == []
