"""Links resolved against their page, remembered per site (pure).

A site repeats its menu and footer links on every page; a path from the root ("/jobs/1")
resolves against the page's scheme and host alone, so its answer is kept per origin and a
site's pages pay for each such link once.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

# A second character that makes "/..." a network path ("//host"; urlsplit drops tabs and
# newlines first, so "/\t/host" is one too): its empty host would keep the base's path.
_NOT_SECOND = ("/", "\t", "\r", "\n")


def root_path(href: str) -> bool:
    """`href` is a path from the root, which no part of a base but its origin changes."""
    return href[:1] == "/" and href[1:2] not in _NOT_SECOND


# A path from the root in plain segments ("/jobs/data-engineer-12/"): no dot or empty
# segment, no query, fragment or parameters, nothing urlsplit strips. urljoin keeps such a
# path as written, so joined to an http(s) origin it is the two side by side.
_PLAIN_PATH = re.compile(r"(?:/[\w~%!$&'()*+,=@-][\w.~%!$&'()*+,=@-]*)+/?|/", re.ASCII)


def plain_path(origin: str, href: str) -> bool:
    """`urljoin(origin, href) == origin + href` for this `site_origin` and root path, known
    without parsing either (most links of a page are such paths)."""
    return origin.startswith(("http://", "https://")) and _PLAIN_PATH.fullmatch(href) is not None


@lru_cache(maxsize=512)
def site_origin(base: str) -> str:
    """`scheme://host` of an absolute base URL; "" for any other (resolved the long way)."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


@lru_cache(maxsize=8192)
def _join_root_path(origin: str, href: str) -> str:
    return urljoin(origin, href)


def plain_link(base: str, href: str) -> str | None:
    """`resolve(base, href)` when that is the page's origin and `href` side by side (a
    plain root path, see `plain_path`); None for any other link."""
    if base and root_path(href):
        origin = site_origin(base)
        if origin and plain_path(origin, href):
            return origin + href
    return None


def resolve(base: str, href: str) -> str:
    """`urljoin(base, href)`, the same answer (and the same ValueError)."""
    if base and root_path(href):
        origin = site_origin(base)
        if origin:
            return origin + href if plain_path(origin, href) else _join_root_path(origin, href)
    return urljoin(base, href)
