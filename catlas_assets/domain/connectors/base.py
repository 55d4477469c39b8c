"""What every connector offers, and the helpers they share (pure: no I/O, no clock)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from catlas_assets.domain.connectors.board_links import BoardLinks
from catlas_assets.domain.extract.extraction import Extraction, SchemaError

# Several pages of one paginated answer are archived as one object: this prefix, then a
# JSON list of {"url", "body"} (plus "method" and "json_body" for a page asked by POST);
# reprocessing splits it back into the pages.
BUNDLE_MAGIC = b"catlas-pages/1\n"
MAX_PAGES = 50
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Request:
    """One request a connector asks for: a GET, or a POST with a JSON body (Workday)."""

    url: str
    method: str = "GET"
    json_body: Any = None


@dataclass(frozen=True)
class Page:
    url: str
    body: bytes
    content_type: str = ""
    method: str = "GET"
    json_body: Any = None  # what a POST sent: the next page's request depends on it


class Connector:
    """A source shape. Subclasses set `name`/`kind` and implement `parse`."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""  # ats | status | feed | sitemap | html
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    # An ATS vendor's board URLs and verification (discovery); None for other sources.
    board_links: ClassVar[BoardLinks | None] = None

    def first_url(self, url: str) -> str:
        """The URL of the first request for a sensor URL (pagination parameters added)."""
        return url

    def next_url(self, page: Page, index: int) -> str | None:
        """The next page's URL after `page` (the index-th, from 0), or None when done."""
        return None

    def first_request(self, url: str) -> Request:
        """The first request for a sensor URL; a GET of `first_url` unless overridden."""
        return Request(self.first_url(url))

    def next_request(self, page: Page, index: int) -> Request | None:
        """The request for the page after `page`; a GET of `next_url` unless overridden."""
        url = self.next_url(page, index)
        return None if url is None else Request(url)

    @classmethod
    def paginates(cls) -> bool:
        return cls.next_url is not Connector.next_url or (
            cls.next_request is not Connector.next_request
        )

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        raise NotImplementedError


def bundle(pages: list[Page]) -> bytes:
    """The bytes archived for a fetch: the body itself, or a bundle of several pages."""
    if len(pages) == 1:
        return pages[0].body
    items: list[dict[str, Any]] = []
    for p in pages:
        item: dict[str, Any] = {"url": p.url, "body": p.body.decode("utf-8", errors="replace")}
        if p.method != "GET":
            item.update(method=p.method, json_body=p.json_body)
        items.append(item)
    return BUNDLE_MAGIC + json.dumps(items, ensure_ascii=False).encode()


def unbundle(body: bytes, url: str, content_type: str) -> list[Page]:
    if not body.startswith(BUNDLE_MAGIC):
        return [Page(url, body, content_type)]
    items = json.loads(body[len(BUNDLE_MAGIC) :])
    return [
        Page(
            i["url"],
            i["body"].encode(),
            content_type,
            i.get("method", "GET"),
            i.get("json_body"),
        )
        for i in items
    ]


def load_json(page: Page, vendor: str) -> Any:
    try:
        return json.loads(page.body.decode("utf-8", errors="strict"))
    except (ValueError, UnicodeDecodeError):
        raise SchemaError(f"{vendor}: the answer from {page.url} is not JSON") from None


def require(condition: bool, vendor: str, what: str) -> None:
    if not condition:
        raise SchemaError(f"{vendor}: response does not have the vendor's shape ({what})")


def records(
    pages: list[Page], vendor: str, key: str, item: str, *fields: str
) -> Iterator[dict[str, Any]]:
    """Every record of the envelopes ``{key: [...]}`` across pages, each holding ``fields``;
    any other shape is a SCHEMA failure, never an empty board."""
    for page in pages:
        data = load_json(page, vendor)
        require(isinstance(data, dict) and isinstance(data.get(key), list), vendor, f"{key} list")
        for record in data[key]:
            require(
                isinstance(record, dict) and all(name in record for name in fields),
                vendor,
                f"{item} {'/'.join(fields)}",
            )
            yield record


def text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("label") or value.get("name") or value.get("descriptor")
    if value is None:
        return None
    cleaned = _SPACE.sub(" ", str(value)).strip()
    return cleaned or None


def html_to_text(fragment: str | None) -> str:
    """Plain text of an HTML fragment that may itself be entity-escaped (Greenhouse)."""
    if not fragment:
        return ""
    unescaped = html.unescape(fragment)
    if "&lt;" in fragment or "&gt;" in fragment:
        unescaped = html.unescape(_TAGS.sub(" ", unescaped))
    return _SPACE.sub(" ", html.unescape(_TAGS.sub(" ", unescaped))).strip()


def iso_from_ms(value: Any) -> str | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        moment = datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None  # 1e20 ms or NaN: no date (the platform's time_t says "too large")
    return moment.isoformat().replace("+00:00", "Z")


def with_query(url: str, **params: object) -> str:
    """The URL with these query parameters set (others kept), parameters sorted."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update({k: str(v) for k, v in params.items()})
    return urlunsplit(parts._replace(query=urlencode(sorted(query.items()))))


def query_int(url: str, name: str, default: int) -> int:
    for key, value in parse_qsl(urlsplit(url).query):
        if key == name:
            try:
                return int(value)
            except ValueError:
                return default
    return default


def number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def ats_extraction(name: str, surface: str) -> Extraction:
    return Extraction(connector=name, surface=surface, confidence=1.0, structured=True)
