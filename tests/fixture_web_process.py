"""The fixture web in a process of its own, for tests whose witness is request timing.

In the test's own process the server shares the interpreter lock with the client, so a
client thread busy parsing delays when the server sees a request arrive: two requests sent
80 ms apart can be logged 1 ms apart. A separate process logs arrivals as they happen.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx


@dataclass(frozen=True)
class WebProcess:
    address: str
    hosts_file: Path

    def requests(self) -> list[dict[str, Any]]:
        """The server's request log (each record as JSON: host, path, received, ...)."""
        return httpx.get(f"http://{self.address}/__fixture__/log", timeout=10).json()

    def clear_requests(self) -> None:
        httpx.delete(f"http://{self.address}/__fixture__/log", timeout=10)


@contextmanager
def web_process(tmp_path: Path, now: datetime) -> Iterator[WebProcess]:
    hosts_file = tmp_path / "process-hosts"
    process = subprocess.Popen(
        [sys.executable, "-m", "fixture_web", "--hosts-file", str(hosts_file),
         "--now", now.isoformat()],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip().rsplit("http://", 1)[1]
        process.stdout.readline()  # the hosts file line: written by now
        yield WebProcess(address, hosts_file)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
