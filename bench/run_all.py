"""Every benchmark, each beside its peer in the same run, and one table of the figures.

    python bench/run_all.py [--quick]

Runs due_probe.py (PostgreSQL), the CLI start-up cost, e2e.py (nginx, the peers' own
environment), refresh_sim.py, the scale benchmarks (claims.py, lake_scale.py,
memory_day.py) and two parts of a first pass (archive_writes.py, parse_handover.py);
writes their bench/results/*.json and bench/results/summary.json, and prints one table:
benchmark, catlas, peer, ratio, target, met. `--quick` is the same on a small scale (one round, a small page set) and
ends within two minutes; its figures are a smoke test, not the ones to quote.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
PEERS_PYTHON = BENCH / ".peers" / "bin" / "python"
CATLAS = Path(sys.executable).with_name("catlas")


@dataclass(frozen=True)
class Row:
    benchmark: str
    catlas: float | None
    peer: float | None
    peer_name: str
    target: str
    # (catlas, ratio) -> met; the ratio is None for a row with no peer (a bare target)
    met: Callable[[float, float | None], bool] | None
    digits: int = 1
    # The median of the ratios taken within each round, where there are rounds; else
    # the ratio of the two figures.
    within_rounds: float | None = None

    def cells(self) -> list[str]:
        ratio = self.within_rounds
        if ratio is None and self.catlas is not None and self.peer:
            ratio = self.catlas / self.peer
        met = (
            "—"
            if self.met is None or self.catlas is None
            else ("yes" if self.met(self.catlas, ratio) else "no")
        )
        fmt = f"{{:,.{self.digits}f}}"
        return [
            self.benchmark,
            "—" if self.catlas is None else fmt.format(self.catlas),
            "—" if self.peer is None else f"{fmt.format(self.peer)} ({self.peer_name})",
            "—" if ratio is None else f"{ratio:.3g}×",
            self.target,
            met,
        ]


def run(cmd: list[str], what: str) -> None:
    print(f"== {what}: {' '.join(cmd)}", flush=True)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=BENCH.parent)
    print(f"== {what}: {time.perf_counter() - started:.0f} s", flush=True)


def cpu_seconds(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """Median CPU (user + system) of a command's whole run, from wait4, after one untimed
    run (a first `robots check` also creates its state store). The command must succeed."""
    samples = []
    for i in range(repeat + 1):
        # A file, not a pipe: a command that writes much to stderr never blocks on it.
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                err.seek(0)
                error = err.read().decode(errors="replace")
                raise SystemExit(f"{' '.join(cmd)} failed:\n{error[-2000:]}")
        if i:
            samples.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(samples)


# The floor beside `catlas robots check`: Python's own robots.txt reader, fetching the same
# file and answering the same question, nothing else imported.
ROBOTS_FLOOR = (
    "import sys, urllib.robotparser as r; p = r.RobotFileParser(sys.argv[1]); p.read(); "
    "sys.exit(0 if p.can_fetch('catlas', sys.argv[2]) else 1)"
)


@contextlib.contextmanager
def robots_site() -> Iterator[int]:
    """A local server answering every path with a small robots.txt; its port."""

    class Robots(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Robots)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def startup(repeat: int) -> dict[str, float]:
    print("== CLI start-up: catlas --help beside scrapy --help; catlas robots check", flush=True)
    scrapy = [str(PEERS_PYTHON), "-m", "scrapy", "--help"]
    with robots_site() as port, tempfile.TemporaryDirectory(prefix="catlas-startup-") as tmp:
        hosts = Path(tmp) / "hosts"
        hosts.write_text(f"127.0.0.1:{port} startup.test\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
        env.update(CATLAS_STATE_DIR=str(Path(tmp) / "state"), CATLAS_HOSTS=str(hosts))
        robots = cpu_seconds(
            [str(CATLAS), "robots", "check", "http://startup.test/jobs/1"], repeat, env
        )
        floor = cpu_seconds(
            [sys.executable, "-c", ROBOTS_FLOOR, f"http://127.0.0.1:{port}/robots.txt",
             f"http://127.0.0.1:{port}/jobs/1"], repeat,
        )  # fmt: skip
    return {
        "catlas_help_cpu_s": cpu_seconds([str(CATLAS), "--help"], repeat),
        "scrapy_help_cpu_s": cpu_seconds(scrapy, repeat),
        "catlas_robots_check_cpu_s": robots,
        "python_robotparser_cpu_s": floor,
        "repeat": repeat,
    }


def scale_rows(claims: dict[str, Any], lake: dict[str, Any], day: dict[str, Any]) -> list[Row]:
    """Issue 16's scale targets: claims, the lake at ten million rows, a worker's day."""
    w = claims["workers"]
    n = f"{claims['sensors']:,} sensors, {claims['due']:,} due"
    one, many = claims["catlas_1_per_s"], claims[f"catlas_{w}_per_s"]
    rows_ = f"{lake['rows']:,} rows"
    return [
        Row(f"claims/s, 1 worker ({n})", one, claims["peer_1_per_s"],
            "SKIP LOCKED UPDATE", "≥ 5,000/s", lambda c, r: c >= 5000, 0),
        Row(f"claims/s, {w} worker processes ({n})", many, claims[f"peer_{w}_per_s"],
            "SKIP LOCKED UPDATE", f"≥ 3× one worker ({many / one:.2f}×)",
            lambda c, r: c >= 3 * one, 0),
        Row(f"lake write, rows/s ({rows_})", lake["catlas_rows_per_s"],
            lake["peer_rows_per_s"], "pyarrow, one file", "≥ 1,000,000/s",
            lambda c, r: c >= 1_000_000, 0),
        Row(f"lake: latest observation of one sensor, s ({rows_})",
            lake["catlas_latest_one_s"], lake["peer_latest_one_s"], "same SQL, one file",
            "< 0.2 s", lambda c, r: c < 0.2, 3),
        Row(f"lake: latest observation of every sensor, s ({rows_} and an hour since)",
            lake["catlas_latest_all_s"], lake["peer_latest_all_s"], "arg_max, one file",
            "< 0.2 s", lambda c, r: c < 0.2, 3),
        Row("lake: the same from the history (arg_max over `observations`), s",
            lake["catlas_latest_all_history_s"], lake["peer_latest_all_s"],
            "arg_max, one file", "—", None, 3),
        Row("lake: kept latest table, hourly update after compaction, s",
            lake["latest_hourly_update_s"], lake["latest_build_s"],
            "first build over the history", "—", None, 2),
        Row(f"lake: meaningful changes per company per week, s ({rows_})",
            lake["catlas_weekly_changes_s"], lake["peer_weekly_changes_s"],
            "same SQL, one file", "< 0.4 s", lambda c, r: c < 0.4, 3),
        Row("lake: bytes on disk per unchanged observation", lake["catlas_bytes_per_unchanged"],
            lake["peer_bytes_per_unchanged"], "pyarrow defaults", "≤ 64 B",
            lambda c, r: c <= 64, 1),
        Row("lake: smallest row group, rows", lake["row_group_rows_min"], None, "", "≥ 100,000",
            lambda c, r: c >= 100_000, 0),
        Row("lake: `changed` rows read back / written", lake["changed_rows_read_back"],
            lake["changed_rows_written"], "written", "all, stored column",
            lambda c, r: lake["changed_column_stored"] and r == 1.0, 0),
        Row("archive: new bytes for 100 unchanged pages", lake["archive_new_bytes_unchanged_x100"],
            None, "", "0", lambda c, r: c == 0, 0),
        Row(f"memory day: peak RSS, MB ({day['sensors']:,} sensors, one worker)",
            day["peak_rss_mib"], None, "", "≤ 500 MB", lambda c, r: c <= 500, 0),
        Row("memory day: RSS at the end / middle of the run, MB", day["rss_end_mib"],
            day["rss_middle_mib"], "middle", "flat (≤ 1.1×)",
            lambda c, r: r is not None and r <= 1.1, 0),
    ]  # fmt: skip


def rows(
    due: dict[str, Any], cli: dict[str, float], e2e: dict[str, Any], sim: dict[str, Any]
) -> list[Row]:
    m = e2e["medians"]
    ratio_of = e2e["ratios"]
    pol = sim["policies"]
    n = f"{due['sensors']:,}"
    return [
        Row("first pass, pages/s", m["catlas_first"]["per_s"], m["scrapy"]["per_s"], "Scrapy",
            "≥ 1.0×", lambda c, r: r >= 1.0, within_rounds=ratio_of["first_vs_scrapy"]),
        Row("first pass, pages/s (changedetection.io)", m["catlas_first"]["per_s"],
            m["cdio_first"]["per_s"], "changedetection.io", "—", None,
            within_rounds=ratio_of["first_vs_cdio_first"]),
        Row("conditional pass (all 304), sensors/s", m["catlas_conditional"]["per_s"],
            m["aiohttp_floor"]["per_s"], "aiohttp floor", "≥ 0.3× and ≥ 1,500/s",
            lambda c, r: r >= 0.3 and c >= 1500,
            within_rounds=ratio_of["conditional_vs_aiohttp_floor"]),
        Row("forced full refetch, nothing changed, pages/s", m["catlas_forced"]["per_s"],
            m["cdio_unchanged"]["per_s"], "changedetection.io unchanged", "≥ 10×",
            lambda c, r: r >= 10, within_rounds=ratio_of["forced_vs_cdio_unchanged"]),
        Row("peak RSS of the first pass, MB", m["catlas_first"]["peak_rss_mb"],
            m["scrapy"]["peak_rss_mb"], "Scrapy", "—", None, 0),
        Row("nginx is not the bottleneck: fastest 304 client / wrk, req/s",
            m["aiohttp_floor"]["per_s"], e2e["wrk"]["conditional_req_per_s"], "wrk",
            "≤ 0.8×", lambda c, r: r <= 0.8, 0),
        Row("nginx is not the bottleneck: fastest 200 client / wrk, req/s",
            max(m["aiohttp_plain"]["per_s"], m["scrapy"]["per_s"]),
            e2e["wrk"]["plain_req_per_s"], "wrk", "≤ 0.8×", lambda c, r: r <= 0.8, 0),
        Row(f"due probe (next_due_at), {n} sensors, ms", due["next_due_at_ms"],
            due["peer_min_ms"], "plain min()", "< 1,000 ms", lambda c, r: c < 1000, 2),
        Row("catlas --help, CPU s", cli["catlas_help_cpu_s"], cli["scrapy_help_cpu_s"],
            "scrapy --help", "< 0.3 s", lambda c, r: c < 0.3, 2),
        Row("catlas robots check (a local robots.txt), CPU s",
            cli.get("catlas_robots_check_cpu_s"), cli.get("python_robotparser_cpu_s"),
            "urllib.robotparser", "< 0.3 s", lambda c, r: c < 0.3, 2),
        Row("refresh: mean detection delay, h (rate_estimate / Nutch)",
            pol["rate_estimate"]["mean_delay_h"], pol["nutch"]["mean_delay_h"], "Nutch adaptive",
            "≤ 0.55×", lambda c, r: r <= 0.55, 2),
        Row("refresh: mean detection delay, h (rate_estimate / fixed)",
            pol["rate_estimate"]["mean_delay_h"], pol["fixed"]["mean_delay_h"], "fixed interval",
            "≤ 0.45×", lambda c, r: r <= 0.45, 2),
        # The bound: √rate with the true rates, which no policy that learns them beats.
        Row("refresh: mean detection delay, h (√rate oracle / Nutch)",
            pol["sqrt_oracle"]["mean_delay_h"], pol["nutch"]["mean_delay_h"], "Nutch adaptive",
            "—", None, 2),
        Row("refresh: mean detection delay, h (spec formula / Nutch)",
            pol["spec"]["mean_delay_h"], pol["nutch"]["mean_delay_h"], "Nutch adaptive", "—",
            None, 2),
        Row("refresh: freshness (rate_estimate / Nutch)", pol["rate_estimate"]["freshness"],
            pol["nutch"]["freshness"], "Nutch adaptive", "—", None, 3),
    ]  # fmt: skip


def archive_rows(writes: dict[str, Any]) -> list[Row]:
    """A first fetch's four objects archived: one pack a run against four files."""

    def cpu_ms(name: str) -> float:
        return (writes[f"{name}_user_s"] + writes[f"{name}_system_s"]) / writes["runs"] * 1000

    return [
        Row("archive: CPU of a first fetch's four new objects, ms", cpu_ms("packs"),
            cpu_ms("files"), "a file each, as before packs", "—", None, 3),
    ]  # fmt: skip


def handover_rows(handover: dict[str, Any]) -> list[Row]:
    """First-sight pages handed to two parser processes: catlas's pool against the stdlib's."""

    def cpu_ms(name: str) -> float:
        return handover[name]["cpu_s"] / handover["pages"] * 1000

    return [
        Row("parse hand-over: CPU a parsed page, loop's process and parsers, ms",
            cpu_ms("catlas"), cpu_ms("stdlib"), "concurrent.futures process pool", "—", None, 2),
    ]  # fmt: skip


def table(rows_: list[Row]) -> str:
    header = ["benchmark", "catlas", "peer", "ratio", "target", "met"]
    cells = [r.cells() for r in rows_]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c) + " |" for c in cells]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--from-results", action="store_true", help="Print the table of the last run again."
    )
    args = parser.parse_args()
    started = time.perf_counter()
    suffix = "_quick" if args.quick else ""
    names = (
        "due_probe", "e2e", "refresh_sim", "claims", "lake_scale", "memory_day", "archive_writes",
        "parse_handover",
    )  # fmt: skip
    out = {name: RESULTS / f"{name}{suffix}.json" for name in names}
    py = sys.executable
    summary_path = RESULTS / f"summary{suffix}.json"
    if args.from_results:
        cli = json.loads(summary_path.read_text())["cli_startup"]
    elif args.quick:
        run([py, "bench/due_probe.py", "--sensors", "10000", "--repeat", "3",
             "--json", str(out["due_probe"])], "due probe")  # fmt: skip
        cli = startup(1)
        run([py, "bench/e2e.py", "--pages", "40", "--hosts", "40", "--rounds", "1",
             "--wrk-seconds", "2", "--out", str(out["e2e"])], "end to end")  # fmt: skip
        run([py, "bench/refresh_sim.py", "--pages", "120", "--days", "40", "--warmup-days",
             "10", "--out", str(out["refresh_sim"])], "refresh simulation")  # fmt: skip
        run([py, "bench/claims.py", "--sensors", "10000", "--due", "1000",
             "--json", str(out["claims"])], "claims")  # fmt: skip
        run([py, "bench/lake_scale.py", "--rows", "100000", "--sensors", "10000",
             "--per-hour", "10000", "--repeat", "3", "--json", str(out["lake_scale"])],
            "lake at scale")  # fmt: skip
        run([py, "bench/memory_day.py", "--sensors", "100", "--domains", "20", "--every",
             "0.5", "--json", str(out["memory_day"])], "memory day")  # fmt: skip
        run([py, "bench/archive_writes.py", "--runs", "200", "--rounds", "1",
             "--json", str(out["archive_writes"])], "archive writes")  # fmt: skip
        run([py, "bench/parse_handover.py", "--pages", "200", "--rounds", "1",
             "--json", str(out["parse_handover"])], "parse hand-over")  # fmt: skip
    else:
        run([py, "bench/due_probe.py", "--json", str(out["due_probe"])], "due probe")
        cli = startup(3)
        run([py, "bench/e2e.py", "--profile", "--out", str(out["e2e"])], "end to end")
        run([py, "bench/refresh_sim.py", "--out", str(out["refresh_sim"])], "refresh simulation")
        run([py, "bench/claims.py", "--json", str(out["claims"])], "claims")
        run([py, "bench/lake_scale.py", "--json", str(out["lake_scale"])], "lake at scale")
        run([py, "bench/memory_day.py", "--json", str(out["memory_day"])], "memory day")
        run([py, "bench/archive_writes.py", "--json", str(out["archive_writes"])], "archive writes")
        run(
            [py, "bench/parse_handover.py", "--json", str(out["parse_handover"])], "parse hand-over"
        )
    loaded = {name: json.loads(path.read_text()) for name, path in out.items()}
    table_rows = rows(loaded["due_probe"], cli, loaded["e2e"], loaded["refresh_sim"])
    table_rows += scale_rows(loaded["claims"], loaded["lake_scale"], loaded["memory_day"])
    table_rows += archive_rows(loaded["archive_writes"])
    table_rows += handover_rows(loaded["parse_handover"])
    text = table(table_rows)
    previous = json.loads(summary_path.read_text()) if args.from_results else {}
    summary = {
        "quick": args.quick,
        "seconds": previous.get("seconds", time.perf_counter() - started),
        "cli_startup": cli,
        "rows": [
            dict(
                zip(
                    ["benchmark", "catlas", "peer", "ratio", "target", "met"],
                    r.cells(),
                    strict=True,
                )
            )
            for r in table_rows
        ],
        "table": text,
    }
    summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    print()
    print(text)
    print(f"\n{'bench-quick' if args.quick else 'bench'}: {summary['seconds']:.0f} s; "
          f"results in {RESULTS.relative_to(BENCH.parent)}/")  # fmt: skip


if __name__ == "__main__":
    main()
