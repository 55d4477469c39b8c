"""`catlas reprocess` from a shell: a range of hours re-derived from the archive, one
verdict; a reversed range is one error line."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Catlas, assert_one_error_line, db_rows, iso, table_rows

from fixture_web import DEFAULT_NOW, FixtureWeb


def test_reprocess_prints_old_and_new_counts_and_a_verdict(
    catlas: Catlas, tmp_path: Path, observed_pricing: int, web: FixtureWeb
) -> None:
    web.clear_requests()
    day = f"{DEFAULT_NOW:%Y-%m-%d}"
    result = catlas.ok(
        "reprocess",
        "--from",
        day,
        "--to",
        f"{day}T23:00",
        "--company",
        "Kestrel Labs",
        CATLAS_NOW=iso(DEFAULT_NOW),
    )
    [row] = table_rows(result.out)
    assert row["snapshots"] == "1 -> 1"
    assert "verdict: success" in result.out
    assert web.requests == []
    assert db_rows(
        tmp_path / ".catlas", "SELECT kind, outcome FROM crawl_runs WHERE kind = 'reprocess'"
    ) == [("reprocess", "success")]


def test_a_reversed_range_is_one_error_line(catlas: Catlas) -> None:
    result = catlas.run("reprocess", "--from", "2026-01-05", "--to", "2026-01-04")
    assert_one_error_line(result, 2, "--to")


def test_a_range_of_centuries_is_one_error_line_and_a_future_end_is_cut_at_now(
    catlas: Catlas,
) -> None:
    result = catlas.run("reprocess", "--from", "0001-01-01", "--to", "2026-01-05")
    assert_one_error_line(result, 2, "3660 days")
    # Year 9999: nothing is archived after now, so the walk ends there (and at once).
    later = catlas.ok(
        "reprocess", "--from", "2026-01-05", "--to", "9999-12-31", CATLAS_NOW=iso(DEFAULT_NOW)
    )
    assert "verdict: success" in later.out
