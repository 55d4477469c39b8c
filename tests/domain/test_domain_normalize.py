"""Normalization: boilerplate out, content blocks in reading order, stable ids, charsets."""

from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.normalize import Block, Normalized, decode_body, normalize, sha256_hex

HTML = "text/html; charset=utf-8"

PAGE = b"""<!doctype html><html><head><title>Acme careers</title>
<style>.x { color: red }</style><script>var tracking = 'head';</script></head>
<body>
<nav><a href="/">Home</a><a href="/about">About us</a></nav>
<div id="cookie-banner"><p>We use cookies to improve this site</p></div>
<div class="gdpr-consent-modal"><p>Accept all</p></div>
<main>
  <h1>Careers at Acme</h1>
  <p>Join <b>our</b> team in <a href="/berlin">Berlin</a> today</p>
  <ul><li>Backend Engineer</li><li>Product Designer</li></ul>
  <table>
    <tr><th>Plan</th><th>Price</th></tr>
    <tr><td>Pro</td><td>$49</td></tr>
  </table>
  <a href="/apply">Apply now</a>
  <div hidden><p>Hidden vacancy</p></div>
  <div style="display: none"><p>Invisible text</p></div>
  <p aria-hidden="true">Decorative text</p>
  <script>document.write('scripted text')</script>
  <noscript>Enable JavaScript</noscript>
</main>
<footer><p>Copyright Acme</p></footer>
</body></html>"""


def _texts(body: bytes, content_type: str = HTML) -> list[str]:
    return [b.text for b in normalize(body, content_type).blocks]


def test_boilerplate_text_is_excluded() -> None:
    text = normalize(PAGE, HTML).text
    for gone in (
        "Home",
        "About us",
        "cookies",
        "Accept all",
        "Hidden vacancy",
        "Invisible",
        "Decorative",
        "scripted",
        "tracking",
        "color",
        "Enable JavaScript",
        "Copyright",
        "Acme careers",  # <title> lives in <head>
    ):
        assert gone not in text, gone


def test_content_becomes_typed_blocks_in_reading_order() -> None:
    blocks = normalize(PAGE, HTML).blocks
    assert [(b.type, b.text) for b in blocks] == [
        ("heading", "Careers at Acme"),
        ("paragraph", "Join our team in Berlin today"),
        ("list_item", "Backend Engineer"),
        ("list_item", "Product Designer"),
        ("table_row", "Plan | Price"),
        ("table_row", "Pro | $49"),
        ("link", "Apply now"),
    ]
    assert blocks[0].path == "body/main[1]/h1[1]"
    assert blocks[3].path == "body/main[1]/ul[1]/li[2]"


def test_text_joins_blocks_and_hash_is_over_that_text() -> None:
    normalized = normalize(PAGE, HTML)
    assert normalized.text == "\n".join(b.text for b in normalized.blocks)
    assert normalized.normalized_hash == sha256_hex(normalized.text.encode())


def test_whitespace_and_markup_noise_do_not_change_the_hash() -> None:
    tight = b"<main><h2>Open roles</h2><p>Work with us</p></main>"
    loose = b"""<main>
        <h2>  Open
           roles </h2>
        <p>Work   with us</p>
        <nav>menu changed</nav><script>var build = 42;</script>
    </main>"""
    assert normalize(tight, HTML).normalized_hash == normalize(loose, HTML).normalized_hash


def test_block_ids_are_stable_when_blocks_are_reordered() -> None:
    before = normalize(b"<ul><li>Alpha</li><li>Beta</li><li>Gamma</li></ul>", HTML).blocks
    after = normalize(b"<ul><li>Gamma</li><li>Alpha</li><li>Beta</li></ul>", HTML).blocks
    assert {b.text: b.id for b in before} == {b.text: b.id for b in after}
    assert [b.text for b in after] == ["Gamma", "Alpha", "Beta"]


def test_block_ids_depend_on_type_and_text_and_repeats_are_numbered() -> None:
    blocks = normalize(b"<h2>Sales</h2><p>Sales</p><p>Sales</p><p>Other</p>", HTML).blocks
    heading, first, second, other = blocks
    assert heading.id != first.id  # same text, different type
    assert second.id == f"{first.id}~2"
    assert len({b.id for b in blocks}) == 4
    assert other.id == normalize(b"<p>Other</p>", HTML).blocks[0].id


def test_charset_comes_from_the_content_type_header_first() -> None:
    body = '<meta charset="utf-8"><p>Café Zürich</p>'.encode("iso-8859-1")
    assert _texts(body, "text/html; charset=ISO-8859-1") == ["Café Zürich"]


def test_charset_comes_from_a_bom_without_a_header_charset() -> None:
    utf8 = codecs.BOM_UTF8 + "<p>Café</p>".encode()
    utf16 = "<p>Café</p>".encode("utf-16")  # writes its own BOM
    assert _texts(utf8, "text/html") == ["Café"]
    assert _texts(utf16, "text/html") == ["Café"]
    assert decode_body(utf8, "text/html") == "<p>Café</p>"


def test_charset_comes_from_a_meta_tag_without_header_or_bom() -> None:
    body = '<html><head><meta charset="windows-1252"></head><p>€100 naïve</p></html>'.encode(
        "cp1252"
    )
    assert _texts(body, "text/html") == ["€100 naïve"]
    http_equiv = (
        b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
        + "<p>Señor</p>".encode("latin-1")
    )
    assert _texts(http_equiv, "text/html") == ["Señor"]


def test_an_unknown_charset_falls_back_to_the_next_source() -> None:
    body = '<meta charset="latin-1"><p>Olá</p>'.encode("latin-1")
    assert _texts(body, "text/html; charset=x-no-such-charset") == ["Olá"]
    assert _texts("<p>Olá</p>".encode(), "text/html; charset=bogus") == ["Olá"]


def test_json_bodies_flatten_to_sorted_path_blocks() -> None:
    body = (
        b'{"status": {"indicator": "minor"}, "components": [{"name": "API", "up": true}], "n": 2}'
    )
    blocks = normalize(body, "application/json; charset=utf-8").blocks
    assert [(b.type, b.path, b.text) for b in blocks] == [
        ("field", "$.components[0].name", "$.components[0].name: API"),
        ("field", "$.components[0].up", "$.components[0].up: true"),
        ("field", "$.n", "$.n: 2"),
        ("field", "$.status.indicator", "$.status.indicator: minor"),
    ]


def test_json_key_order_does_not_change_the_hash() -> None:
    one = normalize(b'{"a": 1, "b": {"x": null, "y": "z"}}', "application/json")
    two = normalize(b'{"b": {"y": "z", "x": null}, "a": 1}', "application/vnd.api+json")
    assert one.normalized_hash == two.normalized_hash
    assert one.blocks == two.blocks


def test_json_without_a_content_type_is_sniffed() -> None:
    assert _texts(b'  {"k": "v"}', "") == ["$.k: v"]


def test_plain_text_becomes_one_block_per_non_empty_line() -> None:
    blocks = normalize(b"first line\n\n  second   line  \n", "text/plain").blocks
    assert [(b.type, b.text) for b in blocks] == [("text", "first line"), ("text", "second line")]


_FIELD = st.one_of(
    st.text(max_size=20), st.sampled_from(['say "hi"', "a\\b", "\x00\x1f\x7f", "\u2028é"])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_FIELD, _FIELD, _FIELD, _FIELD), max_size=5))
def test_blocks_json_is_json_dumps_of_the_fields(fields: list[tuple[str, str, str, str]]) -> None:
    blocks = tuple(Block(*f) for f in fields)
    expected = json.dumps(
        [{"id": b.id, "type": b.type, "text": b.text, "path": b.path} for b in blocks],
        ensure_ascii=False,
    )
    try:
        wanted = expected.encode()
    except UnicodeEncodeError:  # a lone surrogate: refused alike
        with pytest.raises(UnicodeEncodeError):
            Normalized(blocks, "", "").blocks_json()
        return
    assert Normalized(blocks, "", "").blocks_json() == wanted
