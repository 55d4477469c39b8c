"""A page is parsed once: normalizing and extracting it read the same tree, and a new
page never gets the tree of the last one."""

from __future__ import annotations

import threading

from catlas_assets.domain.extract.markup import parse_html

PAGE = "<html><body><h1>Careers</h1><p>Join us</p></body></html>"


def test_the_same_page_is_parsed_once() -> None:
    assert parse_html(PAGE) is parse_html("".join(PAGE))


def test_another_page_gets_its_own_tree() -> None:
    first = parse_html(PAGE)
    other = parse_html(PAGE.replace("Careers", "Pricing"))
    assert other is not first
    assert other.css_first("h1").text() == "Pricing"
    assert parse_html(PAGE).css_first("h1").text() == "Careers"


def test_each_thread_keeps_its_own_tree() -> None:
    mine = parse_html(PAGE)
    seen: list[str] = []

    def other_thread() -> None:
        seen.append(parse_html(PAGE.replace("Careers", "Docs")).css_first("h1").text())

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen == ["Docs"]
    assert parse_html(PAGE) is mine
