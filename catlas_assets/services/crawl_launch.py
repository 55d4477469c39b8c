"""Launching a site crawl as its own process, and asking whether it still runs.

The local launcher starts `catlas crawl` as a subprocess (the process records its run row
with launcher `local` and its pid as the launch handle); under Dagster the run launcher
(the default one locally, `EcsRunLauncher` in production) starts the `site_crawl` job.
`reconcile_run` takes `is_alive`'s answer; completion itself is read from the run's row.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from catlas_assets.domain.crawl_modes import command_argv
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_crawl import CrawlRequest, prepare


def launch_local(runtime: Runtime, request: CrawlRequest) -> subprocess.Popen[bytes]:
    """Validate (refusing before launch), then start the crawl in a subprocess."""
    prepared = prepare(runtime, request)
    argv = command_argv(prepared.spec, request.config, prepared.inputs)
    script = Path(sys.executable).with_name("catlas")
    return subprocess.Popen(
        [str(script), *argv[1:]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a signal to the launcher does not stop the crawl
    )


def is_alive(launcher: str, handle: str | None) -> bool:
    """Whether the launched process may still run (a Dagster run is Dagster's to monitor)."""
    if launcher != "local" or not handle or not handle.isdigit():
        return True
    try:
        os.kill(int(handle), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
