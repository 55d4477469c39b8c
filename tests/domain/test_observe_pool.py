"""`observe` in worker processes: the same answer as in the loop's process, and a pool
sized for the machine (one core kept for the event loop)."""

from __future__ import annotations

import asyncio
import random

from test_domain_observe import NOW, POLICY, SECTIONS, baseline, fetch, new_sensor, page

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.services.observe_pool import ObservePool, pool_size


def _arguments(sensor, fetched, blocks=None) -> dict:
    return {
        "sensor": sensor,
        "fetched": fetched,
        "previous_blocks": blocks,
        "now": NOW,
        "run_id": "run_1",
        "observation_id": "obs_1",
        "policy": POLICY,
        "rng": random.Random(5),
    }


def test_the_pool_answers_what_the_loops_process_answers() -> None:
    sensor, blocks = baseline()
    changed = fetch(page([*SECTIONS[:-3], "A brand new section about pricing"]))
    cases = [
        (new_sensor(), fetch(page(SECTIONS))),  # first snapshot
        (sensor, changed),  # a change, diffed against the last blocks
        (sensor, fetch(page(SECTIONS))),  # the last bytes: decided without the pool
    ]

    async def both() -> list[tuple]:
        pool, inline = ObservePool(1, 30.0), ObservePool(0, 30.0)
        try:
            return [
                (
                    await pool.observe(**_arguments(s, f, blocks)),
                    await inline.observe(**_arguments(s, f, blocks)),
                )
                for s, f in cases
            ]
        finally:
            pool.close()

    answers = asyncio.run(both())
    assert [a.outcome for a, _ in answers] == [Outcome.OK, Outcome.CHANGED, Outcome.UNCHANGED]
    for in_pool, in_loop in answers:
        assert in_pool == in_loop


def test_the_automatic_size_is_a_parser_per_core_and_none_on_one_core() -> None:
    assert pool_size(-1, cpus=1) == 0
    assert pool_size(-1, cpus=2) == 2
    assert pool_size(-1, cpus=4) == 4
    assert pool_size(-1, cpus=64) == 8  # one loop keeps about 8 parsers busy
    assert pool_size(3, cpus=64) == 3 and pool_size(0, cpus=64) == 0


def test_without_a_pool_pages_are_parsed_one_at_a_time_in_one_thread(monkeypatch) -> None:
    """Parsing holds the interpreter lock: parallel parser threads only starve the loop."""
    import threading
    import time

    from catlas_assets.services import observe_pool

    inside, peak, threads = 0, 0, set()
    lock = threading.Lock()
    real = observe_pool.observe_within

    def counted(*args, **kwargs):
        nonlocal inside, peak
        with lock:
            inside += 1
            peak = max(peak, inside)
            threads.add(threading.current_thread().name)
        try:
            time.sleep(0.02)  # long enough for the others to start if they could
            return real(*args, **kwargs)
        finally:
            with lock:
                inside -= 1

    monkeypatch.setattr(observe_pool, "observe_within", counted)

    async def many() -> list:
        inline = ObservePool(0, 30.0)
        try:
            return await asyncio.gather(
                *(
                    inline.observe(**_arguments(new_sensor(), fetch(page(SECTIONS))))
                    for _ in range(6)
                )
            )
        finally:
            inline.close()

    answers = asyncio.run(many())
    assert [a.outcome for a in answers] == [Outcome.OK] * 6
    assert peak == 1 and len(threads) == 1
