"""The pure core (`observe`) in parser processes, so that a tick uses every core.

The event loop of a worker fetches, archives and commits; parsing a page (normalize,
extract, fingerprint, diff) is CPU work that would hold the loop, so it runs in parser
processes: `observe` takes data and returns data, both picklable. What needs no parse —
a 304, a failure, a postponement, a redirect off the domain, the bytes of the last 200 —
is decided in the loop's own process (sending it would cost more than deciding it).

`CATLAS_OBSERVE_WORKERS` sets the parsers: -1 (the default) is one parser process per core,
at most 8 (what one loop keeps busy: past that, more worker processes scale further —
several `catlas schedule` processes on PostgreSQL). The loop itself waits on the network
most of a first pass, so it shares a core with a parser rather than keep one to itself: on
2 cores two parsers did 1.2× the pages of one. On one core there are none. 0 parses in the
loop's process, one page at a time in one thread: parsing holds the interpreter lock, so
more parser threads add no speed, only starve the loop (a request then leaves long after
its politeness slot).

Each parser is one process at the other end of a socket, and one thread here that writes
its requests and reads its answers (length-prefixed pickles), keeping two requests with it
so it never waits for the next page. A page costs the loop's process one hand-over each
way; `concurrent.futures`' process pool took ~0.3 ms more a page in queue and management
threads (`bench/README.md`). Any event loop of the process may ask (a daemon's repair runs
beside its ticks).

A parser that dies (killed, a crash in the C parser on a hostile page) fails the page it
was parsing, as PARSING naming how it ended; the pages sent after it go to a parser started
in its place. One that answers nothing within twice `CATLAS_PARSE_TIMEOUT_S` and
`ANSWER_MARGIN_S` (a parse stuck inside C code, where the timer that bounds a parse cannot
interrupt it) is stopped and replaced the same way. The process pool this replaced broke
for good at the first death (every later page of the process failed) and waited on a stuck
parse for ever.

Parsers start as forks of a lane before its loop runs (`start_forked`, the cheapest start),
otherwise from the fork server of `worker_processes` (a clean process: forking a process
that runs threads is not safe). A parser exits when the process that made it is gone: its
socket ends, and a watcher looks in case a copy of that end outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import pickle
import queue
import signal
import socket
import struct
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import replace
from typing import IO, Any

from catlas_assets.domain.observe import Observed, needs_parse, observe
from catlas_assets.domain.vocabulary import FailureClass
from catlas_assets.services.parse_time_limit import observe_within
from catlas_assets.services.worker_processes import (
    how_it_ended,
    per_core,
    portable,
    worker_context,
)
from resources.process_alive import alive

MAX_AUTO_WORKERS = 8
# How often a parser process looks whether the process that made it still exists.
OWNER_CHECK_S = 0.5
# Requests written to a parser and not yet answered: the one it parses and the next.
IN_FLIGHT = 2
# The socket buffer asked for: a next page of up to a quarter of it waits in it whole.
PIPELINE_BUFFER = 1 << 20
# How long a closing pool waits for a parser to exit before it kills it.
CLOSE_TIMEOUT_S = 5.0
# A parser that has not answered within twice the parse's bound and this is stopped: a parse
# stuck inside C code never reaches the timer signal that bounds it (`parse_time_limit`).
ANSWER_MARGIN_S = 5.0
_HEADER = struct.Struct(">I")
_PROTOCOL = pickle.HIGHEST_PROTOCOL


def pool_size(setting: int, cpus: int | None = None) -> int:
    """Parser processes for `CATLAS_OBSERVE_WORKERS` (-1: automatic) on `cpus` cores."""
    return per_core(setting, MAX_AUTO_WORKERS, cpus)


class ParserDied(Exception):
    """The parser process ended, or was stopped, while it parsed this page."""


class ObservePool:
    def __init__(self, workers: int, parse_timeout_s: float) -> None:
        self.workers = workers
        self.parse_timeout_s = parse_timeout_s
        self._parsers: list[_Parser] = []
        self._starting = threading.Lock()
        self._thread: ThreadPoolExecutor | None = None  # `workers=0`: parses in a thread

    def start_forked(self) -> None:
        """Start the parser processes now, as forks of this process: only while it runs one
        thread (a lane, before its event loop starts), and the cheapest start there is."""
        if self.workers > 0 and not self._parsers:
            self._start("fork")

    async def observe(self, **arguments: Any) -> Observed:
        """`observe(**arguments)`, in a parser process when the answer needs a parse."""
        if not needs_parse(arguments["sensor"], arguments["fetched"]):
            return observe(**arguments)
        if self.workers == 0:
            return await self._in_thread(arguments)
        if not self._parsers:
            self._start("forkserver")
        parser = min(self._parsers, key=_Parser.load)
        request = _Request(pickle.dumps((self.parse_timeout_s, arguments), _PROTOCOL))
        if not parser.give(request):
            raise RuntimeError("the parser pool was closed while this page waited for it")
        try:
            observed, body_keys = await asyncio.wrap_future(request.answer)
        except ParserDied as exc:
            fetched = replace(
                arguments["fetched"], failure_class=FailureClass.PARSING, failure_detail=str(exc)
            )
            return observe(**{**arguments, "fetched": fetched})  # a failure: no parse
        for key in body_keys:
            observed.objects[key] = arguments["fetched"].body
        return observed

    async def _in_thread(self, arguments: dict[str, Any]) -> Observed:
        # In a thread: a large page's parse does not hold up the loop (signals, deadline).
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="catlas-parse")
        call = functools.partial(observe_within, self.parse_timeout_s, **arguments)
        return await asyncio.get_running_loop().run_in_executor(self._thread, call)

    def _start(self, method: str) -> None:
        with self._starting:  # two loops of one process may ask for the first parse at once
            if not self._parsers:
                started: list[_Parser] = []
                answer_within_s = 2 * self.parse_timeout_s + ANSWER_MARGIN_S
                for _ in range(self.workers):
                    inherited = [p.sock for p in started]
                    started.append(_Parser(method, inherited, answer_within_s))
                for parser in started:
                    parser.thread.start()  # after the last fork: a fork copies no thread
                self._parsers = started

    def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        parsers, self._parsers = self._parsers, []
        for parser in parsers:
            parser.closing = True  # a parser that dies now is not replaced
            parser.requests.put(None)
        for parser in parsers:
            parser.thread.join(CLOSE_TIMEOUT_S)
            parser.end()


class _Request:
    __slots__ = ("answer", "frame")

    def __init__(self, call: bytes) -> None:
        self.frame = _HEADER.pack(len(call)) + call  # the pickled call, framed
        self.answer: Future[tuple[Observed, list[str]]] = Future()


class _Parser:
    """One parser process, and the thread that talks to it (the only user of its socket).

    Every request put in `requests` gets its answer: the parser's, a `ParserDied`, or an
    error saying why no parser could be had; none is left waiting."""

    def __init__(self, method: str, inherited: list[socket.socket], answer_within_s: float) -> None:
        self.answer_within_s = answer_within_s
        self.requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self.sent: deque[_Request] = deque()  # written, unanswered, in the parser's order
        self.broken: BaseException | None = None
        self.closing = False
        self._taking = threading.Lock()
        self._done = False  # its thread takes no more requests
        self._held: _Request | None = None  # taken, too large to write until the parser idles
        self.process, self.sock = _spawn(method, inherited, answer_within_s)
        self._fits = _pipelined_at_most(self.sock)
        self.thread = threading.Thread(target=self._talk, name="catlas-parser", daemon=True)

    def load(self) -> float:
        """Pages given and not answered (read from other threads: an estimate is enough)."""
        if self.broken is not None:
            return float("inf")
        return self.requests.qsize() + len(self.sent)

    def give(self, request: _Request) -> bool:
        """Hand `request` to this parser; False when its thread has stopped taking any."""
        with self._taking:
            if self._done:
                return False
            self.requests.put(request)
            return True

    def _talk(self) -> None:
        try:
            self._serve()
        except BaseException as exc:  # no replacement could start: answer with why
            self.broken = ParserDied(f"no parser process could be started: {exc}")
            for request in self.sent:
                _settle(request.answer, self.broken)
            self.sent.clear()
            while not self.closing:  # a request given to this parser meanwhile still hears
                request = self.requests.get()
                if request is None:
                    self.closing = True
                elif request.answer.set_running_or_notify_cancel():
                    _settle(request.answer, self.broken)
        finally:
            self._cancel_unsent()

    def _serve(self) -> None:
        reader = self.sock.makefile("rb")
        while True:
            while not self.closing and len(self.sent) < IN_FLIGHT:
                request = self._next()
                if request is None:
                    break
                if not request.answer.set_running_or_notify_cancel():
                    continue  # its waiter gave it up
                if not self.sent and not self.process.is_alive():
                    reader = self._replace()  # it died idle: this page is not the cause
                self.sent.append(request)
                try:
                    self.sock.sendall(request.frame)
                except OSError:
                    break  # it has gone: the read below says how
            if not self.sent:
                return  # closing, and every page answered
            try:
                answer = _read(reader)
            except Exception as exc:  # an answer that does not unpickle fails its page alone
                answer = exc
            if answer is _GONE or answer is _SILENT:
                reader = self._replace(silent=answer is _SILENT)
            else:
                _settle(self.sent.popleft().answer, answer)

    def _next(self) -> _Request | None:
        """The next page to write now: waiting for one only when none is with the parser.

        A page is written while another is with the parser only when it fits in the
        socket's buffer; a larger one waits until the parser is idle. Else both processes
        could wait to write to each other for ever: the parser its answer, this thread the
        rest of the next page (which the parser reads only after it answered)."""
        if self._held is not None:
            if self.sent:
                return None
            request, self._held = self._held, None
            return request
        try:
            request = self.requests.get(block=not self.sent)
        except queue.Empty:
            return None
        if request is None:
            self.closing = True
        elif self.sent and len(request.frame) > self._fits:
            self._held, request = request, None
        return request

    def _replace(self, *, silent: bool = False) -> IO[bytes]:
        """The process died, or answered nothing in time (`silent`: it is stopped): fail the
        page it was parsing (if any), and start another in its place with the pages sent
        after that one (none when the pool is closing)."""
        self.sock.close()
        if silent:
            self.process.kill()
        self.process.join(CLOSE_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        how = (
            f"answered nothing within {self.answer_within_s:g}s and was stopped"
            if silent
            else f"ended ({how_it_ended(self.process)}) while parsing"
        )
        died = ParserDied(f"the parser process {how}")
        if self.sent:
            _settle(self.sent.popleft().answer, died)
        if self.closing:
            for request in self.sent:
                _settle(request.answer, died)
            self.sent.clear()
            return io.BytesIO()  # nothing left to read (a page held back is answered after)
        # This process runs threads now (this one at least): only the fork server is safe.
        self.process, self.sock = _spawn("forkserver", [], self.answer_within_s)
        self._fits = _pipelined_at_most(self.sock)
        try:
            for request in self.sent:
                self.sock.sendall(request.frame)
        except OSError:
            pass  # this one died as well: the next read says so, and fails the next page
        return self.sock.makefile("rb")

    def _cancel_unsent(self) -> None:
        """The thread ends: every page it took and never wrote hears that the pool closed."""
        with self._taking:
            self._done = True
        unsent = [self._held] if self._held is not None else []
        self._held = None
        while True:
            try:
                request = self.requests.get_nowait()
            except queue.Empty:
                break
            if request is not None:
                unsent.append(request)
        closed = RuntimeError("the parser pool was closed while this page waited for it")
        for request in unsent:
            if request.answer.set_running_or_notify_cancel():
                _settle(request.answer, closed)

    def end(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)  # the parser reads the end and exits
        self.process.join(CLOSE_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.sock.close()


# `_read`'s answers when the parser's end closed before a whole answer came, and when
# nothing came for the socket's timeout.
_GONE = object()
_SILENT = object()


def _settle(answer: Future[Any], outcome: Any) -> None:
    with contextlib.suppress(InvalidStateError):  # its waiter was cancelled meanwhile
        if isinstance(outcome, BaseException):
            answer.set_exception(outcome)
        else:
            answer.set_result(outcome)


def _read(reader: IO[bytes]) -> Any:
    """The next answer from a parser (an exception it raised, as such), `_GONE` at its end,
    `_SILENT` when it said nothing for the socket's timeout."""
    try:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return _GONE
        (size,) = _HEADER.unpack(header)
        data = reader.read(size)
    except TimeoutError:
        return _SILENT
    except OSError:
        return _GONE
    if len(data) < size:
        return _GONE
    return pickle.loads(data)  # an exception the parse raised is an answer too


def _pipelined_at_most(sock: socket.socket) -> int:
    """The largest page frame written while the parser holds another: a quarter of what the
    socket's buffer takes (asked for large, as the system allows), so it fits whole."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, PIPELINE_BUFFER)
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 4


def _spawn(
    method: str, inherited: list[socket.socket], answer_within_s: float
) -> tuple[Any, socket.socket]:
    ours, theirs = socket.socketpair()
    ours.settimeout(answer_within_s)  # no answer (nor room for a page) that long: stuck
    context = worker_context(method)
    # A fork copies this process's ends of the earlier parsers' sockets: closed in the child.
    process = context.Process(
        target=_parser_main,
        args=(theirs, os.getpid(), inherited if method == "fork" else []),
        name="catlas-parser",
        daemon=True,
    )
    process.start()
    theirs.close()
    return process, ours


# -- the parser's side -------------------------------------------------------------------------
def _parser_main(sock: socket.socket, owner: int, inherited: list[socket.socket]) -> None:
    """A parser process: answer each request in turn until the other end closes."""
    for end in inherited:
        end.close()
    # Ctrl+C reaches every process of the terminal's group: the owner decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_owner(owner)
    reader = sock.makefile("rb")
    while True:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            os._exit(0)  # the owner closed its end, or is gone
        data = reader.read(_HEADER.unpack(header)[0])
        try:
            parse_timeout_s, arguments = pickle.loads(data)
            answer = pickle.dumps(_observe_here(parse_timeout_s, arguments), _PROTOCOL)
        except Exception as exc:
            answer = pickle.dumps(portable(exc), _PROTOCOL)
        try:
            sock.sendall(_HEADER.pack(len(answer)) + answer)
        except OSError:
            os._exit(0)


def _observe_here(parse_timeout_s: float, arguments: dict[str, Any]) -> tuple[Observed, list[str]]:
    """`observe_within`, in a parser process. The response body, archived as it came, is not
    sent back (the loop's process has it): the keys it is archived under are."""
    observed = observe_within(parse_timeout_s, **arguments)
    body = arguments["fetched"].body
    body_keys = [key for key, data in observed.objects.items() if data is body]
    for key in body_keys:
        observed.objects[key] = b""
    return observed, body_keys


def _watch_owner(owner: int) -> None:
    """In a parser process: exit at once when `owner` (the worker) has died."""

    def watch() -> None:
        while alive(owner):
            time.sleep(OWNER_CHECK_S)
        os._exit(0)  # nothing to flush: a parser holds no state of its own

    threading.Thread(target=watch, name="owner-watch", daemon=True).start()
