"""Lanes: the sensors of a large tick run in worker processes, one per core.

A tick's event loop is one core's work: fetching, deciding, archiving and committing a
sensor run is Python (a 304 costs about a millisecond of it), and a loop runs on one core.
A tick of at least `CATLAS_LANE_MIN_BATCH` claimed sensors therefore hands them to lanes:
processes that each run a share of the sensors with their own event loop, fetcher,
DomainGovernor and group committer, and a parser process of their own (none with
`CATLAS_OBSERVE_WORKERS=0`: then a lane parses in a thread). The tick's own process keeps
what belongs to the run:
the claim order, the stop rules and the request budget (`claimed_work`), interruption, the
verdict and the lake flush at the end.

Each registrable domain is one lane's for the whole tick, so a domain's concurrency, its
spacing and its leased budget units stay one process's business, as without lanes (spaced
domains also take turns in the store). Domains are dealt as the claim comes in (its first
part, then the rest), the one with the most sensors first, each to the lane with the fewest
sensors so far: the shares come out even however the domains are sized.

A lane commits as the tick's worker (the claims are the tick's) and draws nothing at random
itself: each sensor's seed is drawn by the tick in claim order, as in one process. A lane
is told its domains as they are dealt (it takes their budget leases together, before their
first sensors come), reads its sensors from a socket and answers each with its
`SensorRunResult`; a sensor the tick gives up (a second signal, the deadline) is cancelled
in its lane. A lane that dies
fails the tick (stop `error`); its claims are released like every sensor not finished. A
lane whose tick process dies sees its socket close and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import signal
import socket
import struct
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from multiprocessing.process import BaseProcess
from typing import Any

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.services import event_loop
from catlas_assets.services.commit_groups import GroupCommitter
from catlas_assets.services.pipeline import SensorRunResult, run_sensor
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.worker_processes import (
    how_it_ended,
    per_core,
    portable,
    start_method,
    worker_context,
)
from catlas_assets.settings import Settings
from resources.clock import SystemClock, VirtualClock

log = logging.getLogger(__name__)

MAX_AUTO_LANES = 8
# How long a closing lane may take to commit what it has in flight before it is killed.
CLOSE_TIMEOUT_S = 60.0
_HEADER = struct.Struct(">I")
_READ_SIZE = 1 << 18


def lane_count(setting: int, cpus: int | None = None) -> int:
    """Lanes for `CATLAS_LANES` (-1: automatic) on `cpus` cores."""
    return per_core(setting, MAX_AUTO_LANES, cpus)


def deal(
    sensors: Iterable[SensorState],
    lanes: int,
    dealt: Mapping[str, int] | None = None,
    load: Sequence[int] | None = None,
) -> dict[str, int]:
    """Each registrable domain's lane: the largest domains first, each to the lane with the
    fewest sensors so far (ties to the lowest lane; the same batch deals the same way).

    A later part of a batch is dealt onto the earlier deal: a domain already `dealt` keeps
    its lane, and `load` is the sensors each lane holds already."""
    sizes = Counter(s.domain for s in sensors)
    route = dict(dealt or {})
    held = list(load or [0] * lanes)
    for domain, size in sizes.items():
        if domain in route:
            held[route[domain]] += size
    new = [(domain, size) for domain, size in sizes.items() if domain not in route]
    for domain, size in sorted(new, key=lambda item: (-item[1], item[0])):
        lane = min(range(lanes), key=lambda i: (held[i], i))
        route[domain] = lane
        held[lane] += size
    return route


class LaneDied(RuntimeError):
    """A lane process ended before it answered every sensor it was given."""


# -- the tick's side --------------------------------------------------------------------------
@dataclass
class _Lane:
    index: int
    process: BaseProcess
    sock: socket.socket  # the tick's end of the lane's socket
    sender: _Sender | None = None
    pending: dict[int, asyncio.Future[SensorRunResult]] = field(default_factory=dict)
    listening: asyncio.Task[None] | None = None
    closed: bool = False
    finished: bool = False  # it said "closed": everything it ran is committed; it is exiting


class Lanes:
    """The lanes of one tick: `run(sensor, seed)` runs a sensor in its domain's lane.

    `spawn` starts the processes before the tick's event loop runs (a lane forked then
    starts at once; see `worker_processes.start_method`), `connect` attaches them to it.
    """

    def __init__(self, runtime: Runtime, run_id: str, count: int):
        self._runtime = runtime
        self._run_id = run_id
        self._route: dict[str, int] = {}
        self._load = [0] * count  # the sensors dealt to each lane
        self._count = count
        self._lanes: list[_Lane] = []
        self._keys = itertools.count()

    def spawn(self) -> None:
        method = start_method()
        context = worker_context(method)
        clock_now = _virtual_now(self._runtime)
        settings = self._runtime.settings
        for index in range(self._count):
            ours, theirs = socket.socketpair()
            # A forked lane holds a copy of every socket of this process, among them the
            # tick's ends of its own socket and of the lanes before it: it closes them, or it
            # would never see the tick's process go (a fork server's lane gets `theirs` only).
            tick_ends = [*(lane.sock for lane in self._lanes), ours] if method == "fork" else []
            process = context.Process(
                target=lane_main,
                args=(theirs, settings, self._runtime.worker, clock_now, self._run_id, tick_ends),
                name=f"catlas-lane-{index}",
                daemon=False,  # it starts a parser process of its own; `end` ends it
            )
            try:
                process.start()
            finally:
                theirs.close()
            self._lanes.append(_Lane(index, process, ours))

    async def connect(self, sensors: list[SensorState]) -> None:
        """Attach the lanes to the running loop, and deal them the batch's domains."""
        for lane in self._lanes:
            reader, writer = await asyncio.open_connection(sock=lane.sock)
            lane.sender = _Sender(writer)
            lane.listening = asyncio.create_task(self._listen(lane, reader))
        self.add(sensors)

    def add(self, sensors: list[SensorState]) -> None:
        """Deal the domains of (more of) the batch, and tell each lane its new ones: it takes
        their budget leases together before their first sensors come."""
        dealt = self._route
        self._route = deal(sensors, self._count, dealt, self._load)
        for sensor in sensors:
            self._load[self._route[sensor.domain]] += 1
        new: dict[int, list[str]] = {}
        for domain in dict.fromkeys(s.domain for s in sensors):
            if domain not in dealt:
                new.setdefault(self._route[domain], []).append(domain)
        for index, domains in new.items():
            lane = self._lanes[index]
            if lane.sender is not None and not lane.closed:
                lane.sender.send(("domains", None, domains))

    def end(self) -> None:
        """Wait for the lanes that finished (`aclose`) to exit, and end any other at once (the
        tick never got to run them, or it was interrupted). A finished lane has committed
        everything; its exit (its parser, its connections) overlaps the tick's lake flush."""
        for lane in self._lanes:
            lane.sock.close()
            if lane.process.pid is not None:
                _end(lane.process, timeout_s=CLOSE_TIMEOUT_S if lane.finished else 0)

    async def run(self, sensor: SensorState, seed: int) -> SensorRunResult:
        lane = self._lanes[self._route.get(sensor.domain, 0)]
        if lane.closed:  # its socket closed first; wait for the exit to say how it ended
            await asyncio.to_thread(lane.process.join, CLOSE_TIMEOUT_S)
            raise LaneDied(f"lane {lane.index} has ended ({how_it_ended(lane.process)})")
        assert lane.sender is not None, "connect() first"
        key = next(self._keys)
        future: asyncio.Future[SensorRunResult] = asyncio.get_running_loop().create_future()
        lane.pending[key] = future
        lane.sender.send(("run", key, sensor, seed))
        try:
            return await future
        except asyncio.CancelledError:
            if lane.pending.pop(key, None) is not None and not lane.closed:
                lane.sender.send(("cancel", key, None))
            raise

    async def _listen(self, lane: _Lane, reader: asyncio.StreamReader) -> None:
        receiver = _Receiver(reader)
        try:
            while (message := await receiver.next()) is not None:
                kind, key, payload = message
                if kind == "closed":
                    lane.finished = True
                    break
                future = lane.pending.pop(key, None) if key is not None else None
                if kind == "done" and future is not None and not future.done():
                    future.set_result(payload)
                elif kind == "error":
                    for waiting in [future] if future is not None else self._drain(lane):
                        if not waiting.done():
                            waiting.set_exception(payload)
        finally:
            lane.closed = True
            waiting = [f for f in self._drain(lane) if not f.done()]
            if waiting:  # it ended with sensors unanswered: say how (it has exited by now)
                await asyncio.to_thread(lane.process.join, CLOSE_TIMEOUT_S)
                died = LaneDied(f"lane {lane.index} ended ({how_it_ended(lane.process)})")
                for future in waiting:
                    if not future.done():
                        future.set_exception(died)

    @staticmethod
    def _drain(lane: _Lane) -> list[asyncio.Future[SensorRunResult]]:
        waiting = list(lane.pending.values())
        lane.pending.clear()
        return waiting

    async def aclose(self) -> None:
        """Ask every lane to finish (what it runs is committed or cancelled) and wait until
        it says so; `end` waits for its process."""
        for lane in self._lanes:
            if not lane.closed and lane.sender is not None:
                lane.sender.send(("close", None, None))
                lane.sender.flush()
        for lane in self._lanes:
            if lane.listening is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(lane.listening), CLOSE_TIMEOUT_S)
            if lane.sender is not None:
                lane.sender.writer.close()
            else:
                lane.sock.close()


def _virtual_now(runtime: Runtime) -> datetime | None:
    """The tick's instant when its clock is virtual (a lane's clock starts there)."""
    return runtime.clock.now() if isinstance(runtime.clock, VirtualClock) else None


def _end(process: BaseProcess, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
    process.join(timeout_s)
    if process.is_alive():
        process.kill()
        process.join()


# -- framing: a 4-byte length, then a pickle ---------------------------------------------------
class _Sender:
    """Messages to the other end, written together once per turn of the event loop: one
    system call, and one wake-up of the other process, for all a turn sent."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self._pieces: list[bytes] = []
        self._due = False

    def send(self, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._pieces += (_HEADER.pack(len(data)), data)
        if not self._due:
            self._due = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._due = False
        if self._pieces and not self.writer.is_closing():
            self.writer.write(b"".join(self._pieces))
        self._pieces.clear()

    async def close(self) -> None:
        self.flush()
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()
        self.writer.close()


class _Receiver:
    """Messages from the other end: every message one read brought in is unpickled then,
    and handed out one by one (two reads a message cost more than the rest of its way)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()
        self._ready: deque[tuple[Any, ...]] = deque()

    async def next(self) -> tuple[Any, ...] | None:
        """The next message, or None when the other end has gone."""
        while not self._ready:
            try:
                chunk = await self._reader.read(_READ_SIZE)
            except ConnectionError:
                return None
            if not chunk:
                return None  # a message cut short is as good as none
            self._buffer += chunk
            self._split()
        return self._ready.popleft()

    def _split(self) -> None:
        buffer, start = self._buffer, 0
        view = memoryview(buffer)
        try:
            while len(buffer) - start >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer, start)
                end = start + _HEADER.size + size
                if end > len(buffer):
                    break
                self._ready.append(pickle.loads(view[start + _HEADER.size : end]))
                start = end
        finally:
            view.release()  # before the buffer is resized
        del buffer[:start]


# -- the lane's side ---------------------------------------------------------------------------
def lane_main(
    sock: socket.socket,
    settings: Settings,
    worker: str,
    now: datetime | None,
    run_id: str,
    tick_ends: Sequence[socket.socket] = (),
) -> None:
    """A lane process: run the sensors the tick sends until it says close (or is gone)."""
    for end in tick_ends:
        end.close()  # this process's copies: the tick's own stay open
    # Ctrl+C reaches every process of the terminal's group: the tick decides what stops.
    # (A forked lane also inherits the tick's own handlers: SIGTERM ends a lane as usual.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # One parser process beside each lane's loop (none when parsing in the worker's own
    # process is asked for): parsing in a thread would hold the loop's interpreter lock.
    parsers = 1 if settings.observe_workers else 0
    runtime = Runtime(
        replace(settings, observe_workers=parsers),
        clock=VirtualClock(now) if now is not None else SystemClock(),
        worker=worker,
    )
    runtime.observe_pool.start_forked()  # this process runs one thread until its loop starts
    try:
        event_loop.run(_serve(runtime, sock, run_id))
    finally:
        runtime.close()
        os._exit(0)  # nothing of the tick's process to tear down in this one


async def _serve(runtime: Runtime, sock: socket.socket, run_id: str) -> None:
    reader, writer = await asyncio.open_connection(sock=sock)
    sender = _Sender(writer)
    settings = runtime.settings
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(
            max_workers=max(1, settings.fetch_concurrency), thread_name_prefix="catlas-lane"
        )
    )
    tasks: dict[int, asyncio.Task[None]] = {}
    closed = False  # "closed" sent: the tick no longer reads what this lane says
    try:
        async with runtime.fetcher() as fetcher:
            committer = GroupCommitter(
                runtime.store,
                max_runs=settings.commit_group_runs,
                max_wait_ms=settings.commit_group_ms,
                in_flight=lambda: len(tasks),
            )

            async def one(key: int, sensor: SensorState, seed: int) -> None:
                try:
                    result = await run_sensor(
                        runtime, fetcher, sensor, run_id, committer=committer, seed=seed
                    )
                except asyncio.CancelledError:
                    return  # the tick gave it up: its claim is the tick's to release
                except Exception as exc:
                    sender.send(("error", key, portable(exc)))
                else:
                    sender.send(("done", key, result))
                finally:
                    tasks.pop(key, None)

            receiver = _Receiver(reader)
            while (message := await receiver.next()) is not None:
                kind, key, *rest = message
                if kind == "run":
                    sensor, seed = rest
                    tasks[key] = asyncio.create_task(one(key, sensor, seed))
                elif kind == "domains" and fetcher.governor is not None:
                    fetcher.governor.lease(rest[0])
                elif kind == "cancel" and key in tasks:
                    tasks[key].cancel()
                elif kind == "close":
                    break
            else:  # the tick's process is gone: nothing waits for these runs
                for task in tasks.values():
                    task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
            await committer.drain()
            # Every run handed over is committed (or refused): the tick goes on to its lake
            # flush while this lane writes its connector stats, gives its unused budget
            # back and exits (the tick waits for the exit, `Lanes.end`).
            sender.send(("closed", None, None))
            sender.flush()
            closed = True
            await committer.aclose()
    except Exception as exc:
        if closed:  # the tick has all it asked for: only this lane's counters are lost
            log.warning("lane %s: not closed cleanly: %s", os.getpid(), exc)
        else:  # the lane cannot run (its store or lake is unusable)
            sender.send(("error", None, portable(exc)))
    if not closed:
        sender.send(("closed", None, None))
    await sender.close()
