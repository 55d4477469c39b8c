"""CPU of handing pages to parser processes: catlas's `ObservePool` against the stdlib's pool.

The end-to-end page set (`pages.py`, first sight: every page parsed) goes through `observe`
in two parser processes, `--in-flight` pages at a time from one event loop, as a lane hands
them over: catlas's `ObservePool` (a socket and one thread a parser, two pages with each)
beside `concurrent.futures.ProcessPoolExecutor` running the same call (what catlas used
before; its queue feeder and management threads). Both start their parsers by fork, so
their CPU is this process's children's once they are joined. Alternating rounds, best of
`--rounds`; the parse itself costs the same in both, so the difference is the hand-over.

    python bench/parse_handover.py               # 2,000 pages, 3 rounds each
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import multiprocessing
import random
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import observe_cpu

from catlas_assets.domain.observe import Observed
from catlas_assets.services.observe_pool import ObservePool, _observe_here


def _arguments(cases: list[Any], policy: Any) -> list[dict[str, Any]]:
    rng = random.Random(1)
    return [
        {
            "sensor": sensor,
            "fetched": fetched,
            "previous_blocks": None,
            "now": observe_cpu.NOW,
            "run_id": "run-1",
            "observation_id": f"obs-{sensor.id}",
            "policy": policy,
            "rng": random.Random(rng.getrandbits(64)),
        }
        for sensor, fetched in cases
    ]


async def _through(
    observe: Callable[[dict[str, Any]], Awaitable[Observed]],
    calls: list[dict[str, Any]],
    in_flight: int,
) -> list[Observed]:
    gate = asyncio.Semaphore(in_flight)

    async def one(arguments: dict[str, Any]) -> Observed:
        async with gate:
            return await observe(arguments)

    return await asyncio.gather(*(one(a) for a in calls))


def _catlas(calls: list[dict[str, Any]], workers: int, in_flight: int) -> list[Observed]:
    pool = ObservePool(workers, 60.0)
    pool.start_forked()
    try:
        return asyncio.run(_through(lambda a: pool.observe(**a), calls, in_flight))
    finally:
        pool.close()


def _stdlib(calls: list[dict[str, Any]], workers: int, in_flight: int) -> list[Observed]:
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    executor.submit(int).result()  # every process started before the clock's work

    async def observe(arguments: dict[str, Any]) -> Observed:
        call = functools.partial(_observe_here, 60.0, arguments)
        observed, body_keys = await asyncio.get_running_loop().run_in_executor(executor, call)
        for key in body_keys:
            observed.objects[key] = arguments["fetched"].body
        return observed

    try:
        return asyncio.run(_through(observe, calls, in_flight))
    finally:
        executor.shutdown(wait=True)


def _timed(run: Callable[[], list[Observed]]) -> tuple[dict[str, float], list[Observed]]:
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    answers = run()
    wall = time.perf_counter() - started
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)

    def cpu(before: Any, after: Any) -> float:
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    return {
        "wall_s": wall,
        "loop_process_cpu_s": cpu(self_before, self_after),
        "parsers_cpu_s": cpu(children_before, children_after),
    }, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    calls = _arguments(observe_cpu._cases(args.pages, args.seed), observe_cpu._policy())
    runners = {
        "catlas": lambda: _catlas(calls, args.workers, args.in_flight),
        "stdlib": lambda: _stdlib(calls, args.workers, args.in_flight),
    }
    best: dict[str, dict[str, float]] = {}
    answers: dict[str, list[Observed]] = {}
    for _ in range(args.rounds):
        for name, run in runners.items():
            figures, answers[name] = _timed(run)
            figures["cpu_s"] = figures["loop_process_cpu_s"] + figures["parsers_cpu_s"]
            if name not in best or figures["cpu_s"] < best[name]["cpu_s"]:
                best[name] = figures
    if answers["catlas"] != answers["stdlib"]:
        raise SystemExit("the two pools answered differently")
    pages = len(calls)
    result: dict[str, Any] = {"pages": pages, "workers": args.workers, "in_flight": args.in_flight}
    for name, figures in best.items():
        result[name] = figures
        print(
            f"{name:>7}: {figures['cpu_s'] * 1000 / pages:.2f} ms CPU a page "
            f"(loop's process {figures['loop_process_cpu_s'] * 1000 / pages:.2f}, parsers "
            f"{figures['parsers_cpu_s'] * 1000 / pages:.2f}), {pages / figures['wall_s']:.0f} "
            "pages/s"
        )
    ratio = best["catlas"]["cpu_s"] / best["stdlib"]["cpu_s"]
    result["cpu_ratio"] = ratio
    print(f"CPU a page, catlas / stdlib pool: {ratio:.3f}x")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
