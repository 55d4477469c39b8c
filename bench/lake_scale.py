"""The lake at scale: ten million observations written by the real writer, then queried.

    python bench/lake_scale.py [--rows 10000000] [--sensors 1000000] [--json OUT]

Rows are generated in Arrow, cheaply and deterministically (seed 16): `--sensors` sensors
over a tenth as many companies, each observed every `--sensors / rows-per-hour` hours, so
an hourly partition holds each sensor once; 95 % of the observations are `unchanged`
(the sensor's own URL, ETag and hashes again), 2 % `changed` (new hashes, a `changes` row),
2 % `not_modified` (a 304), 1 % failed. They go through `Lake.write_arrow` (the writer
`write_rows` ends in) a million rows at a time into a temporary folder; the peer is pyarrow
writing the same rows straight to one Parquet file, its defaults (the floor). The queries
run on DuckDB through `Lake.connect()` (the views `catlas sql` opens) and over the peer's
file with the same SQL:

- latest observation of one sensor (the row an analyst looks up), median over 5 sensors;
- latest observation of every sensor: catlas's `latest_observations` view as hourly
  compaction leaves it (the kept table updated after the last hour, one newer hour not yet
  folded in, which the view folds in as it reads); the peer's `arg_max` per sensor over its
  whole file; both answers must be the same rows (checked) and the `arg_max` over catlas's
  `observations` view is timed too;
- meaningful-or-above changes per company per week (`changes` view).

The history is `--rows` observations; one more hour (`--per-hour` rows) is written after
the kept table's first build, as the hour a tick writes between two compactions. The first
build (over the whole history) and the hourly update after that hour are timed.

Also: bytes on disk per unchanged observation (a lake of unchanged rows alone, and the
compressed bytes of each column), the new archive bytes of an unchanged page (the archive
is content-addressed: the same bytes again write nothing), the row-group sizes and that
the `changed` column is stored.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from resources.archive import ObjectArchive
from resources.lake import Lake
from resources.lake_tables import CHANGES, OBSERVATIONS
from resources.storage import Storage

START = datetime(2026, 1, 5, tzinfo=UTC)
START_US = int(START.timestamp() * 1_000_000)
HOUR_US = 3_600_000_000
CHUNK = 1_000_000
SURFACES = np.array(["homepage", "careers", "pricing", "blog", "newsroom", "docs", "products"])


def hex_strings(rng: np.random.Generator, count: int, width: int, prefix: str = "") -> pa.Array:
    """`count` random hex strings of `width` characters, built as one Arrow buffer."""
    raw = rng.integers(0, 16, size=(count, width), dtype=np.uint8)
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[raw]
    if prefix:
        head = np.frombuffer(prefix.encode(), dtype=np.uint8)
        digits = np.hstack([np.broadcast_to(head, (count, len(head))), digits])
    size = digits.shape[1]
    offsets = np.arange(0, (count + 1) * size, size, dtype=np.int32)
    return pa.StringArray.from_buffers(
        count, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(digits).tobytes())
    )


class Fleet:
    """Each sensor's fixed columns: what an unchanged observation repeats."""

    def __init__(self, sensors: int, rng: np.random.Generator) -> None:
        ids = np.arange(1, sensors + 1, dtype=np.int64)
        self.company = (ids - 1) // 10 + 1
        surface = SURFACES[ids % len(SURFACES)]
        self.surface = pa.array(surface)
        self.url = pc.binary_join_element_wise(
            "https://c", pa.array(self.company.astype(str)), ".example/", self.surface,
            "/", pa.array(ids.astype(str)), "",
        )  # fmt: skip
        self.etag = pc.binary_join_element_wise('W/"', hex_strings(rng, sensors, 16), '"', "")
        self.content = hex_strings(rng, sensors, 64)
        self.normalized = hex_strings(rng, sensors, 64)
        self.structured = hex_strings(rng, sensors, 64)
        self.bytes = rng.integers(8_000, 160_000, size=sensors)


def per_sensor(
    values: pa.Array, take: pa.Array, failed: np.ndarray, changed: np.ndarray | None = None,
    fresh: pa.Array | None = None,
) -> pa.Array:  # fmt: skip
    """Each row's sensor's value; a new one where the page changed, none where it failed."""
    got = values.take(take)
    if changed is not None and fresh is not None:
        got = pc.if_else(pa.array(changed), fresh, got)
    return pc.if_else(pa.array(failed), pa.nulls(len(failed), pa.string()), got)


def chunks(
    rows: int, sensors: int, per_hour: int, seed: int, cut: int | None = None
) -> Iterator[tuple[pa.Table, pa.Table]]:
    """(observations, changes) a million rows at a time, in fetch order; a chunk begins at
    row `cut` (the caller acts between the rows before it and those after)."""
    rng = np.random.default_rng(seed)
    fleet = Fleet(sensors, rng)
    cut = rows if cut is None else cut
    starts = [*range(0, cut, CHUNK), *range(cut, rows, CHUNK)]
    for first, end in itertools.pairwise([*starts, rows]):
        n = min(CHUNK, end - first)
        index = np.arange(first, first + n, dtype=np.int64)
        sensor_index = index % sensors  # every sensor once per `sensors` rows
        sensor_id = sensor_index + 1
        hour, within = index // per_hour, index % per_hour
        fetched = START_US + hour * HOUR_US + within * (HOUR_US // per_hour)
        draw = rng.random(n)
        changed = draw < 0.02
        not_modified = (draw >= 0.02) & (draw < 0.04)
        failed = (draw >= 0.04) & (draw < 0.05)
        outcome = np.where(changed, "changed", np.where(not_modified, "not_modified",
                           np.where(failed, "failed", "unchanged")))  # fmt: skip
        take = pa.array(sensor_index)
        fresh = hex_strings(rng, n, 64)

        content = per_sensor(fleet.content, take, failed, changed, fresh)
        obs_id = hex_strings(rng, n, 24, "obs_")
        run_id = pc.binary_join_element_wise(
            "run_", pa.array((index // 500).astype(str)), ""
        )  # one tick of 500 sensors
        http_status = np.where(not_modified, 304, np.where(failed, 503, 200)).astype(np.int32)
        ok = ~failed
        obs = pa.table(
            {
                "observation_id": obs_id,
                "run_id": run_id,
                "sensor_id": sensor_id,
                "company_id": fleet.company[sensor_index],
                "surface": fleet.surface.take(take),
                "url": fleet.url.take(take),
                "final_url": fleet.url.take(take),
                "fetched_at": pa.array(fetched, pa.timestamp("us", tz="UTC")),
                "outcome": pa.array(outcome),
                "http_status": http_status,
                "not_modified": not_modified,
                "changed": changed,
                "noise": np.zeros(n, dtype=bool),
                "failure_class": pc.if_else(pa.array(failed), "HTTP_5XX", pa.nulls(n, pa.string())),
                "elapsed_ms": rng.integers(40, 1500, size=n).astype(np.int32),
                "bytes": np.where(ok, fleet.bytes[sensor_index], 0),
                "etag": per_sensor(fleet.etag, take, failed),
                "content_hash": content,
                "normalized_hash": per_sensor(fleet.normalized, take, failed, changed, fresh),
                "structured_hash": per_sensor(fleet.structured, take, failed, changed, fresh),
                "object_key": pc.binary_join_element_wise(
                    "objects/",
                    pc.utf8_slice_codeunits(content, 0, 2),
                    "/",
                    pc.utf8_slice_codeunits(content, 2, 4),
                    "/",
                    content,
                    ".zst",
                    "",
                ),
                "extractor_version": pa.array(np.full(n, "x7")),
                "connector": pa.array(np.full(n, "generic_html")),
                "requests": np.ones(n, dtype=np.int32),
                "content_type": pc.if_else(
                    pa.array(ok), "text/html; charset=utf-8", pa.nulls(n, pa.string())
                ),
            }
        )
        picked = np.flatnonzero(changed)
        kinds = np.array(["minor", "meaningful", "meaningful", "major", "critical"])
        changes = pa.table(
            {
                "change_id": pc.binary_join_element_wise(
                    "chg_", pc.utf8_slice_codeunits(obs_id.take(pa.array(picked)), 4, 28), ""
                ),
                "run_id": run_id.take(pa.array(picked)),
                "sensor_id": sensor_id[picked],
                "company_id": fleet.company[sensor_index[picked]],
                "surface": fleet.surface.take(pa.array(sensor_index[picked])),
                "detected_at": pa.array(fetched[picked], pa.timestamp("us", tz="UTC")),
                "significance": rng.random(len(picked)),
                "kind": pa.array(kinds[rng.integers(0, len(kinds), size=len(picked))]),
                "status": pa.array(np.full(len(picked), "pending")),
                "summary": pa.array(np.full(len(picked), "2 jobs added")),
            }
        )
        yield obs, changes


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    samples, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), result


LATEST_ONE = (
    "SELECT observation_id, outcome, fetched_at FROM {obs} WHERE sensor_id = ? "
    "ORDER BY fetched_at DESC LIMIT 1"
)
LATEST_ALL = (
    "SELECT count(*), count(DISTINCT latest) FROM (SELECT sensor_id, "
    "arg_max(outcome, fetched_at) AS latest FROM {obs} GROUP BY sensor_id)"
)
LATEST_KEPT = "SELECT count(*), count(DISTINCT outcome) FROM latest_observations"
# One number for a set of (sensor, observation) rows: two answers are the same rows.
LATEST_DIGEST = (
    "SELECT count(*), sum(hash(sensor_id, observation_id)) FROM (SELECT sensor_id, "
    "arg_max(observation_id, fetched_at) AS observation_id FROM {obs} GROUP BY sensor_id)"
)
KEPT_DIGEST = "SELECT count(*), sum(hash(sensor_id, observation_id)) FROM latest_observations"
WEEKLY = (
    "SELECT count(*), sum(n) FROM (SELECT company_id, date_trunc('week', detected_at) AS week, "
    "count(*) AS n FROM {changes} WHERE kind IN ('meaningful', 'major', 'critical') "
    "GROUP BY ALL)"
)


def queries(con: duckdb.DuckDBPyConnection, obs: str, changes: str, sensors: int,
            repeat: int, latest: str) -> dict[str, float]:  # fmt: skip
    """The analysts' queries; `latest` answers "the latest observation of every sensor"."""
    picks = [1 + (sensors * k) // 5 for k in range(5)]
    one = statistics.median(
        _timed(lambda s=s: con.execute(LATEST_ONE.format(obs=obs), [s]).fetchall(), repeat)[0]
        for s in picks
    )
    every, _ = _timed(lambda: con.execute(latest.format(obs=obs)).fetchall(), repeat)
    weekly, _ = _timed(lambda: con.execute(WEEKLY.format(changes=changes)).fetchall(), repeat)
    return {"latest_one_s": one, "latest_all_s": every, "weekly_changes_s": weekly}


def lake_bytes(root: Path, table: str) -> int:
    return sum(p.stat().st_size for p in (root / table).rglob("*.parquet"))


def column_bytes(files: list[Path]) -> dict[str, float]:
    """Compressed bytes of each column over every file, per row."""
    total: dict[str, int] = {}
    rows = 0
    for f in files:
        meta = pq.read_metadata(f)
        rows += meta.num_rows
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                col = group.column(c)
                total[col.path_in_schema] = (
                    total.get(col.path_in_schema, 0) + col.total_compressed_size
                )
    return {k: v / rows for k, v in sorted(total.items(), key=lambda kv: -kv[1])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--sensors", type=int, default=1_000_000)
    parser.add_argument("--per-hour", type=int, default=125_000,
                        help="observations per hourly partition")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="catlas-lake-bench-") as tmp:
        root = Path(tmp)
        lake = Lake(Storage(str(root / "lake")))
        peer_file = root / "peer" / "observations.parquet"
        peer_changes = root / "peer" / "changes.parquet"
        peer_file.parent.mkdir(parents=True)
        catlas_s = peer_s = 0.0
        peer_writer = peer_changes_writer = None
        unchanged = changed_written = 0
        build_s = 0.0
        written = args.rows + args.per_hour
        rows_so_far = 0
        for n, (obs, changes) in enumerate(
            chunks(written, args.sensors, args.per_hour, 16, cut=args.rows)
        ):
            if rows_so_far == args.rows:
                # The history is written: the kept table's first build, as a compaction
                # would make it; the hour after it is a tick's, not yet folded in.
                t0 = time.perf_counter()
                built = lake.update_latest()
                build_s = time.perf_counter() - t0
                print(f"kept table built: {built.rows:,} rows in {build_s:.1f} s", flush=True)
            rows_so_far += obs.num_rows
            unchanged += int(pc.sum(pc.equal(obs.column("outcome"), "unchanged")).as_py())
            changed_written += int(pc.sum(obs.column("changed")).as_py())
            obs = obs.cast(pa.schema([OBSERVATIONS.schema.field(c) for c in obs.column_names]))
            changes = changes.cast(
                pa.schema([CHANGES.schema.field(c) for c in changes.column_names])
            )
            t0 = time.perf_counter()
            lake.write_arrow("observations", obs, f"bench{n:04d}")
            lake.write_arrow("changes", changes, f"bench{n:04d}")
            catlas_s += time.perf_counter() - t0
            # The peer: the same columns straight into one file, pyarrow's defaults.
            t0 = time.perf_counter()
            if peer_writer is None:
                peer_writer = pq.ParquetWriter(peer_file, obs.schema)
                peer_changes_writer = pq.ParquetWriter(peer_changes, changes.schema)
            peer_writer.write_table(obs)
            peer_changes_writer.write_table(changes)
            peer_s += time.perf_counter() - t0
            print(f"chunk {n}: catlas {catlas_s:.1f} s, peer {peer_s:.1f} s", flush=True)
        assert peer_writer is not None and peer_changes_writer is not None
        t0 = time.perf_counter()
        peer_writer.close()
        peer_changes_writer.close()
        peer_s += time.perf_counter() - t0
        files = sorted((root / "lake" / "observations").rglob("*.parquet"))
        groups = [
            pq.read_metadata(f).row_group(g).num_rows
            for f in files
            for g in range(pq.read_metadata(f).num_row_groups)
        ]
        has_changed = all("changed" in pq.read_schema(f).names for f in files)
        con = lake.connect()
        stored = con.execute(
            "SELECT count(*), count(*) FILTER (changed) FROM observations"
        ).fetchone()
        catlas_q = queries(con, "observations", "changes", args.sensors, args.repeat, LATEST_KEPT)
        history_s, _ = _timed(
            lambda: con.execute(LATEST_ALL.format(obs="observations")).fetchall(), args.repeat
        )
        kept_answer = con.execute(KEPT_DIGEST).fetchone()
        history_answer = con.execute(LATEST_DIGEST.format(obs="observations")).fetchone()
        t0 = time.perf_counter()
        hourly = lake.update_latest()
        update_s = time.perf_counter() - t0
        con.close()
        con = lake.connect()
        folded_s, _ = _timed(lambda: con.execute(LATEST_KEPT).fetchall(), args.repeat)
        folded_answer = con.execute(KEPT_DIGEST).fetchone()
        peer_con = duckdb.connect()
        peer_con.execute(f"CREATE VIEW observations AS SELECT * FROM read_parquet('{peer_file}')")
        peer_con.execute(f"CREATE VIEW changes AS SELECT * FROM read_parquet('{peer_changes}')")
        peer_q = queries(peer_con, "observations", "changes", args.sensors, args.repeat, LATEST_ALL)
        peer_answer = peer_con.execute(LATEST_DIGEST.format(obs="observations")).fetchone()
        if not kept_answer == folded_answer == history_answer == peer_answer:
            raise SystemExit(
                "latest_observations disagrees with the history: "
                f"{kept_answer} {folded_answer} {history_answer} {peer_answer}"
            )
        catlas_bytes = lake_bytes(root / "lake", "observations")
        peer_bytes = peer_file.stat().st_size

        # Unchanged observations alone: one partition's worth of them, written the same way.
        only = Lake(Storage(str(root / "unchanged")))
        obs, _ = next(chunks(min(args.rows, CHUNK), args.sensors, args.per_hour, 17))
        obs = obs.filter(pc.equal(obs.column("outcome"), "unchanged"))
        obs = obs.cast(pa.schema([OBSERVATIONS.schema.field(c) for c in obs.column_names]))
        only.write_arrow("observations", obs, "unchanged")
        unchanged_files = sorted((root / "unchanged" / "observations").rglob("*.parquet"))
        per_unchanged = lake_bytes(root / "unchanged", "observations") / obs.num_rows
        by_column = column_bytes(unchanged_files)
        peer_only = root / "peer" / "unchanged.parquet"
        pq.write_table(obs, peer_only)
        peer_per_unchanged = peer_only.stat().st_size / obs.num_rows

        # The archive: a page stored once, then the same bytes again (an unchanged fetch).
        archive = ObjectArchive(Storage(str(root / "archive")))
        page = os.urandom(20_000) + b"<html>" * 5_000
        first = archive.put(page).new_bytes
        again = sum(archive.put(page).new_bytes for _ in range(100))

    figures = {
        "rows": args.rows,
        "sensors": args.sensors,
        "per_hour": args.per_hour,
        "unchanged_share": unchanged / written,
        "rows_written": written,
        "catlas_write_s": catlas_s,
        "peer_write_s": peer_s,
        "catlas_rows_per_s": written / catlas_s,
        "peer_rows_per_s": written / peer_s,
        "latest_build_s": build_s,
        "latest_hourly_update_s": update_s,
        "latest_hourly_update_files": hourly.files_folded,
        "latest_rows": hourly.rows,
        "latest_bytes": hourly.bytes,
        "catlas_latest_all_history_s": history_s,
        "catlas_latest_all_folded_s": folded_s,
        "files": len(files),
        "row_groups": len(groups),
        "row_group_rows_min": min(groups),
        "row_group_rows_median": statistics.median(groups),
        "changed_column_stored": has_changed,
        "rows_read_back": stored[0],
        "changed_rows_written": changed_written,
        "changed_rows_read_back": stored[1],
        "catlas_bytes_per_row": catlas_bytes / written,
        "peer_bytes_per_row": peer_bytes / written,
        "catlas_bytes_per_unchanged": per_unchanged,
        "peer_bytes_per_unchanged": peer_per_unchanged,
        "unchanged_bytes_by_column": by_column,
        "archive_first_put_bytes": first,
        "archive_new_bytes_unchanged_x100": again,
        **{f"catlas_{k}": v for k, v in catlas_q.items()},
        **{f"peer_{k}": v for k, v in peer_q.items()},
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
