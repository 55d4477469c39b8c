"""Simhash: near-duplicate texts sit close in Hamming distance, unrelated ones far apart."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain import fingerprint
from catlas_assets.domain.fingerprint import hamming, simhash64

VOCABULARY = [f"word{i}" for i in range(600)]


def _text(seed: int, words: int = 400) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(VOCABULARY) for _ in range(words)]


def test_identical_texts_have_distance_zero() -> None:
    text = " ".join(_text(1))
    assert hamming(simhash64(text), simhash64(text)) == 0


def test_case_and_punctuation_do_not_move_the_fingerprint() -> None:
    assert simhash64("Senior Engineer, Berlin!") == simhash64("senior engineer berlin")


@pytest.mark.parametrize("seed", range(5))
def test_a_one_word_edit_in_a_long_text_stays_close(seed: int) -> None:
    words = _text(seed)
    edited = list(words)
    edited[len(words) // 2] = "replaced"
    assert hamming(simhash64(" ".join(words)), simhash64(" ".join(edited))) <= 12


@pytest.mark.parametrize("seed", range(5))
def test_unrelated_texts_are_far_apart(seed: int) -> None:
    one, two = " ".join(_text(seed)), " ".join(_text(seed + 1000))
    assert hamming(simhash64(one), simhash64(two)) >= 20


def test_fingerprint_is_a_signed_64_bit_integer_and_empty_text_is_zero() -> None:
    values = [simhash64(" ".join(_text(seed))) for seed in range(20)]
    assert all(-(1 << 63) <= v < (1 << 63) for v in values)
    assert any(v < 0 for v in values)  # the high bit is kept, stored as a negative int64
    assert simhash64("") == 0
    assert simhash64("   ...   ") == 0


def test_hamming_counts_differing_bits_of_signed_values() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0, -1) == 64
    assert hamming(0b1011, 0b0001) == 2


def _reference_simhash64(text: str) -> int:
    # The fingerprint as its docstring states it, word by word in plain Python.
    mask = (1 << 64) - 1

    def mix(x: int) -> int:
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & mask
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    def word_hash(word: bytes) -> int:
        poly = 0
        for byte in word:
            poly = (poly * fingerprint.P + byte) & mask
        return mix((poly + len(word)) & mask)

    hashes = [word_hash(w.encode()) for w in re.findall(r"\w+", text.lower())]
    if not hashes:
        return 0
    if len(hashes) < 3:
        hashes = [*hashes, 0, 0][:3]
        shingles = [mix((hashes[0] * fingerprint.K1 + hashes[1] * fingerprint.K2) & mask)]
    else:
        shingles = [
            mix((a * fingerprint.K1 + b * fingerprint.K2 + c) & mask)
            for a, b, c in zip(hashes, hashes[1:], hashes[2:], strict=False)
        ]
    votes = [0] * 64
    for shingle in shingles:
        for bit in range(64):
            votes[bit] += 1 if shingle >> (63 - bit) & 1 else -1
    unsigned = sum(1 << (63 - bit) for bit in range(64) if votes[bit] > 0)
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=st.characters(max_codepoint=127), max_size=200),
        st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80),
        st.lists(st.sampled_from(["Senior", "engineer", "x_1", "Ünï", "-", "\n", "İ", "ß"])).map(
            " ".join
        ),
    )
)
def test_fingerprint_equals_the_reference_computation(text: str) -> None:
    assert simhash64(text) == _reference_simhash64(text)


def test_a_text_longer_than_a_segment_is_fingerprinted_as_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Positions are counted per segment of the text; the value must not depend on where
    the segments are cut."""
    text = " ".join(_text(7, words=3000))
    whole = simhash64(text)
    monkeypatch.setattr(fingerprint, "_SEGMENT", 97)  # many cuts, each between two words
    assert simhash64(text) == whole == _reference_simhash64(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("one", 5701531683660281176),
        ("one two", -7462502459134697981),
        ("one two three", -7539306387585303240),
        ("Senior Engineer, Berlin! We are hiring in Berlin and Paris", 5859243451498596700),
        ("ünïcode wörds here and there", -8670647409288955913),
    ],
)
def test_fingerprints_of_the_version_stay_the_stored_ones(text: str, value: int) -> None:
    # Sensors and the lake keep these values: a faster computation must give the same (a
    # new algorithm is a new FINGERPRINT_VERSION, and a new extractor version).
    assert fingerprint.FINGERPRINT_VERSION == 2
    assert simhash64(text) == value == _reference_simhash64(text)
