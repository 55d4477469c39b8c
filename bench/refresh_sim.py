"""Refresh efficiency on a simulated web: how soon each policy sees a change, for one budget.

    python bench/refresh_sim.py [--pages 2000] [--days 120] [--warmup-days 30] [--seed 7]

The web: every page changes as a Poisson process; 20 % never change; the others have a
mean change interval drawn log-uniform between 2 hours and 120 days. A fetch sees whether
the page changed since the fetch before (several changes look like one). Every policy
starts each page one day apart from its first fetch (a random phase in the first day) and
keeps inside the spec's clamp [CATLAS_MIN_INTERVAL_S, CATLAS_MAX_INTERVAL_S] (15 min, 7 d).

Policies:

- `nutch`: Apache Nutch's AdaptiveFetchSchedule as its code reads (inc_rate 0.4, dec_rate
  0.2, sync_delta on with sync_delta_rate 0.3; `nutch_policy` says how): a fetch that found
  the page modified multiplies the interval by 1 - 0.2 and makes the fetch time the page's
  modified time, one that did not by 1 + 0.4; then sync-delta, after every fetch, lengthens
  an interval shorter than the time since that modified time and counts the next fetch
  from 0.3 × that time earlier; clamped. Its intervals settle where it settles, so it sets
  its own spend: that spend is the BUDGET every other policy is held to.
  `nutch_last_modified`, a kinder variant (sync-delta after modified fetches only, with
  the server's exact Last-Modified), is printed beside it with rate_estimate at its spend.
- `fixed`: one interval for every page, the budget's.
- `spec`: catlas's formula, the real `catlas_assets.domain.scheduling` functions
  (`next_interval`, `next_run_at` with its ±10 % jitter): unchanged grows the interval by
  the stability growth (or decays back toward base after a burst); a detected change is
  meaningful (burst interval) or minor (`min(current, base)`), half and half. Its knob is
  the base interval, searched so that it spends the budget.
- `rate_estimate`: `catlas_assets.domain.rate_estimate`: each page's change rate learned
  with the Cho-Garcia-Molina estimator from its own fetches (a prior of half a change per
  day to start), each interval `sqrt_interval(rate, scale, min, max)`: fetch rate ∝ √rate
  inside the clamp. Its knob is the scale (what `sqrt_scale` solves for a budget over the
  current estimates), searched so that it spends the budget.

Measured over the days after the warm-up (the learning days are not counted): the mean
per-change detection delay (from each change to the first fetch after it), freshness (the
share of page-time the stored copy equals the live page) and the fetches spent.
Target: rate_estimate's delay <= 0.55 × nutch's and <= 0.45 × fixed's at equal budget.
`sqrt_oracle` (√rate with each page's true rate) is printed beside them as the bound: for
a Poisson page fetched every I the mean delay is I/2, and at a given spend the sum of
rate × I/2 is least with I ∝ 1/√rate, so no √rate policy that learns can beat it.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catlas_assets.domain import scheduling
from catlas_assets.domain.rate_estimate import RateEstimate, sqrt_interval
from catlas_assets.settings import Settings

HOUR, DAY = 3600.0, 86400.0
EPOCH = datetime(2026, 1, 5, tzinfo=UTC)
START_INTERVAL = DAY
NEXT_CYCLE_S = 900.0  # the soonest a fetch due in the past comes again
BURST_SHARE = 1800 / 86400  # CATLAS_BURST_INTERVAL_S over a one-day base
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Page:
    rate: float  # changes per second (0: static)
    changes: list[float]  # change instants, seconds from the start


@dataclass
class Tally:
    delay_sum: float = 0.0
    changes: int = 0
    fresh_s: float = 0.0
    fetches: int = 0


def web(pages: int, horizon_s: float, seed: int) -> list[Page]:
    rng = random.Random(seed)
    out = []
    low, high = math.log(2 * HOUR), math.log(120 * DAY)
    for _ in range(pages):
        if rng.random() < 0.2:
            out.append(Page(0.0, []))
            continue
        rate = 1 / math.exp(rng.uniform(low, high))
        t, changes = 0.0, []
        while True:
            t += rng.expovariate(rate)
            if t > horizon_s:
                break
            changes.append(t)
        out.append(Page(rate, changes))
    return out


# -- policies: each returns the next interval after a fetch ---------------------------------
# A policy makes, for each page, its first interval and a `step(interval, changed,
# modified_age, elapsed, fetched_at)` that gives the next interval and how much earlier
# than `fetched_at` it counts from (Nutch's sync-delta; catlas's jitter).
Step = Callable[[float, bool, float, float, float], tuple[float, float]]


def nutch_policy(limits: scheduling.Limits, inc: float = 0.4, dec: float = 0.2, sync: float = 0.3):
    """Apache Nutch's AdaptiveFetchSchedule.setFetchSchedule as its code reads (Nutch 1.x):

    - modified: interval × (1 - dec), and the page's modified time becomes the fetch time;
    - not modified: interval × (1 + inc);
    - sync-delta, after every fetch: delta = fetch time - modified time (0 after a modified
      fetch); a delta longer than the interval becomes the interval, and the next fetch
      counts from fetch time - sync × delta. An offset longer than the max interval is
      meant to become a share of it (`offset / delta * max`), but Java's long division
      makes that 0: such a fetch counts from the fetch time;
    - clamped to [min, max].

    The modified time is the one Nutch keeps: when it last found the page modified (the
    first fetch to start with), not the server's Last-Modified.
    """

    def make(_: int, rng: random.Random) -> tuple[float, Step]:
        modified = [math.nan]  # the fetch time it last found the page modified

        def step(interval: float, changed: bool, _age: float, _e: float, fetched_at: float):
            if math.isnan(modified[0]):
                modified[0] = fetched_at - _e  # the first fetch: modifiedTime <= 0 -> fetch time
            if changed:
                interval *= 1 - dec
                modified[0] = fetched_at
            else:
                interval *= 1 + inc
            delta = fetched_at - modified[0]
            interval = max(interval, delta)
            offset = sync * delta
            if delta > 0 and offset > limits.max_interval_s:
                offset = 0.0  # `offset / delta * maxIntervalMillis` in long arithmetic
            return _clamp(interval, limits), offset

        return START_INTERVAL, step

    return make


def nutch_last_modified_policy(
    limits: scheduling.Limits, inc: float = 0.4, dec: float = 0.2, sync: float = 0.3
):
    """A kinder variant, measured before: sync-delta only after a modified fetch, with the
    time since the page's true last change (a server's exact Last-Modified) as the delta."""

    def make(_: int, rng: random.Random) -> tuple[float, Step]:
        def step(interval: float, changed: bool, modified_age: float, *_: float):
            if not changed:
                return _clamp(interval * (1 + inc), limits), 0.0
            interval = max(interval * (1 - dec), modified_age)
            return _clamp(interval, limits), sync * modified_age

        return START_INTERVAL, step

    return make


def fixed_policy(interval: float):
    def make(_: int, rng: random.Random) -> tuple[float, Step]:
        return interval, lambda *_: (interval, 0.0)

    return make


def spec_policy(limits: scheduling.Limits, base: int, meaningful_share: float = 0.5):
    """The knob moves the base and the burst interval together (their default ratio, a day
    to 30 min): the base alone cannot bring the bursts after changes down to a budget."""
    burst = max(limits.min_interval_s, round(base * BURST_SHARE))
    limits = dataclasses.replace(limits, burst_interval_s=min(burst, limits.max_interval_s))

    def make(_: int, rng: random.Random) -> tuple[float, Step]:
        def step(interval: float, changed: bool, _age: float, _e: float, fetched_at: float):
            if changed:
                event = (
                    scheduling.Event.MEANINGFUL
                    if rng.random() < meaningful_share
                    else scheduling.Event.MINOR
                )
            else:
                event = scheduling.Event.UNCHANGED
            current = scheduling.next_interval(round(interval), base, event, limits)
            now = EPOCH + timedelta(seconds=fetched_at)
            jittered = (scheduling.next_run_at(now, current, rng) - now).total_seconds()
            return float(current), current - jittered  # the jitter as a shift

        return float(limits.clamp(base)), step

    return make


def rate_policy(limits: scheduling.Limits, scale: float):
    def make(_: int, rng: random.Random) -> tuple[float, Step]:
        estimate = [RateEstimate.prior(DAY)]

        def step(interval: float, changed: bool, _age: float, elapsed: float, _t: float):
            estimate[0] = estimate[0].observe(elapsed, changed)
            rate = estimate[0].rate
            return sqrt_interval(rate, scale, limits.min_interval_s, limits.max_interval_s), 0.0

        return START_INTERVAL, step

    return make


def oracle_policy(pages: list[Page], limits: scheduling.Limits, scale: float):
    """√rate with every page's true rate: the least delay any √rate policy can reach."""

    def make(index: int, rng: random.Random) -> tuple[float, Step]:
        interval = sqrt_interval(
            pages[index].rate, scale, limits.min_interval_s, limits.max_interval_s
        )
        return interval, lambda *_: (interval, 0.0)

    return make


def _clamp(interval: float, limits: scheduling.Limits) -> float:
    return min(float(limits.max_interval_s), max(float(limits.min_interval_s), interval))


# -- the simulation --------------------------------------------------------------------------
def simulate(pages: list[Page], policy, horizon_s: float, warmup_s: float, seed: int) -> Tally:
    """Run `policy` on every page; count what happens after `warmup_s`."""
    tally = Tally()
    rng = random.Random(seed)
    for index, page in enumerate(pages):
        interval, step = policy(index, rng)
        t = rng.uniform(0, DAY)  # the first fetch
        seen = bisect.bisect_right(page.changes, t)  # changes the stored copy includes
        fresh_until = page.changes[seen] if seen < len(page.changes) else math.inf
        shift = 0.0  # the first fetch establishes the copy; each later one may see changes
        while True:
            nxt = max(t - shift + interval, t + NEXT_CYCLE_S)
            if nxt > horizon_s:
                # Fresh until the next change or the end; changes after the last fetch wait.
                tally.fresh_s += max(0.0, min(fresh_until, horizon_s) - max(t, warmup_s))
                for c in page.changes[seen:]:
                    if c >= warmup_s:
                        tally.changes += 1
                        tally.delay_sum += _next_fetch_after(c, nxt, interval)
                break
            if t >= warmup_s or nxt > warmup_s:
                tally.fresh_s += max(0.0, min(fresh_until, nxt) - max(t, warmup_s))
            now_seen = bisect.bisect_right(page.changes, nxt, lo=seen)
            changed = now_seen > seen
            for c in page.changes[seen:now_seen]:
                if c >= warmup_s:
                    tally.changes += 1
                    tally.delay_sum += nxt - c
            if nxt >= warmup_s:
                tally.fetches += 1
            # Last-Modified: the page's latest change (none known: the fetch time, age 0).
            modified_age = nxt - page.changes[now_seen - 1] if now_seen else 0.0
            seen = now_seen
            fresh_until = page.changes[seen] if seen < len(page.changes) else math.inf
            elapsed, t = nxt - t, nxt
            interval, shift = step(interval, changed, modified_age, elapsed, t)
    return tally


def _next_fetch_after(change: float, next_fetch: float, interval: float) -> float:
    """A change after the horizon's last fetch is seen at the next scheduled fetch."""
    return max(0.0, next_fetch - change)


def figures(tally: Tally, pages: int, window_s: float) -> dict[str, float]:
    return {
        "mean_delay_h": tally.delay_sum / tally.changes / HOUR if tally.changes else 0.0,
        "freshness": tally.fresh_s / (pages * window_s),
        "fetches": tally.fetches,
        "changes": tally.changes,
    }


def matched(
    make: Callable[[float], Any], pages: list[Page], args: argparse.Namespace, budget: int,
    low: float, high: float,
) -> tuple[float, Tally]:  # fmt: skip
    """The knob in [low, high] whose spend is the budget (within 0.5 %).

    Regula falsi with the Illinois step on log(spend) against log(knob): spend is close
    to a power of the knob, so a few runs suffice, and the bracket survives the flat
    stretches the clamp makes (every page at the max interval, or at the min).
    """

    def gap(x: float) -> tuple[float, Tally]:
        tally = simulate(pages, make(math.exp(x)), args.horizon_s, args.warmup_s, args.seed + 1)
        return math.log(max(tally.fetches, 1)) - math.log(budget), tally

    a, b = math.log(low), math.log(high)
    (fa, ta), (fb, tb) = gap(a), gap(b)
    best = min(((a, ta), (b, tb)), key=lambda p: abs(p[1].fetches - budget))
    if fa * fb > 0:
        return math.exp(best[0]), best[1]  # the budget is outside what the knob can reach
    side = 0
    for _ in range(30):
        x = b - fb * (b - a) / (fb - fa)
        fx, tx = gap(x)
        if abs(tx.fetches - budget) < abs(best[1].fetches - budget):
            best = (x, tx)
        if abs(tx.fetches - budget) <= 0.005 * budget:
            break
        if fx * fb < 0:
            a, fa = b, fb
            side = 0
        else:
            fa = fa / 2 if side == -1 else fa  # Illinois: halve the end that stays
            side = -1
        b, fb = x, fx
    return math.exp(best[0]), best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--days", type=float, default=120)
    parser.add_argument("--warmup-days", type=float, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "refresh_sim.json")
    args = parser.parse_args()
    args.horizon_s = args.days * DAY
    args.warmup_s = args.warmup_days * DAY
    window = args.horizon_s - args.warmup_s
    started = time.perf_counter()

    s = Settings()  # the spec's defaults: the clamp, burst, decay and growth
    limits = scheduling.Limits(
        min_interval_s=s.min_interval_s,
        max_interval_s=s.max_interval_s,
        burst_interval_s=s.burst_interval_s,
        burst_decay=s.burst_decay,
        stability_growth=s.stability_growth,
    )
    pages = web(args.pages, args.horizon_s, args.seed)
    results: dict[str, dict[str, Any]] = {}

    nutch = simulate(pages, nutch_policy(limits), args.horizon_s, args.warmup_s, args.seed + 1)
    budget = nutch.fetches
    results["nutch"] = {**figures(nutch, len(pages), window), "knob": "inc 0.4, dec 0.2, sync 0.3"}

    # The kinder variant measured before, with its own spend, and rate_estimate at it.
    kinder = simulate(
        pages, nutch_last_modified_policy(limits), args.horizon_s, args.warmup_s, args.seed + 1
    )
    results["nutch_last_modified"] = {
        **figures(kinder, len(pages), window),
        "knob": "inc 0.4, dec 0.2, sync 0.3 after modified fetches, true Last-Modified",
    }
    _, rate_at_kinder = matched(
        lambda k: rate_policy(limits, k), pages, args, kinder.fetches, 1e-8, 10.0
    )
    results["rate_estimate_at_nutch_last_modified_budget"] = {
        **figures(rate_at_kinder, len(pages), window),
        "knob": f"budget {kinder.fetches} fetches",
    }

    interval = len(pages) * window / budget
    fixed = simulate(pages, fixed_policy(interval), args.horizon_s, args.warmup_s, args.seed + 1)
    results["fixed"] = {
        **figures(fixed, len(pages), window),
        "knob": f"interval {interval / HOUR:.2f} h",
    }

    base, spec = matched(
        lambda b: spec_policy(limits, round(b)), pages, args, budget,
        limits.min_interval_s, limits.max_interval_s,
    )  # fmt: skip
    results["spec"] = {
        **figures(spec, len(pages), window),
        "knob": f"base {base / HOUR:.2f} h, burst {base * BURST_SHARE / 60:.0f} min",
    }

    scale, rate = matched(lambda k: rate_policy(limits, k), pages, args, budget, 1e-8, 10.0)
    results["rate_estimate"] = {**figures(rate, len(pages), window), "knob": f"scale {scale:.4g}"}

    scale, oracle = matched(
        lambda k: oracle_policy(pages, limits, k), pages, args, budget, 1e-8, 10.0
    )
    results["sqrt_oracle"] = {
        **figures(oracle, len(pages), window),
        "knob": f"scale {scale:.4g}, true rates (a bound, not a policy)",
    }

    delay = {k: v["mean_delay_h"] for k, v in results.items()}
    ratios = {
        "rate_estimate_vs_nutch": delay["rate_estimate"] / delay["nutch"],
        "rate_estimate_vs_fixed": delay["rate_estimate"] / delay["fixed"],
        "spec_vs_nutch": delay["spec"] / delay["nutch"],
        "sqrt_oracle_vs_nutch": delay["sqrt_oracle"] / delay["nutch"],
        "rate_estimate_vs_nutch_last_modified": (
            delay["rate_estimate_at_nutch_last_modified_budget"] / delay["nutch_last_modified"]
        ),
    }
    print(f"refresh simulation: {args.pages} pages, {args.days:g} days ({args.warmup_days:g} warm-up),"
          f" budget {budget} fetches (nutch's own spend)")  # fmt: skip
    print(f"{'policy':<15}{'mean delay':>12}{'freshness':>11}{'fetches':>9}  knob")
    for name, r in results.items():
        print(
            f"{name:<15}{r['mean_delay_h']:>10.2f} h{r['freshness']:>11.3f}{r['fetches']:>9}  {r['knob']}"
        )
    print(
        f"rate_estimate delay = {ratios['rate_estimate_vs_nutch']:.2f}x nutch (target <= 0.55), "
        f"{ratios['rate_estimate_vs_fixed']:.2f}x fixed (target <= 0.45)"
    )
    out = {
        "pages": args.pages, "days": args.days, "warmup_days": args.warmup_days,
        "seed": args.seed, "budget_fetches": budget, "policies": results, "ratios": ratios,
        "static_share": 0.2, "mean_change_interval": "log-uniform 2 h .. 120 d",
        "seconds": time.perf_counter() - started,
        "median_rate_per_day": statistics.median(p.rate * DAY for p in pages if p.rate),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
