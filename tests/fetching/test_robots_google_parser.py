"""robots.txt as Google's parser reads it (the file most of the web is written for), and a
matcher without backtracking: the extensions catlas takes on top of RFC 9309."""

from __future__ import annotations

from catlas_assets.domain.robots import RobotsTxt

UA = "catlas/0.1 (+https://catlas.invalid/bot)"


def allowed(text: str | bytes, url: str, agent: str = UA) -> bool:
    return RobotsTxt.parse(text).allowed(url, agent)


def test_percent_2a_and_24_in_a_pattern_match_a_literal_star_and_dollar() -> None:
    text = "User-agent: *\nDisallow: /a%2Ab\nDisallow: /price%24\n"
    assert not allowed(text, "/a*b")
    assert not allowed(text, "/a%2Ab")
    assert allowed(text, "/aXb")  # %2A is no wildcard
    assert not allowed(text, "/price$/x")  # %24 is no end anchor
    assert allowed(text, "/price")


def test_a_dollar_that_is_not_last_is_a_literal() -> None:
    text = "User-agent: *\nDisallow: /a$b\n"
    assert not allowed(text, "/a$b/c")
    assert allowed(text, "/a")


def test_a_record_without_its_colon_is_read() -> None:
    text = "User-agent *\nDisallow /private\nAllow /private/open\n"
    assert not allowed(text, "/private/x")
    assert allowed(text, "/private/open/y")


def test_a_user_agent_value_is_matched_up_to_its_first_space() -> None:
    text = "User-agent: catlas extra words\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(text, "/x")
    assert allowed(text, "/y")


def test_allowing_an_index_page_allows_its_directory() -> None:
    text = "User-agent: *\nDisallow: /docs/\nAllow: /docs/index.html\n"
    assert allowed(text, "/docs/")
    assert allowed(text, "/docs/index.html")
    assert not allowed(text, "/docs/other.html")


def test_a_utf8_byte_order_mark_is_skipped() -> None:
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /bom\n"
    assert not allowed(body, "/bom")


def test_a_backtracking_pattern_answers_at_once() -> None:
    # A regex engine backtracks exponentially here; the position-set matcher does not.
    rules = RobotsTxt.parse("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n")
    path = "/" + "a" * 4000
    assert rules.allowed(path, UA)
    assert not rules.allowed(path + "b", UA)


def test_wildcards_and_anchors_keep_their_rfc_meaning() -> None:
    text = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp*/x\nAllow: /**/ok\n"
    assert not allowed(text, "/files/a.pdf")
    assert allowed(text, "/files/a.pdf?x=1")
    assert not allowed(text, "/tmp123/x")
    assert allowed(text, "/a/b/ok")
