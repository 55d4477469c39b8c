"""Fetching a sensor through its connector: the connector's request, then its further pages.

A paginated vendor (Lever skip/limit, SmartRecruiters offset/limit, Workday offset/limit 20
in POST bodies) answers in pages; every page goes through the same fetcher (robots.txt,
politeness and budgets apply to each request, a POST included), and the pages are archived
together as one object (`connectors.base.bundle`, which keeps each POST's body) so that
reprocessing sees exactly what was fetched.
"""

from __future__ import annotations

from dataclasses import replace

from catlas_assets.domain.connectors import registry
from catlas_assets.domain.connectors.base import MAX_PAGES, Connector, Page, Request, bundle
from catlas_assets.domain.extract.extraction import DATA_ERRORS, SchemaError
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.errors import CatlasError
from resources.fetcher import Fetcher


def paginates(connector: Connector) -> bool:
    return connector.paginates()


async def _send(
    fetcher: Fetcher, request: Request, domain: str, **validators: str | None
) -> Fetched:
    """Send one request of the sensor; `domain` is its URL's registrable domain ("": unknown)."""
    if request.method == "GET":
        return await fetcher.fetch(request.url, domain=domain or None, **validators)
    # A POST never carries validators (the fetcher would drop them anyway).
    return await fetcher.fetch(
        request.url, method=request.method, json_body=request.json_body, domain=domain or None
    )


async def fetch_for_sensor(fetcher: Fetcher, sensor: SensorState, *, full: bool) -> Fetched:
    try:
        connector = registry.get(sensor.connector)
    except CatlasError:
        connector = registry.get("generic_html")  # observe reports the unknown name as SCHEMA
    # Validators only for one-page answers: a 304 on page 1 says nothing about page 2.
    conditional = not full and not paginates(connector)
    first_request = connector.first_request(sensor.url)
    # The connector's first request stays on the sensor URL's host: its domain is known.
    first = await _send(
        fetcher,
        first_request,
        sensor.domain,
        etag=sensor.etag if conditional else None,
        last_modified=sensor.last_modified if conditional else None,
    )
    if first.failure_class is not None or first.not_modified or first.skipped_reason:
        return first
    if not paginates(connector):
        return first
    pages = [_page(first, first_request)]
    pages_domain = first.final_domain
    requests = first.requests
    elapsed = first.elapsed_ms
    for index in range(MAX_PAGES - 1):
        try:
            next_request = connector.next_request(pages[-1], index)
        except (SchemaError, *DATA_ERRORS):
            next_request = None  # parse() will report the shape problem with the full answer
        if next_request is None:
            break
        # The next page is asked where the last one answered: its domain is known too.
        more = await _send(fetcher, next_request, pages_domain)
        requests += more.requests
        elapsed += more.elapsed_ms
        if more.failure_class is not None or more.skipped_reason:
            return replace(more, requests=requests, elapsed_ms=elapsed)
        pages.append(_page(more, next_request))
        pages_domain = more.final_domain
    return replace(first, body=bundle(pages), requests=requests, elapsed_ms=elapsed)


def _page(fetched: Fetched, request: Request) -> Page:
    """The page fetched for `request`, with what was asked (the next request builds on it)."""
    return Page(
        fetched.final_url, fetched.body, fetched.content_type, request.method, request.json_body
    )
