"""https requests over httpcore's pool, which offers HTTP/2 and HTTP/1.1 by ALPN and speaks
what the server chose, answered as an `Answer`.

The fetcher sends an https origin's first request here (`resources/fetcher.py::_Transport`):
an origin that negotiated h2 stays (one multiplexed connection, so the pool's scan of its
connections costs nothing), one that chose HTTP/1.1 moves to `resources/h1_transport.py`.
httpcore and its async backend (anyio) are imported with this module, so a command that
asks only plain-http URLs never loads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from resources.answer import Answer, header_dict
from resources.request_url import RequestURL
from resources.resolver import ResolutionError, Resolver, UnsafeDestination


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


class NegotiatedTransport:
    """https with the version TLS negotiates: a request's parts in, an `Answer` out."""

    def __init__(
        self, resolver: Resolver, limits: httpx.Limits, timeouts: httpx.Timeout, ca_bundle: str
    ) -> None:
        # The system's trust store, or a PEM bundle (a private CA, the TLS test server).
        ssl_context = httpx.create_ssl_context(verify=ca_bundle or True)
        self._timeouts = timeouts.as_dict()
        self._transport = httpx.AsyncHTTPTransport(limits=limits, verify=ssl_context)
        self._transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_ResolvingBackend(resolver),
            http1=True,
            http2=True,
        )

    async def send(
        self, method: str, url: RequestURL, headers: dict[str, str], content: bytes | None
    ) -> Answer:
        request = httpx.Request(
            method,
            url.text,
            # As the HTTP/1.1 transport sends them: a validator a site sent in UTF-8 goes
            # back unchanged.
            headers=[(k.encode(), v.encode()) for k, v in headers.items()],
            content=content,
            extensions={"timeout": self._timeouts},
        )
        response = await self._transport.handle_async_request(request)
        version = response.extensions.get("http_version", b"HTTP/1.1")
        return Answer(
            response.status_code,
            header_dict(response.headers.raw),
            aiter(response.stream),
            response.aclose,
            version.decode("ascii"),
        )

    async def aclose(self) -> None:
        await self._transport.aclose()
