"""From discovery candidates to the sensors to create (spec: Discovery, Selection).

One sensor per surface: the candidate with the best
`confidence × METHOD_WEIGHT[method] × VERIFIED_FACTOR[verified] × DEPTH_DECAY^(depth-1)`.
`jobs_board` sits next to `careers` and `feed` next to `blog`/`newsroom` (they are surfaces
of their own, so a company keeps both). One page is one sensor: a URL chosen for a surface
is not chosen again for a less important one (a news section is the newsroom, or the blog
when the newsroom is another page). The selection is capped by
`discovery_max_sensors_per_company` in surface-importance order. Every candidate keeps the
reason it was or was not chosen, for the `discovery` lake table.
"""

from __future__ import annotations

from dataclasses import replace

from catlas_assets.domain.candidates import Candidate, same_url
from catlas_assets.domain.taxonomy import MIN_SELECTION_SCORE, SURFACE_IMPORTANCE
from catlas_assets.domain.vocabulary import Surface


def _key(candidate: Candidate) -> tuple[float, int, str]:
    # Ties: the shallower URL, then the URL itself, so a re-run picks the same one.
    return (-candidate.score, candidate.depth, candidate.url)


def select(candidates: list[Candidate], *, max_sensors: int) -> list[Candidate]:
    """Every candidate, with `selected` and `reason` filled; selected ones first."""
    eligible = sorted(
        (c for c in candidates if not c.rejected and c.score >= MIN_SELECTION_SCORE), key=_key
    )
    best: dict[Surface, Candidate] = {}
    surfaces = sorted({c.surface for c in eligible}, key=lambda s: (-SURFACE_IMPORTANCE[s], s))
    for surface in surfaces:
        taken = [c.url for c in best.values()]
        winner = next(
            (
                c
                for c in eligible
                if c.surface is surface and not any(same_url(c.url, u) for u in taken)
            ),
            None,
        )
        if winner is not None:
            best[surface] = winner
    ranked = sorted(best.values(), key=lambda c: (-SURFACE_IMPORTANCE[c.surface], _key(c)))
    chosen = {id(c) for c in ranked[:max_sensors]}
    capped = {id(c) for c in ranked[max_sensors:]}
    out: list[Candidate] = []
    for candidate in candidates:
        if id(candidate) in chosen:
            reason = f"best {candidate.surface.value} candidate (score {candidate.score})"
            out.append(replace(candidate, selected=True, reason=reason))
        elif id(candidate) in capped:
            reason = f"over the cap of {max_sensors} sensors per company"
            out.append(replace(candidate, reason=reason))
        elif candidate.rejected:
            out.append(replace(candidate, reason=candidate.rejected))
        elif candidate.score < MIN_SELECTION_SCORE:
            reason = f"score {candidate.score} below {MIN_SELECTION_SCORE}"
            out.append(replace(candidate, reason=reason))
        elif candidate.surface not in best or any(
            w.surface is not candidate.surface and same_url(w.url, candidate.url)
            for w in best.values()
        ):
            out.append(replace(candidate, reason="its page is the sensor of another surface"))
        else:
            winner = best[candidate.surface]
            reason = f"{winner.url} scored higher ({winner.score} vs {candidate.score})"
            if winner.url == candidate.url:
                reason = f"same URL found by {winner.method.value}"
            out.append(replace(candidate, reason=reason))
    return sorted(out, key=lambda c: (not c.selected, -SURFACE_IMPORTANCE[c.surface], _key(c)))
