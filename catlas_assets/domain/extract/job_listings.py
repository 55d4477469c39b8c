"""Job listings without job markup: header-named tables and lists of links to postings (pure).

Many careers pages name no `job` class at all. Two shapes carry the postings anyway:
- a table whose header names its columns ("Position | Location | Department", in the
  languages of European sites): each body row is one job;
- a list whose items link to job postings (an ATS posting URL such as
  `boards.greenhouse.io/acme/jobs/123`, or a site path such as `/jobs/123-data-engineer`):
  each link is one job, its text the title. Fewer than two such links is a "see all jobs"
  button, not a listing.
Rows come back as plain dicts; `extract/html.py` turns them into jobs.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from catlas_assets.domain.classify import fold
from catlas_assets.domain.extract.links import plain_link, resolve
from catlas_assets.domain.extract.markup import node_text

TITLE_HEADERS = frozenset(
    {"position", "positions", "role", "roles", "job", "jobs", "job title", "title", "opening",
     "openings", "vacancy", "stelle", "stellenangebot", "poste", "intitule", "offre", "vacature",
     "functie", "puesto", "cargo", "posizione", "ruolo", "tjanst", "roll", "befattning"}
)  # fmt: skip
LOCATION_HEADERS = frozenset(
    {"location", "locations", "city", "office", "place", "where", "standort", "ort", "lieu",
     "ville", "locatie", "plaats", "ubicacion", "ciudad", "sede", "citta", "plats"}
)  # fmt: skip
DEPARTMENT_HEADERS = frozenset(
    {"department", "team", "function", "abteilung", "bereich", "equipe", "service",
     "departement", "afdeling", "departamento", "equipo", "reparto", "avdelning"}
)  # fmt: skip
# A posting's own page: `/jobs/<id or slug>` and its kin on any host.
POSTING_SEGMENTS = frozenset(
    {"jobs", "job", "careers", "career", "positions", "position", "openings", "vacancies", "o",
     "j", "stellen", "offres", "vacatures", "postings"}
)  # fmt: skip
# Hosts where every deeper path is one posting of a board (`jobs.lever.co/acme/<uuid>`).
POSTING_HOSTS = (
    "jobs.lever.co",
    "jobs.ashbyhq.com",
    "apply.workable.com",
    "jobs.smartrecruiters.com",
)
POSTING_HOST_SUFFIXES = (".myworkdayjobs.com", ".recruitee.com", ".teamtailor.com")
MIN_POSTING_LINKS = 2


def _text(node: LexborNode) -> str:
    return node_text(node)


def _column(header: str) -> str | None:
    word = fold(header).strip(" :")
    for name, words in (
        ("title", TITLE_HEADERS),
        ("location", LOCATION_HEADERS),
        ("department", DEPARTMENT_HEADERS),
    ):
        if word in words:
            return name
    return None


def table_rows(tree: LexborHTMLParser) -> list[dict[str, str]]:
    """One row per posting of every table whose header names a title column."""
    rows: list[dict[str, str]] = []
    for table in tree.css("table"):
        headers = table.css("thead th") or table.css("tr:first-child th")
        columns = [_column(_text(th)) for th in headers]
        if "title" not in columns:
            continue
        for tr in table.css("tr"):
            cells = tr.css("td")
            if not cells:
                continue
            row = {
                name: _text(cell)
                for name, cell in zip(columns, cells, strict=False)
                if name is not None and _text(cell)
            }
            if row.get("title"):
                rows.append(row)
    return rows


@lru_cache(maxsize=8192)  # a site's links repeat on its pages
def is_posting_url(url: str) -> bool:
    parts = urlsplit(url)
    return _is_posting((parts.hostname or "").lower(), parts.path)


def _is_posting(host: str, path: str) -> bool:
    """`is_posting_url` of a URL with this host (lower case) and path (as urlsplit reads)."""
    segments = [s for s in path.lower().split("/") if s]
    if host in POSTING_HOSTS or host.endswith(POSTING_HOST_SUFFIXES):
        return len(segments) >= 2
    return any(s in POSTING_SEGMENTS for s in segments[:-1])


def posting_links(tree: LexborHTMLParser, base: str) -> list[dict[str, str]]:
    """One row per distinct link to a job posting, outside the site's navigation."""
    rows: dict[str, dict[str, str]] = {}
    host: str | None = None  # the page's, read from its first plain link
    for link in tree.css("a[href]"):
        href = link.attributes.get("href") or ""
        if not href or href.startswith(("#", "mailto:", "javascript:")):
            continue
        url = plain_link(base, href)
        if url is not None:
            # Split, such a link has the page's host and `href` as its path: no parse each.
            host = (urlsplit(url).hostname or "").lower() if host is None else host
            posting = _is_posting(host, href)
        else:
            url = resolve(base, href)
            posting = is_posting_url(url)
        # The URL test first: most links of a page are no posting, and a title costs more.
        if not posting or _in_navigation(link):
            continue
        title = _title(link)
        if not title:
            continue
        rows.setdefault(url, {"title": title, "url": url})
    return list(rows.values()) if len(rows) >= MIN_POSTING_LINKS else []


def _title(link: LexborNode) -> str:
    """A posting link's title: the link's heading or first part when the link wraps a whole
    card (title, team, place, "3 days ago"), else its text."""
    heading = link.css_first("h1, h2, h3, h4, h5, [class*=title]")
    if heading is not None and _text(heading):
        return _text(heading)
    child = link.child
    while child is not None:
        if child.tag not in (None, "-text") and _text(child):
            return _text(child)
        child = child.next
    return _text(link)


def _in_navigation(node: LexborNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in ("nav", "header", "footer"):
            return True
        parent = parent.parent
    return False
