"""What every connector offers, and the helpers they share (pure: no I/O, no clock)."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from catlas_assets.domain.extract.models import Extraction, SchemaError

# Several pages of one paginated answer are archived as one object: this prefix, then a
# JSON list of {"url", "body"}; reprocessing splits it back into the pages.
BUNDLE_MAGIC = b"catlas-pages/1\n"
MAX_PAGES = 50
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Page:
    url: str
    body: bytes
    content_type: str = ""


class Connector:
    """A source shape. Subclasses set `name`/`kind` and implement `parse`."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""  # ats | status | feed | sitemap | html
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""

    def first_url(self, url: str) -> str:
        """The URL of the first request for a sensor URL (pagination parameters added)."""
        return url

    def next_url(self, page: Page, index: int) -> str | None:
        """The next page's URL after `page` (the index-th, from 0), or None when done."""
        return None

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        raise NotImplementedError


def bundle(pages: list[Page]) -> bytes:
    """The bytes archived for a fetch: the body itself, or a bundle of several pages."""
    if len(pages) == 1:
        return pages[0].body
    items = [{"url": p.url, "body": p.body.decode("utf-8", errors="replace")} for p in pages]
    return BUNDLE_MAGIC + json.dumps(items, ensure_ascii=False).encode()


def unbundle(body: bytes, url: str, content_type: str) -> list[Page]:
    if not body.startswith(BUNDLE_MAGIC):
        return [Page(url, body, content_type)]
    items = json.loads(body[len(BUNDLE_MAGIC) :])
    return [Page(i["url"], i["body"].encode(), content_type) for i in items]


def load_json(page: Page, vendor: str) -> Any:
    try:
        return json.loads(page.body.decode("utf-8", errors="strict"))
    except (ValueError, UnicodeDecodeError):
        raise SchemaError(f"{vendor}: the answer from {page.url} is not JSON") from None


def require(condition: bool, vendor: str, what: str) -> None:
    if not condition:
        raise SchemaError(f"{vendor}: response does not have the vendor's shape ({what})")


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
    return datetime.fromtimestamp(value / 1000, UTC).isoformat().replace("+00:00", "Z")


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
