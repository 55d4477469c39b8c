"""`observe` in parser processes: the same answer as in the loop's process, a pool sized for
the machine, and parsers that die cost the page they were parsing, never the pool."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from test_domain_observe import NOW, POLICY, SECTIONS, baseline, fetch, new_sensor, page

from catlas_assets.domain.vocabulary import FailureClass, Outcome
from catlas_assets.services.observe_pool import ObservePool, pool_size
from resources.process_alive import alive


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


# -- parser processes that die ----------------------------------------------------------------
def _slow_page() -> bytes:
    """Markup that takes a parser seconds: a page being parsed when its parser is killed."""
    items = "".join(
        f"<article><h2>Item {i}</h2><p>{'word ' * 30}</p></article>" for i in range(20_000)
    )
    return f"<html><body>{items}</body></html>".encode()


async def _when(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_parser_killed_mid_parse_fails_that_page_alone_and_a_new_one_parses_the_rest() -> None:
    """A parser that dies (the kernel's OOM killer, a crash in the C parser) fails the page
    it was parsing as PARSING, naming how it ended; the page queued behind it and every
    later page are parsed by the parser started in its place (the process pool this
    replaced answered BrokenProcessPool to every page after the first death)."""
    calm = fetch(page(SECTIONS))

    async def scenario() -> tuple:
        pool, inline = ObservePool(1, 60.0), ObservePool(0, 60.0)
        try:
            slow = asyncio.ensure_future(
                pool.observe(**_arguments(new_sensor(), fetch(_slow_page())))
            )
            behind = asyncio.ensure_future(pool.observe(**_arguments(new_sensor(), calm)))
            await _when(lambda: pool._parsers and len(pool._parsers[0].sent) == 2)
            first = pool._parsers[0].process
            os.kill(first.pid, signal.SIGKILL)
            killed, queued = await slow, await behind
            later = await pool.observe(**_arguments(new_sensor(), calm))
            expected = await inline.observe(**_arguments(new_sensor(), calm))
            return killed, queued, later, expected, first, pool._parsers[0].process
        finally:
            pool.close()
            inline.close()

    killed, queued, later, expected, first, replacement = asyncio.run(scenario())
    assert killed.outcome is Outcome.FAILED
    assert killed.failure_class is FailureClass.PARSING
    assert "killed by signal 9" in killed.sensor_update["last_failure_detail"]
    assert queued == expected and later == expected  # parsed, by the new process
    assert replacement.pid != first.pid


def test_a_parser_that_died_while_idle_costs_no_page() -> None:
    async def scenario() -> tuple:
        pool = ObservePool(1, 60.0)
        try:
            before = await pool.observe(**_arguments(new_sensor(), fetch(page(SECTIONS))))
            process = pool._parsers[0].process
            os.kill(process.pid, signal.SIGKILL)
            await asyncio.to_thread(process.join, 10)
            after = await pool.observe(**_arguments(new_sensor(), fetch(page(SECTIONS))))
            return before, after
        finally:
            pool.close()

    before, after = asyncio.run(scenario())
    assert before.outcome is Outcome.OK and after == before


def test_two_event_loops_share_one_pool() -> None:
    """A daemon's repair runs its own loop beside the tick's: both hand pages to the same
    parsers and each hears its own answers."""
    pool = ObservePool(2, 60.0)
    bodies = [page([*SECTIONS[:-i], f"Section only page {i} has"]) for i in range(1, 13)]
    inline = ObservePool(0, 60.0)
    expected = [
        asyncio.run(inline.observe(**_arguments(new_sensor(), fetch(body)))) for body in bodies
    ]
    inline.close()
    answers: dict[int, list] = {}

    def loop_of(half: int) -> None:
        async def many() -> list:
            return await asyncio.gather(
                *(pool.observe(**_arguments(new_sensor(), fetch(b))) for b in bodies[half::2])
            )

        answers[half] = asyncio.run(many())

    try:
        threads = [threading.Thread(target=loop_of, args=(half,)) for half in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        pool.close()
    assert answers[0] == expected[0::2] and answers[1] == expected[1::2]


def test_parsers_exit_when_the_process_that_made_them_is_killed(tmp_path) -> None:
    probe = textwrap.dedent(
        """
        import os, sys
        sys.path.insert(0, sys.argv[1])
        from catlas_assets.services.observe_pool import ObservePool
        pool = ObservePool(2, 30.0)
        pool.start_forked()
        print(" ".join(str(p.process.pid) for p in pool._parsers), flush=True)
        os.kill(os.getpid(), 9)
        """
    )
    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", probe, root], capture_output=True, text=True, timeout=60
    )
    pids = [int(pid) for pid in out.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids)


def test_large_pages_back_to_back_are_parsed_not_deadlocked(monkeypatch) -> None:
    """A page larger than the socket's buffer is written only to an idle parser: written
    behind another, the parser (writing a large answer) and the pool's thread (writing the
    rest of the page) waited on each other for ever. The buffer is made small here, as a
    system with a low `net.core.wmem_max` has it, so the pages are far larger than it."""
    from catlas_assets.services import observe_pool

    monkeypatch.setattr(observe_pool, "PIPELINE_BUFFER", 1 << 16)

    def large(i: int) -> bytes:
        paragraphs = "".join(
            f"<p>Paragraph {i}-{k} says {'words and more words ' * 8}</p>" for k in range(3000)
        )
        return f"<html><body>{paragraphs}</body></html>".encode()

    async def three() -> list:
        pool = ObservePool(1, 60.0)
        try:
            calls = (pool.observe(**_arguments(new_sensor(), fetch(large(i)))) for i in range(3))
            return await asyncio.wait_for(asyncio.gather(*calls), 60)
        finally:
            pool.close()

    assert len(large(0)) > 500_000
    assert [o.outcome for o in asyncio.run(three())] == [Outcome.OK] * 3


def test_a_parser_that_answers_nothing_in_time_is_stopped_and_replaced(monkeypatch) -> None:
    """A parse stuck where its timer signal cannot reach it (inside C code; here the process
    is frozen by SIGSTOP) is stopped after twice the parse bound and a margin: its page fails
    as PARSING saying so, and the next page is parsed by a new process."""
    from catlas_assets.services import observe_pool

    monkeypatch.setattr(observe_pool, "ANSWER_MARGIN_S", 0.5)

    async def scenario() -> tuple:
        pool = ObservePool(1, 1.0)
        try:
            stuck = asyncio.ensure_future(
                pool.observe(**_arguments(new_sensor(), fetch(_slow_page())))
            )
            await _when(lambda: pool._parsers and len(pool._parsers[0].sent) == 1)
            frozen = pool._parsers[0].process
            os.kill(frozen.pid, signal.SIGSTOP)
            started = time.monotonic()
            failed = await stuck
            waited = time.monotonic() - started
            later = await pool.observe(**_arguments(new_sensor(), fetch(page(SECTIONS))))
            return failed, waited, later, frozen
        finally:
            pool.close()

    failed, waited, later, frozen = asyncio.run(scenario())
    assert failed.failure_class is FailureClass.PARSING
    assert "answered nothing within 2.5s" in failed.sensor_update["last_failure_detail"]
    assert 2.0 < waited < 30
    assert later.outcome is Outcome.OK
    assert not frozen.is_alive()
