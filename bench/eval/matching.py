"""How what catlas stored is compared with the corpus truth (the rules of README.md).

Pure functions over plain data; nothing here knows how catlas works inside.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

MEANINGFUL = frozenset({"meaningful", "major", "critical"})
WINDOW_DAYS = 2  # a change seen on day d, d+1 or d+2 counts for day d
# Where the human label of an entity is: a job's or a headline's title, a person's, a plan's
# or an incident's name.
TITLE_FIRST = ("title", "headline", "name", "label", "text")
NAME_FIRST = ("name", "title", "headline", "label", "text")


# -- URLs and labels -------------------------------------------------------------------------


def url_key(url: str) -> tuple[str, str, frozenset[tuple[str, str]]]:
    """A URL without what does not name a different page: scheme, `www.`, default port,
    trailing slash, fragment, case of the host. The query is kept as a set of pairs."""
    raw = url.strip()
    if "://" not in raw:
        raw = "http://" + raw
    parts = urlsplit(raw)
    host = (parts.hostname or "").lower().rstrip(".")
    host = host.removeprefix("www.")
    port = parts.port
    if port and port not in (80, 443):
        host = f"{host}:{port}"
    path = parts.path or "/"
    path = re.sub(r"/+", "/", path).rstrip("/") or "/"
    return host, path, frozenset(parse_qsl(parts.query, keep_blank_values=True))


def same_url(candidate: str, truth: str) -> bool:
    """Equivalent when host and path agree and the truth's query pairs are all present."""
    c_host, c_path, c_query = url_key(candidate)
    t_host, t_path, t_query = url_key(truth)
    return c_host == t_host and c_path == t_path and t_query <= c_query


def norm_label(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch)).casefold()
    return " ".join(re.sub(r"[^0-9a-z]+", " ", plain).split())


def label_of(entity_type: str, attributes: dict[str, Any], entity_key: str) -> str:
    keys = TITLE_FIRST if entity_type in ("job", "news") else NAME_FIRST
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return entity_key


# -- surfaces ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TruthSurface:
    company: str
    surface: str
    urls: tuple[str, ...]
    how: str
    accept: tuple[str, ...] = ()  # other labels that name this surface fairly

    def named(self, label: str) -> bool:
        return label == self.surface or label in self.accept

    def covers(self, url: str) -> bool:
        return any(same_url(url, u) for u in self.urls)


@dataclass(frozen=True)
class Sensor:
    company: str
    sensor_id: int
    surface: str
    url: str
    status: str


@dataclass
class SurfaceResult:
    found: list[TruthSurface] = field(default_factory=list)
    missed: list[TruthSurface] = field(default_factory=list)
    correct: list[Sensor] = field(default_factory=list)
    wrong: list[tuple[Sensor, str]] = field(default_factory=list)  # (sensor, why)
    # sensor id -> the truth surface its URL watches (whatever catlas called it)
    attribution: dict[int, TruthSurface] = field(default_factory=dict)


def match_surfaces(truth: list[TruthSurface], sensors: list[Sensor]) -> SurfaceResult:
    result = SurfaceResult()
    by_company: dict[str, list[TruthSurface]] = defaultdict(list)
    for ts in truth:
        by_company[ts.company].append(ts)
    for sensor in sensors:
        mine = by_company.get(sensor.company, [])
        same = [ts for ts in mine if ts.covers(sensor.url)]
        exact = [ts for ts in same if ts.named(sensor.surface)]
        if same:
            result.attribution[sensor.sensor_id] = (exact or same)[0]
        if exact:
            result.correct.append(sensor)
        elif same:
            result.wrong.append((sensor, f"mislabeled: the truth calls this URL {same[0].surface}"))
        else:
            result.wrong.append((sensor, "not a surface of the truth"))
    for ts in truth:
        hit = any(
            s.company == ts.company and ts.named(s.surface) and ts.covers(s.url) for s in sensors
        )
        (result.found if hit else result.missed).append(ts)
    return result


# -- changes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TruthChange:
    company: str
    surface: str
    day: int
    expect: str  # meaningful, minor, either
    what: str


@dataclass(frozen=True)
class Detection:
    sensor_id: int
    company: str
    surface: str  # the truth surface it is attributed to, else catlas's own label
    attributed: bool
    day: int
    hours: float  # since the start of day 0
    kind: str
    summary: str


@dataclass
class ChangeResult:
    hits: list[tuple[TruthChange, Detection]] = field(default_factory=list)
    missed: list[TruthChange] = field(default_factory=list)
    over_ranked: list[tuple[TruthChange, Detection]] = field(default_factory=list)
    false_alarms: list[Detection] = field(default_factory=list)
    noise_alerts: list[Detection] = field(default_factory=list)
    ignored: int = 0  # detections of changes the truth accepts either way
    duplicates: int = 0  # a change already matched through another sensor
    late: list[tuple[TruthChange, Detection]] = field(default_factory=list)  # after the window


def _windows(changes: list[TruthChange], last_day: int) -> list[tuple[TruthChange, int, int]]:
    ordered = sorted(changes, key=lambda c: c.day)
    result = []
    for i, change in enumerate(ordered):
        end = change.day + WINDOW_DAYS
        if i + 1 < len(ordered):
            end = min(end, ordered[i + 1].day - 1)
        result.append((change, change.day, min(end, last_day)))
    return result


def match_changes(
    truth: list[TruthChange],
    detections: list[Detection],
    noise_days: dict[str, set[int]],
    last_day: int,
) -> ChangeResult:
    """Each detection (one per surface and day) takes the earliest unmatched truth change of
    its surface whose window holds the detection's day; one whose change was already taken
    by another sensor (two URLs of one surface) is a duplicate."""
    result = ChangeResult()
    by_surface: dict[tuple[str, str], list[TruthChange]] = defaultdict(list)
    for change in truth:
        by_surface[(change.company, change.surface)].append(change)
    windows = {key: _windows(changes, last_day) for key, changes in by_surface.items()}
    seen: set[tuple[str, str, int]] = set()
    taken: dict[TruthChange, int] = {}
    for det in sorted(detections, key=lambda d: (d.company, d.surface, d.hours, d.sensor_id)):
        if det.kind not in MEANINGFUL or (det.company, det.surface, det.day) in seen:
            continue
        seen.add((det.company, det.surface, det.day))
        holding = [
            c
            for c, first, last in windows.get((det.company, det.surface), [])
            if first <= det.day <= last
        ]
        match = next((c for c in holding if c not in taken), None)
        if match is None:
            if any(taken[c] != det.sensor_id for c in holding):
                result.duplicates += 1
                continue
            before = [c for c in by_surface.get((det.company, det.surface), []) if c.day <= det.day]
            latest = max(before, key=lambda c: c.day, default=None)
            if latest is not None and latest not in taken:
                # The last change of this surface, seen after its window: true but late. It
                # stays a miss; the alert is no false alarm.
                taken[latest] = det.sensor_id
                result.late.append((latest, det))
                continue
            result.false_alarms.append(det)
            if det.day in noise_days.get(det.company, set()):
                result.noise_alerts.append(det)
            continue
        taken[match] = det.sensor_id
        if match.expect == "meaningful":
            result.hits.append((match, det))
        elif match.expect == "minor":
            result.over_ranked.append((match, det))
        else:
            result.ignored += 1
    late = {c for c, _ in result.late}
    result.missed = [c for c in truth if c.expect == "meaningful" and (c not in taken or c in late)]
    return result


# -- entity events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TruthEvent:
    company: str
    entity_type: str
    events: tuple[str, ...]  # the event and the ones accepted as the same fact
    label: str
    day: int
    optional: bool


@dataclass(frozen=True)
class StoredEvent:
    sensor_id: int
    company: str
    entity_type: str
    event: str
    label: str
    day: int


@dataclass
class EventResult:
    hits: list[tuple[TruthEvent, StoredEvent]] = field(default_factory=list)
    missed: list[TruthEvent] = field(default_factory=list)
    extra: list[StoredEvent] = field(default_factory=list)
    optional_hits: int = 0
    duplicates: int = 0  # the same fact again: through another sensor, or a second event name
    late: int = 0  # a true event seen after its window: no extra, the truth event stays missed


def match_events(truth: list[TruthEvent], stored: list[StoredEvent]) -> EventResult:
    """Stored events are deduplicated by (company, type, event, label, day); each then takes
    the earliest unmatched truth event with the same company, type, accepted event and
    normalized label whose window (day .. day + 2) holds it. One that finds only truth
    events already taken, by another sensor or on the same day (`superseded` beside
    `updated`), states the same fact again: a duplicate, neither right nor wrong."""
    result = EventResult()
    first: dict[tuple[str, str, str, str, int], StoredEvent] = {}
    for s in sorted(stored, key=lambda s: s.sensor_id):
        key = (s.company, s.entity_type, s.event, norm_label(s.label), s.day)
        first.setdefault(key, StoredEvent(s.sensor_id, *key))
    unique = sorted(
        first.values(), key=lambda s: (s.company, s.entity_type, s.label, s.day, s.event)
    )
    pool: dict[tuple[str, str, str], list[TruthEvent]] = defaultdict(list)
    for event in sorted(truth, key=lambda e: e.day):
        pool[(event.company, event.entity_type, norm_label(event.label))].append(event)
    taken: dict[TruthEvent, StoredEvent] = {}
    late: set[TruthEvent] = set()
    for event in unique:
        holding = [
            t
            for t in pool.get((event.company, event.entity_type, event.label), [])
            if event.event in t.events and t.day <= event.day <= t.day + WINDOW_DAYS
        ]
        match = next((t for t in holding if t not in taken), None)
        if match is None:
            if any(
                taken[t].sensor_id != event.sensor_id or taken[t].day == event.day for t in holding
            ):
                result.duplicates += 1
                continue
            overdue = [
                t
                for t in pool.get((event.company, event.entity_type, event.label), [])
                if event.event in t.events and t.day + WINDOW_DAYS < event.day and t not in taken
            ]
            if overdue:
                taken[overdue[-1]] = event
                late.add(overdue[-1])
                result.late += 1
            else:
                result.extra.append(event)
            continue
        taken[match] = event
        if match.optional:
            result.optional_hits += 1
        else:
            result.hits.append((match, event))
    result.missed = [t for t in truth if not t.optional and (t not in taken or t in late)]
    return result


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None
