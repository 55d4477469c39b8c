"""A generated site for killed crawls: every page links to every other, each slow enough
that a crawl of it is still running when it is killed."""

from __future__ import annotations

from pathlib import Path

HOST = "chaos-mesh.com"
BASE_URL = f"http://{HOST}/"


def mesh_root(root: Path, pages: int, delay_ms: int) -> Path:
    """A fixture web folder holding the mesh site (index and `/p/0` .. `/p/{pages-1}`)."""
    site = root / HOST
    (site / "p").mkdir(parents=True)
    links = "".join(f'<li><a href="/p/{n}">Post {n}</a></li>' for n in range(pages))
    for name, title in [("index", "Mesh"), *((f"p/{n}", f"Post {n}") for n in range(pages))]:
        page = f"<!doctype html><html><body><h1>{title}</h1><ul>{links}</ul></body></html>"
        (site / f"{name}.html").write_text(page)
    # The route only slows the files down.
    (site / "_site.toml").write_text(f'[[route]]\npath = "/p/*"\ndelay_ms = {delay_ms}\n')
    return root
