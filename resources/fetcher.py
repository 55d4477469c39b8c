"""The HTTP fetcher: one pooled httpx.AsyncClient per worker, politely bounded.

Conditional GET with the sensor's validators, redirects followed by hand (every hop is
resolved and checked), a byte cap on the streamed body, connect/read/total timeouts and
in-run retries of transient failures. Every outcome is a `Fetched`; a failure carries
exactly one failure class.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from catlas_assets.domain.failures import RETRYABLE_STATUSES, classify_status
from catlas_assets.domain.models import Fetched
from catlas_assets.domain.vocabulary import FailureClass
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


class _Transport(httpx.AsyncHTTPTransport):
    def __init__(self, resolver: Resolver, limits: httpx.Limits) -> None:
        super().__init__(limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_ResolvingBackend(resolver),
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


class _Failure(Exception):
    def __init__(
        self,
        failure_class: FailureClass,
        detail: str,
        status: int | None = None,
        *,
        transient: bool = False,
    ) -> None:
        super().__init__(detail)
        self.failure_class = failure_class
        self.status = status
        self.transient = transient  # worth another try within this run


class Fetcher:
    def __init__(self, config: FetchConfig, resolver: Resolver) -> None:
        self.config = config
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
        )
        self._client = httpx.AsyncClient(
            transport=_Transport(resolver, limits),
            timeout=httpx.Timeout(
                config.read_timeout_s, connect=config.connect_timeout_s, pool=config.total_timeout_s
            ),
            headers={"User-Agent": config.user_agent},
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def fetch(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None
    ) -> Fetched:
        conditional = etag is not None or last_modified is not None
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        started = time.monotonic()
        state = _Attempts()
        try:
            async with asyncio.timeout(self.config.total_timeout_s):
                status, final_url, response_headers, body = await self._follow(url, headers, state)
        except _Failure as failure:
            return Fetched(
                url=url,
                final_url=state.final_url or url,
                status=failure.status,
                headers={},
                body=b"",
                elapsed_ms=_ms(started),
                requests=state.requests,
                failure_class=failure.failure_class,
                failure_detail=str(failure),
                conditional=conditional,
            )
        except TimeoutError:
            return Fetched(
                url=url,
                final_url=state.final_url or url,
                status=None,
                headers={},
                body=b"",
                elapsed_ms=_ms(started),
                requests=state.requests,
                failure_class=FailureClass.TIMEOUT,
                failure_detail=f"no complete answer within {self.config.total_timeout_s:g} s",
                conditional=conditional,
            )
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

    async def _follow(
        self, url: str, headers: dict[str, str], state: _Attempts
    ) -> tuple[int, str, dict[str, str], bytes]:
        seen = {url}
        current = url
        for _hop in range(self.config.max_redirects + 1):
            state.final_url = current
            status, response_headers, body = await self._with_retries(current, headers, state)
            if status in (301, 302, 303, 307, 308) and "location" in response_headers:
                target = urljoin(current, response_headers["location"])
                if urlsplit(target).scheme not in ("http", "https"):
                    raise _Failure(
                        FailureClass.BLOCKED_DESTINATION,
                        f"redirect to a non-http URL {target!r}",
                        status,
                    )
                if target in seen:
                    raise _Failure(FailureClass.REDIRECT, f"redirect loop at {target}", status)
                seen.add(target)
                current = target
                continue
            if status == 304:
                return status, current, response_headers, b""
            failure = classify_status(status, response_headers, body)
            if failure is not None:
                raise _Failure(failure, f"HTTP {status} from {current}", status)
            return status, current, response_headers, body
        raise _Failure(FailureClass.REDIRECT, f"more than {self.config.max_redirects} redirects")

    async def _with_retries(
        self, url: str, headers: dict[str, str], state: _Attempts
    ) -> tuple[int, dict[str, str], bytes]:
        attempt = 0
        while True:
            try:
                status, response_headers, body = await self._once(url, headers, state)
            except _Failure as failure:
                if (
                    failure.failure_class is not FailureClass.TIMEOUT
                    or attempt >= self.config.retries
                ):
                    raise
            else:
                if status not in RETRYABLE_STATUSES or attempt >= self.config.retries:
                    return status, response_headers, body
            attempt += 1
            await asyncio.sleep(self.config.retry_backoff_s * 2 ** (attempt - 1))

    async def _once(
        self, url: str, headers: dict[str, str], state: _Attempts
    ) -> tuple[int, dict[str, str], bytes]:
        state.requests += 1
        try:
            async with self._client.stream("GET", url, headers=headers) as response:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if (
                        size > self.config.max_bytes
                        or response.num_bytes_downloaded > self.config.max_bytes
                    ):
                        raise _Failure(
                            FailureClass.TOO_LARGE,
                            f"body over {self.config.max_bytes} bytes at {url}",
                            response.status_code,
                        )
                    chunks.append(chunk)
                response_headers = {k.lower(): v for k, v in response.headers.items()}
                return response.status_code, response_headers, b"".join(chunks)
        except httpx.ConnectError as exc:
            cause = exc.__cause__.__cause__ if exc.__cause__ else None
            if isinstance(cause, UnsafeDestination):
                raise _Failure(FailureClass.BLOCKED_DESTINATION, str(cause)) from None
            if isinstance(cause, ResolutionError):
                raise _Failure(FailureClass.DNS, str(cause)) from None
            raise _Failure(
                FailureClass.UNKNOWN, f"cannot connect to {url}: {exc}", transient=True
            ) from None
        except httpx.TimeoutException as exc:
            raise _Failure(
                FailureClass.TIMEOUT, f"{type(exc).__name__} at {url}", transient=True
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise _Failure(
                FailureClass.UNKNOWN, f"connection broken at {url}: {exc}", transient=True
            ) from None
        except httpx.DecodingError as exc:
            raise _Failure(FailureClass.PARSING, f"undecodable body at {url}: {exc}") from None
        except httpx.HTTPError as exc:
            raise _Failure(FailureClass.UNKNOWN, f"{type(exc).__name__} at {url}: {exc}") from None


@dataclass
class _Attempts:
    requests: int = 0
    final_url: str = ""


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
