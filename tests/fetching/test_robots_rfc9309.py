"""RFC 9309 conformance of the robots.txt parser and matcher (our own cases, rule by rule)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain import robots
from catlas_assets.domain.robots import (
    MAX_PARSE_BYTES,
    RobotsTxt,
    match_target,
    normalize_pattern,
    product_token,
)

UA = "catlas/0.1 (+https://catlas.invalid/bot)"


def allowed(text: str | bytes, url: str, agent: str = UA) -> bool:
    return RobotsTxt.parse(text).allowed(url, agent)


# -- 2.1 / 2.2.1: groups and user-agent matching ---------------------------------------------
def test_the_group_naming_the_product_token_wins_over_the_star_group() -> None:
    text = "User-agent: *\nDisallow: /\n\nUser-agent: catlas\nAllow: /\nDisallow: /x\n"
    assert allowed(text, "/page")
    assert not allowed(text, "/x")
    assert not allowed(text, "/page", agent="otherbot/2.0")


def test_user_agent_matching_is_case_insensitive_and_ignores_the_version() -> None:
    text = "User-agent: CATLAS/9.9\nDisallow: /private\n"
    assert not allowed(text, "/private")
    assert product_token("Catlas/0.1 (+https://x)") == "catlas"


def test_a_token_that_only_starts_like_ours_is_another_crawler() -> None:
    text = "User-agent: catlasbot\nDisallow: /\n"
    assert allowed(text, "/anything")


def test_star_group_applies_when_no_group_names_us() -> None:
    text = "User-agent: googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /all\n"
    assert not allowed(text, "/all")
    assert allowed(text, "/g")


def test_no_matching_group_and_no_star_group_allows_everything() -> None:
    assert allowed("User-agent: googlebot\nDisallow: /\n", "/page")


def test_consecutive_user_agent_lines_share_one_group() -> None:
    text = "User-agent: a\nUser-agent: catlas\nUser-agent: b\nDisallow: /shared\n"
    assert not allowed(text, "/shared")
    assert not allowed(text, "/shared", agent="b")


def test_groups_naming_the_same_agent_are_merged() -> None:
    text = (
        "User-agent: catlas\nDisallow: /one\n\n"
        "User-agent: other\nDisallow: /two\n\n"
        "User-agent: catlas\nDisallow: /three\n"
    )
    assert not allowed(text, "/one")
    assert not allowed(text, "/three")
    assert allowed(text, "/two")


def test_a_user_agent_line_after_rules_starts_a_new_group() -> None:
    text = "User-agent: catlas\nDisallow: /a\nUser-agent: other\nDisallow: /b\n"
    assert not allowed(text, "/a")
    assert allowed(text, "/b")


def test_rules_before_any_user_agent_line_belong_to_no_group() -> None:
    parsed = RobotsTxt.parse("Disallow: /\nUser-agent: *\nDisallow: /x\n")
    assert parsed.allowed("/page", UA)
    assert parsed.ignored_lines == 1


# -- 2.2.2: allow and disallow, longest match --------------------------------------------------
def test_the_longest_matching_rule_decides() -> None:
    text = "User-agent: *\nDisallow: /shop\nAllow: /shop/public\nDisallow: /shop/public/drafts\n"
    assert not allowed(text, "/shop/cart")
    assert allowed(text, "/shop/public/item")
    assert not allowed(text, "/shop/public/drafts/1")


def test_allow_wins_a_tie_of_equal_length() -> None:
    text = "User-agent: *\nDisallow: /page\nAllow: /page\n"
    assert allowed(text, "/page")


def test_matching_is_a_case_sensitive_prefix_match() -> None:
    text = "User-agent: *\nDisallow: /Private\n"
    assert not allowed(text, "/Private/x")
    assert allowed(text, "/private/x")


def test_an_empty_disallow_allows_everything() -> None:
    assert allowed("User-agent: *\nDisallow:\n", "/anything")


def test_disallow_slash_blocks_the_whole_site_but_robots_txt_itself() -> None:
    text = "User-agent: *\nDisallow: /\n"
    assert not allowed(text, "/")
    assert not allowed(text, "http://example.com")  # an empty path is "/"
    assert allowed(text, "/robots.txt")


def test_the_query_is_part_of_the_matched_path() -> None:
    text = "User-agent: *\nDisallow: /search?q=\n"
    assert not allowed(text, "http://example.com/search?q=shoes")
    assert allowed(text, "http://example.com/search")


def test_the_decision_names_the_rule_and_its_line() -> None:
    decision = RobotsTxt.parse("User-agent: *\n# note\nDisallow: /private/\n").decide(
        "http://example.com/private/x", UA
    )
    assert not decision.allowed
    assert decision.rule is not None and decision.rule.line == 3
    assert decision.describe() == "disallowed by Disallow: /private/ (line 3) in group *"


# -- 2.2.2: percent-encoding normalisation ----------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "url", "matches"),
    [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz", True),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84", True),  # non-ASCII in the rule is encoded
        ("/foo/bar/%E3%83%84", "/foo/bar/ツ", True),  # ... and in the URL
        ("/foo/bar/%62%61%7A", "/foo/bar/baz", True),  # encoded unreserved octets decode
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84", True),  # hex case does not matter
        ("/a%2Fb", "/a/b", False),  # an encoded reserved "/" stays distinct from "/"
    ],
)
def test_percent_encoding_is_normalised_before_comparison(
    rule: str, url: str, matches: bool
) -> None:
    text = f"User-agent: *\nDisallow: {rule}\n"
    assert allowed(text, url) is not matches
    assert normalize_pattern("/%7Euser") == "/~user"
    assert match_target("http://x.test/caf%c3%a9") == "/caf%C3%A9"


# -- 2.2.3: special characters ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "url", "matches"),
    [
        ("/*.pdf", "/docs/a.pdf", True),
        ("/*.pdf", "/a.pdf?download=1", True),
        ("/*.pdf$", "/a.pdf", True),
        ("/*.pdf$", "/a.pdf?download=1", False),
        ("/fish$", "/fish", True),
        ("/fish$", "/fish/", False),
        ("/fish*", "/fishheads", True),
        ("/*/private/*", "/a/private/b", True),
        ("/*/private/*", "/private/b", False),
        ("/a$b", "/a$b/c", True),  # "$" before the end is an ordinary character
        ("*", "/anything", True),
    ],
)
def test_star_and_dollar_patterns(rule: str, url: str, matches: bool) -> None:
    assert allowed(f"User-agent: *\nDisallow: {rule}\n", url) is not matches


def test_a_wildcard_rule_is_as_specific_as_it_is_long() -> None:
    text = "User-agent: *\nAllow: /*.html\nDisallow: /private/\n"
    # "/private/" (9 octets) is longer than "/*.html" (7): the disallow decides.
    assert not allowed(text, "/private/page.html")
    text = "User-agent: *\nAllow: /private/*.html\nDisallow: /private/\n"
    assert allowed(text, "/private/page.html")


# -- 2.2.4: other records, comments and leniency ---------------------------------------------
def test_comments_blank_lines_and_unknown_records_are_ignored() -> None:
    text = (
        "# header comment\n\nUser-agent: *   # trailing comment\n"
        "Host: example.com\nNoindex: /x\nDisallow: /private # why\n"
    )
    parsed = RobotsTxt.parse(text)
    assert not parsed.allowed("/private", UA)
    assert parsed.allowed("/x", UA)
    assert parsed.ignored_lines == 2


def test_keys_are_case_insensitive_and_common_misspellings_accepted() -> None:
    text = "USER-AGENT: *\nDISALLOW: /a\ndisalow: /b\nuseragent: catlas\nDissallow: /c\n"
    parsed = RobotsTxt.parse(text)
    assert not parsed.allowed("/c", UA)
    assert parsed.allowed("/a", UA)  # our own group replaces the star group
    assert not parsed.allowed("/a", "otherbot")
    assert not parsed.allowed("/b", "otherbot")


def test_crlf_and_cr_line_endings_and_a_bom_parse_alike() -> None:
    for text in (
        "\ufeffUser-agent: *\r\nDisallow: /x\r\n",
        "User-agent: *\rDisallow: /x\r",
        b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
    ):
        assert not allowed(text, "/x")


def test_sitemap_lines_are_global_and_do_not_end_a_group() -> None:
    text = (
        "Sitemap: https://example.com/a.xml\nUser-agent: *\n"
        "Sitemap: https://example.com/b.xml\nDisallow: /x\n"
    )
    parsed = RobotsTxt.parse(text)
    assert parsed.sitemaps == ("https://example.com/a.xml", "https://example.com/b.xml")
    assert not parsed.allowed("/x", UA)


def test_crawl_delay_is_read_per_group() -> None:
    text = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: catlas\nCrawl-delay: 2.5\nAllow: /\n"
    parsed = RobotsTxt.parse(text)
    assert parsed.crawl_delay(UA) == 2.5
    assert parsed.crawl_delay("otherbot") == 5
    assert RobotsTxt.parse("User-agent: *\nCrawl-delay: soon\n").crawl_delay(UA) is None
    assert RobotsTxt.parse("User-agent: *\nCrawl-delay: -3\n").crawl_delay(UA) is None


# -- 2.5 and bad input --------------------------------------------------------------------------
def test_only_the_first_512_kib_are_parsed() -> None:
    head = "User-agent: *\nDisallow: /early\n"
    filler = "# " + "x" * 1000 + "\n"
    text = head + filler * (MAX_PARSE_BYTES // len(filler) + 5) + "Disallow: /late\n"
    parsed = RobotsTxt.parse(text.encode())
    assert not parsed.allowed("/early", UA)
    assert parsed.allowed("/late", UA)


def test_a_binary_file_yields_no_rules_and_no_error() -> None:
    junk = bytes(range(256)) * 40
    parsed = RobotsTxt.parse(junk)
    assert parsed.allowed("/anything", UA)
    assert parsed.groups == ()


def test_disallow_all_is_the_unavailable_answer_and_spares_robots_txt() -> None:
    blocked = RobotsTxt.disallow_all()
    assert not blocked.allowed("/", UA)
    assert blocked.allowed("/robots.txt", UA)
    assert RobotsTxt.allow_all().allowed("/anything", UA)


# -- the path that needs no normalising ------------------------------------------------------
# Mostly the characters of paths and rules, so that the fast path and the loop both run.
_PATHLIKE = st.lists(
    st.sampled_from([*"abcXYZ019-._~!$&'()*+,;=:@/?%#[] é中\x00", "%2f", "%7E", "%4"]),
    max_size=40,
).map("".join)


@settings(max_examples=2000, deadline=None)
@given(_PATHLIKE)
def test_text_returned_as_is_is_what_the_character_by_character_loop_makes(text: str) -> None:
    assert robots._normalize(text) == robots._normalize_each(text)


def test_a_plain_path_is_returned_as_is_and_anything_else_goes_through_the_loop() -> None:
    plain = "/careers/jobs?team=eng&page=2;x=$*"
    assert robots._AS_IS.fullmatch(plain)
    assert match_target(plain) == plain
    # "%" (a lowercase escape is uppercased, an unreserved one decoded), a space, non-ASCII:
    assert match_target("/a%2fb%7Ec d/é") == "/a%2Fb~c%20d/%C3%A9"
