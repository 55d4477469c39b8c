"""catlas's full scheduler tick against the tools a user would pick instead, in one run.

    python bench/e2e.py [--pages 2000] [--hosts 40] [--rounds 3] [--profile]

One page set (bench/pages.py) served by nginx on 127.0.0.1 (bench/nginx.py), measured
first by `wrk` (nginx's ceiling on this machine, plain and conditional). Then rounds that
interleave catlas's three passes with the peers (bench/peers/, run from their own
environment bench/.peers):

  catlas first pass      every sensor due, fetched, normalized, extracted, archived, stored
  Scrapy                 fetch + selectolax parse + text + sha256, 64 at once, 8 per host
  changedetection.io     first pass, then unchanged pass (its own datastore and workers)
  catlas conditional     every sensor due again: validators sent, every answer a 304
  aiohttp floor          raw conditional GETs (all 304) at 50 and 64 at once; plain GETs
  catlas forced refetch  every sensor due again, fetched in full, nothing changed

catlas runs as a user would run it: `catlas sensors import sensors.csv`, then one
`catlas schedule --once --json` per pass, timed by the verdict's own `tick_ms`, with SQLite
state, CATLAS_DOMAIN_SPACING_S=0, CATLAS_DOMAIN_CONCURRENCY=8, CATLAS_FETCH_CONCURRENCY=64,
a claim batch that takes every sensor, and CATLAS_HOSTS mapping the hosts to nginx. Each
pass moves CATLAS_NOW eight days on (past the longest interval and its jitter), so every
sensor is due. The forced pass sets CATLAS_FULL_REFETCH_INTERVAL_S=0: the product's own
rule that sends a fetch without validators, applied to the whole tick (`run-sensor --force`
is one sensor per process, which would measure start-up, not the pipeline).

Peak RSS is each process's own (`wait4`). Medians over the rounds; ratios within a round,
then their median. Writes bench/results/e2e.json; raw outputs go to bench/results/raw/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import nginx  # noqa: E402
import pages as pageset  # noqa: E402

RESULTS = BENCH / "results"
RAW = RESULTS / "raw"
PEERS_PYTHON = BENCH / ".peers" / "bin" / "python"
CATLAS = Path(sys.executable).with_name("catlas")
T0 = datetime(2026, 1, 5, 8, tzinfo=UTC)
PASS_STEP = timedelta(days=8)


@dataclass
class Measured:
    code: int
    out: str
    err: str
    wall_s: float
    cpu_s: float
    peak_rss_mb: float

    def last_json(self) -> dict[str, Any]:
        for line in reversed(self.out.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        raise SystemExit(f"no JSON result in the output:\n{self.out[-2000:]}\n{self.err[-2000:]}")


def measured(cmd: list[str], *, env: dict[str, str] | None = None, name: str) -> Measured:
    """Run `cmd` to its end; its own peak RSS and CPU come from wait4."""
    RAW.mkdir(parents=True, exist_ok=True)
    out_path, err_path = RAW / f"{name}.out", RAW / f"{name}.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=BENCH.parent)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        proc.returncode,
        out_path.read_text(),
        err_path.read_text(),
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,  # KiB on Linux
    )


# -- catlas ----------------------------------------------------------------------------------
# `--set NAME=VALUE` settings for every catlas command of the run (a setting compared
# against its default, say); the pass's own settings still win.
SETTINGS: dict[str, str] = {}


def catlas_env(
    state: Path, hosts_file: Path, now: datetime, claim: int, **extra: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_STATE_DIR=str(state),
        CATLAS_HOSTS=str(hosts_file),
        CATLAS_NOW=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_DOMAIN_CONCURRENCY="8",
        CATLAS_FETCH_CONCURRENCY="64",
        CATLAS_SCHEDULER_CLAIM_BATCH=str(claim),
        # Validators stay in use until the forced pass says otherwise.
        CATLAS_FULL_REFETCH_INTERVAL_S=str(10**9),
        # One robots.txt fetch per host per round (the first pass), as within one day.
        CATLAS_ROBOTS_TTL_S=str(10**9),
        COLUMNS="200",
    )
    env.update(SETTINGS)
    env.update(extra)
    return env


def catlas_import(
    state: Path, hosts_file: Path, csv_file: Path, claim: int, name: str
) -> dict[str, Any]:
    env = catlas_env(state, hosts_file, T0, claim)
    run = measured([str(CATLAS), "sensors", "import", str(csv_file)], env=env, name=name)
    if run.code != 0:
        raise SystemExit(f"catlas sensors import failed ({run.code}):\n{run.err[-2000:]}")
    return {"seconds": run.wall_s, "peak_rss_mb": run.peak_rss_mb}


def catlas_pass(
    state: Path, hosts_file: Path, n: int, claim: int, name: str, expect: str, *,
    profile: Path | None = None, **extra: str,
) -> dict[str, Any]:  # fmt: skip
    env = catlas_env(state, hosts_file, T0 + PASS_STEP * n, claim, **extra)
    cmd = [str(CATLAS), "schedule", "--once", "--json"]
    if profile is not None:
        cmd = [sys.executable, "-m", "cProfile", "-o", str(profile), *cmd]
    run = measured(cmd, env=env, name=name)
    verdict = run.last_json()
    counters = verdict["counters"]
    seconds = counters["tick_ms"] / 1000
    done = counters[expect]
    return {
        "sensors": counters["claimed"],
        "expected_outcome": expect,
        "as_expected": done,
        "per_s": done / seconds if seconds else 0.0,
        "tick_s": seconds,
        "wall_s": run.wall_s,
        "cpu_s": run.cpu_s,
        "peak_rss_mb": run.peak_rss_mb,
        "requests": counters["requests"],
        "outcome": verdict["outcome"],
        "counters": counters,
    }


# -- peers -----------------------------------------------------------------------------------
def peer(script: str, *args: str, name: str) -> tuple[dict[str, Any], Measured]:
    if not PEERS_PYTHON.exists():
        raise SystemExit(
            "the peers' environment is missing: make bench-peers "
            "(uv venv bench/.peers && uv pip install --python bench/.peers -r bench/peers/requirements.txt)"
        )
    run = measured([str(PEERS_PYTHON), str(BENCH / "peers" / script), *args], name=name)
    if run.code != 0:
        raise SystemExit(f"{script} failed ({run.code}):\n{run.err[-3000:]}")
    return run.last_json(), run


def one_round(r: int, ctx: dict[str, Any], work: Path, *, profile: Path | None) -> dict[str, Any]:
    hosts_file, csv_file, targets, claim = (
        ctx["hosts_file"], ctx["csv"], ctx["targets"], ctx["claim"],
    )  # fmt: skip
    state = work / f"catlas-{r}"
    result: dict[str, Any] = {}
    log = lambda what: print(f"  round {r}: {what}", flush=True)  # noqa: E731

    log("catlas sensors import")
    result["catlas_import"] = catlas_import(state, hosts_file, csv_file, claim, f"r{r}-import")
    log("catlas first pass")
    result["catlas_first"] = catlas_pass(state, hosts_file, 0, claim, f"r{r}-catlas-first", "ok")

    log("Scrapy")
    data, run = peer("scrapy_peer.py", str(targets), name=f"r{r}-scrapy")
    result["scrapy"] = {**data, "per_s": data["pages_per_s"], "peak_rss_mb": run.peak_rss_mb}

    log("changedetection.io")
    data, run = peer(
        "cdio_peer.py", str(targets), "--datastore", str(work / f"cdio-{r}"), name=f"r{r}-cdio"
    )
    for key in ("first", "unchanged"):
        result[f"cdio_{key}"] = {
            **data[key], "per_s": data[key]["checks_per_s"], "peak_rss_mb": run.peak_rss_mb,
            "version": data["changedetection.io"], "workers": data["workers"],
        }  # fmt: skip

    log("catlas conditional pass")
    result["catlas_conditional"] = catlas_pass(
        state, hosts_file, 1, claim, f"r{r}-catlas-conditional", "not_modified"
    )
    log("aiohttp floor")
    floors = {}
    for conc in (50, 64):
        data, run = peer(
            "aiohttp_floor.py", str(targets), "--concurrency", str(conc), "--conditional",
            name=f"r{r}-aiohttp-304-c{conc}",
        )  # fmt: skip
        floors[conc] = {**data, "per_s": data["req_per_s"], "peak_rss_mb": run.peak_rss_mb}
    best = max(floors.values(), key=lambda f: f["per_s"])
    result["aiohttp_floor"] = {
        **best,
        "by_concurrency": {str(k): v["per_s"] for k, v in floors.items()},
    }
    data, run = peer(
        "aiohttp_floor.py", str(targets), "--concurrency", "64", name=f"r{r}-aiohttp-200"
    )
    result["aiohttp_plain"] = {**data, "per_s": data["req_per_s"], "peak_rss_mb": run.peak_rss_mb}

    log("catlas forced full refetch")
    result["catlas_forced"] = catlas_pass(
        state, hosts_file, 2, claim, f"r{r}-catlas-forced", "unchanged",
        CATLAS_FULL_REFETCH_INTERVAL_S="0",
    )  # fmt: skip
    if profile is not None:
        # In one process (no lanes): cProfile sees the process it runs in, and with lanes
        # that process only hands sensors out and waits. Not timed.
        log("catlas conditional pass under cProfile, in one process")
        result["catlas_conditional_profiled"] = catlas_pass(
            state, hosts_file, 3, claim, f"r{r}-catlas-profiled", "not_modified",
            profile=profile, CATLAS_LANES="0",
        )  # fmt: skip
    # The round's folders stay until the run ends (`main` removes `work`): deleting ~10,000
    # files makes ext4 skip each freed inode for a minute or more when it allocates the
    # next ones (`recently_deleted`), which cost the next round's first pass, the one that
    # creates the most files, ~1.5 s of kernel time per lane (perf).
    return result


def ratios(round_: dict[str, Any]) -> dict[str, float]:
    def ratio(a: str, b: str) -> float:
        return round_[a]["per_s"] / round_[b]["per_s"] if round_[b]["per_s"] else 0.0

    return {
        "first_vs_scrapy": ratio("catlas_first", "scrapy"),
        "first_vs_cdio_first": ratio("catlas_first", "cdio_first"),
        "conditional_vs_aiohttp_floor": ratio("catlas_conditional", "aiohttp_floor"),
        "forced_vs_cdio_unchanged": ratio("catlas_forced", "cdio_unchanged"),
    }


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    medians: dict[str, Any] = {}
    for key in rounds[0]:
        if "per_s" in rounds[0][key] or "seconds" in rounds[0][key]:
            medians[key] = {
                field: statistics.median(r[key][field] for r in rounds)
                for field in ("per_s", "peak_rss_mb", "seconds", "tick_s", "cpu_s")
                if field in rounds[0][key]
            }
    per_round = [ratios(r) for r in rounds]
    return {
        "medians": medians,
        "ratios_per_round": per_round,
        "ratios": {k: statistics.median(r[k] for r in per_round) for k in per_round[0]},
    }


def profile_tops(path: Path, out: Path, top: int = 15) -> str:
    import io
    import pstats

    text = io.StringIO()
    for order in ("cumulative", "tottime"):
        text.write(f"== catlas conditional pass in one process, top {top} by {order} ==\n")
        stats = pstats.Stats(str(path), stream=text)
        stats.strip_dirs().sort_stats(order).print_stats(top)
    # The header names the profile file: keep it relative to the repository.
    report = text.getvalue().replace(str(BENCH.parent) + "/", "")
    out.write_text(report)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--wrk-seconds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile a conditional pass")
    parser.add_argument("--out", type=Path, default=RESULTS / "e2e.json")
    parser.add_argument(
        "--set", action="append", default=[], metavar="CATLAS_NAME=VALUE",
        help="a catlas setting for every command of the run (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name.startswith("CATLAS_"):
            parser.error(f"--set {item!r}: expected CATLAS_NAME=VALUE")
        SETTINGS[name] = value

    work = Path(tempfile.mkdtemp(prefix="catlas-bench-e2e-"))
    try:
        print(f"e2e: {args.pages} pages on {args.hosts} hosts, {args.rounds} round(s)", flush=True)
        written = pageset.generate(work / "pages", args.pages, args.hosts, args.seed)
        sizes = sorted(p.bytes for p in written)
        with nginx.serve(work / "pages" / "sites", workers=2) as server:
            hosts = sorted({p.host for p in written})
            targets = work / "targets.json"
            targets.write_text(json.dumps([
                {"url": f"http://{p.host}:{server.port}{p.path}", "host": p.host, "path": p.path}
                for p in written
            ]))  # fmt: skip
            sites = work / "pages" / "sites"
            plain = [(p.host, p.path, None) for p in written]
            conditional = [(p.host, p.path, nginx.etag(sites / p.host / p.file)) for p in written]
            print("  wrk against nginx", flush=True)
            ceiling = {
                "plain_req_per_s": nginx.wrk(server, plain, seconds=args.wrk_seconds),
                "conditional_req_per_s": nginx.wrk(server, conditional, seconds=args.wrk_seconds),
                "connections": 64,
                "nginx": server.version,
            }
            ctx = {
                "hosts_file": server.hosts_file(work / "hosts", hosts),
                "csv": work / "pages" / "sensors.csv",
                "targets": targets,
                "claim": max(2000, args.pages),
            }
            profile = RAW / "catlas-conditional.prof" if args.profile else None
            rounds = [
                one_round(r + 1, ctx, work, profile=profile if r == args.rounds - 1 else None)
                for r in range(args.rounds)
            ]
        result = {
            "pages": len(written),
            "hosts": args.hosts,
            "median_page_bytes": sizes[len(sizes) // 2],
            "total_bytes": sum(sizes),
            "rounds": len(rounds),
            "machine": {"cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg()},
            "settings": SETTINGS,
            "wrk": ceiling,
            **summarize(rounds),
            "raw_rounds": rounds,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2, sort_keys=True, default=str))
        if profile is not None and profile.exists():
            print(profile_tops(profile, RESULTS / "e2e_profile_conditional.txt"))
        print(f"e2e: wrote {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
