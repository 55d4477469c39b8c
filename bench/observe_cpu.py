"""CPU cost of the pure core `observe` on first-sight bench pages (no I/O, no network).

Renders pages with `pages.py`'s generator (the end-to-end benchmark's page set), runs
`domain.observe.observe` on each as a sensor that has never been fetched (the first pass:
normalize, extract, hashes, snapshot rows) and prints CPU milliseconds per page; CPU time,
not wall time, so a loaded machine still gives a comparable figure.

    python bench/observe_cpu.py                  # 200 pages, best of 3 rounds
    python bench/observe_cpu.py --profile        # and a cProfile top-15 (one round)
    python bench/observe_cpu.py --pages 2000 --by-surface  # the end-to-end page set, by surface

The end-to-end benchmark's first pass parses 2,000 pages on 40 hosts (`--pages 2000`): its
mix costs more a page than the first 200 (more of the costly surfaces), so that is the
figure to set beside the first pass; `--by-surface` says which surfaces cost what.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import hashlib
import pstats
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pages as bench_pages

from catlas_assets.domain.extract import html, job_listings, links
from catlas_assets.domain.observe import Observed, Policy, observe
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.vocabulary import SensorStatus
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _policy() -> Policy:
    # The product's defaults, as a tick reads them (environment ignored).
    return Runtime(Settings.from_env({})).policy


def _cases(count: int, seed: int) -> list[tuple[SensorState, Fetched]]:
    cases = []
    for i, page in enumerate(bench_pages.plan(count, max(1, count // 50))):
        body = bench_pages.render(page, seed).encode()
        sensor = SensorState(
            id=i + 1,
            company_id=1,
            surface=page.surface,
            url=page.url,
            connector="generic_html",
            status=SensorStatus.PENDING,
            base_interval_s=86_400,
            current_interval_s=86_400,
            quality_score=50.0,
        )
        headers = {"content-type": "text/html; charset=utf-8", "etag": f'"{i}"'}
        cases.append((sensor, Fetched(page.url, page.url, 200, headers, body, 5, 1)))
    return cases


def _forget() -> None:
    # Every round sees its pages for the first time: what a process remembers of a site's
    # links (shared by its pages) is dropped, so a round never gains from the one before.
    for memo in (html._site_link, links.site_origin, links._join_root_path):
        memo.cache_clear()
    job_listings.is_posting_url.cache_clear()


def run(cases: list[tuple[SensorState, Fetched]], policy: Policy) -> list[Observed]:
    _forget()
    rng = random.Random(1)
    return [
        observe(
            sensor,
            fetched,
            None,
            now=NOW,
            run_id="run-1",
            observation_id=f"obs-{sensor.id}",
            policy=policy,
            rng=rng,
        )
        for sensor, fetched in cases
    ]


def by_surface(cases: list[tuple[SensorState, Fetched]], policy: Policy) -> str:
    """CPU milliseconds a page of each surface, and its share of the whole (one round)."""
    _forget()
    rng = random.Random(1)
    spent: dict[str, list[float]] = collections.defaultdict(list)
    for sensor, fetched in cases:
        start = time.process_time()
        observe(
            sensor, fetched, None, now=NOW, run_id="run-1",
            observation_id=f"obs-{sensor.id}", policy=policy, rng=rng,
        )  # fmt: skip
        spent[sensor.surface].append(time.process_time() - start)
    total = sum(sum(times) for times in spent.values())
    lines = [f"{'surface':<12} {'pages':>5} {'ms/page':>8} {'share':>6}"]
    for surface, times in sorted(spent.items(), key=lambda item: -sum(item[1])):
        lines.append(
            f"{surface:<12} {len(times):>5} {sum(times) * 1000 / len(times):>8.2f} "
            f"{sum(times) / total:>6.1%}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print a cProfile top-15")
    parser.add_argument(
        "--by-surface", action="store_true", help="print the CPU a page of each surface costs"
    )
    parser.add_argument(
        "--digest",
        action="store_true",
        help="print one hash of every output (rows, objects, state)",
    )
    args = parser.parse_args()
    cases = _cases(args.pages, args.seed)
    policy = _policy()
    sizes = sorted(len(f.body) for _, f in cases)
    run(cases[:5], policy)  # imports and caches warmed outside the timing
    best = float("inf")
    for _ in range(args.rounds):
        start = time.process_time()
        results = run(cases, policy)
        best = min(best, time.process_time() - start)
    outcomes = {str(r.outcome) for r in results}
    print(
        f"{len(cases)} pages, median {sizes[len(sizes) // 2] / 1000:.1f} KB, outcomes {outcomes}: "
        f"{best * 1000 / len(cases):.2f} ms CPU/page (best of {args.rounds})"
    )
    if args.digest:
        # The same digest before and after a change: the same rows, objects and state.
        digest = hashlib.sha256()
        for result in results:
            digest.update(repr((result.outcome, result.rows, result.sensor_update)).encode())
            for key in sorted(result.objects):
                digest.update(key.encode() + result.objects[key])
        print(f"digest {digest.hexdigest()}")
    if args.by_surface:
        print(by_surface(cases, policy))
    if args.profile:
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        run(cases, policy)
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
