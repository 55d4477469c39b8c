"""Relative dates ("Posted 3 Days Ago", "il y a 2 jours", "vor 3 Tagen") resolved to a date.

Pages and ATS answers write a date relative to when they were asked; the same posting
reads "2 days ago" today and "3 days ago" tomorrow. Resolved against the fetch time, both
are the same absolute date, so a roll-over is no change. Open-ended forms ("30+ Days
Ago", "vor mehr als 30 Tagen") have no date: None, never a wrong one that would move daily.

Languages: en, fr, de, es, nl, it, sv (the European companies catlas watches). The same
vocabulary gives `RELATIVE_DATE`, the pattern `normalize.mask_volatile` masks before
hashing, so a page's rolling "2 days ago" is not text churn either (a bare "today" is
masked only beside a posting verb or alone in its block: "Join us today" is prose).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

# Unit words per language (singular and plural forms, lower case), to days.
_UNITS: dict[str, float] = {}
for _days, _words in (
    (
        1 / 1440,
        "minute minutes min mins minuten minuut minuten minuto minuti minutos minut minuter",
    ),
    (
        1 / 24,
        "hour hours hr hrs heure heures stunde stunden hora horas uur ora ore timme timmar",
    ),
    (1, "day days jour jours tag tagen tage día días dia dias dag dagen giorno giorni dagar"),
    (
        7,
        "week weeks semaine semaines woche wochen semana semanas weken settimana settimane "
        "vecka veckor",
    ),
    (30, "month months mois monat monaten monate mes meses maand maanden mese mesi månad månader"),
    (365, "year years an ans année années jahr jahren jahre año años jaar jaren anno anni år"),
):
    for _word in _words.split():
        _UNITS[_word] = _days

# "one" in each language, as an article or a number word.
_ONE = "a an one un une ein einem einer einen uno una een ett en"
_COUNT = r"(?P<n>\d+)(?P<plus>\+)?|(?P<one>" + "|".join(_ONE.split()) + r")"
_UNIT = "(?P<unit>" + "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True)) + ")"
_MORE = r"(?:(?P<more>more than|plus de|mehr als|más de|meer dan|più di|mer än)\s+)?"
_AMOUNT = rf"{_MORE}(?:{_COUNT})\s+{_UNIT}"

_AGO_AFTER = ("ago", "geleden", "fa", "sedan")  # en, nl, it, sv ("för 3 dagar sedan")
_AGO_BEFORE = ("il y a", "hace", "vor", "för")  # fr, es, de, sv
_AGO_FORMS = (
    rf"{_AMOUNT}\s+(?:{'|'.join(_AGO_AFTER)})",
    rf"(?:{'|'.join(_AGO_BEFORE)})\s+{_AMOUNT}",
)
_DAY_WORDS: dict[str, int] = {
    "today": 0,
    "just now": 0,
    "aujourd'hui": 0,
    "aujourd’hui": 0,
    "heute": 0,
    "hoy": 0,
    "vandaag": 0,
    "oggi": 0,
    "idag": 0,
    "i dag": 0,
    "yesterday": 1,
    "hier": 1,
    "gestern": 1,
    "ayer": 1,
    "gisteren": 1,
    "ieri": 1,
    "igår": 1,
    "i går": 1,
}
RELATIVE_DAY_WORDS = frozenset(_DAY_WORDS)
_DAY = "(?P<word>" + "|".join(sorted(map(re.escape, _DAY_WORDS), key=len, reverse=True)) + ")"
_AGO = [re.compile(rf"(?<![\w]){form}(?![\w])", re.I) for form in _AGO_FORMS]
_WORD = re.compile(rf"(?<![\w]){_DAY}(?![\w])", re.I)
_UNNAMED = re.compile(r"\(\?P<\w+>")
# Words that say a day word dates something ("Posted today", "Heute veröffentlicht"):
# alone, "today" is ordinary prose ("Join us today") and is not masked.
_POSTED_WORDS = (
    "posted", "updated", "published", "edited", "added", "publié", "publiée", "mis à jour",
    "veröffentlicht", "aktualisiert", "ausgeschrieben", "gepostet", "publicado", "publicada",
    "actualizado", "geplaatst", "gepubliceerd", "bijgewerkt", "pubblicato", "pubblicata",
    "aggiornato", "publicerad", "publicerat", "uppdaterad",
)  # fmt: skip
_POSTED = "(?:" + "|".join(_POSTED_WORDS) + ")"
_DATED_DAY = rf"{_POSTED}\s+{_DAY}|{_DAY}\s+{_POSTED}|^\s*{_DAY}\s*$"
# One relative date anywhere in a text (word-bounded, case-insensitive), for masking.
RELATIVE_DATE = re.compile(
    _UNNAMED.sub(
        "(?:",
        rf"(?<![\w])(?:{'|'.join(f'(?:{form})' for form in _AGO_FORMS)}|{_DATED_DAY})(?![\w])",
    ),
    re.I | re.M,
)
# Every match of RELATIVE_DATE holds one of these words whole (an "ago" word, its
# preposition, a day word): lower-case ASCII text without one has no match, and this
# test costs a fraction of the full pattern, which most blocks of a page would fail.
RELATIVE_DATE_CUE = re.compile(
    r"(?<!\w)(?:" + "|".join(map(re.escape, (*_AGO_AFTER, *_AGO_BEFORE, *_DAY_WORDS))) + r")(?!\w)"
)


def may_hold_relative_date(lower: str) -> bool:
    """False only when lower-case ASCII `lower` has no match of RELATIVE_DATE: a cheaper
    test than the cue alone, since most pages use "today" or "hier" as prose.

    A match is an "ago" form (an "ago" word or its preposition, whole), or a day word
    beside a posting verb, or a day word alone on its line."""
    if _AGO_CUE.search(lower) is not None:
        return True
    if _DAY_CUE.search(lower) is None:
        return False
    if any(word in lower for word in _POSTED_WORDS):
        return True
    return any(line.strip() in _DAY_WORDS for line in lower.split("\n"))


_AGO_CUE = re.compile(
    r"(?<!\w)(?:" + "|".join(map(re.escape, (*_AGO_AFTER, *_AGO_BEFORE))) + r")(?!\w)"
)
_DAY_CUE = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, _DAY_WORDS)) + r")(?!\w)")


def relative_days(text: str) -> float | None:
    """How many days back the text's relative date lies; None when there is none or it is
    open-ended ("30+ days ago", "more than 30 days ago")."""
    for pattern in _AGO:
        match = pattern.search(text)
        if match is None:
            continue
        if match.group("plus") or match.group("more"):
            return None
        count = int(match.group("n")) if match.group("n") else 1
        return count * _UNITS[match.group("unit").lower()]
    match = _WORD.search(text)
    if match is not None:
        return float(_DAY_WORDS[match.group("word").lower()])
    return None


def resolve_relative_date(text: str | None, now: datetime) -> date | None:
    """The date a relative date names, seen at `now` (the fetch time); None if none."""
    if not text:
        return None
    days = relative_days(text)
    if days is None:
        return None
    return (now - timedelta(days=days)).date()


def is_open_ended(text: str) -> bool:
    """ "Posted 30+ Days Ago": relative, but no date can be named."""
    for pattern in _AGO:
        match = pattern.search(text)
        if match is not None:
            return bool(match.group("plus") or match.group("more"))
    return False
