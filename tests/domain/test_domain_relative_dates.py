"""Relative dates resolve against the fetch time to one absolute date, in seven languages."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from catlas_assets.domain.normalize import mask_volatile
from catlas_assets.domain.relative_dates import is_open_ended, resolve_relative_date

NOW = datetime(2026, 3, 18, 14, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "days_back"),
    [
        ("Posted Today", 0),
        ("Posted Yesterday", 1),
        ("Posted 3 Days Ago", 3),
        ("posted 1 day ago", 1),
        ("2 days ago", 2),
        ("3 weeks ago", 21),
        ("a week ago", 7),
        ("2 months ago", 60),
        ("an hour ago", 0),
        ("il y a 2 jours", 2),
        ("Publié il y a une semaine", 7),
        ("hier", 1),
        ("vor 3 Tagen", 3),
        ("Vor einer Woche ausgeschrieben", 7),
        ("gestern", 1),
        ("hace 2 días", 2),
        ("Publicado hace una semana", 7),
        ("2 dagen geleden", 2),
        ("gisteren", 1),
        ("3 giorni fa", 3),
        ("una settimana fa", 7),
        ("för 2 dagar sedan", 2),
        ("igår", 1),
        ("i dag", 0),
    ],
)
def test_a_relative_date_resolves_against_the_fetch_time(text: str, days_back: int) -> None:
    assert resolve_relative_date(text, NOW) == (NOW - timedelta(days=days_back)).date()


def test_the_same_posting_resolves_to_the_same_date_on_every_later_day() -> None:
    posted = date(2026, 3, 15)
    for day, text in enumerate(("Posted 3 Days Ago", "Posted 4 Days Ago", "Posted 5 Days Ago")):
        assert resolve_relative_date(text, NOW + timedelta(days=day)) == posted
    assert resolve_relative_date("il y a 3 jours", NOW) == resolve_relative_date(
        "vor 4 Tagen", NOW + timedelta(days=1)
    )


@pytest.mark.parametrize(
    "text", ["Posted 30+ Days Ago", "30+ days ago", "vor mehr als 30 Tagen", "plus de 30 jours"]
)
def test_an_open_ended_relative_date_names_no_date(text: str) -> None:
    assert resolve_relative_date(text, NOW) is None
    if "ago" in text or "vor" in text:
        assert is_open_ended(text)


@pytest.mark.parametrize("text", ["", None, "Senior Engineer", "2026-03-01", "Berlin"])
def test_text_without_a_relative_date_resolves_to_nothing(text: str | None) -> None:
    assert resolve_relative_date(text, NOW) is None


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Backend Engineer · il y a 2 jours", "Backend Engineer · il y a 3 jours"),
        ("Backend Engineer · vor 2 Tagen", "Backend Engineer · vor 3 Tagen"),
        ("Backend Engineer · hace 2 días", "Backend Engineer · hace 3 días"),
        ("Backend Engineer · 2 dagen geleden", "Backend Engineer · 3 dagen geleden"),
        ("Backend Engineer · 2 giorni fa", "Backend Engineer · 3 giorni fa"),
        ("Backend Engineer · för 2 dagar sedan", "Backend Engineer · för 3 dagar sedan"),
        ("Backend Engineer · Heute veröffentlicht", "Backend Engineer · vor 1 Tag"),
        ("Posted Today", "Posted Yesterday"),
    ],
)
def test_a_rolling_relative_date_is_masked_before_hashing(before: str, after: str) -> None:
    assert mask_volatile(before) == mask_volatile(after)


def test_a_bare_day_word_in_prose_is_not_masked() -> None:
    assert mask_volatile("Join our team today") == "Join our team today"
    assert mask_volatile("Hier finden Sie uns") == "Hier finden Sie uns"
