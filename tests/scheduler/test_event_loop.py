"""The event loop fetching commands run on: uvloop when it imports, asyncio's otherwise;
imported, with what else a lane needs, before a tick forks its lanes."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catlas_assets.services import event_loop


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_a_command_runs_on_uvloop_where_it_is_installed() -> None:
    # A dependency of catlas on every platform it is built for (pyproject.toml).
    assert event_loop.run(_loop_module()).startswith("uvloop")


def test_without_uvloop_the_same_code_runs_on_asyncios_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert event_loop.loop_factory() is None
    assert event_loop.run(_loop_module()).startswith("asyncio")


def test_each_run_gets_a_new_loop_and_closes_it() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def keep() -> None:
        loops.append(asyncio.get_running_loop())

    event_loop.run(keep())
    event_loop.run(keep())
    assert loops[0] is not loops[1]
    assert all(loop.is_closed() for loop in loops)


def test_an_exception_of_the_coroutine_reaches_the_caller() -> None:
    async def fail() -> None:
        raise ValueError("from the loop")

    with pytest.raises(ValueError, match="from the loop"):
        event_loop.run(fail())


def test_a_python_signal_handler_runs_while_the_loop_waits() -> None:
    """A tick's stop on SIGTERM is a Python handler (run_control.signals_stop) that the loop
    must run while it waits on sockets and timers."""
    heard: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, _frame: heard.append(signum))

    async def wait_for_signal() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, signal.raise_signal, signal.SIGUSR1)
        for _ in range(100):
            if heard:
                return
            await asyncio.sleep(0.01)

    try:
        event_loop.run(wait_for_signal())
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert heard == [signal.SIGUSR1]


def test_a_tick_imports_nothing_a_lane_needs_after_its_process_is_set_up(tmp_path: Path) -> None:
    """A tick's lanes are forked from its process for every tick: a module a lane imports
    itself (its event loop, its parser pool, the budget and robots.txt stores) is imported
    again in each lane of each tick. The tick's set-up imports them before the lanes fork;
    a tick run in one process, as a lane runs it, then imports none of them."""
    probe = textwrap.dedent(
        f"""
        import json, sys
        from catlas_assets.services import catalog
        from catlas_assets.services.runtime import Runtime
        from catlas_assets.services.tick import _set_up_process, run_tick
        from catlas_assets.settings import Settings

        runtime = Runtime(Settings(state_dir={str(tmp_path)!r}).with_overrides(lanes=0))
        company = catalog.add_company(runtime, name="Loop", website="http://127.0.0.1:9", tier=3)
        catalog.add_sensor(runtime, company_id=company, surface="products", url="http://127.0.0.1:9/")
        _set_up_process()
        before = set(sys.modules)
        report = run_tick(runtime).report
        print(json.dumps([report.counters["claimed"], sorted(set(sys.modules) - before)]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    claimed, imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert claimed == 1  # the tick ran its sensor (a refused address: no request is sent)
    lane_needs = {
        "uvloop",
        "catlas_assets.services.observe_pool",
        "resources.state.domain_budgets",
        "resources.state.robots_files",
    }
    assert lane_needs.isdisjoint(imported), sorted(lane_needs & set(imported))
