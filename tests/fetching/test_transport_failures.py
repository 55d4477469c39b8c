"""Every transport error maps to one failure class through one table (no server needed:
the exceptions are httpx's own, built as httpx raises them)."""

from __future__ import annotations

import httpx
import pytest

from catlas_assets.domain.vocabulary import FailureClass
from resources.fetch_failure import TRANSPORT_FAILURES, transport_failure
from resources.resolver import ResolutionError, UnsafeDestination

URL = "https://example.com/page"


def _wrapped(cause: Exception) -> httpx.ConnectError:
    """A ConnectError with the resolver's error behind it, as the fetcher's backend raises."""
    try:
        try:
            raise cause
        except Exception as inner:
            raise httpx.ConnectError(str(inner)) from inner
    except httpx.ConnectError as outer:
        return outer


@pytest.mark.parametrize(
    ("error", "failure_class", "transient", "unsent"),
    [
        (_wrapped(UnsafeDestination("10.0.0.1 is private")), FailureClass.BLOCKED_DESTINATION,
         False, True),
        (_wrapped(ResolutionError("no such host")), FailureClass.DNS, False, True),
        (httpx.ConnectError("refused"), FailureClass.UNKNOWN, True, True),
        (httpx.ConnectTimeout("slow"), FailureClass.TIMEOUT, True, True),
        (httpx.PoolTimeout("busy"), FailureClass.TIMEOUT, True, True),
        (httpx.ReadTimeout("slow"), FailureClass.TIMEOUT, True, False),
        (httpx.WriteTimeout("slow"), FailureClass.TIMEOUT, True, False),
        (httpx.RemoteProtocolError("reset"), FailureClass.UNKNOWN, True, False),
        (httpx.ReadError("reset"), FailureClass.UNKNOWN, True, False),
        (httpx.WriteError("reset"), FailureClass.UNKNOWN, True, False),
        (httpx.UnsupportedProtocol("ftp"), FailureClass.BLOCKED_DESTINATION, False, False),
        (httpx.InvalidURL("bad"), FailureClass.UNKNOWN, False, False),
        (httpx.DecodingError("bad"), FailureClass.UNKNOWN, False, False),
    ],
)  # fmt: skip
def test_each_transport_error_has_one_failure_class_and_retry_behaviour(
    error: Exception, failure_class: FailureClass, transient: bool, unsent: bool
) -> None:
    failure = transport_failure(error, URL)
    assert (failure.failure_class, failure.transient, failure.unsent) == (
        failure_class,
        transient,
        unsent,
    )
    assert failure.status is None


def test_details_name_the_url_and_the_error() -> None:
    assert str(transport_failure(httpx.ReadTimeout("x"), URL)) == f"ReadTimeout at {URL}"
    assert str(transport_failure(httpx.ConnectError("refused"), URL)) == (
        f"cannot connect to {URL}: refused"
    )
    assert str(transport_failure(_wrapped(ResolutionError("no such host")), URL)) == (
        "no such host"
    )


def test_the_more_specific_rows_come_before_the_ones_they_specialise() -> None:
    kinds = [kind for kind, _ in TRANSPORT_FAILURES]
    for i, kind in enumerate(kinds):
        for later in kinds[i + 1 :]:
            assert not issubclass(later, kind) or later is kind, (later, kind)
