"""One file interface over a local folder or an S3 prefix (fsspec underneath).

Writes are atomic: a local file is written in the root's `.writes/` folder and renamed into
place; an S3 object is one PUT. A reader therefore never sees half a file on either backend.
The temp files of writes that never finished are all in that one folder, so finding them
costs a listing of it, not a walk of every object in the lake.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
import secrets
import socket
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp
import fsspec
import fsspec.asyn
from botocore.exceptions import BotoCoreError
from fsspec.implementations.local import LocalFileSystem

from catlas_assets.errors import StorageError

log = logging.getLogger(__name__)
_MAX_FOLDERS_KNOWN = 200_000  # a bound on what is remembered, not on what is written
_TMP_PID = re.compile(r"~(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")
TMP_FOLDER = ".writes"
# Threads that flush one batch's files at once: fdatasync waits on the disk, not the CPU,
# and concurrent flushes share the journal's commits (one after the other, each waits alone).
_SYNC_THREADS = 32
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}
_pools_lock = threading.Lock()
_quieted: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def process_threads(name: str, threads: int) -> ThreadPoolExecutor:
    """This process's pool of `threads` threads called `name` (a forked child makes its
    own: it has none of its parent's threads)."""
    with _pools_lock:
        found = _pools.get(name)
        if found is None or found[0] != os.getpid():
            found = _pools[name] = (os.getpid(), ThreadPoolExecutor(threads, name))
        return found[1]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _each(make: Callable[[int, str], None], paths: list[str], pool: Executor | None) -> None:
    """`make(i, path)` for every path, in `pool` when given; every call is waited for, then
    the first error, if any, is raised (no file is left half made when the caller cleans up)."""
    if pool is None or len(paths) == 1:
        for index, path in enumerate(paths):
            make(index, path)
        return
    futures = [pool.submit(make, index, path) for index, path in enumerate(paths)]
    concurrent.futures.wait(futures)
    for future in futures:
        future.result()


def _publish(renames: list[tuple[str, str]]) -> None:
    """Rename each flushed temp file to its final path."""
    for tmp, path in renames:
        try:
            os.replace(tmp, path)
        except FileNotFoundError:  # its folder was removed since it was made
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(tmp, path)


def _sync_all(fds: list[int]) -> None:
    if len(fds) == 1:
        os.fdatasync(fds[0])
    elif fds:
        # Every flush is waited for; the first error, if any, is raised.
        pool = process_threads("catlas-fsync", _SYNC_THREADS)
        futures = [pool.submit(os.fdatasync, fd) for fd in fds]
        for future in futures:
            future.result()


def _quiet_orphaned_sends(loop: asyncio.AbstractEventLoop) -> None:
    """When the S3 server goes away mid-request, aiohttp's task writing the request body
    can fail after the request itself has (that failure is raised and reported, once), and
    asyncio would print the task's traceback to stderr: "Task exception was never
    retrieved". Those go to the debug log of fsspec's loop; anything else as before."""
    if loop in _quieted:
        return
    default = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(
            exc, ConnectionError | aiohttp.ClientConnectionError
        ) and "never retrieved" in str(context.get("message", "")):
            log.debug("S3 request body not sent: %s", exc)
        elif default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    _quieted.add(loop)


class Storage:
    def __init__(self, url: str, s3_endpoint_url: str = "") -> None:
        self.url = url.rstrip("/") or url
        self.is_s3 = url.startswith("s3://")
        if self.is_s3:
            options: dict[str, Any] = {"use_listings_cache": False}
            if s3_endpoint_url:
                options["client_kwargs"] = {"endpoint_url": s3_endpoint_url}
            self.fs = fsspec.filesystem("s3", **options)
            _quiet_orphaned_sends(fsspec.asyn.get_loop())
            self.root = self.url.removeprefix("s3://").rstrip("/")
        elif "://" in url and not url.startswith("file://"):
            raise StorageError(f"lake URL {url!r}: only a local folder or s3://bucket/prefix")
        else:
            self.fs = LocalFileSystem()
            self.root = str(Path(url.removeprefix("file://")).resolve())
        self._folders: set[str] = set()  # local folders known to exist

    @contextlib.contextmanager
    def _io(self) -> Iterator[None]:
        """An S3 server that does not answer is an OSError like a full disk (botocore and
        aiohttp raise their own hierarchies): the run fails with one line, rows wait."""
        try:
            yield
        except (BotoCoreError, aiohttp.ClientError) as exc:
            raise ConnectionError(f"S3 at {self.url}: {exc}") from exc

    def uri(self, key: str) -> str:
        """The path DuckDB and analysts use for a key (s3://... or an absolute path)."""
        path = f"{self.root}/{key}"
        return f"s3://{path}" if self.is_s3 else path

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}"

    def check_writable(self) -> None:
        probe = f"_probe/{secrets.token_hex(4)}"
        try:
            self.write_atomic(probe, b"ok")
            self.delete([probe])
        except (OSError, StorageError) as exc:
            raise StorageError(f"cannot write to the lake at {self.url}: {exc}") from None
        except Exception as exc:  # botocore raises its own hierarchy
            raise StorageError(f"cannot write to the lake at {self.url}: {exc}") from None

    def write_atomic(self, key: str, data: bytes) -> None:
        self.write_many_atomic([(key, data)])

    def write_many_atomic(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Write several objects, each atomically, made durable together: every temp file
        is written, then all are flushed at once (a small thread pool: the disk's journal
        commits concurrent flushes together), then renamed. No object becomes visible under
        its name before its bytes are durable, so a content-addressed key that exists after
        a crash holds its whole object (a later put that finds it skips the write)."""
        if self.is_s3:
            with self._io():
                for key, data in items:
                    self.fs.pipe_file(self._path(key), data)
            return
        written: list[tuple[str, str, int]] = []  # (temp, final path, open descriptor)
        try:
            for key, data in items:
                path = self._path(key)
                self._ensure_folder(os.path.dirname(path))  # fails before anything is renamed
                tmp, fd = self._temp_file(path)
                written.append((tmp, path, fd))
                _write_all(fd, data)
            # fdatasync flushes the bytes and the size a reader needs, not the times: the
            # object is as durable before the rename, at one journal write less per object.
            _sync_all([fd for _, _, fd in written])
        except BaseException:
            for tmp, _, fd in written:
                with contextlib.suppress(OSError):
                    os.close(fd)
                with contextlib.suppress(OSError):  # a full disk: the half-written file goes
                    os.remove(tmp)
            raise
        for _, _, fd in written:
            os.close(fd)
        _publish([(tmp, path) for tmp, path, _ in written])

    def make_many_atomic(
        self,
        keys: Sequence[str],
        make: Callable[[int, str], None],
        pool: Executor | None = None,
    ) -> list[int]:
        """`write_many_atomic` for objects a writer makes as files itself: `make(i, path)`
        writes the object of `keys[i]` at the local `path` it is given (pyarrow encodes a
        Parquet file straight to disk, no copy held in memory), in `pool`'s threads when
        given. Every file is then flushed together and renamed; when one `make` raises, all
        are removed and none becomes visible. On S3 each file is uploaded once made. The
        objects' sizes, in the order of `keys`."""
        if self.is_s3:
            with tempfile.TemporaryDirectory(prefix="catlas-stage-") as folder:
                local = [os.path.join(folder, str(i)) for i in range(len(keys))]
                _each(make, local, pool)
                with self._io():
                    for path, key in zip(local, keys, strict=True):
                        self.fs.put_file(path, self._path(key))
                return [os.path.getsize(path) for path in local]
        paths, temps = [], []
        try:
            for key in keys:
                path = self._path(key)
                self._ensure_folder(os.path.dirname(path))  # fails before anything is made
                tmp, fd = self._temp_file(path)
                os.close(fd)  # the writer opens the path itself
                paths.append(path)
                temps.append(tmp)
            _each(make, temps, pool)
            fds: list[int] = []
            try:
                fds.extend(os.open(tmp, os.O_RDONLY) for tmp in temps)
                _sync_all(fds)
            finally:
                for fd in fds:
                    os.close(fd)
        except BaseException:
            for tmp in temps:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
            raise
        sizes = [os.path.getsize(tmp) for tmp in temps]
        _publish(list(zip(temps, paths, strict=True)))
        return sizes

    def _temp_file(self, path: str) -> tuple[str, int]:
        """A new temp file for `path` in the lake's temp folder (same file system: the
        rename is atomic), open for writing. The writer's host and pid are in its name: a
        later worker can tell a dead one's leftover (`stale_tmp_files`)."""
        owner = f"{socket.gethostname()}~{os.getpid()}"
        tmp_folder = os.path.join(self.root, TMP_FOLDER)
        tmp = os.path.join(
            tmp_folder, f".{os.path.basename(path)}.{owner}.{secrets.token_hex(4)}.tmp"
        )
        try:
            return tmp, os.open(tmp, _CREATE, 0o644)
        except FileNotFoundError:  # the lake's first write (one syscall otherwise)
            os.makedirs(tmp_folder, exist_ok=True)
            return tmp, os.open(tmp, _CREATE, 0o644)

    @contextlib.contextmanager
    def staged_file(self, key: str) -> Iterator[str]:
        """A local path for a writer that makes a file itself (DuckDB's `COPY`), too large
        to hold in memory: once the body returns, the file becomes `key` as `write_atomic`
        makes one (flushed, then renamed; one upload on S3). The body raising leaves
        nothing behind."""
        if self.is_s3:
            with tempfile.TemporaryDirectory(prefix="catlas-stage-") as folder:
                local = os.path.join(folder, os.path.basename(key))
                yield local
                with self._io():
                    self.fs.put_file(local, self._path(key))
            return
        path = self._path(key)
        self._ensure_folder(os.path.dirname(path))
        tmp, fd = self._temp_file(path)
        os.close(fd)  # the writer opens the path itself
        try:
            yield tmp
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise

    def _ensure_folder(self, folder: str) -> None:
        """Make `folder` once per process (a set lookup afterwards, not a syscall)."""
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            if len(self._folders) >= _MAX_FOLDERS_KNOWN:
                self._folders.clear()
            self._folders.add(folder)

    def stale_tmp_files(self, alive: Callable[[int], bool], max_age_s: float) -> list[str]:
        """Temp files of writes that never finished: written by a process of this host that
        is not `alive`, or older than `max_age_s` (another host's). S3 writes leave none."""
        if self.is_s3:
            return []
        stale = []
        now = time.time()
        here = f".{socket.gethostname()}"
        directory = os.path.join(self.root, TMP_FOLDER)
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            return []
        for name in names:
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            path = os.path.join(directory, name)
            owner = _TMP_PID.search(name)
            mine = owner is not None and name[: owner.start()].endswith(here)
            try:
                old = now - os.stat(path).st_mtime > max_age_s
            except FileNotFoundError:
                continue  # its writer finished meanwhile
            if old or (mine and owner is not None and not alive(int(owner["pid"]))):
                stale.append(path)
        return sorted(stale)

    def remove_files(self, paths: list[str]) -> None:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)

    def read(self, key: str) -> bytes:
        with self._io():
            data = self.fs.cat_file(self._path(key))
        assert isinstance(data, bytes)
        return data

    def read_range(self, key: str, offset: int, length: int) -> bytes:
        """`length` bytes of a key from `offset` (one range request on S3); a key shorter
        than that is an error, not a short answer."""
        if self.is_s3:
            with self._io():
                data = self.fs.cat_file(self._path(key), start=offset, end=offset + length)
        else:
            with open(self._path(key), "rb") as handle:
                data = os.pread(handle.fileno(), length, offset)
        if len(data) != length:
            raise StorageError(f"{key}: {len(data)} bytes at {offset}, {length} expected")
        return bytes(data)

    @contextlib.contextmanager
    def open(self, key: str) -> Iterator[BinaryIO]:
        """A key opened for reading in place: a reader that seeks (a Parquet footer) reads
        only what it needs, a range request on S3."""
        with self._io(), self.fs.open(self._path(key), "rb") as handle:
            yield handle

    def exists(self, key: str) -> bool:
        if not self.is_s3:
            return os.path.exists(self._path(key))  # one stat, not fsspec's info dict
        with self._io():
            return bool(self.fs.exists(self._path(key)))

    def glob(self, pattern: str) -> list[str]:
        """Keys (relative to the root) matching a glob; temp files and S3 folder markers skipped."""
        prefix = self.root + "/"
        keys = []
        with self._io():
            found = self.fs.glob(self._path(pattern))
        for path in found:
            key = str(path).removeprefix(prefix)
            if os.path.basename(key).startswith(".") or key.endswith("/"):
                continue
            keys.append(key)
        return sorted(keys)

    def size(self, key: str) -> int:
        with self._io():
            return int(self.fs.size(self._path(key)))

    def delete(self, keys: list[str]) -> None:
        for key in keys:
            with contextlib.suppress(FileNotFoundError), self._io():
                self.fs.rm_file(self._path(key))
