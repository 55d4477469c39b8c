"""Stored text is printed as data: rich markup in a company name never reaches the
terminal as markup (it used to crash every later listing)."""

from __future__ import annotations

from tests.cli.cli_harness import Catlas, assert_no_traceback


def test_markup_in_a_company_name_is_stored_and_printed_as_written(catlas: Catlas) -> None:
    name = "Evil [/bold] Inc [red]x"
    added = catlas.run("companies", "add", name, "--website", "http://evil.example")
    assert_no_traceback(added)
    assert added.code == 0 and name in added.out
    listed = catlas.run("companies", "list")
    assert_no_traceback(listed)
    assert listed.code == 0 and name in listed.out
