"""Claims per second on PostgreSQL with a million sensors, one and four worker processes.

    CATLAS_BENCH_PG_ADMIN_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        python bench/claims.py [--sensors 1000000] [--due 50000] [--batch 500]

A throwaway database (created, filled, dropped) holds `--sensors` sensors, `--due` of them
due now, the rest spread over the coming week. Each worker process claims batches with the
real `StateStore.claim_due` until the due set is drained; the peer is the minimal
hand-written claim (`UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT n)
RETURNING *`) drained the same way. Between runs every claim is cleared and the table
vacuumed, so each run starts from the same state. A run checks that every due sensor was
claimed exactly once. Also reports whether the hot tables carry the tuned autovacuum
settings (migration 0004) and the time of `next_due_at` (the Dagster sensor's check).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from scratch_db import ScratchDatabase  # a sibling: bench/ is the script's path

from resources.state.store import StateStore

NOW = datetime(2026, 1, 5, 8, tzinfo=UTC)
CLAIM_TIMEOUT_S = 900
# Tables every sensor run rewrites or queues through; each should carry its own
# autovacuum threshold (0004_hot_tables) rather than PostgreSQL's 20 %-of-the-table default.
HOT_TABLES = ("sensors", "lake_outbox", "crawl_runs", "cost_ledger", "connectors",
              "domain_budgets", "task_leases", "change_inbox", "queue_jobs", "webpages")  # fmt: skip

PEER_CLAIM = (
    "UPDATE sensors SET claimed_at = %(now)s, claimed_by = %(worker)s WHERE id IN ("
    " SELECT id FROM sensors WHERE status IN ('active', 'failing', 'pending')"
    " AND next_run_at <= %(now)s AND claimed_at IS NULL"
    " LIMIT %(n)s FOR UPDATE SKIP LOCKED) RETURNING *"
)


def fill(url: str, sensors: int, due: int) -> float:
    """Insert the sensors server-side (one INSERT ... SELECT over generate_series: no rows
    travel over the wire, faster than COPY from the client); returns the seconds taken."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO companies (id, name, importance, tier, onboarding_status, stats, "
            "source_meta, created_at, updated_at) "
            "SELECT g, 'bench ' || g, 0.5, 3, 'active', '{}', '{}', %(now)s, %(now)s "
            "FROM generate_series(1, 1000) AS g",
            {"now": NOW},
        )
        # Sensors 1..due are due (claimable statuses, in the past, mixed priorities); the
        # others are in every status, due over the coming week.
        conn.execute(
            "INSERT INTO sensors (company_id, surface, url, connector, status, tier, "
            "base_interval_s, current_interval_s, next_run_at, priority, quality_score, "
            "snapshot_version, consecutive_unchanged, consecutive_failures, config, "
            "created_at, updated_at) "
            "SELECT 1 + g %% 1000, 'products', 'https://c' || (g %% 1000) || '.example/p/' || g, "
            "'generic_html', "
            "CASE WHEN g <= %(due)s THEN (ARRAY['active','active','failing','pending'])[1 + g %% 4] "
            "ELSE (ARRAY['active','active','active','failing','pending','stale','retired'])"
            "[1 + g %% 7] END, 'C', 86400, 86400, "
            "CASE WHEN g <= %(due)s THEN %(now)s - make_interval(secs => g %% 3600) "
            "ELSE %(now)s + make_interval(secs => 60 + g %% 604800) END, "
            "(g %% 5) / 4.0, 50, 0, 0, 0, '{}', %(now)s, %(now)s "
            "FROM generate_series(1, %(n)s) AS g",
            {"now": NOW, "n": sensors, "due": due},
        )
        conn.execute("VACUUM ANALYZE sensors")
    return time.perf_counter() - started


def reset(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE sensors SET claimed_at = NULL, claimed_by = NULL WHERE claimed_at IS NOT NULL"
        )
        conn.execute("VACUUM ANALYZE sensors")


def _catlas_worker(url: str, worker: str, batch: int, ready: Any, start: Any, out: Any) -> None:
    store = StateStore.open(url, auto_create=False)
    store.claim_due(now=NOW, worker="warm-up", limit=0, claim_timeout_s=CLAIM_TIMEOUT_S)
    ids: list[int] = []
    ready.put(worker)
    start.wait()
    began = time.perf_counter()
    while rows := store.claim_due(
        now=NOW, worker=worker, limit=batch, claim_timeout_s=CLAIM_TIMEOUT_S
    ):
        ids.extend(r["id"] for r in rows)
    out.put((worker, ids, began, time.perf_counter()))
    store.close()


def _peer_worker(url: str, worker: str, batch: int, ready: Any, start: Any, out: Any) -> None:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SELECT 1")
    ids: list[int] = []
    ready.put(worker)
    start.wait()
    began = time.perf_counter()
    while rows := conn.execute(PEER_CLAIM, {"now": NOW, "worker": worker, "n": batch}).fetchall():
        ids.extend(r[0] for r in rows)
    out.put((worker, ids, began, time.perf_counter()))
    conn.close()


def drain(kind: str, url: str, workers: int, batch: int, due: int) -> float:
    """Drain the due set with `workers` processes; returns claims per second."""
    # Forked, not spawned: the parent holds no connection, and a fork skips the imports.
    ctx = mp.get_context("fork")
    ready, start, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    target = _catlas_worker if kind == "catlas" else _peer_worker
    procs = [
        ctx.Process(target=target, args=(url, f"{kind}-{i}", batch, ready, start, out))
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=300)  # every process connected and warm before the start
    start.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    claimed = [i for _, ids, _, _ in results for i in ids]
    if len(claimed) != due or len(set(claimed)) != due:
        raise SystemExit(f"{kind} x{workers}: claimed {len(claimed)} ({len(set(claimed))} "
                         f"distinct) of {due} due")  # fmt: skip
    seconds = max(r[3] for r in results) - min(r[2] for r in results)
    return due / seconds


def autovacuum_coverage(url: str) -> dict[str, str | None]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT relname, array_to_string(reloptions, ', ') FROM pg_class "
            "WHERE relname = ANY(%s) AND relkind = 'r'",
            (list(HOT_TABLES),),
        ).fetchall()
    found = dict(rows)
    return {t: found.get(t) for t in HOT_TABLES}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=500, help="CATLAS_SCHEDULER_CLAIM_BATCH")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    args = parser.parse_args()
    db = ScratchDatabase.create()
    plain_url, sa_url = db.url("postgresql"), db.url()
    try:
        StateStore.open(sa_url).close()
        filled = fill(plain_url, args.sensors, args.due)
        print(f"{args.sensors:,} sensors ({args.due:,} due) inserted in {filled:.1f} s")
        store = StateStore.open(sa_url, auto_create=False)
        samples = []
        for _ in range(20):
            t0 = time.perf_counter()
            store.next_due_at()
            samples.append(time.perf_counter() - t0)
        next_due_ms = statistics.median(samples) * 1000
        store.close()
        print(f"next_due_at: median {next_due_ms:.2f} ms")
        runs: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for kind in ("catlas", "peer"):
                for workers in (1, args.workers):
                    reset(plain_url)
                    rate = drain(kind, sa_url if kind == "catlas" else plain_url, workers,
                                 args.batch, args.due)  # fmt: skip
                    runs.setdefault(f"{kind}_{workers}", []).append(rate)
                    print(f"{kind} x{workers}: {rate:,.0f} claims/s", flush=True)
        med = {k: statistics.median(v) for k, v in runs.items()}
        coverage = autovacuum_coverage(plain_url)
        for table, opts in coverage.items():
            print(f"autovacuum {table}: {opts or 'PostgreSQL defaults'}")
        figures = {
            "sensors": args.sensors,
            "due": args.due,
            "batch": args.batch,
            "workers": args.workers,
            "rounds": args.rounds,
            "fill_s": filled,
            "next_due_at_ms": next_due_ms,
            "catlas_1_per_s": med["catlas_1"],
            f"catlas_{args.workers}_per_s": med[f"catlas_{args.workers}"],
            "peer_1_per_s": med["peer_1"],
            f"peer_{args.workers}_per_s": med[f"peer_{args.workers}"],
            "catlas_scaling": med[f"catlas_{args.workers}"] / med["catlas_1"],
            "peer_scaling": med[f"peer_{args.workers}"] / med["peer_1"],
            "runs": runs,
            "autovacuum": coverage,
            "cpus": os.cpu_count(),
        }
        print(json.dumps({k: v for k, v in figures.items() if k != "autovacuum"}, indent=2))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(figures, indent=2))
    finally:
        db.drop()


if __name__ == "__main__":
    main()
