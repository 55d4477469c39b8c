"""One worker's memory through a day of sensors: peak RSS and how it moves over time.

    python bench/memory_day.py [--sensors 100000] [--domains 1000] [--json OUT]

The fleet machinery of the chaos tests (tests/chaos/fleet.py): a throwaway PostgreSQL
database seeded with `--sensors` sensors over `--domains` fixture-web domains, all due at
the day's instant, and one `catlas` worker process (the fleet's worker: `run_tick` until
nothing is left to claim) against the fixture web served by this process. Its resident
set is sampled from /proc every `--every` seconds; the figures are the peak and the
curve's start, middle and end (the median of the samples in the first, middle and last
tenth of the run), against the target (≤ 500 MB, flat). There is no peer for a worker's
footprint: the target is the comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the chaos tests' fleet machinery

from scratch_db import ScratchDatabase  # a sibling: bench/ is the script's path

from fixture_web import FixtureWeb
from tests.chaos import fleet
from tests.cli.cli_harness import iso


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        return None
    return None


def phase(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """Median RSS of the samples between two fractions of the run."""
    n = len(samples)
    chosen = samples[int(n * start) : max(int(n * start) + 1, int(n * end))]
    return statistics.median(r for _, r in chosen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=100_000)
    parser.add_argument("--domains", type=int, default=1000)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    db = ScratchDatabase.create()
    db_url = db.url()
    try:
        with FixtureWeb(fleet=args.domains) as web, tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            web.write_hosts_file(root / "hosts")
            started = time.perf_counter()
            fleet.seed(db_url, args.sensors, args.domains, 1)
            print(f"{args.sensors:,} sensors seeded in {time.perf_counter() - started:.1f} s")
            now = fleet._instant(0, 1)
            web.set_now(now)
            env = fleet._env(root, web, db_url, 0, iso(now))
            # One worker alone: a short spacing keeps the day's run within the benchmark's
            # time while each domain is still asked one request at a time.
            env.update(CATLAS_DOMAIN_SPACING_S="0.05", CATLAS_FETCH_CONCURRENCY="32")
            started = time.perf_counter()
            errors = (root / "worker.err").open("w")
            proc = subprocess.Popen(
                [sys.executable, "-c", fleet.WORKER],
                env=env,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            samples: list[tuple[float, float]] = []
            while proc.poll() is None:
                got = rss_mib(proc.pid)
                if got is not None:
                    samples.append((time.perf_counter() - started, got))
                time.sleep(args.every)
            seconds = time.perf_counter() - started
            out = proc.stdout.read() if proc.stdout else ""
            errors.close()
            if proc.returncode != 0:
                err = (root / "worker.err").read_text()[-3000:]
                raise SystemExit(f"worker failed ({proc.returncode}): {out[-2000:]}{err}")
            fetched = len({r.path for r in web.requests if r.path.startswith("/load/")})
    finally:
        db.drop()
    peak_line = [w for w in out.split() if w.startswith("peak_rss_kib=")]
    peak = int(peak_line[-1].split("=")[1]) / 1024 if peak_line else max(r for _, r in samples)
    figures = {
        "sensors": args.sensors,
        "domains": args.domains,
        "fetched": fetched,
        "seconds": seconds,
        "sensors_per_s": args.sensors / seconds,
        "peak_rss_mib": peak,
        "rss_start_mib": phase(samples, 0.0, 0.1),
        "rss_middle_mib": phase(samples, 0.45, 0.55),
        "rss_end_mib": phase(samples, 0.9, 1.0),
        "samples": [[round(t, 1), round(r, 1)] for t, r in samples],
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "samples"}, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
