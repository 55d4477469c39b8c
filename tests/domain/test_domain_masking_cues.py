"""Masking runs a volatile pattern only where its cue is seen: the answer must be the one
every pattern, run on every text, gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.normalize import (
    _CUE_HASHES,
    _CUES,
    _VOLATILE,
    _cue_words,
    mask_blocks,
    mask_volatile,
)
from catlas_assets.domain.relative_dates import RELATIVE_DATE, may_hold_relative_date


def mask_every_pattern(text: str) -> str:
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


TEXTS = [
    "Posted Today",
    "Posted 3 Days Ago · Berlin",
    "Join our team today",
    "Hier finden Sie uns",
    "hier",
    "  gestern  ",
    "il y a 2 jours",
    "Publié il y a une semaine",
    "Vor einer Woche ausgeschrieben",
    "hace 2 días",
    "2 dagen geleden",
    "3 giorni fa",
    "för 2 dagar sedan",
    "i dag",
    "Just now",
    "Updated yesterday at 3:04 pm",
    "Build 2026-01-05T08:00:00Z",
    "1,204 people viewing now",
    "token a1B2c3D4e5F6g7H8i9J0k1L2m3 end",
    "a-very-long-word-without-digits-at-all",
    "https://example.test/p?v=123&utm_source=x#top",
    "favorite player layer hierarchy vortex fast",
    "x" * 23,
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_cues_change_no_answer(text: str) -> None:
    assert mask_volatile(text) == mask_every_pattern(text)


WORDS = [
    "posted", "today", "ago", "3", "days", "a", "an", "one", "il", "y", "hace", "vor",
    "för", "fa", "sedan", "geleden", "hier", "gestern", "yesterday", "just", "now", "i",
    "dag", "12:30", "2026-01-05T08:00", "?v=1", "&utm_x=2", "viewing", "online", "people",
    "abcdefghijklmnopqrstuvwx1", "-", ",", "\n", "Posted", "AGO", "heute", "week",
    "updated", "Published", "edited", "added", "gepostet", "aggiornato", "aujourd'hui",
    "Today\n", " today ", "ieri", "hoy", "vandaag", "idag", "abc-def-ghi-jkl-mno-pqr-stu",
    "?utm_source=x", "3 views", "watching", "2026-01-05 08:00", "3:04 pm", "vortex", "fast",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12), st.sampled_from([" ", "", "  "]))
def test_the_cues_change_no_answer_on_mixed_vocabulary(words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert mask_volatile(text) == mask_every_pattern(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), min_size=0, max_size=6))
def test_a_page_masked_at_once_is_each_block_masked(texts: list[str]) -> None:
    # The page-wide cues only skip patterns: every block reads as masked alone.
    assert mask_blocks(texts, "\n".join(texts)) == [mask_every_pattern(t) for t in texts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=10), st.sampled_from([" ", "", "\n"]))
def test_the_relative_date_cue_misses_no_match(words: list[str], sep: str) -> None:
    text = sep.join(words).lower()
    if RELATIVE_DATE.search(text) is not None:
        assert may_hold_relative_date(text)


def test_a_non_ascii_page_is_masked_block_by_block() -> None:
    texts = ["Publié il y a 2 jours", "Posted 3 days ago", "för 2 dagar sedan"]
    assert mask_blocks(texts, "\n".join(texts)) == [mask_every_pattern(t) for t in texts]


def test_no_two_cue_words_share_a_hash() -> None:
    # The page's cue words are found by their hashes: two of one hash would hide one.
    assert len(set(_CUE_HASHES.tolist())) == len(_CUES)
    assert _cue_words("Posted  TODAY, just now (vor 2 Tagen)") >= {
        b"posted", b"today", b"just", b"now", b"vor"
    }  # fmt: skip
    assert _cue_words("Nowhere: chicago agony, upposted") == set()
