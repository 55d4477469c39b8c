"""How fast the Dagster sensor's due probe and a claim are with a million sensors.

Usage (a throwaway PostgreSQL database; it is created, filled and dropped):

    CATLAS_BENCH_PG_ADMIN_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        python bench/due_probe.py [--sensors 1000000]

Prints the query plans and the median time of `next_due_at` (the `due_sensors` sensor's
only catlas query) beside its peer, the plain `min()` query, as a ratio, and of one
`claim_due` batch. Figures belong here, run side by side
with a peer, never in a timed unit test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from scratch_db import ScratchDatabase  # a sibling: bench/ is the script's path
from sqlalchemy import text

from resources.state.store import StateStore

NOW = datetime(2026, 1, 5, 8, tzinfo=UTC)


def _timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    args = parser.parse_args()
    db = ScratchDatabase.create()
    store = StateStore.open(db.url())
    try:
        started = time.perf_counter()
        with store.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO companies (id, name, importance, tier, onboarding_status, "
                    "stats, source_meta, created_at, updated_at) "
                    "VALUES (1, 'bench', 0.5, 3, 'active', '{}', '{}', :now, :now)"
                ),
                {"now": NOW},
            )
            # Mostly future sensors in every status, a few hundred due: a realistic queue.
            conn.execute(
                text(
                    "INSERT INTO sensors (company_id, surface, url, connector, status, tier, "
                    "base_interval_s, current_interval_s, next_run_at, priority, quality_score, "
                    "snapshot_version, consecutive_unchanged, consecutive_failures, config, "
                    "created_at, updated_at) "
                    "SELECT 1, 'products', 'http://bench.example/' || g, 'generic_html', "
                    "(ARRAY['active','active','active','failing','pending','stale','retired'])"
                    "[1 + g % 7], 'C', 86400, 86400, "
                    ":now + make_interval(secs => (g % 604800) - 300), 0.5, 50, 0, 0, 0, '{}', "
                    ":now, :now FROM generate_series(1, :n) AS g"
                ),
                {"now": NOW, "n": args.sensors},
            )
            conn.execute(text("ANALYZE sensors"))
        print(f"{args.sensors} sensors inserted in {time.perf_counter() - started:.1f} s")
        with store.engine.connect() as conn:
            for status in ("active", "failing", "pending"):
                plan = conn.execute(
                    text(
                        "EXPLAIN ANALYZE SELECT next_run_at FROM sensors WHERE status = :s "
                        "ORDER BY next_run_at LIMIT 1"
                    ),
                    {"s": status},
                ).fetchall()
                print(f"-- due probe ({status})")
                print("\n".join(r[0] for r in plan))
        probe = _timed(store.next_due_at, args.repeat)
        print(f"next_due_at: median {probe * 1000:.2f} ms over {args.repeat} runs")

        # The peer: the obvious query, min() over the claimable statuses in one IN list.
        plain = text(
            "SELECT min(next_run_at) FROM sensors WHERE status IN ('active', 'failing', 'pending')"
        )

        def peer() -> None:
            with store.engine.connect() as conn:
                conn.execute(plain).scalar()

        baseline = _timed(peer, args.repeat)
        print(
            f"peer, plain min(): median {baseline * 1000:.2f} ms; "
            f"next_due_at takes {probe / baseline:.4f}x its time ({baseline / probe:.0f}x faster)"
        )
        batch = []

        def claim() -> None:
            batch.append(
                store.claim_due(
                    now=NOW, worker=f"bench-{len(batch)}", limit=100, claim_timeout_s=900
                )
            )

        claimed = _timed(claim, min(args.repeat, 5))
        print(f"claim_due (100): median {claimed * 1000:.2f} ms; claimed {sum(map(len, batch))}")
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(
                json.dumps(
                    {
                        "sensors": args.sensors,
                        "repeat": args.repeat,
                        "next_due_at_ms": probe * 1000,
                        "peer_min_ms": baseline * 1000,
                        "claim_100_ms": claimed * 1000,
                    },
                    indent=2,
                )
            )
    finally:
        store.close()
        db.drop()


if __name__ == "__main__":
    main()
