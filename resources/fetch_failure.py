"""One failed request of a fetch, and the table from transport errors to failure classes.

A `FetchFailure` carries exactly one failure class, the status when there was one, whether
another try within the run may help (`transient`) and whether the request failed before a
byte of it was sent (`unsent`: the only failure after which a POST may be sent again).

What httpx raises while connecting, sending or reading becomes a `FetchFailure` through
one table, `TRANSPORT_FAILURES`, read top to bottom: the first row whose exception type
matches decides (httpx's own transports map httpcore's exceptions the same way). The
resolver's own errors travel inside httpx's `ConnectError`; the one behind it is matched
first, so a refused address is `BLOCKED_DESTINATION` and an unknown name `DNS`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from catlas_assets.domain.vocabulary import FailureClass
from resources.resolver import ResolutionError, UnsafeDestination


class FetchFailure(Exception):
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


@dataclass(frozen=True)
class TransportFailure:
    """How one kind of transport error fails a request.

    `detail` is formatted with `url`, `exc` (the error's text) and `name` (its type's name).
    """

    failure_class: FailureClass
    detail: str
    transient: bool = False
    unsent: bool = False


TRANSPORT_FAILURES: tuple[tuple[type[BaseException], TransportFailure], ...] = (
    # The resolver refused every address, or the name does not resolve: nothing was sent.
    (UnsafeDestination, TransportFailure(FailureClass.BLOCKED_DESTINATION, "{exc}", unsent=True)),
    (ResolutionError, TransportFailure(FailureClass.DNS, "{exc}", unsent=True)),
    # No connection yet, so nothing of the request was sent.
    (
        httpx.ConnectError,
        TransportFailure(
            FailureClass.UNKNOWN, "cannot connect to {url}: {exc}", transient=True, unsent=True
        ),
    ),
    (
        httpx.ConnectTimeout,
        TransportFailure(FailureClass.TIMEOUT, "{name} at {url}", transient=True, unsent=True),
    ),
    (
        httpx.PoolTimeout,
        TransportFailure(FailureClass.TIMEOUT, "{name} at {url}", transient=True, unsent=True),
    ),
    # A read or write timeout: the server may have the request.
    (
        httpx.TimeoutException,
        TransportFailure(FailureClass.TIMEOUT, "{name} at {url}", transient=True),
    ),
    # A reset, a truncated answer or bytes that are not HTTP (invalid header bytes).
    *(
        (
            kind,
            TransportFailure(
                FailureClass.UNKNOWN, "connection broken at {url}: {exc}", transient=True
            ),
        )
        for kind in (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
    ),
    (
        httpx.UnsupportedProtocol,
        TransportFailure(
            FailureClass.BLOCKED_DESTINATION, "only http and https are fetched: {url}"
        ),
    ),
    (httpx.InvalidURL, TransportFailure(FailureClass.UNKNOWN, "malformed URL {url!r}: {exc}")),
    (httpx.HTTPError, TransportFailure(FailureClass.UNKNOWN, "{name} at {url}: {exc}")),
)
# What a request catches: every error httpx raises (the resolver's arrive inside them).
TRANSPORT_ERRORS = (httpx.HTTPError, httpx.InvalidURL)


def transport_failure(exc: BaseException, url: str) -> FetchFailure:
    """The failure a transport error means for a request to `url` (first matching row)."""
    cause = resolver_cause(exc) if isinstance(exc, httpx.ConnectError) else None
    error = cause or exc
    failure = next((f for kind, f in TRANSPORT_FAILURES if isinstance(error, kind)), None)
    if failure is None:
        raise TypeError(f"not a transport error: {type(exc).__name__}") from exc
    detail = failure.detail.format(url=url, exc=error, name=type(error).__name__)
    return FetchFailure(
        failure.failure_class, detail, transient=failure.transient, unsent=failure.unsent
    )


def resolver_cause(exc: BaseException) -> BaseException | None:
    """The resolver's own error behind httpx's and httpcore's wrappers, if it is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ResolutionError | UnsafeDestination):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
