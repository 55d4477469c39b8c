"""changedetection.io over the page set, headless: its own datastore, its own workers.

    python bench/peers/cdio_peer.py TARGETS.json --datastore DIR [--workers 10]

What its batch mode (`changedetection.io -b -r all`) does, in this process so that each
pass is timed alone: a datastore is created with one watch per page (the default
`html_requests` fetcher, text_json_diff processor), the app is built in batch mode (its
fetch workers start; no web server, ticker, notifier or version check: nothing leaves
127.0.0.1), and every watch is queued, first for the first pass (each page fetched,
converted to text, hashed and stored as its first snapshot), then again for the unchanged
pass (each page fetched again, found unchanged). A pass ends when the last check of it
ends (the watches' own `last_checked` + `fetch_time`).

The site hosts do not resolve here, so each watch fetches http://127.0.0.1:PORT/path with
the site's Host header (a watch's own request headers); nginx routes by Host as for the
others. ALLOW_IANA_RESTRICTED_ADDRESSES lets it fetch from 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

os.environ.setdefault("ALLOW_IANA_RESTRICTED_ADDRESSES", "true")
os.environ.setdefault("DISABLE_VERSION_CHECK", "true")
os.environ.setdefault("LOGGER_LEVEL", "WARNING")

from common import emit, targets


def _pass(ds: Any, update_q: Any, uuids: list[str]) -> dict[str, Any]:
    from changedetectionio import queuedWatchMetaData, worker_pool

    started = time.time()
    for uuid in uuids:
        worker_pool.queue_item_async_safe(
            update_q, queuedWatchMetaData.PrioritizedItem(priority=1, item={"uuid": uuid})
        )
    worker_pool.wait_for_all_checks(update_q, timeout=100_000)
    watches = [ds.data["watching"][u] for u in uuids]
    checked = [w for w in watches if w["last_checked"] >= int(started)]
    ended = max(w["last_checked"] + w["fetch_time"] for w in checked) if checked else started
    seconds = max(ended - started, 1e-6)
    return {
        "checks": len(checked),
        "errors": sum(1 for w in watches if w.get("last_error")),
        "snapshots": sum(w.history_n for w in watches),
        "seconds": seconds,
        "checks_per_s": len(checked) / seconds,
    }


def run(pages: list[dict[str, str]], datastore: Path, workers: int) -> dict[str, Any]:
    os.environ["FETCH_WORKERS"] = str(workers)
    from loguru import logger

    # What `changedetection.io -l WARNING` sets up: its DEBUG lines would cost it time.
    logger.remove()
    logger.add(sys.stderr, level=os.environ["LOGGER_LEVEL"])
    from changedetectionio import __version__, store
    from changedetectionio.flask_app import changedetection_app
    from changedetectionio.pluggy_interface import (
        inject_datastore_into_plugins,
        register_builtin_restock_plugins,
    )

    datastore.mkdir(parents=True, exist_ok=True)
    ds = store.ChangeDetectionStore(
        datastore_path=str(datastore), version_tag=__version__, include_default_watches=False
    )
    register_builtin_restock_plugins()
    inject_datastore_into_plugins(ds)
    uuids = []
    for page in pages:
        parts = urlsplit(page["url"])
        url = f"http://127.0.0.1:{parts.port}{page['path']}"
        uuids.append(ds.add_watch(url=url, extras={"headers": {"Host": page["host"]}}))
    config = {
        "datastore_path": str(datastore),
        "batch_mode": True,
        "recheck_watches": None,
        "recheck_repeat_count": 1,
    }
    changedetection_app(config, ds)
    from changedetectionio.flask_app import update_q

    first = _pass(ds, update_q, uuids)
    unchanged = _pass(ds, update_q, uuids)
    return {
        "first": first,
        "unchanged": unchanged,
        "workers": workers,
        "changedetection.io": __version__,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("targets")
    parser.add_argument("--datastore", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=10)
    args = parser.parse_args()
    emit(run(targets(args.targets), args.datastore, args.workers))
    os._exit(0)  # its worker threads are not daemons: leave without waiting for them


if __name__ == "__main__":
    main()
