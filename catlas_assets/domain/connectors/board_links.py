"""How an ATS connector tells discovery where its vendor's boards are and how to verify one.

Each ATS connector declares one `BoardLinks` beside its parser, so everything catlas knows
of a vendor (the URL shapes that carry a board token, the endpoint a sensor watches, the
answer that endpoint gives) lives in that vendor's module; `domain/ats.py` only asks each
connector in turn. The endpoint keeps the scheme of the link the site gave (sites link their
vendors over https; the fixture web speaks plain http).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

# A board token as vendors spell them in their URLs.
TOKEN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


@dataclass(frozen=True)
class BoardLinks:
    """One vendor's board URLs (matched over "host/path?query", lowercase host) and check."""

    patterns: tuple[re.Pattern[str], ...]
    api: Callable[[str, dict[str, str]], str]  # scheme, match groups -> the watched endpoint
    verify: Callable[[bytes], bool]  # the verification answer has the vendor's shape
    # scheme, groups -> the URL verified instead of the endpoint (None: the endpoint itself)
    verify_page: Callable[[str, dict[str, str]], str] | None = None
    reserved_tokens: frozenset[str] = frozenset()  # host labels that are the vendor's own
    token_param: str = ""  # a query parameter that, when present, names the token (embeds)
    # Asset hosts of the vendor's career-site product: a page that loads from one is that
    # vendor's board on the company's own host, whose endpoint `site_api` names (origin ->).
    site_markers: tuple[str, ...] = ()
    site_api: Callable[[str], str] | None = None


def patterns(*expressions: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(e) for e in expressions)


def json_of(body: bytes) -> Any:
    """The body as JSON, or None when it is not JSON."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def has_envelope(body: bytes, key: str) -> bool:
    """A JSON object whose `key` holds a list (`{"jobs": [...]}`)."""
    data = json_of(body)
    return isinstance(data, dict) and isinstance(data.get(key), list)


def xml_root(body: bytes) -> str:
    """The local name of the XML root element, or "" when the body is not safe XML."""
    try:
        root = SafeET.fromstring(body, forbid_dtd=True)
    except (SafeET.ParseError, DefusedXmlException, ValueError):
        return ""
    return root.tag.rsplit("}", 1)[-1]
