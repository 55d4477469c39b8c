"""Significance of a change between two versions of a page, with the reasons spelled out.

`compare` weighs typed deltas most (a plan price, jobs posted or no longer listed, a status
indicator, an incident, a news item), text churn little, and reads the sensor's history:
a block that comes back to a value it had recently (it flaps) is noise, and a page that
drops out of its own navigation matters. The result is a significance in [0, 1] that
`taxonomy.change_kind` maps to a kind through the `*_threshold` settings.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from catlas_assets.domain.normalize import Block, mask_volatile
from catlas_assets.domain.structured_delta import StructuredDelta, has_typed_change

# Surfaces whose meaning lives in their typed entities: text churn there is at most minor.
TYPED_SURFACES = frozenset(
    {"careers", "jobs_board", "pricing", "status", "blog", "newsroom", "feed", "people",
     "products", "locations"}
)  # fmt: skip
TEXT_WEIGHT_TYPED = 0.09  # below the default meaningful threshold (0.10)
TEXT_WEIGHT_UNTYPED = 0.8
NAV_DROP_WEIGHT = 0.3
DEGRADED_CAP = 0.05  # a guarded (degraded) parse is recorded as minor, with its note
FLAP_MEMORY = 200

ADDED_WEIGHT = {"job": 0.25, "pricing_plan": 0.5, "news": 0.3, "person": 0.3, "product": 0.35,
                "location": 0.3, "incident": 0.3}  # fmt: skip
REMOVED_WEIGHT = {"job": 0.25, "pricing_plan": 0.5, "news": 0.15, "person": 0.3, "product": 0.35,
                  "location": 0.3, "incident": 0.25}  # fmt: skip
UPDATED_WEIGHT = {"job": 0.15, "pricing_plan": 0.2, "news": 0.12, "person": 0.15, "product": 0.15,
                  "location": 0.12, "incident": 0.15}  # fmt: skip
PRICE_FIELDS = frozenset({"price", "currency", "billing_period", "prices"})
PRICE_CHANGE_WEIGHT = 0.5
INDICATOR_WEIGHT = {"critical": 0.9, "major": 0.6, "minor": 0.3, "none": 0.3}
IMPACT_WEIGHT = {"critical": 0.85, "major": 0.6, "minor": 0.3, "none": 0.2, "maintenance": 0.2}
COMPONENT_WEIGHT = 0.2
# Docs and developer pages carry no typed entities, yet a release note added there
# ("Release v2.5 — 2026-01-11", "Version 3.1.0") is news to whoever builds on the product.
RELEASE_SURFACES = frozenset({"docs", "developer"})
RELEASE_NOTE = re.compile(r"\b(?:release|version|v)\s?\d+\.\d+", re.IGNORECASE)
RELEASE_NOTE_WEIGHT = 0.3


@dataclass(frozen=True)
class History:
    """What the sensor remembers: short hashes of blocks that recently came or went."""

    recent_blocks: frozenset[str] = frozenset()
    was_self_linked: bool | None = None
    is_self_linked: bool | None = None


@dataclass(frozen=True)
class Comparison:
    significance: float
    reasons: tuple[str, ...]
    added: tuple[Block, ...] = field(default=())
    removed: tuple[Block, ...] = field(default=())
    flapped: int = 0

    @property
    def summary(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "no content change"


def block_hash(text: str) -> str:
    return hashlib.sha1(mask_volatile(text).encode(), usedforsecurity=False).hexdigest()[:10]


def remember(history: History, comparison: Comparison) -> list[str]:
    """The flap memory after this comparison (newest last, bounded)."""
    fresh = [block_hash(b.text) for b in (*comparison.added, *comparison.removed)]
    kept = [h for h in sorted(history.recent_blocks) if h not in fresh]
    return (kept + sorted(set(fresh)))[-FLAP_MEMORY:]


def compare(
    previous: Sequence[Block],
    new: Sequence[Block],
    surface: str,
    texts: tuple[str, str] | None = None,
    structured_delta: StructuredDelta | None = None,
    history: History | None = None,
) -> Comparison:
    history = history or History()
    before = Counter(mask_volatile(b.text) for b in previous)
    after = Counter(mask_volatile(b.text) for b in new)
    added_texts = after - before
    removed_texts = before - after
    added = tuple(b for b in new if added_texts.get(mask_volatile(b.text), 0) > 0)
    removed = tuple(b for b in previous if removed_texts.get(mask_volatile(b.text), 0) > 0)
    flapping = {t for t in (*added_texts, *removed_texts) if block_hash(t) in history.recent_blocks}
    churn = sum(n for t, n in added_texts.items() if t not in flapping) + sum(
        n for t, n in removed_texts.items() if t not in flapping
    )
    total = max(1, sum(before.values()) + sum(after.values()))
    ratio = churn / total
    reasons: list[str] = []
    delta = structured_delta
    typed_surface = surface in TYPED_SURFACES
    weight = TEXT_WEIGHT_TYPED if typed_surface else TEXT_WEIGHT_UNTYPED
    text_sig = min(weight, ratio * weight * 3) if typed_surface else min(0.6, ratio * weight)
    if churn:
        reasons.append(
            f"text: {churn} block(s) changed ({ratio:.0%} of the page) -> {text_sig:.2f}"
        )
    if flapping:
        reasons.append(f"{len(flapping)} block(s) flapped back to a recent value (noise)")
    if not churn and texts is not None and not previous and not new and texts[0] != texts[1]:
        text_sig = 0.05
        reasons.append("text differs outside any block")

    typed: list[float] = []
    if delta is not None:
        typed = _typed(delta, reasons)
    releases = [
        b for b in added if mask_volatile(b.text) not in flapping and RELEASE_NOTE.search(b.text)
    ]
    if surface in RELEASE_SURFACES and releases:
        typed.append(RELEASE_NOTE_WEIGHT)
        reasons.append(f"{len(releases)} release note(s) added -> {RELEASE_NOTE_WEIGHT:.2f}")
    if history.was_self_linked and history.is_self_linked is False:
        typed.append(NAV_DROP_WEIGHT)
        reasons.append(f"the page dropped out of its own navigation -> {NAV_DROP_WEIGHT:.2f}")

    if typed:
        top = max(typed)
        significance = min(1.0, top + 0.1 * (sum(typed) - top) + 0.5 * text_sig * (1 - top))
    else:
        significance = text_sig
    if (
        delta is not None
        and delta["notes"]
        and not has_typed_change(delta)
        and significance > DEGRADED_CAP
    ):
        significance = max(DEGRADED_CAP, min(significance, DEGRADED_CAP))
        reasons.append("extraction degraded: recorded as minor with its note")
    return Comparison(round(significance, 4), tuple(reasons), added, removed, len(flapping))


def _typed(delta: StructuredDelta, reasons: list[str]) -> list[float]:
    weights: list[float] = []
    for entity_type, items in sorted(delta["added"].items()):
        if not items:
            continue
        if entity_type == "incident":
            w = max(IMPACT_WEIGHT.get(str(i["attributes"].get("impact")), 0.3) for i in items)
        else:
            w = min(0.75, ADDED_WEIGHT.get(entity_type, 0.25) + 0.05 * len(items))
        weights.append(w)
        reasons.append(f"{len(items)} {entity_type} added -> {w:.2f}")
    for entity_type, items in sorted(delta["removed"].items()):
        if not items:
            continue
        w = min(0.75, REMOVED_WEIGHT.get(entity_type, 0.25) + 0.05 * len(items))
        weights.append(w)
        reasons.append(f"{len(items)} {entity_type} removed -> {w:.2f}")
    for entity_type, updates in sorted(delta["updated"].items()):
        if not updates:
            continue
        if entity_type == "pricing_plan" and any(PRICE_FIELDS & set(u["changes"]) for u in updates):
            w = PRICE_CHANGE_WEIGHT
        elif entity_type == "incident":
            w = max(
                IMPACT_WEIGHT.get(str((u["changes"].get("impact") or [None, None])[1]), 0.15)
                if "impact" in u["changes"]
                else UPDATED_WEIGHT["incident"]
                for u in updates
            )
        else:
            w = min(0.4, UPDATED_WEIGHT.get(entity_type, 0.12) * len(updates))
        weights.append(w)
        reasons.append(f"{len(updates)} {entity_type} updated -> {w:.2f}")
    status = delta["status"]
    if status:
        before, after = status["indicator"]
        if before != after:
            w = INDICATOR_WEIGHT.get(str(after), 0.3)
            weights.append(w)
            reasons.append(f"status indicator {before} -> {after} -> {w:.2f}")
        if status["components"]:
            # A component coming back to operational is good news: it weighs half.
            w = min(
                0.5,
                sum(
                    COMPONENT_WEIGHT / 2 if c["after"] == "operational" else COMPONENT_WEIGHT
                    for c in status["components"]
                ),
            )
            weights.append(w)
            reasons.append(f"{len(status['components'])} component status change(s) -> {w:.2f}")
    return weights
