"""Whether a process of this host still exists (a dead worker's runs, temp files, parsers)."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (killed, not yet reaped by its parent) is dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no procfs here: the signal's answer is all there is
    fields = stat.rpartition(")")[2].split()  # the name in parentheses may hold spaces
    return bool(fields) and fields[0] == "Z"


def local_worker_gone(worker: str | None) -> bool | None:
    """For a worker name `host:pid` of this host: whether its process is gone. None when
    the name is another host's (or no worker name): this host cannot tell."""
    host, _, pid = str(worker or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    return not alive(int(pid))
