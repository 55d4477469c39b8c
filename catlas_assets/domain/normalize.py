"""Turn a response body into blocks and text, the stable form that hashes and diffs read.

A block is a leaf of the page's reading order: a heading, a paragraph, a list item, a
table row, a link or a run of text, with its tag path and an id that survives reordering
(the id hashes the block's type and text; repeats get an occurrence suffix).
Boilerplate (navigation, footers, scripts, styles, hidden elements, cookie banners) is
dropped before blocks are taken, so a menu edit is not a content change.

Volatile tokens are masked before hashing (`mask_volatile`), because they move on every
fetch without the page saying anything new; the stored text and blocks keep them as
served, only `normalized_hash` and the diff read the masked form:

- timestamps with a time of day (`2026-01-05T08:00:00Z`, `08:15 UTC`, `3:04 pm`): build
  stamps, "last updated" lines and API `updated_at` fields;
- relative dates (`3 minutes ago`, `Posted 3 Days Ago`, `just now`, `yesterday`, and
  `il y a 2 jours`, `vor 3 Tagen`, `hace 2 días`, `2 dagen geleden`, `3 giorni fa`,
  `för 2 dagar sedan`): they change daily while the underlying date does not;
- live counters (`1,204 people viewing`, `37 views`, `12 online now`);
- session and CSRF tokens (long hex or base64-like runs of 24+ characters);
- cache-busting and tracking query strings in URLs written out in the text
  (`?v=123`, `?cb=…`, `utm_*`).

Rotating blocks (testimonial carousels, "N people viewing" widgets: class or id markers
`testimonial`, `rotating`, `carousel`, `viewers`, `live-count`) are dropped like
boilerplate, since a different testimonial each fetch is not a change of the page.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, NamedTuple

import charset_normalizer
import numpy as np
from selectolax.lexbor import LexborNode

from catlas_assets.domain.extract.extraction import ParseError
from catlas_assets.domain.extract.markup import clean_text, node_text, parse_html
from catlas_assets.domain.fingerprint import word_hashes
from catlas_assets.domain.relative_dates import (
    RELATIVE_DATE,
    RELATIVE_DAY_WORDS,
    may_hold_relative_date,
)

DROP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "nav", "footer", "iframe", "head", "button"}
)
INLINE_TAGS = frozenset(
    {
        "a", "abbr", "b", "bdi", "br", "cite", "code", "data", "em", "i", "kbd", "label",
        "mark", "q", "s", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr",
        "img", "del", "ins",
    }
)  # fmt: skip
BLOCK_TYPES = {
    **{f"h{level}": "heading" for level in range(1, 7)},
    "p": "paragraph",
    "li": "list_item",
    "tr": "table_row",
    "a": "link",
    "dt": "term",
    "dd": "definition",
    "blockquote": "quote",
    "pre": "code",
}
BOILERPLATE_MARKERS = (
    "cookie", "consent", "gdpr-banner", "testimonial", "rotating", "carousel", "viewers",
    "live-count",
)  # fmt: skip
# Masked before hashing (see the module docstring); order matters: URLs before numbers.
_VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"([?&])(?:v|ver|cb|cachebust|ts|_|utm_[a-z]+|gclid|fbclid)=[^&\s#]*", re.I),
        r"\1<q>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", re.I
        ),
        "<timestamp>",
    ),
    (
        re.compile(
            r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?|utc|gmt|[A-Z]{2,4}T)?(?![\d])", re.I
        ),
        "<time>",
    ),
    (
        re.compile(
            r"\b(?:\d+\+?|an?|one)\s+(?:second|minute|hour|day|week|month|year)s?\s+ago\b", re.I
        ),
        "<ago>",
    ),
    (
        re.compile(
            r"\b(?:just now|(?:posted|updated|published|edited)\s+(?:today|yesterday))\b", re.I
        ),
        "<ago>",
    ),
    (RELATIVE_DATE, "<ago>"),  # the same in fr, de, es, nl, it, sv (domain/relative_dates)
    (
        re.compile(
            r"\b\d[\d,.]*\s+(?:people|visitors|users|others)?\s*(?:are\s+)?(?:viewing|watching|online|views)\b(?:\s+now)?",
            re.I,
        ),
        "<count>",
    ),
    (
        re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b"),
        "<token>",
    ),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-:.]+)""", re.I)


class Block(NamedTuple):
    # A tuple, not a dataclass: a page makes a hundred or more, and a frozen dataclass's
    # __init__ cost three times a tuple's.
    id: str
    type: str
    text: str
    path: str


@dataclass(frozen=True)
class Normalized:
    blocks: tuple[Block, ...]
    text: str
    normalized_hash: str

    def blocks_json(self) -> bytes:
        """`json.dumps` of the blocks as dicts of their fields (`ensure_ascii=False`), byte
        for byte, written out: most strings need no escape and are copied as they are."""
        items = []
        for b in self.blocks:
            if _json_plain(f"{b.id}{b.type}{b.text}{b.path}"):  # one test for the four
                items.append(
                    f'{{"id": "{b.id}", "type": "{b.type}", "text": "{b.text}", "path": "{b.path}"}}'
                )
            else:
                items.append(
                    f'{{"id": {_json_str(b.id)}, "type": {_json_str(b.type)}, '
                    f'"text": {_json_str(b.text)}, "path": {_json_str(b.path)}}}'
                )
        return f"[{', '.join(items)}]".encode()


def _json_plain(text: str) -> bool:
    # json escapes only '"', '\' and characters below U+0020 (ensure_ascii=False), none of
    # which printable text holds but the two tested.
    return text.isprintable() and '"' not in text and "\\" not in text


def _json_str(text: str) -> str:
    return f'"{text}"' if _json_plain(text) else encode_basestring(text)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode_body(body: bytes, content_type: str) -> str:
    """Charset from the Content-Type header, then a BOM, then a meta tag, then detection."""
    for candidate in (_header_charset(content_type), _bom_charset(body), _meta_charset(body)):
        codec = text_charset(candidate)
        if codec:
            return body.decode(codec, errors="replace").lstrip("\ufeff")
        # An unknown label ("charset=foo") is no answer: try the next source. A codec that
        # is no text encoding ("hex", "base64", "rot13") is a body nobody can read as sent.
        if candidate and not_text_charset(candidate):
            raise ParseError(f"charset {candidate[:40]!r} is not a text encoding")
    try:
        return body.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        pass
    return body.decode(_detected_charset(body), errors="replace").lstrip("\ufeff")


# Python codecs that are not a page's character encoding: bytes-to-bytes transforms (hex,
# base64, rot13, uu, zlib, ...) are excluded by `_is_text_encoding`; these are text codecs
# no browser decodes a page with (and idna refuses errors="replace").
_NOT_PAGE_CHARSETS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined", "charmap", "utf-7"}
)


def text_charset(label: str | None) -> str | None:
    """The codec name of a declared charset when it is a text encoding a page may use."""
    if not label or len(label) > 64:
        return None
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_PAGE_CHARSETS:
        return None
    return info.name


def not_text_charset(label: str) -> bool:
    """A label Python knows as a codec that is no character encoding of a page."""
    try:
        codecs.lookup(label)
    except (LookupError, ValueError):
        return False
    return text_charset(label) is None


def _detected_charset(body: bytes) -> str:
    """Undeclared and not UTF-8: let the byte statistics choose (cp1252, Shift_JIS, ...)."""
    matches = list(charset_normalizer.from_bytes(body[:200_000]))
    if not matches:
        return "utf-8"
    best = matches[0]
    for match in matches:
        # Western text fits several single-byte code pages about equally well; the web's
        # legacy default (windows-1252, as browsers assume) wins such a near tie.
        if (
            match.encoding == "cp1252"
            and match.chaos <= best.chaos + 0.02
            and match.coherence >= best.coherence
        ):
            return "cp1252"
    return best.encoding


def normalize(body: bytes, content_type: str) -> Normalized:
    kind = content_kind(content_type, body)
    text = decode_body(body, content_type)
    if kind == "json":
        raw = _json_blocks(text)
    elif kind == "html":
        raw = _html_blocks(text)
    else:
        raw = [("text", line, f"line[{i}]") for i, line in enumerate(_lines(text))]
    blocks = _with_ids(raw)
    texts = [b.text for b in blocks]
    joined = "\n".join(texts)
    masked = "\n".join(mask_blocks(texts, joined))
    return Normalized(blocks, joined, sha256_hex(masked.encode()))


def mask_volatile(text: str) -> str:
    """The text with its volatile tokens replaced by placeholders (see the module docstring).

    On ASCII text a pattern runs only when the text holds what every match of it must
    contain (an `=`, a `:`, "ago", ...): the answer is the same, and most blocks skip most
    patterns. Other text runs them all (case-insensitive matching folds some non-ASCII
    letters onto ASCII ones, which a substring test would miss).
    """
    if not text.isascii():
        for pattern, placeholder in _VOLATILE:
            text = pattern.sub(placeholder, text)
        return text
    return _mask_ascii(text, text.lower(), _ALL_PATTERNS)


def mask_blocks(texts: list[str], joined: str) -> list[str]:
    """`mask_volatile` of each text; `joined` is the texts joined by newlines.

    Every cue holds on the joined text when it holds on one of its texts (a newline is
    neither a word character nor part of any cue), so a pattern whose cue the whole page
    lacks is skipped for every block at the cost of one test per page.
    """
    if not joined.isascii():
        return [mask_volatile(text) for text in texts]
    wanted = _page_needs(joined)
    if not wanted:
        return texts
    return [_mask_ascii(text, text.lower(), wanted) for text in texts]


# The characters a token match is made of (word characters and "-") to "a", the rest to
# spaces: a run of 24 is then one substring search, not a split of the page into runs.
_TO_RUNS = bytes(97 if chr(c).isalnum() or c in b"_-" else 32 for c in range(128)) + b" " * 128
_RUN_OF_24 = b"a" * 24
# Whole words a match of each pattern holds (lower case), or of which it holds one.
_AGO_WORDS = frozenset({b"ago", b"geleden", b"fa", b"sedan", b"il", b"hace", b"vor"})
_DAY_WORDS = frozenset(
    {b"today", b"yesterday", b"just", b"aujourd", b"heute", b"hoy", b"vandaag", b"oggi",
     b"idag", b"dag", b"hier", b"gestern", b"ayer", b"gisteren", b"ieri"}
)  # fmt: skip
_POSTED_WORDS = frozenset(
    {b"posted", b"updated", b"published", b"edited", b"added", b"aktualisiert",
     b"ausgeschrieben", b"gepostet", b"publicado", b"publicada", b"actualizado", b"geplaatst",
     b"gepubliceerd", b"bijgewerkt", b"pubblicato", b"pubblicata", b"aggiornato",
     b"publicerad", b"publicerat", b"uppdaterad"}
)  # fmt: skip
# Every word the tests below ask about, sorted by its hash as `word_hashes` makes it.
_CUES = sorted(
    _AGO_WORDS | _DAY_WORDS | _POSTED_WORDS | {b"now"},
    key=lambda word: int(word_hashes(word.decode())[0]),
)
_CUE_HASHES = np.concatenate([word_hashes(word.decode()) for word in _CUES])
# Which values of a hash's low 16 bits some cue word has: a page's few thousand word hashes
# are looked up there first (one array read each) and only the few that hit are searched
# for among the cues (a binary search of every word cost 130 us a page, this 18).
_LOW_BITS = np.uint64(0xFFFF)
_CUE_LOW = np.zeros(1 << 16, dtype=bool)
_CUE_LOW[(_CUE_HASHES & _LOW_BITS).astype(np.intp)] = True


def _cue_words(text: str) -> set[bytes]:
    """The cue words whose hash is among the hashes of the text's words: every cue word
    the text holds whole, and, rarely, one it does not (two words of one hash). The
    hashes are the page fingerprint's own, made once for both."""
    all_hashes = word_hashes(text)
    hashes = all_hashes[_CUE_LOW[(all_hashes & _LOW_BITS).astype(np.intp)]]
    at = np.searchsorted(_CUE_HASHES, hashes)
    np.minimum(at, len(_CUES) - 1, out=at)
    found = at[_CUE_HASHES[at] == hashes]
    return {_CUES[i] for i in np.unique(found).tolist()}


def _page_needs(joined: str) -> tuple[int, ...]:
    """The `_VOLATILE` patterns that may match somewhere in ASCII `joined` (in order).

    Each test is one a match cannot fail, read from the cue words the page may hold whole
    (a word set of a page cost a tenth of its parse); `_NEEDS` then picks the blocks."""
    data = joined.encode("ascii")
    words = _cue_words(joined)
    wanted = []
    if "=" in joined:
        wanted.append(0)
    if ":" in joined:
        if "-" in joined:
            wanted.append(1)
        wanted.append(2)
    if b"ago" in words:
        wanted.append(3)
    day = not words.isdisjoint(_DAY_WORDS)
    posted = day and not words.isdisjoint(_POSTED_WORDS)
    if (b"just" in words and b"now" in words) or (
        posted and (b"today" in words or b"yesterday" in words)
    ):
        wanted.append(4)
    lower = joined.lower()
    if not words.isdisjoint(_AGO_WORDS) or posted or (day and _day_alone(lower)):
        wanted.append(5)
    if "view" in lower or "watch" in lower or "online" in lower:
        wanted.append(6)
    if _RUN_OF_24 in data.translate(_TO_RUNS):
        wanted.append(7)
    return tuple(wanted)


def _day_alone(lower: str) -> bool:
    # A day word as a line of its own ("^\s*today\s*$" of RELATIVE_DATE).
    return any(line.strip() in _DAY_LINES for line in lower.split("\n"))


_DAY_LINES = frozenset(w for w in RELATIVE_DAY_WORDS if w.isascii())


def _mask_ascii(text: str, lower: str, wanted: tuple[int, ...]) -> str:
    # A cue is tested on the text as it was before masking: no placeholder brings in a
    # cue its match did not already hold ("<ago>" replaces an "ago" or a day word), so
    # the test passes at least as often, and a pattern that cannot match changes nothing.
    for i in wanted:
        if _NEEDS[i](text, lower):
            pattern, placeholder = _VOLATILE[i]
            text = pattern.sub(placeholder, text)
    return text


# What a match of each `_VOLATILE` pattern cannot do without, in the same order.
_POSTING_VERBS = ("posted", "updated", "published", "edited")  # of the "just now" pattern
_NEEDS: tuple[Callable[[str, str], bool], ...] = (
    lambda t, _low: "=" in t,
    lambda t, _low: ":" in t and "-" in t,
    lambda t, _low: ":" in t,
    lambda _t, low: "ago" in low,
    lambda _t, low: (
        "just now" in low
        or (("today" in low or "yesterday" in low) and any(v in low for v in _POSTING_VERBS))
    ),
    lambda _t, low: may_hold_relative_date(low),
    lambda _t, low: "view" in low or "watch" in low or "online" in low,
    # A token is a run of 24 characters without a space.
    lambda t, _low: len(t) >= 24 and max(map(len, t.split()), default=0) >= 24,
)
_ALL_PATTERNS = tuple(range(len(_VOLATILE)))


def content_kind(content_type: str, body: bytes) -> str:
    ctype = content_type.split(";")[0].strip().lower()
    if ctype.endswith("json"):
        return "json"
    if ctype.endswith("xml"):
        return "xml"
    if ctype in ("text/html", "application/xhtml+xml") or not ctype:
        head = body[:512].lstrip().lower()
        if not ctype and head.startswith((b"{", b"[")):
            return "json"
        return "html"
    return "text"


def _header_charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip("\"' ")
    return None


def _bom_charset(body: bytes) -> str | None:
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:4096])
    return match.group(1).decode("ascii") if match else None


def _lines(text: str) -> list[str]:
    return [line for line in (clean_text(raw) for raw in text.splitlines()) if line]


def _is_boilerplate(node: LexborNode, tag: str | None = None) -> bool:
    tag = (node.tag or "") if tag is None else tag
    return tag in DROP_TAGS or _marked(node.attributes)


def _marked(attrs: dict[str, str | None]) -> bool:
    """Attributes that hide an element or mark it as a banner, carousel or counter."""
    if not attrs:
        return False  # most elements: no attribute can mark them
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = (attrs.get("style") or "").replace(" ", "").lower()
    if "display:none" in style or "visibility:hidden" in style:
        return True
    marker = f"{attrs.get('id') or ''} {attrs.get('class') or ''}".lower()
    return _MARKER.search(marker) is not None


# Any of the markers as a substring (one search rather than one test per marker).
_MARKER = re.compile("|".join(map(re.escape, BOILERPLATE_MARKERS)))


def _html_blocks(html: str) -> list[tuple[str, str, str]]:
    tree = parse_html(html)
    root = tree.body or tree.root
    if root is None:
        return []
    out: list[tuple[str, str, str]] = []
    tag = root.tag or ""
    if not _is_boilerplate(root, tag):
        _walk(root, tag, "body", out, 0)
    return out


def _kept_children(node: LexborNode) -> tuple[list[tuple[LexborNode, str]], bool]:
    """The element children that are not boilerplate, with their tags (read once each), and
    whether all of them are inline (in the same pass)."""
    kept = []
    inline = True
    for child in node.iter(include_text=False):
        tag = child.tag
        # `_is_boilerplate`, written out: this runs for every element of a page.
        if tag and tag[0] != "-" and tag not in DROP_TAGS and not _marked(child.attributes):
            kept.append((child, tag))
            if tag not in INLINE_TAGS:
                inline = False
    return kept, inline


# Deeper than this, a subtree reads as one text block: no recursion limit is reached and a
# page of 100,000 nested elements costs what its text costs (real pages nest < 60 deep).
MAX_DEPTH = 160


def _walk(
    node: LexborNode, tag: str, path: str, out: list[tuple[str, str, str]], depth: int
) -> None:
    """The blocks of `node` (its `tag`), which is not boilerplate (its parent left that out)."""
    if depth >= MAX_DEPTH:
        text = node_text(node)
        if text:
            out.append(("text", text, path))
        return
    children, inline = _kept_children(node)
    # A table row reads as one fact ("Pro | $49 | monthly"), so it is never split into cells.
    if tag == "tr":
        cells = [node_text(c) for c, _ in children]
        text = " | ".join(cell for cell in cells if cell)
        if text:
            out.append(("table_row", text, path))
        return
    if inline:
        text = node_text(node)
        if text:
            out.append((BLOCK_TYPES.get(tag, "text"), text, path))
        return
    seen: dict[str, int] = {}
    for child, ctag in children:
        nth = seen[ctag] = seen.get(ctag, 0) + 1
        _walk(child, ctag, f"{path}/{ctag}[{nth}]", out, depth + 1)


def _json_blocks(text: str) -> list[tuple[str, str, str]]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return [("text", line, f"line[{i}]") for i, line in enumerate(_lines(text))]
    out: list[tuple[str, str, str]] = []
    _flatten(data, "$", out)
    return out


def _flatten(value: Any, path: str, out: list[tuple[str, str, str]], depth: int = 0) -> None:
    if depth >= MAX_DEPTH and isinstance(value, dict | list):
        out.append(("field", f"{path}: {json.dumps(value, ensure_ascii=False)[:10_000]}", path))
    elif isinstance(value, dict):
        for key in sorted(value):
            _flatten(value[key], f"{path}.{key}", out, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out, depth + 1)
    else:
        rendered = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        out.append(("field", f"{path}: {rendered}", path))


def _with_ids(raw: list[tuple[str, str, str]]) -> tuple[Block, ...]:
    sha1 = hashlib.sha1
    ids = [
        sha1(f"{kind}\x00{text}".encode(), usedforsecurity=False).hexdigest()[:12]
        for kind, text, _ in raw
    ]
    if len(set(ids)) < len(ids):  # repeats: the second and later get an occurrence suffix
        counts: dict[str, int] = {}
        for index, base in enumerate(ids):
            nth = counts[base] = counts.get(base, 0) + 1
            if nth > 1:
                ids[index] = f"{base}~{nth}"
    return tuple(map(Block, ids, *zip(*raw, strict=True))) if raw else ()
