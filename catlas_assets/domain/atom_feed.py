"""An Atom 1.0 feed (RFC 4287) of changes, one entry per change, with stable ids. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from xml.etree import ElementTree as ET

ATOM_NS = "http://www.w3.org/2005/Atom"


def entry_id(change_id: str) -> str:
    """The same change has the same id in every feed and every refresh."""
    return f"urn:catlas:change:{change_id}"


def _when(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
    if text is not None:
        element.text = text
    return element


def build(
    changes: Sequence[Mapping[str, Any]], *, feed_id: str, title: str, updated: datetime
) -> bytes:
    """Entries newest first. Each change needs change_id, company_name, surface, kind,
    summary, detected_at, url; diff_url (optional) becomes a `related` link."""
    ET.register_namespace("", ATOM_NS)
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    _sub(feed, "id", feed_id)
    _sub(feed, "title", title)
    newest = max((c["detected_at"] for c in changes), default=updated)
    _sub(feed, "updated", _when(newest))
    author = _sub(feed, "author")
    _sub(author, "name", "catlas")
    _sub(feed, "generator", "catlas")
    for change in sorted(changes, key=lambda c: (c["detected_at"], c["change_id"]), reverse=True):
        entry = _sub(feed, "entry")
        _sub(entry, "id", entry_id(change["change_id"]))
        _sub(
            entry,
            "title",
            f"[{change['kind']}] {change['company_name']} · {change['surface']}: "
            f"{change['summary']}",
        )
        _sub(entry, "updated", _when(change["detected_at"]))
        _sub(entry, "published", _when(change["detected_at"]))
        if change.get("url"):
            _sub(entry, "link", href=str(change["url"]), rel="alternate")
        if change.get("diff_url"):
            _sub(entry, "link", href=str(change["diff_url"]), rel="related", type="text/html")
        _sub(entry, "category", term=str(change["kind"]), label="kind")
        _sub(entry, "category", term=str(change["surface"]), label="surface")
        _sub(entry, "summary", str(change["summary"]))
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True)
