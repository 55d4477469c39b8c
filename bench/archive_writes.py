"""CPU and wall time of archiving a first fetch's objects: one pack a run against a file each.

Each run stores four new objects (raw page, text, blocks, extraction; 46, 8, 6 and 3 KB of
text that compresses like pages do): catlas's `ObjectArchive.pack` writes them as one pack
and its group's commit records their places (`archive_objects`, one transaction a group of
`--group` runs, as the group committer does); the peer is what catlas did before packs, the
same zstd frames written by `Storage.write_many_atomic` as four files, flushed together and
renamed. Fresh folders, alternating, best of `--rounds`; CPU is this process's (user and
system: the flushes and file creations are kernel time).

    python bench/archive_writes.py               # 1,000 runs, 3 rounds each
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catlas_assets.domain.content_address import archive_key
from resources.archive import LEVEL, ObjectArchive
from resources.state.archive_index import ArchiveIndex, record
from resources.state.store import StateStore
from resources.storage import Storage

SIZES = (46_000, 8_000, 6_000, 3_000)


def objects(runs: int, seed: int) -> list[dict[str, bytes]]:
    rng = random.Random(seed)
    words = [
        bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 10))) for _ in range(4000)
    ]
    made = []
    for _ in range(runs):
        datas = [b" ".join(rng.choices(words, k=size // 7))[:size] for size in SIZES]
        made.append({archive_key(d): d for d in datas})
    return made


def timed(work: Callable[[], None]) -> dict[str, float]:
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    work()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "wall_s": time.perf_counter() - started,
        "user_s": after.ru_utime - before.ru_utime,
        "system_s": after.ru_stime - before.ru_stime,
    }


def packs(folder: Path, runs: list[dict[str, bytes]], group: int) -> dict[str, float]:
    store = StateStore.open(f"sqlite:///{folder / 'state.db'}")
    archive = ObjectArchive(Storage(str(folder / "lake")), ArchiveIndex(store))

    def work() -> None:
        for start in range(0, len(runs), group):
            places = [p for run in runs[start : start + group] for p in archive.pack(run).places]
            with store.transaction(write_lock=True) as conn:
                record(conn, places)

    try:
        return timed(work)
    finally:
        store.close()


def files(folder: Path, runs: list[dict[str, bytes]]) -> dict[str, float]:
    storage = Storage(str(folder / "lake"))

    def work() -> None:
        for run in runs:
            # What `put_keyed` did: a stat per key, then the new ones as files of their own.
            new = [key for key in run if not storage.exists(key)]
            compressor = zstandard.ZstdCompressor(level=LEVEL)
            storage.write_many_atomic([(key, compressor.compress(run[key])) for key in new])

    return timed(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--group", type=int, default=32, help="runs a commit group records")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    runs = objects(args.runs, 16)
    best: dict[str, dict[str, float]] = {}
    # Every round's folder stays until the end: ext4 makes file creation slower for a
    # while after many files are deleted (it skips recently freed inodes), which would
    # charge one layout for the other's cleanup.
    with tempfile.TemporaryDirectory(prefix="catlas-bench-archive-") as parent:
        for r in range(args.rounds):
            for name in ("packs", "files"):
                folder = Path(parent) / f"{name}-{r}"
                folder.mkdir()
                os.sync()
                got = packs(folder, runs, args.group) if name == "packs" else files(folder, runs)
                cpu = got["user_s"] + got["system_s"]
                if name not in best or cpu < best[name]["user_s"] + best[name]["system_s"]:
                    best[name] = got
    result = {
        "runs": args.runs,
        "objects_per_run": len(SIZES),
        **{f"{name}_{k}": v for name, figures in best.items() for k, v in figures.items()},
    }
    for name in ("packs", "files"):
        f = best[name]
        cpu_ms = (f["user_s"] + f["system_s"]) / args.runs * 1000
        print(
            f"{name:5}: {cpu_ms:.3f} ms of CPU a run (user {f['user_s']:.2f} s, "
            f"system {f['system_s']:.2f} s), wall {f['wall_s']:.2f} s"
        )
    ratio = sum(best["packs"][k] for k in ("user_s", "system_s")) / sum(
        best["files"][k] for k in ("user_s", "system_s")
    )
    print(f"packs / files, CPU: {ratio:.3f}x")
    if args.json:
        args.json.write_text(json.dumps({**result, "cpu_ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
