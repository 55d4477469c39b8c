"""Significance of a change between two versions of a page (provisional: share of blocks).

`compare` weighs how much of the page's content moved. Typed deltas (jobs, plans,
status) will weigh in once extraction exists; until then a change is the share of
blocks added or removed, with the reasons spelled out for the analyst.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from catlas_assets.domain.normalize import Block


@dataclass(frozen=True)
class Comparison:
    significance: float
    reasons: tuple[str, ...]
    added: tuple[Block, ...] = field(default=())
    removed: tuple[Block, ...] = field(default=())

    @property
    def summary(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "no content change"


def compare(previous: Sequence[Block], new: Sequence[Block]) -> Comparison:
    before = Counter(b.text for b in previous)
    after = Counter(b.text for b in new)
    added_texts = after - before
    removed_texts = before - after
    added = tuple(b for b in new if added_texts.get(b.text, 0) > 0)
    removed = tuple(b for b in previous if removed_texts.get(b.text, 0) > 0)
    churn = sum(added_texts.values()) + sum(removed_texts.values())
    total = max(1, sum(before.values()) + sum(after.values()))
    significance = min(1.0, churn / total * 2) if churn else 0.0
    reasons = []
    if added:
        reasons.append(f"{len(added)} block(s) added: " + _preview(added))
    if removed:
        reasons.append(f"{len(removed)} block(s) removed: " + _preview(removed))
    return Comparison(round(significance, 4), tuple(reasons), added, removed)


def _preview(blocks: Sequence[Block], limit: int = 3) -> str:
    shown = ", ".join(repr(b.text[:60]) for b in blocks[:limit])
    return shown + (f" and {len(blocks) - limit} more" if len(blocks) > limit else "")
