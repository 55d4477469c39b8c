"""A fixture site of hostile pages (the list of issue "hostile input"), written to a folder
that the real fixture server serves: each page is one way a site can break a parser."""

from __future__ import annotations

import json
from pathlib import Path

CALM = "calm-pages.com"
HOSTILE = "hostile-pages.com"
CALM_COUNT = 40


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def _jsonld_job(title: object) -> str:
    data = {"@context": "https://schema.org", "@type": "JobPosting", "title": title, "url": "/j/1"}
    script = json.dumps(data)
    return f'<html><body><script type="application/ld+json">{script}</script></body></html>'


# name -> (connector, surface, path, content type, body)
HOSTILE_PAGES: dict[str, tuple[str, str, str, str, str]] = {
    "charset-hex": ("generic_html", "homepage", "/hex", "text/html; charset=hex", "<p>hi</p>"),
    "charset-base64": (
        "generic_html",
        "homepage",
        "/b64",
        "text/html; charset=base64",
        "<p>hi</p>",
    ),
    "xml-encoding": (
        "sitemap",
        "products",
        "/sitemap.xml",
        "application/xml",
        '<?xml version="1.0" encoding="rot13"?><urlset><url><loc>http://x.com/a</loc></url></urlset>',
    ),
    "jsonld-number-title": ("generic_html", "careers", "/careers", "text/html", _jsonld_job(5)),
    "broken-link": (
        "generic_html",
        "careers",
        "/jobs",
        "text/html",
        '<ul><li class="job"><h3>Engineer</h3><a href="http://[::1">apply</a></li></ul>',
    ),
    "deep-nesting": (
        "generic_html",
        "homepage",
        "/deep",
        "text/html",
        "<div>" * 1500 + "deep" + "</div>" * 1500,
    ),
    "greenhouse-departments": (
        "greenhouse",
        "jobs_board",
        "/v1/boards/acme/jobs",
        "application/json",
        json.dumps({"jobs": [{"id": 1, "title": "A", "departments": 5, "absolute_url": "x"}]}),
    ),
    "lever-created-at": (
        "lever",
        "jobs_board",
        "/v0/postings/acme",
        "application/json",
        json.dumps([{"id": "1", "text": "A", "createdAt": 1e20, "categories": {"team": 5}}]),
    ),
    "statuspage-mixed": (
        "statuspage",
        "status",
        "/api/v2/summary.json",
        "application/json",
        json.dumps(
            {
                "page": {"name": "x"},
                "status": {"indicator": "none"},
                "components": [{"name": 5, "status": "operational"}, {"name": ["b"], "id": 3}],
            }
        ),
    ),
    "nul-title": ("generic_html", "careers", "/nul", "text/html", _jsonld_job("Eng\u0000ineer")),
}


def write_sites(root: Path) -> Path:
    calm = root / CALM
    (calm / "ok").mkdir(parents=True)
    for i in range(CALM_COUNT):
        (calm / "ok" / f"{i}.html").write_text(f"<html><body><h1>Page {i}</h1></body></html>")
    hostile = root / HOSTILE
    hostile.mkdir()
    routes = []
    for _name, (_connector, _surface, path, ctype, body) in HOSTILE_PAGES.items():
        routes.append(
            "[[route]]\n"
            f"path = {_toml_string(path + '*')}\n"
            "status = 200\n"
            f'headers = {{ "Content-Type" = {_toml_string(ctype)} }}\n'
            f"body = {_toml_string(body)}\n"
        )
    (hostile / "_site.toml").write_text("\n".join(routes))
    (hostile / "index.html").write_text("<p>hostile</p>")
    return root
