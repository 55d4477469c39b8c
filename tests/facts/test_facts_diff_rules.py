"""compare() and reconcile() rules on plain inputs (no I/O)."""

from __future__ import annotations

from catlas_assets.domain.extract.extraction import Extraction, job
from catlas_assets.domain.normalize import Block, normalize
from catlas_assets.domain.significance import History, block_hash, compare
from catlas_assets.domain.structured_delta import empty_delta

HTML = "text/html"


def blocks(*texts: str) -> tuple[Block, ...]:
    return normalize("".join(f"<p>{t}</p>" for t in texts).encode(), HTML).blocks


def html_jobs(*titles: str, structured: bool = False) -> Extraction:
    out = Extraction("generic_html", "careers", structured=structured)
    for t in titles:
        out.add("job", job(vendor="html", vendor_id=None, title=t))
    return out


def test_a_block_that_flaps_back_to_a_recent_value_is_noise() -> None:
    page = [f"Paragraph {i} of the page" for i in range(20)]
    before = blocks(*page, "Quote A")
    after = blocks(*page, "Quote B")
    fresh = compare(before, after, "homepage")
    assert fresh.significance > 0
    remembered = History(recent_blocks=frozenset({block_hash("Quote A"), block_hash("Quote B")}))
    flapped = compare(before, after, "homepage", history=remembered)
    assert flapped.significance == 0 and flapped.flapped == 2


def test_volatile_tokens_do_not_count_as_churn() -> None:
    before = blocks("Welcome", "Updated 2026-01-05T08:00:00Z", "1,204 people viewing now")
    after = blocks("Welcome", "Updated 2026-01-06T09:30:00Z", "87 people viewing now")
    assert compare(before, after, "homepage").significance == 0
    assert (
        normalize(b"<p>Updated 2026-01-05T08:00:00Z</p>", HTML).normalized_hash
        == normalize(b"<p>Updated 2026-01-06T09:30:00Z</p>", HTML).normalized_hash
    )


def test_text_churn_on_a_typed_surface_stays_below_meaningful() -> None:
    before = blocks(*(f"old line {i}" for i in range(10)))
    after = blocks(*(f"new line {i}" for i in range(10)))
    assert compare(before, after, "careers").significance < 0.10
    assert compare(before, after, "homepage").significance >= 0.10


def test_a_page_that_drops_out_of_its_own_navigation_matters() -> None:
    same = blocks("Docs index")
    dropped = compare(
        same, same, "docs", history=History(was_self_linked=True, is_self_linked=False)
    )
    assert dropped.significance >= 0.3
    assert any("navigation" in r for r in dropped.reasons)


def test_typed_deltas_outweigh_text() -> None:
    delta = empty_delta()
    delta["updated"] = {
        "pricing_plan": [
            {"key": "pro", "name": "Pro", "changes": {"price": [49.0, 59.0]}, "attributes": {}}
        ]
    }
    same = blocks("Pro", "$49")
    assert (
        compare(same, blocks("Pro", "$59"), "pricing", structured_delta=delta).significance >= 0.4
    )


def test_removals_need_a_trustworthy_extraction_and_respect_the_degradation_guard() -> None:
    from catlas_assets.domain.reconcile import reconcile

    twelve = html_jobs(*(f"Role {i}" for i in range(12)))
    nothing = reconcile(twelve, html_jobs())
    assert nothing.removed == {} and nothing.notes and nothing.current.count() == 12
    guarded = reconcile(twelve, html_jobs("Role 0", "Role 1"))
    assert guarded.removed == {} and "parse-degradation guard" in guarded.notes[0]
    assert guarded.current.count() == 12  # held back, carried forward
    # Below the guard's floor (fewer than 10 entities) a drop is a drop.
    five = html_jobs(*(f"Role {i}" for i in range(5)))
    assert len(reconcile(five, html_jobs("Role 0")).removed["job"]) == 4
    # A structured answer is trusted even when it lists nothing.
    api = html_jobs(structured=True)
    assert len(reconcile(twelve, api).removed["job"]) == 12
    # 70 % of 10 is still allowed; more is not.
    ten = html_jobs(*(f"Role {i}" for i in range(10)))
    assert len(reconcile(ten, html_jobs("Role 0", "Role 1", "Role 2")).removed["job"]) == 7


def test_the_bounded_payload_keeps_300_items_per_list_and_stays_under_the_size_cap() -> None:
    big = html_jobs(*(f"Role number {i} with a long enough title" for i in range(1000)))
    payload = big.structured_payload(300, 900_000)
    assert len(payload["entities"]["job"]) == 300 and payload["truncated"] == {"job": 1000}
    small = big.structured_payload(300, 20_000)
    import json

    assert len(json.dumps(small, sort_keys=True).encode()) <= 20_000
    assert 0 < len(small["entities"]["job"]) < 300


def test_a_release_note_added_to_a_docs_page_is_meaningful_a_copy_edit_is_not() -> None:
    page = [f"Guide paragraph {i} about setting up the client" for i in range(30)]
    release = compare(blocks(*page), blocks("Release v3.2 (2026-02-01)", *page), "docs")
    assert release.significance >= 0.10
    assert any("release note" in r for r in release.reasons)
    edited = compare(blocks(*page), blocks("A reworded introduction", *page), "docs")
    assert edited.significance < 0.10
    careers = compare(blocks(*page), blocks("Release v3.2 (2026-02-01)", *page), "careers")
    assert careers.significance < 0.10
