"""Which surface a URL is: path keywords, subdomain labels and link text (pure).

`classify_url` looks at the last path segment (a section such as `/blog` or
`/company/careers`, never an article such as `/blog/some-post`), at the first label of a
subdomain of the company's domain (`status.example.com`, `docs.`, `ir.`, `karriere.`;
a subdomain whose label says nothing is classified by its path like the main host), and
at the anchor text when the path says nothing. It answers with a surface and a confidence in [0, 1], or None.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from catlas_assets.domain.taxonomy import SUBDOMAIN_SURFACES
from catlas_assets.domain.urls import is_locale, registrable_domain
from catlas_assets.domain.vocabulary import Surface

# Last-segment keywords per surface, with the confidence a match carries. Sections go by
# many names (a blog is a "Journal" or "Field notes", careers "Work with us") and European
# companies name them in their own language: de, fr, nl, es, it, sv.
PATH_KEYWORDS: dict[Surface, tuple[float, frozenset[str]]] = {
    Surface.CAREERS: (
        0.9,
        frozenset(
            {
                "careers", "career", "jobs", "join-us", "joinus", "work-with-us", "hiring",
                "open-roles", "open-positions", "vacancies", "work-here", "join-our-team",
                # de, fr, nl, es, it, sv
                "karriere", "stellenangebote", "stellen", "jobs-karriere",
                "carrieres", "carriere", "emplois", "emploi", "recrutement", "nous-rejoindre",
                "rejoignez-nous", "werken-bij", "werkenbij", "vacatures", "empleo", "empleos",
                "trabaja-con-nosotros", "carreras", "unete", "lavora-con-noi",
                "posizioni-aperte", "karriar", "jobba-hos-oss", "lediga-jobb", "lediga-tjanster",
            }
        ),
    ),
    Surface.PRICING: (
        0.9,
        frozenset(
            {
                "pricing", "plans", "prices", "price", "membership", "memberships",
                "plans-and-pricing", "plans-pricing",
                # de, fr, nl, es, it, sv
                "preise", "tarife", "tarifs", "prix", "prijzen", "tarieven", "precios",
                "prezzi", "piani", "priser", "prisplaner",
            }
        ),
    ),
    Surface.BLOG: (
        0.85,
        frozenset(
            {
                "blog", "engineering-blog", "articles", "insights", "journal", "stories",
                "updates", "field-notes", "fieldnotes", "engineering", "tech-blog", "posts",
                "writing", "notes", "news-and-updates", "company-blog",
                # de, fr, nl, es, it, sv
                "magazin", "artikel", "beitraege", "le-blog", "actualites-blog", "artikelen",
                "verhalen", "inzichten", "articulos", "historias", "articoli", "storie",
                "approfondimenti", "artiklar", "berattelser", "insikter",
            }
        ),
    ),
    Surface.NEWSROOM: (
        0.85,
        frozenset(
            {
                "news", "newsroom", "press", "press-releases", "media", "announcements",
                "in-the-news", "press-room", "pressroom", "media-centre", "media-center",
                "press-and-media", "news-and-press",
                # de, fr, nl, es, it, sv
                "presse", "pressemitteilungen", "aktuelles", "neuigkeiten", "nachrichten",
                "actualites", "communiques", "communiques-de-presse", "salle-de-presse",
                "pers", "nieuws", "persberichten", "prensa", "noticias", "sala-de-prensa",
                "stampa", "notizie", "comunicati-stampa", "nyheter", "pressmeddelanden",
            }
        ),
    ),
    Surface.DOCS: (0.8, frozenset({"docs", "documentation", "help", "kb", "knowledge-base"})),
    Surface.DEVELOPER: (0.8, frozenset({"developers", "developer", "api", "api-reference"})),
    Surface.STATUS: (0.7, frozenset({"status", "system-status"})),
    Surface.INVESTORS: (0.85, frozenset({"investors", "investor-relations", "ir"})),
    Surface.PEOPLE: (0.75, frozenset({"team", "leadership", "people", "management", "founders"})),
    Surface.PRODUCTS: (0.7, frozenset({"products", "product"})),
    Surface.LOCATIONS: (0.7, frozenset({"locations", "offices"})),
    Surface.FEED: (
        0.8,
        frozenset({"feed", "rss", "atom", "feed.xml", "rss.xml", "atom.xml", "index.xml"}),
    ),
}  # fmt: skip

# Anchor text that names a surface ("Join us", "Press") when the path does not.
TEXT_KEYWORDS: dict[Surface, frozenset[str]] = {
    Surface.CAREERS: frozenset(
        {
            "careers", "career", "jobs", "join us", "we're hiring", "we are hiring", "open roles",
            "work with us", "open positions", "join the team", "join our team", "vacancies",
            "karriere", "jobs & karriere", "stellenangebote", "arbeiten bei uns",
            "carrières", "carrieres", "nous rejoindre", "rejoignez-nous", "emplois",
            "recrutement", "werken bij", "vacatures", "carrière", "empleo", "empleos",
            "trabaja con nosotros", "únete", "carreras", "lavora con noi", "carriere",
            "posizioni aperte", "karriär", "jobba hos oss", "lediga jobb",
        }
    ),
    Surface.PRICING: frozenset(
        {
            "pricing", "plans", "plans & pricing", "plans and pricing", "membership",
            "memberships", "preise", "tarifs", "prix", "prijzen", "precios", "prezzi", "priser",
        }
    ),
    Surface.BLOG: frozenset(
        {
            "blog", "engineering blog", "journal", "stories", "insights", "updates", "articles",
            "field notes", "engineering", "our blog", "tech blog", "magazin", "le blog", "writing",
            "artikelen", "verhalen", "artículos", "historias", "articoli", "storie",
            "artiklar", "insikter",
        }
    ),
    Surface.NEWSROOM: frozenset(
        {
            "news", "newsroom", "press", "press releases", "media", "in the news", "press room",
            "news & press", "news and press", "press & media", "presse", "aktuelles",
            "neuigkeiten", "pressemitteilungen", "actualités", "communiqués de presse",
            "salle de presse", "pers", "nieuws", "persberichten", "prensa", "noticias",
            "sala de prensa", "stampa", "notizie", "comunicati stampa", "nyheter",
            "pressmeddelanden",
        }
    ),
    Surface.DOCS: frozenset({"docs", "documentation", "help center"}),
    Surface.DEVELOPER: frozenset({"developers", "api reference", "api"}),
    Surface.STATUS: frozenset({"status", "system status"}),
    Surface.INVESTORS: frozenset({"investors", "investor relations"}),
    Surface.PEOPLE: frozenset({"team", "our team", "leadership"}),
}  # fmt: skip
# A section named plain "news" (in any language) is as often a company's blog as its
# press page; the press words name the newsroom for sure and outrank it. The anchor text
# decides a plain news section (WordPress blogs live at `/news/` called "Updates"), else
# it is the newsroom, and the blog when the newsroom is another page (selection.py).
NEWS_WORDS = frozenset(
    {"news", "announcements", "aktuelles", "neuigkeiten", "nachrichten", "actualites", "nieuws",
     "noticias", "notizie", "nyheter"}
)  # fmt: skip
PRESS_CONFIDENCE = 0.9
NEWS_AS_BLOG_CONFIDENCE = 0.6
# Taxonomy and archive listings of a CMS (WordPress `/category/x/`, `/tag/x/`,
# `/author/x/`, `/page/2/`, `/2024/05/`; Ghost `/tag/x/`, `/author/x/`) list a slice of
# the posts: never a section of their own, whatever their slug says (`/tag/news/`).
ARCHIVE_SEGMENTS = frozenset(
    {"tag", "tags", "category", "categories", "author", "authors", "topic", "topics"}
)
_PAGE_NUMBER = re.compile(r"^\d+$")
_YEAR = re.compile(r"^(?:19|20)\d{2}$")
TEXT_ONLY_CONFIDENCE = 0.6
TEXT_AGREES_BONUS = 0.05
SUBDOMAIN_CONFIDENCE = 0.9
_EXTENSION = re.compile(r"\.(html?|php|aspx?)$")
_SUBDOMAIN_SURFACE = dict(SUBDOMAIN_SURFACES)


@dataclass(frozen=True)
class Classified:
    surface: Surface
    confidence: float
    alternative: Surface | None = None  # what the page may be instead (a news section: blog)


def is_archive(url: str) -> bool:
    """A CMS taxonomy, author, pagination or date archive (`/tag/news/`, `/blog/page/2/`)."""
    segments = [fold(s) for s in urlsplit(url).path.split("/") if s]
    for i, segment in enumerate(segments):
        followed = i + 1 < len(segments)
        if segment in ARCHIVE_SEGMENTS and followed:
            return True
        if segment == "page" and followed and _PAGE_NUMBER.match(segments[i + 1]):
            return True
        if _YEAR.match(segment):
            return True
    return False


def is_comments_feed(url: str) -> bool:
    """WordPress's comments feed (`/comments/feed/`, `/post/feed/` of one post's comments
    is not linked from a homepage): the readers' comments, not the site's posts."""
    return "comments" in [fold(s) for s in urlsplit(url).path.split("/") if s]


def path_depth(url: str) -> int:
    """Path segments of a URL: 0 for the root, 1 for `/careers`, 2 for `/company/careers`."""
    return len([s for s in urlsplit(url).path.split("/") if s])


def fold(text: str) -> str:
    """Lower case without accents or percent-escapes: `Karri%C3%A4r` and `karriär` -> `karriar`."""
    decomposed = unicodedata.normalize("NFKD", unquote(text).lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("’", "'")


_FOLDED_TEXT = {surface: frozenset(map(fold, words)) for surface, words in TEXT_KEYWORDS.items()}
_FOLDED_PATH = {
    surface: (confidence, frozenset(map(fold, words)))
    for surface, (confidence, words) in PATH_KEYWORDS.items()
}


def _text_surface(text: str) -> Surface | None:
    cleaned = fold(" ".join(text.split())).strip(" .:›»→")
    for surface, words in _FOLDED_TEXT.items():
        if cleaned in words:
            return surface
    return None


# A first path segment that is a locale or a version, not a page: `docs.x.com/en/latest`.
_VERSION = re.compile(r"^(?:v\d+(?:\.\d+)*|latest|stable)$")


def _label_surface(label: str) -> Surface | None:
    surface = _SUBDOMAIN_SURFACE.get(label)
    if surface is not None:
        return surface
    folded = fold(label)
    for candidate, (_, words) in _FOLDED_PATH.items():
        if folded in words and candidate is not Surface.FEED:
            return candidate
    return None


def _section_root(segments: list[str]) -> bool:
    """The root of a subdomain's section: `/`, `/jobs`, or `/en/`, `/en/latest/`."""
    if len(segments) <= 1:
        return True
    return all(is_locale(s) or _VERSION.match(s) for s in segments[:-1]) and len(segments) <= 2


def _section(surface: Surface, confidence: float, word: str, by_text: Surface | None) -> Classified:
    """A section its path names; a plain news section goes by its anchor text."""
    alternative = None
    if surface is Surface.NEWSROOM:
        if word not in NEWS_WORDS:
            confidence = PRESS_CONFIDENCE
        elif by_text is Surface.BLOG:
            surface = Surface.BLOG
        else:
            alternative = Surface.BLOG
    bonus = TEXT_AGREES_BONUS if by_text is surface else 0.0
    return Classified(surface, round(min(1.0, confidence + bonus), 4), alternative)


def classify_url(url: str, *, company_domain: str, text: str = "") -> Classified | None:
    """The surface `url` is on the company's site, or None (off-site, article, unknown).

    `company_domain` is the registrable domain (`example.com`); URLs elsewhere are not
    classified here (ATS hosts have their own detector).
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        return None
    if registrable_domain(host) != company_domain:
        return None
    segments = [s for s in parts.path.lower().split("/") if s]
    label = host.removesuffix(company_domain).rstrip(".")
    label = "" if label == "www" else label.split(".")[-1] if label else ""
    by_text = _text_surface(text) if text else None
    if label:
        # A subdomain of the company's domain is the company's site too: its label names
        # the surface (`docs.`, `careers.`, `ir.`, `karriere.`), else its path does, as on
        # the main host (`about.example.com/careers`).
        surface = _label_surface(label)
        if surface is not None and _section_root(segments):
            return Classified(surface, SUBDOMAIN_CONFIDENCE)
        if not segments:
            # dashboard.example.com: an app, not a surface, unless its link says which
            # ("Careers" -> work.example.com, a career site on a host of its own).
            return Classified(by_text, TEXT_ONLY_CONFIDENCE) if by_text is not None else None
    elif not segments:
        return Classified(Surface.HOMEPAGE, 1.0) if not parts.query else None
    if is_archive(url):
        return None
    segment = fold(segments[-1])
    last = _EXTENSION.sub("", segment)
    for surface, (confidence, words) in _FOLDED_PATH.items():
        if last in words or segment in words:
            return _section(surface, confidence, last, by_text)
    if by_text is not None and len(segments) <= 2:
        return Classified(by_text, TEXT_ONLY_CONFIDENCE)
    return None
