"""What changed in a page, as text: a unified diff and a side-by-side HTML diff. Pure."""

from __future__ import annotations

import difflib
import html


def unified(old: str, new: str, *, old_label: str, new_label: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=old_label,
        tofile=new_label,
        n=context,
        lineterm="",
    )
    return "\n".join(lines)


def side_by_side_html(
    old: str, new: str, *, title: str, old_label: str, new_label: str, summary: str
) -> str:
    """A standalone HTML page: the two texts side by side, changes highlighted."""
    table = difflib.HtmlDiff(wrapcolumn=90).make_table(
        old.splitlines(), new.splitlines(), old_label, new_label, context=True, numlines=3
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(summary)}</p>{table}</body></html>\n"
    )


STYLE = (
    "body{font-family:sans-serif;margin:1.5em}table.diff{font-family:monospace;"
    "border-collapse:collapse;font-size:90%}td{padding:0 .4em;vertical-align:top}"
    ".diff_header{background:#eee;color:#666}.diff_next{background:#f4f4f4}"
    ".diff_add{background:#dfd}.diff_chg{background:#ffb}.diff_sub{background:#fdd}"
)
