"""Turn the truth files and the stored rows into the eval's figures (rules: README.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from matching import (
    ChangeResult,
    Detection,
    EventResult,
    Sensor,
    StoredEvent,
    SurfaceResult,
    TruthChange,
    TruthEvent,
    TruthSurface,
    label_of,
    match_changes,
    match_events,
    match_surfaces,
    ratio,
)
from stored import Stored

EPOCH = datetime(2026, 1, 5, tzinfo=UTC)


@dataclass
class Corpus:
    companies: list[dict[str, Any]]
    days: int

    @classmethod
    def load(cls, truth_dir: Path) -> Corpus:
        index = json.loads((truth_dir / "corpus.json").read_text(encoding="utf-8"))
        companies = [
            json.loads((truth_dir / f"{c['slug']}.json").read_text(encoding="utf-8"))
            for c in index["companies"]
        ]
        return cls(companies, int(index["days"]))


@dataclass
class Truth:
    surfaces: list[TruthSurface]
    changes: list[TruthChange]
    events: list[TruthEvent]
    noise_days: dict[str, set[int]]


def _day(moment: datetime) -> tuple[int, float]:
    """(day index, hours since day 0) of a stored instant."""
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    hours = (moment - EPOCH).total_seconds() / 3600
    return int(hours // 24), hours


def _attributes(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def truth_of(corpus: Corpus, days: int) -> Truth:
    """The truth of the days lived (all of them unless the run was shortened)."""
    truth = Truth([], [], [], {})
    for c in corpus.companies:
        name = c["name"]
        truth.surfaces += [
            TruthSurface(name, s["surface"], (s["url"], *s["also"]), s["how"], tuple(s["accept"]))
            for s in c["surfaces"]
        ]
        truth.changes += [
            TruthChange(name, ch["surface"], ch["day"], ch["expect"], "; ".join(ch["what"]))
            for ch in c["changes"]
            if ch["day"] < days
        ]
        truth.events += [
            TruthEvent(
                name,
                e["entity_type"],
                tuple(e.get("accept", [e["event"]])),
                e["label"],
                e["day"],
                bool(e.get("optional")),
            )
            for e in c["entity_events"]
            if e["day"] < days
        ]
        truth.noise_days[name] = {d for d in c["noise_only_days"] if d < days}
    return truth


def sensors_of(stored: Stored) -> list[Sensor]:
    names = {c["id"]: c["name"] for c in stored.companies}
    return [
        Sensor(names.get(s["company_id"], "?"), int(s["id"]), s["surface"], s["url"], s["status"])
        for s in stored.sensors
    ]


def detections_of(stored: Stored, attribution: dict[int, TruthSurface]) -> list[Detection]:
    names = {c["id"]: c["name"] for c in stored.companies}
    result = []
    for row in stored.changes:
        day, hours = _day(row["detected_at"])
        target = attribution.get(int(row["sensor_id"]))
        # A sensor on no truth URL keeps its own label, marked so it matches nothing.
        surface = target.surface if target else f"(not a truth surface) {row['surface']}"
        company = names.get(row["company_id"], "?")
        result.append(
            Detection(
                int(row["sensor_id"]),
                company,
                surface,
                target is not None,
                day,
                hours,
                row["kind"],
                row["summary"] or "",
            )
        )
    return result


def events_of(stored: Stored) -> list[StoredEvent]:
    names = {c["id"]: c["name"] for c in stored.companies}
    rows = [
        r
        for r in stored.events
        if r["event"] != "seen" and r["snapshot_id"] not in stored.baseline_snapshots
    ]
    # A plan's new version, written beside the supersession of its old one, is the same fact.
    superseded = {
        (r["sensor_id"], r["observed_at"], r["entity_key"])
        for r in rows
        if r["entity_type"] == "pricing_plan" and r["event"] == "superseded"
    }
    result = []
    for r in rows:
        key = (r["sensor_id"], r["observed_at"], r["entity_key"])
        if r["entity_type"] == "pricing_plan" and r["event"] == "added" and key in superseded:
            continue
        day, _ = _day(r["observed_at"])
        label = label_of(r["entity_type"], _attributes(r["attributes"]), r["entity_key"] or "")
        company = names.get(r["company_id"], "?")
        result.append(
            StoredEvent(int(r["sensor_id"]), company, r["entity_type"], r["event"], label, day)
        )
    return result


def _pr(hit: int, reported: int, total: int) -> dict[str, Any]:
    return {
        "precision": ratio(hit, reported),
        "recall": ratio(hit, total),
        "hits": hit,
        "reported": reported,
        "truth": total,
    }


def onboarding_of(corpus: Corpus, stored: Stored) -> list[dict[str, str]]:
    by_name = {c["name"]: c for c in stored.companies}
    rows = []
    for c in corpus.companies:
        got = by_name.get(c["name"])
        rows.append(
            {
                "company": c["name"],
                "expected": c["expected_onboarding"],
                "got": got["onboarding_status"] if got else "absent",
                "error": (got or {}).get("onboarding_error") or "",
            }
        )
    return rows


def requests_of(stored: Stored) -> dict[str, int]:
    return {
        c["name"]: int(c["stats"]["discovery"].get("requests", 0))
        for c in stored.companies
        if c["stats"].get("discovery")
    }


def overall(
    truth: Truth,
    surf: SurfaceResult,
    sensors: list[Sensor],
    chg: ChangeResult,
    ev: EventResult,
    onboarding: list[dict[str, str]],
    requests: dict[str, int],
) -> dict[str, Any]:
    lags = [det.hours - change.day * 24 for change, det in chg.hits]
    false = len(chg.false_alarms) + len(chg.over_ranked)
    meaningful = sum(1 for c in truth.changes if c.expect == "meaningful")
    required = sum(1 for e in truth.events if not e.optional)
    surfaces = _pr(len(surf.correct), len(sensors), len(truth.surfaces))
    surfaces["recall"] = ratio(len(surf.found), len(truth.surfaces))
    surfaces["found"] = len(surf.found)
    return {
        "surfaces": surfaces,
        "changes": _pr(len(chg.hits), len(chg.hits) + false, meaningful)
        | {"duplicates": chg.duplicates, "late": len(chg.late), "either_seen": chg.ignored},
        "entity_events": _pr(len(ev.hits), len(ev.hits) + len(ev.extra), required)
        | {"duplicates": ev.duplicates, "late": ev.late, "optional_hits": ev.optional_hits},
        "noise_alerts": len(chg.noise_alerts),
        "onboarding_accuracy": ratio(
            sum(1 for o in onboarding if o["expected"] == o["got"]), len(onboarding)
        ),
        "requests_per_company": {
            "mean": round(sum(requests.values()) / len(requests), 1) if requests else None,
            "max": max(requests.values()) if requests else None,
            "over_25": sorted(n for n, r in requests.items() if r > 25),
        },
        "detection_lag_hours": {
            "mean": round(sum(lags) / len(lags), 1) if lags else None,
            "max": round(max(lags), 1) if lags else None,
        },
    }


def per_archetype(
    corpus: Corpus,
    truth: Truth,
    surf: SurfaceResult,
    sensors: list[Sensor],
    chg: ChangeResult,
    ev: EventResult,
    onboarding: list[dict[str, str]],
    requests: dict[str, int],
) -> dict[str, dict[str, Any]]:
    arch = {c["name"]: c["archetype"] for c in corpus.companies}
    g: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def count(company: str, key: str, n: int = 1) -> None:
        if company in arch:
            g[arch[company]][key] += n

    for c in corpus.companies:
        count(c["name"], "companies")
    for ts in truth.surfaces:
        count(ts.company, "surf_truth")
    for ts in surf.found:
        count(ts.company, "surf_found")
    for s in sensors:
        count(s.company, "surf_reported")
    for s in surf.correct:
        count(s.company, "surf_correct")
    for c in truth.changes:
        count(c.company, "chg_truth", c.expect == "meaningful")
    for c, _ in chg.hits:
        count(c.company, "chg_hits")
    for d in [*chg.false_alarms, *(d for _, d in chg.over_ranked)]:
        count(d.company, "chg_false")
    for d in chg.noise_alerts:
        count(d.company, "noise")
    for e in truth.events:
        count(e.company, "ev_truth", not e.optional)
    for e, _ in ev.hits:
        count(e.company, "ev_hits")
    for s in ev.extra:
        count(s.company, "ev_extra")
    for o in onboarding:
        count(o["company"], "onb_ok", o["expected"] == o["got"])
    for name, r in requests.items():
        if name in arch:
            g[arch[name]]["req_max"] = max(g[arch[name]]["req_max"], r)
    return {
        a: {
            "companies": x["companies"],
            "surfaces_p": ratio(x["surf_correct"], x["surf_reported"]),
            "surfaces_r": ratio(x["surf_found"], x["surf_truth"]),
            "changes_p": ratio(x["chg_hits"], x["chg_hits"] + x["chg_false"]),
            "changes_r": ratio(x["chg_hits"], x["chg_truth"]),
            "events_p": ratio(x["ev_hits"], x["ev_hits"] + x["ev_extra"]),
            "events_r": ratio(x["ev_hits"], x["ev_truth"]),
            "noise_alerts": x["noise"],
            "onboarding": ratio(x["onb_ok"], x["companies"]),
            "requests_max": x["req_max"] or None,
        }
        for a, x in sorted(g.items())
    }


def misses(
    surf: SurfaceResult, chg: ChangeResult, ev: EventResult, onboarding: list[dict[str, str]]
) -> dict[str, list[dict[str, Any]]]:
    noise = set(map(id, chg.noise_alerts))
    late = {c: d.day for c, d in chg.late}
    return {
        "surfaces_missed": [
            {"company": t.company, "surface": t.surface, "url": t.urls[0], "how": t.how}
            for t in surf.missed
        ],
        "surfaces_wrong": [
            {"company": s.company, "surface": s.surface, "url": s.url, "why": why}
            for s, why in surf.wrong
        ],
        "changes_missed": [
            {"company": c.company, "surface": c.surface, "day": c.day, "what": c.what}
            | ({"seen_late_on_day": late[c]} if c in late else {})
            for c in chg.missed
        ],
        "false_alarms": [
            {"company": d.company, "surface": d.surface, "day": d.day, "kind": d.kind,
             "summary": d.summary, "noise_only_day": id(d) in noise}
            for d in chg.false_alarms
        ] + [
            {"company": d.company, "surface": d.surface, "day": d.day, "kind": d.kind,
             "summary": d.summary, "over_ranked": c.what}
            for c, d in chg.over_ranked
        ],
        "events_missed": [
            {"company": e.company, "entity_type": e.entity_type, "event": "/".join(e.events),
             "label": e.label, "day": e.day}
            for e in ev.missed
        ],
        "events_extra": [
            {"company": e.company, "entity_type": e.entity_type, "event": e.event,
             "label": e.label, "day": e.day}
            for e in ev.extra
        ],
        "onboarding_wrong": [o for o in onboarding if o["expected"] != o["got"]],
    }  # fmt: skip


def score(corpus: Corpus, stored: Stored, days: int) -> dict[str, Any]:
    truth = truth_of(corpus, days)
    sensors = sensors_of(stored)
    surf = match_surfaces(truth.surfaces, sensors)
    chg = match_changes(
        truth.changes, detections_of(stored, surf.attribution), truth.noise_days, days - 1
    )
    ev = match_events(truth.events, events_of(stored))
    onboarding = onboarding_of(corpus, stored)
    requests = requests_of(stored)
    return {
        "overall": overall(truth, surf, sensors, chg, ev, onboarding, requests),
        "per_archetype": per_archetype(corpus, truth, surf, sensors, chg, ev, onboarding, requests),
        "misses": misses(surf, chg, ev, onboarding),
        "requests": requests,
    }
