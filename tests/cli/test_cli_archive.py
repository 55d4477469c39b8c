"""`catlas archive get KEY`: an object's bytes from its pack or its own file; bad keys are
one error line."""

from __future__ import annotations

import hashlib
from pathlib import Path

from catlas_assets.domain.content_address import archive_key
from tests.cli.cli_harness import Catlas, assert_one_error_line, lake_rows


def test_an_observed_pages_objects_are_read_back_by_key(
    catlas: Catlas, tmp_path: Path, observed_pricing: int
) -> None:
    [row] = lake_rows(tmp_path / ".catlas", "observations", "object_key, text_key")

    raw = tmp_path / "raw.html"
    catlas.ok("archive", "get", row["object_key"], "-o", str(raw))
    text = catlas.ok("archive", "get", row["text_key"])

    assert archive_key(raw.read_bytes()) == row["object_key"]
    assert b"<html" in raw.read_bytes().lower()
    assert hashlib.sha256(text.out.encode()).hexdigest() in row["text_key"]


def test_a_key_that_is_not_one_or_is_not_archived_is_one_error_line(catlas: Catlas) -> None:
    result = catlas.run("archive", "get", "observations/date=2026-01-05/part-0.parquet")
    assert_one_error_line(result, 2, "not an archive key")

    absent = archive_key(b"never stored")
    result = catlas.run("archive", "get", absent)
    assert_one_error_line(result, 2, absent, "not in the archive")
