"""What extraction produces: typed entities per surface, with a confidence.

An `Extraction` holds entities by type (job, person, product, pricing_plan, news,
location, incident) plus the status of a status page. Every entity is a plain dict with a
stable `key` (the identity reconciliation uses) and its attributes. Serialization is
canonical (entities sorted by key, JSON with sorted keys), so the same bytes processed by
the same `extractor_version` always give byte-identical extraction JSON.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from catlas_assets.errors import CatlasError

# Bumped whenever any connector or extractor changes what it emits for the same bytes.
# extract-2: the simhash of the text is fingerprint version 2 (domain/fingerprint.py).
EXTRACTOR_VERSION = "extract-2"

ENTITY_TYPES = ("job", "person", "product", "pricing_plan", "news", "location", "incident")

JOB_FIELDS = (
    "title",
    "department",
    "team",
    "locations",
    "remote",
    "workplace_type",
    "employment_type",
    "url",
    "posted_at",
    "updated_at",
    "requisition_id",
    "compensation",
)


class SchemaError(CatlasError):
    """A response that does not have the vendor's shape (failure class SCHEMA)."""


class ParseError(CatlasError):
    """A response body that cannot be read at all (failure class PARSING)."""


# What parsing hostile data raises when a value has the wrong type, size or encoding: each
# is turned into the project's own error (ParseError or SchemaError) where it is raised.
DATA_ERRORS = (
    TypeError,
    ValueError,  # UnicodeError, json.JSONDecodeError
    LookupError,  # KeyError, IndexError, unknown codecs
    AttributeError,
    ArithmeticError,  # OverflowError (a timestamp of 1e20), ZeroDivisionError
    RecursionError,
)


def name_norm(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form of a name, used as an identity."""
    folded = unicodedata.normalize("NFKD", text or "")
    folded = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", " ", folded).strip()


def fingerprint(*parts: object) -> str:
    text = "\x1f".join(name_norm(str(p)) if p is not None else "" for p in parts)
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:16]


def job(
    *,
    vendor: str,
    vendor_id: object | None,
    title: str,
    department: str | None = None,
    team: str | None = None,
    locations: list[str] | None = None,
    remote: bool | None = None,
    workplace_type: str | None = None,
    employment_type: str | None = None,
    url: str | None = None,
    posted_at: str | None = None,
    updated_at: str | None = None,
    requisition_id: str | None = None,
    compensation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One job in the common job schema; the key is the vendor id, else title + locations."""
    locs = sorted({loc.strip() for loc in (locations or []) if loc and loc.strip()})
    if vendor_id not in (None, ""):
        key = f"{vendor}:{vendor_id}"
    else:
        key = f"{vendor}:{fingerprint(title, *locs)}"
    return {
        "key": key,
        "title": (title or "").strip(),
        "department": department or None,
        "team": team or None,
        "locations": locs,
        "remote": remote,
        "workplace_type": workplace_type or None,
        "employment_type": employment_type or None,
        "url": url or None,
        "posted_at": posted_at or None,
        "updated_at": updated_at or None,
        "requisition_id": str(requisition_id) if requisition_id not in (None, "") else None,
        "compensation": compensation or None,
    }


def compensation(
    minimum: float | None, maximum: float | None, currency: str | None, interval: str | None
) -> dict[str, Any] | None:
    if minimum is None and maximum is None:
        return None
    return {"min": minimum, "max": maximum, "currency": currency, "interval": interval}


@dataclass
class Extraction:
    """The typed content of one response.

    `structured` is True when the entities come from a structured answer (an ATS or
    Statuspage API, a feed): such an answer is trusted even when it lists nothing.
    """

    connector: str
    surface: str
    entities: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    status: dict[str, Any] | None = None
    page: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    structured: bool = False
    extractor_version: str = EXTRACTOR_VERSION

    def add(self, entity_type: str, item: dict[str, Any]) -> None:
        self.entities.setdefault(entity_type, []).append(item)

    def count(self) -> int:
        return sum(len(items) for items in self.entities.values())

    def canonical(self) -> Extraction:
        """Entities sorted and de-duplicated by key, so order on the page is not content."""
        entities: dict[str, list[dict[str, Any]]] = {}
        for entity_type in sorted(self.entities):
            by_key: dict[str, dict[str, Any]] = {}
            for item in self.entities[entity_type]:
                by_key.setdefault(item["key"], item)
            entities[entity_type] = [by_key[k] for k in sorted(by_key)]
        return Extraction(
            self.connector,
            self.surface,
            entities,
            self.status,
            dict(self.page),
            round(self.confidence, 4),
            self.structured,
            self.extractor_version,
        )

    def to_dict(self) -> dict[str, Any]:
        c = self.canonical()
        return {
            "connector": c.connector,
            "surface": c.surface,
            "extractor_version": c.extractor_version,
            "confidence": c.confidence,
            "structured": c.structured,
            "status": c.status,
            "page": c.page,
            "entities": c.entities,
        }

    def to_json(self) -> bytes:
        """The full extraction, canonical bytes (archived as an object)."""
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False).encode()

    def content_hash(self) -> str:
        """The structured hash: entities and status only (confidence and page facts aside)."""
        c = self.canonical()
        content = {"entities": c.entities, "status": c.status}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    def summary(self) -> dict[str, Any]:
        counts = {t: len(items) for t, items in sorted(self.entities.items())}
        out: dict[str, Any] = {"entities": self.count(), **counts}
        if self.status is not None:
            out["status_indicator"] = self.status.get("indicator")
            out["components"] = len(self.status.get("components", []))
        out["confidence"] = round(self.confidence, 4)
        return out

    def structured_payload(self, max_items: int = 300, max_bytes: int = 900_000) -> dict[str, Any]:
        """The bounded copy for `snapshots.extracted`: ≤ max_items per list, ≤ max_bytes.

        Lists are cut to `max_items` (the cut is recorded in `truncated`); if the JSON is
        still too large, every list is halved until it fits.
        """
        data = self.to_dict()
        truncated: dict[str, int] = {}
        limit = max_items
        while True:
            bounded = dict(data)
            bounded["entities"] = {t: items[:limit] for t, items in data["entities"].items()}
            if bounded["status"]:
                status = dict(bounded["status"])
                for name in ("components", "incidents"):
                    if isinstance(status.get(name), list):
                        status[name] = status[name][:limit]
                bounded["status"] = status
            truncated = {
                t: len(items) for t, items in data["entities"].items() if len(items) > limit
            }
            bounded["truncated"] = truncated
            size = len(json.dumps(bounded, sort_keys=True, ensure_ascii=False).encode())
            if size <= max_bytes or limit == 0:
                return bounded
            limit //= 2

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extraction:
        return cls(
            connector=data.get("connector", ""),
            surface=data.get("surface", ""),
            entities={k: list(v) for k, v in (data.get("entities") or {}).items()},
            status=data.get("status"),
            page=dict(data.get("page") or {}),
            confidence=float(data.get("confidence", 0.0)),
            structured=bool(data.get("structured", False)),
            extractor_version=data.get("extractor_version", EXTRACTOR_VERSION),
        )

    @classmethod
    def from_json(cls, raw: bytes) -> Extraction:
        return cls.from_dict(json.loads(raw))
