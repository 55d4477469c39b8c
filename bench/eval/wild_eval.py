"""`make eval`: run catlas on the wild corpus through its CLI and measure what it got right.

A benchmark, not a test: it prints one table and writes bench/results/eval.json; it fails
only when the run itself could not be carried out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from driver import RunLog, live
from score import Corpus, score
from stored import read

from fixture_web import FixtureWeb

ROOT = Path(__file__).resolve().parents[2]
MISSES_SHOWN = 12
VENDOR_HOSTS = frozenset(
    {
        "boards-api.greenhouse.io",
        "api.lever.co",
        "api.ashbyhq.com",
        "apply.workable.com",
        "api.smartrecruiters.com",
    }
)


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table(result: dict[str, Any]) -> str:
    o = result["overall"]
    rows = [
        ("surfaces", o["surfaces"]["precision"], o["surfaces"]["recall"],
         f"{o['surfaces']['hits']} right of {o['surfaces']['reported']} sensors; {o['surfaces']['found']} of {o['surfaces']['truth']} surfaces found"),
        ("changes (meaningful+)", o["changes"]["precision"], o["changes"]["recall"],
         f"{o['changes']['hits']} of {o['changes']['truth']} found; {o['changes']['reported'] - o['changes']['hits']} false or over-ranked; {o['changes']['late']} late"),
        ("entity events", o["entity_events"]["precision"], o["entity_events"]["recall"],
         f"{o['entity_events']['hits']} of {o['entity_events']['truth']} found; {o['entity_events']['reported'] - o['entity_events']['hits']} extra"),
    ]  # fmt: skip
    lines = [f"{'measure':<24}{'P':>7}{'R':>7}  detail", "-" * 96]
    lines += [f"{name:<24}{_fmt(p):>7}{_fmt(r):>7}  {detail}" for name, p, r, detail in rows]
    req = o["requests_per_company"]
    lag = o["detection_lag_hours"]
    lines += [
        f"{'noise alerts':<24}{o['noise_alerts']:>14}  meaningful+ changes on noise-only days",
        f"{'onboarding accuracy':<24}{_fmt(o['onboarding_accuracy']):>14}  final status equals the expected one",
        f"{'requests per company':<24}{_fmt(req['mean']):>7}{_fmt(req['max']):>7}  mean / max of discovery requests"
        + (f"; over 25: {', '.join(req['over_25'])}" if req["over_25"] else ""),
        f"{'detection lag (h)':<24}{_fmt(lag['mean']):>7}{_fmt(lag['max']):>7}  mean / max from a change going live to its detection",
        "",
        f"{'archetype':<20}{'n':>3}{'surfP':>7}{'surfR':>7}{'chgP':>7}{'chgR':>7}{'evP':>7}{'evR':>7}{'noise':>6}{'onb':>6}{'req':>5}",
        "-" * 82,
    ]
    for name, a in result["per_archetype"].items():
        lines.append(
            f"{name:<20}{a['companies']:>3}{_fmt(a['surfaces_p']):>7}{_fmt(a['surfaces_r']):>7}"
            f"{_fmt(a['changes_p']):>7}{_fmt(a['changes_r']):>7}{_fmt(a['events_p']):>7}{_fmt(a['events_r']):>7}"
            f"{a['noise_alerts']:>6}{_fmt(a['onboarding']):>6}{_fmt(a['requests_max']):>5}"
        )
    return "\n".join(lines)


def misses(result: dict[str, Any]) -> str:
    lines = []
    for key, items in result["misses"].items():
        if not items:
            continue
        lines.append(f"\n{key.replace('_', ' ')} ({len(items)}):")
        if key.startswith("surfaces"):
            classes = Counter(
                f"{i['surface']}" + (f" [{i.get('how') or i.get('why')}]") for i in items
            )
            lines.append("  by class: " + ", ".join(f"{k} x{n}" for k, n in classes.most_common(8)))
        for item in items[:MISSES_SHOWN]:
            lines.append("  " + "  ".join(f"{k}={v}" for k, v in item.items()))
        if len(items) > MISSES_SHOWN:
            lines.append(f"  ... {len(items) - MISSES_SHOWN} more in the JSON")
    return "\n".join(lines)


def _timings(log: RunLog) -> dict[str, dict[str, float]]:
    by_kind: dict[str, list[float]] = {}
    for command in log.commands:
        by_kind.setdefault(" ".join(command.args[:2]), []).append(command.seconds)
    return {
        kind: {
            "count": len(v),
            "mean": round(sum(v) / len(v), 1),
            "max": round(max(v), 1),
            "total": round(sum(v), 1),
        }
        for kind, v in sorted(by_kind.items())
    }


def run_summary(
    log: RunLog, web: FixtureWeb, wall: float, days: int, step_hours: float
) -> dict[str, Any]:
    """How the run went: time, ticks, commands, and what the fixture web could not answer."""
    not_found = Counter(r.host for r in web.requests if r.status == 404)
    vendor_404 = Counter(
        f"{r.method} {r.host}{r.path}"
        for r in web.requests
        if r.status == 404 and r.host in VENDOR_HOSTS
    )
    return {
        "wall_s": round(wall, 1),
        "days": days,
        "step_hours": step_hours,
        "ticks": log.ticks,
        "steps_without_due_sensor": log.skipped_steps,
        "onboarding_batches": log.onboarding_batches,
        "fixture_requests": len(web.requests),
        "fixture_404_by_host": dict(not_found.most_common(15)),
        # Answers a real vendor would give but the corpus does not: a corpus gap, not a catlas miss.
        "vendor_api_404": dict(vendor_404.most_common(30)),
        "command_seconds": _timings(log),
        "command_failures": [
            {"args": " ".join(c.args), "now": c.now, "exit": c.code, "stderr": c.err.strip()[-400:]}
            for c in log.failures()
        ],
        "import_stderr": next(
            (
                c.err.strip().splitlines()
                for c in log.commands
                if c.args[:2] == ("companies", "import")
            ),
            [],
        ),
    }


def scrub(value: Any, paths: dict[str, str]) -> Any:
    """The results without this machine's paths (they are committed)."""
    if isinstance(value, str):
        for path, name in paths.items():
            value = value.replace(path, name)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, paths) for v in value]
    return value


RUN_FILE = "eval-run.json"  # the run summary, kept beside the state for --rescore


def simulate(args: argparse.Namespace, corpus: Corpus, days: int, work: Path) -> dict[str, Any]:
    """Live the corpus's days through the CLI; return the run summary (also kept in `work`)."""
    started = time.monotonic()

    def progress(day: int, log: RunLog) -> None:
        print(
            f"  day {day:>2}/{days}: {log.ticks} ticks, {time.monotonic() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    log, web = live(
        args.corpus,
        work / ".catlas",
        days=days,
        step=timedelta(hours=args.step_hours),
        on_day=progress,
    )
    run = run_summary(log, web, time.monotonic() - started, days, args.step_hours)
    (work / RUN_FILE).write_text(json.dumps(run, indent=2, default=str) + "\n", encoding="utf-8")
    return run


def report(result: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    print(table(result))
    print(misses(result))
    run = result["run"]
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(
        f"\n{run['ticks']} ticks, {run['onboarding_batches']} onboarding batches, "
        f"{run['fixture_requests']} requests to the fixture web, {len(run['command_failures'])} "
        f"commands failed (exit 2/3), {run['wall_s']:.0f} s wall; results in {shown}"
    )
    for line in run["import_stderr"]:
        print(f"  import: {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROOT / "fixtures" / "wild")
    parser.add_argument("--step-hours", type=float, default=12.0, help="virtual time between ticks")
    parser.add_argument("--days", type=int, default=None, help="simulated days (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "eval.json")
    parser.add_argument("--keep", action="store_true", help="keep the temporary state dir")
    parser.add_argument(
        "--rescore", type=Path, metavar="DIR", help="score a run kept with --keep again; no run"
    )
    args = parser.parse_args(argv)
    corpus = Corpus.load(args.corpus / "truth")
    if args.rescore:
        work = args.rescore
        run = json.loads((work / RUN_FILE).read_text(encoding="utf-8"))
    else:
        work = Path(tempfile.mkdtemp(prefix="catlas-eval-"))
        print(
            f"wild eval: {len(corpus.companies)} companies, {args.days or corpus.days} days, "
            f"a tick every {args.step_hours:g} h; state in {work}",
            file=sys.stderr,
        )
        run = simulate(args, corpus, args.days or corpus.days, work)
    try:
        result = score(corpus, read(work / ".catlas"), int(run["days"]))
    except Exception:
        print(f"scoring failed; the run is kept in {work} (--rescore {work})", file=sys.stderr)
        raise
    if not args.keep and not args.rescore:
        shutil.rmtree(work, ignore_errors=True)
    result["run"] = run
    report(scrub(result, {str(work): "$STATE", str(ROOT): "."}), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
