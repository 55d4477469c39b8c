"""Typed entities from an HTML page, per surface: JSON-LD first, then common listing markup.

JSON-LD (`JobPosting`, `Person`, `NewsArticle`/`BlogPosting`/`Article`, `Product`, `Place`)
is trusted most. Listings are read from markup conventions that careers, pricing, news,
team, product and office pages share (class tokens such as `job`, `plan`/`tier`,
`article`/`li` holding a `time` and a link, `person`, `product`, `office`). Links are
canonicalized (tracking and cache-busting parameters dropped) so that a tracking
parameter never makes a news item look new.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from catlas_assets.domain.extract.extraction import Extraction, job, name_norm
from catlas_assets.domain.extract.job_listings import posting_links, table_rows
from catlas_assets.domain.extract.links import plain_path, root_path, site_origin
from catlas_assets.domain.extract.markup import clean_text, node_text, parse_html

TRACKING_PARAMS = frozenset(
    {"gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "ref", "_ga", "_gl", "_hsenc", "_hsmi",
     "igshid", "yclid", "cb", "cachebust", "_", "ts", "source", "trk"}
)  # fmt: skip
SURFACE_TYPES = {
    "careers": "job",
    "jobs_board": "job",
    "pricing": "pricing_plan",
    "blog": "news",
    "newsroom": "news",
    "feed": "news",
    "investors": "news",
    "people": "person",
    "products": "product",
    "locations": "location",
}
JOB_TOKENS = frozenset(
    {"job", "job-item", "job-listing", "job-posting", "job-card", "opening", "vacancy", "posting",
     "job-row", "job-list-item", "jobs-list-item", "job-opening", "career-item", "opening-item",
     "position-item"}
)  # fmt: skip
# Webflow and site-builder templates call a plan's card `pricing-card` / `plan-card`.
PLAN_TOKENS = frozenset(
    {"plan", "tier", "pricing-plan", "price-card", "pricing-tier", "pricing-card", "plan-card"}
)
# A price element carrying both billing periods as attributes (a monthly/annual toggle
# that swaps the figure client-side): `<div data-monthly="19" data-annual="15">`.
PERIOD_ATTRIBUTES = {"data-monthly": "monthly", "data-annual": "annual", "data-yearly": "annual"}
PERSON_TOKENS = frozenset({"person", "team-member", "leader", "person-card", "member"})
PRODUCT_TOKENS = frozenset({"product", "product-card"})
OFFICE_TOKENS = frozenset({"office", "location-card", "office-card"})
# Items of a CMS collection list (Webflow `w-dyn-item`, ARIA `role=listitem` divs).
COLLECTION_ITEMS = '.w-dyn-item, [role="listitem"]'
CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP"}
_MONEY = re.compile(r"([$€£])\s?(\d[\d,]*(?:\.\d+)?)")
_MONTH = re.compile(r"/\s*mo\b|per month|/\s*month|monthly|a month", re.I)
_YEAR = re.compile(r"/\s*yr\b|per year|/\s*year|annual|yearly|a year", re.I)


def canonical_url(href: str, base: str = "") -> str:
    """Absolute, fragment-free, tracking-free URL with sorted query (one key per document);
    a URL that does not parse ("http://[::1") is kept as written."""
    stripped = href.strip()
    if base and root_path(stripped):
        origin = site_origin(base)
        if origin:
            if plain_path(origin, stripped):
                # What `_canonical` makes of the join: host lower-cased, no trailing "/".
                return origin.lower() + (stripped.rstrip("/") or "/")
            return _site_link(stripped, origin)
    return _canonical(href, base)


@lru_cache(maxsize=8192)
def _site_link(href: str, origin: str) -> str:
    # Menu links repeat on every page of a site (see `links`).
    return _canonical(href, origin)


def _canonical(href: str, base: str) -> str:
    try:
        absolute = urljoin(base, href.strip()) if base else href.strip()
        parts = urlsplit(absolute)
    except ValueError:
        return href.strip()
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMS
    )
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, urlencode(query), ""))


def _clean(text: str | None) -> str:
    return clean_text(text) if text else ""


def _tokens(node: LexborNode) -> set[str]:
    return set((node.attributes.get("class") or "").lower().split())


def _first_text(node: LexborNode, selectors: str) -> str:
    for selector in selectors.split(","):
        found = node.css_first(selector.strip())
        if found is not None:
            text = node_text(found)
            if text:
                return text
    return ""


def _hides(node: LexborNode) -> bool:
    attrs = node.attributes
    style = (attrs.get("style") or "").replace(" ", "").lower()
    return "hidden" in attrs or "display:none" in style or node.tag in ("script", "template")


def _visible(node: LexborNode, seen: dict[int, bool] | None = None) -> bool:
    """No ancestor hides it; `seen` remembers answers per element, so asking for every
    element of a page costs one walk up per element, not one per element and ancestor."""
    seen = {} if seen is None else seen
    chain: list[int] = []
    current: LexborNode | None = node
    answer = True
    while current is not None and current.tag not in (None, "html"):
        known = seen.get(current.mem_id)
        if known is not None:
            answer = known
            break
        chain.append(current.mem_id)
        if _hides(current):
            answer = False
            break
        current = current.parent
    for mem_id in chain:  # below a hiding element everything is hidden too
        seen[mem_id] = answer
    return answer


def _with_tokens(tree: LexborHTMLParser, tokens: frozenset[str]) -> list[LexborNode]:
    seen: dict[int, bool] = {}
    found = [n for n in tree.css("[class]") if _tokens(n) & tokens and _visible(n, seen)]
    # The outermost match only: a `job` card inside a `job` wrapper counts once.
    return _outermost(found)


def _outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """The nodes that have none of the others among their ancestors (in order).

    One walk up from each node against the set of them: linear in nodes × depth, where
    comparing every pair was quadratic in the nodes.
    """
    ids = {n.mem_id for n in nodes}
    kept = []
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None:
            kept.append(node)
    return kept


# -- JSON-LD ------------------------------------------------------------------------------
def _jsonld(tree: LexborHTMLParser) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for script in tree.css('script[type="application/ld+json"]'):
        try:
            data = json.loads(script.text(deep=True) or "null")
        except ValueError:
            continue
        stack = data if isinstance(data, list) else [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, dict):
                if isinstance(item.get("@graph"), list):
                    stack.extend(item["@graph"])
                items.append(item)
    return items


def _types(item: dict[str, Any]) -> set[str]:
    kind = item.get("@type")
    return set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()


def _place_text(place: Any) -> str:
    if isinstance(place, list):
        return "; ".join(p for p in (_place_text(x) for x in place) if p)
    if isinstance(place, dict):
        address = place.get("address", place)
        if isinstance(address, dict):
            parts = (
                address.get("addressLocality"),
                address.get("addressRegion"),
                address.get("addressCountry"),
            )
            return ", ".join(str(p) for p in parts if p and not isinstance(p, dict))
        return _clean(str(address))
    return _clean(str(place)) if place else ""


def _jsonld_entities(items: list[dict[str, Any]], base: str, out: Extraction) -> int:
    found = 0
    for item in items:
        try:
            found += _jsonld_entity(item, base, out)
        except (TypeError, ValueError, AttributeError, KeyError):
            continue  # one malformed item (a number for a title, an object for a URL) is skipped
    return found


def _text_or_none(value: Any) -> str | None:
    """A JSON-LD value that should be text: kept when it is, dropped when it is not."""
    return _clean(value) or None if isinstance(value, str) else None


def _jsonld_entity(item: dict[str, Any], base: str, out: Extraction) -> int:
    """Adds the entity `item` describes; 1 when it was one, 0 otherwise."""
    found = 0
    types = _types(item)
    if "JobPosting" in types and item.get("title"):
        salary = item.get("baseSalary") if isinstance(item.get("baseSalary"), dict) else {}
        value = salary.get("value") if isinstance(salary.get("value"), dict) else {}
        comp = None
        if value:
            comp = {
                "min": value.get("minValue"),
                "max": value.get("maxValue"),
                "currency": salary.get("currency"),
                "interval": value.get("unitText"),
            }
        location = _place_text(item.get("jobLocation"))
        remote = item.get("jobLocationType") == "TELECOMMUTE" or None
        identifier = item.get("identifier")
        if isinstance(identifier, dict):
            identifier = identifier.get("value")
        out.add(
            "job",
            job(
                vendor="html",
                vendor_id=None,
                title=_clean(item["title"]),
                department=None,
                locations=[location] if location else [],
                remote=remote,
                employment_type=item.get("employmentType")
                if isinstance(item.get("employmentType"), str)
                else None,
                url=canonical_url(item["url"], base) if isinstance(item.get("url"), str) else None,
                posted_at=_text_or_none(item.get("datePosted")),
                requisition_id=str(identifier) if identifier else None,
                compensation=comp,
            ),
        )
        found += 1
    elif "Person" in types and item.get("name"):
        name = _clean(item["name"])
        out.add(
            "person",
            {"key": name_norm(name), "name": name, "title": _text_or_none(item.get("jobTitle"))},
        )
        found += 1
    elif types & {"NewsArticle", "BlogPosting", "Article"} and item.get("headline"):
        url = canonical_url(item.get("url") or base, base)
        out.add(
            "news",
            {
                "key": url,
                "title": _clean(item["headline"]),
                "url": url,
                "published_at": _text_or_none(item.get("datePublished")),
            },
        )
        found += 1
    elif "Product" in types and item.get("name"):
        name = _clean(item["name"])
        out.add(
            "product",
            {
                "key": name_norm(name),
                "name": name,
                "description": _text_or_none(item.get("description")),
            },
        )
        found += 1
    return found


# -- listings -----------------------------------------------------------------------------
def _jobs(tree: LexborHTMLParser, base: str, out: Extraction) -> int:
    found = 0
    tokened = _with_tokens(tree, JOB_TOKENS)
    marked = {n.mem_id for n in tokened}
    # A row that carries its posting's id (`<div data-job="199227">`) is a job too.
    tokened += [
        n
        for n in tree.css("[data-job], [data-job-id]")
        if n.mem_id not in marked and _visible(n, {})
    ]
    for node in _outermost(tokened):
        title = _first_text(node, ".job-title, .title, h2, h3, h4, a")
        if not title:
            continue
        location = _first_text(node, ".job-location, .location, .job-loc")
        link = node.css_first("a[href]")
        href = link.attributes.get("href") if link is not None else None
        out.add(
            "job",
            job(
                vendor="html",
                vendor_id=None,
                title=title,
                team=_first_text(node, ".job-team, .team, .department, .job-dept") or None,
                locations=[location] if location else [],
                remote=("remote" in location.lower()) or None,
                url=canonical_url(href, base) if href and href.startswith(("http", "/")) else None,
            ),
        )
        found += 1
    for row in tree.css("tr"):
        role = row.css_first("td.role, td.job, td.position")
        if role is None or not _visible(row):
            continue
        title = node_text(role)
        if not title:
            continue
        location = _first_text(row, "td.location")
        out.add(
            "job",
            job(
                vendor="html",
                vendor_id=None,
                title=title,
                team=_first_text(row, "td.team, td.department") or None,
                locations=[location] if location else [],
                remote=("remote" in location.lower()) or None,
            ),
        )
        found += 1
    if found:
        return found
    # No job markup: a header-named table, else a list of links to postings.
    rows = table_rows(tree) or posting_links(tree, base)
    for row in rows:
        location = row.get("location", "")
        href = row.get("url")
        out.add(
            "job",
            job(
                vendor="html",
                vendor_id=None,
                title=row["title"],
                department=row.get("department") or None,
                locations=[location] if location else [],
                remote=("remote" in location.lower()) or None,
                url=canonical_url(href, base) if href else None,
            ),
        )
    return len(rows)


def _price(text: str) -> tuple[float | None, str | None]:
    match = _MONEY.search(text)
    if match is None:
        return None, None
    return float(match.group(2).replace(",", "")), CURRENCIES[match.group(1)]


def _number(value: str | None) -> float | None:
    try:
        return float((value or "").replace(",", "")) if value else None
    except ValueError:
        return None


def _period(text: str) -> str | None:
    if _MONTH.search(text):
        return "month"
    if _YEAR.search(text):
        return "year"
    return None


def _plan_key(name: str, amount: float | None, keys: dict[str, list[float | None]]) -> str:
    """A plan's key: its name; a second card of that name at another price is another plan
    (`team#2`), one at the same price is the same plan shown twice."""
    key = name_norm(name)
    prices = keys.setdefault(key, [])
    if amount in prices:
        index = prices.index(amount)
    else:
        prices.append(amount)
        index = len(prices) - 1
    return key if index == 0 else f"{key}#{index + 1}"


def _plans(tree: LexborHTMLParser, out: Extraction) -> int:
    nodes = _with_tokens(tree, PLAN_TOKENS)
    seen = {n.mem_id for n in nodes}
    nodes += [n for n in tree.css("[data-plan]") if n.mem_id not in seen and _visible(n, {})]
    found = 0
    keys: dict[str, list[float | None]] = {}
    for node in nodes:
        name = _first_text(node, ".plan-name, .tier-name, h2, h3, h4") or (
            node.attributes.get("data-plan") or ""
        )
        if not name:
            continue
        holders = node.css(".plan-price, .price, .price-text, .tier-fee, .tier-rate") or node.css(
            ".amount"
        )
        price_text = " · ".join(
            node_text(p) for p in holders if not p.css("[data-period], [data-billing]")
        ) or " · ".join(node_text(p) for p in holders)
        price_text = price_text or node_text(node)[:200]
        prices: dict[str, float] = {}
        for toggle in node.css("[data-period], [data-billing]"):
            period = (
                toggle.attributes.get("data-period") or toggle.attributes.get("data-billing") or ""
            )
            amount, _currency = _price(_clean(toggle.text(deep=True, separator="")))
            if amount is not None:
                prices[period.lower()] = amount
        for holder in holders:
            for attribute, period in PERIOD_ATTRIBUTES.items():
                figure = _number(holder.attributes.get(attribute))
                if figure is not None:
                    prices.setdefault(period, figure)
        amount, currency = _price(price_text)
        period = _period(price_text)
        if prices:
            # A monthly/annual toggle: the monthly figure is the headline price.
            amount = prices.get("monthly", prices.get("month", amount))
            period = "month" if ("monthly" in prices or "month" in prices) else period
        features = [text for li in node.css("li") if (text := node_text(li))]
        out.add(
            "pricing_plan",
            {
                "key": _plan_key(name, amount, keys),
                "name": name,
                "price": amount,
                "currency": currency,
                "billing_period": period,
                "prices": prices or None,
                "price_text": price_text,
                "features": features,
            },
        )
        found += 1
    return found


def _holders(tree: LexborHTMLParser, selector: str) -> set[int]:
    """The elements (`mem_id`s) that match the simple `selector` or hold a match: those
    where `css_first(selector)` finds one, read in one query and one walk up per match
    rather than one query per element."""
    held: set[int] = set()
    for node in tree.css(selector):
        current: LexborNode | None = node
        # Up to the first element already held: its ancestors are held too.
        while current is not None and current.mem_id not in held:
            held.add(current.mem_id)
            current = current.parent
    return held


def _collection_post(node: LexborNode) -> bool:
    """An item of a CMS collection list with a heading: a post card even without `<time>`
    (Webflow's `w-dyn-item` shows its date as plain text)."""
    return node.tag not in ("article", "li") and node.css_first("h2, h3, h4") is not None


def _news(tree: LexborHTMLParser, base: str, out: Extraction) -> int:
    found = 0
    seen: dict[int, bool] = {}
    # One node matching two selectors comes back twice: keep it once.
    unique = {n.mem_id: n for n in tree.css(f"article, li, {COLLECTION_ITEMS}")}
    candidates = [n for n in unique.values() if _visible(n, seen)]
    linked, dated = _holders(tree, "a[href]"), _holders(tree, "time")
    keep = _outermost(
        [n for n in candidates if n.mem_id in linked and (n.mem_id in dated or _collection_post(n))]
    )
    for node in keep:
        link = node.css_first("h1 a[href], h2 a[href], h3 a[href], a[href]")
        assert link is not None
        url = canonical_url(link.attributes.get("href") or "", base)
        title = _first_text(node, "h1, h2, h3, h4") or node_text(link)
        when = node.css_first("time")
        published = (when.attributes.get("datetime") if when is not None else None) or None
        out.add("news", {"key": url, "title": title, "url": url, "published_at": published})
        found += 1
    return found


def _named(tree: LexborHTMLParser, tokens: frozenset[str], entity: str, out: Extraction) -> int:
    found = 0
    for node in _with_tokens(tree, tokens):
        name = _first_text(node, ".name, .office-name, .product-name, h2, h3, h4, strong")
        if not name:
            continue
        item: dict[str, Any] = {"key": name_norm(name), "name": name}
        if entity == "person":
            item["title"] = _first_text(node, ".title, .role, .position, p") or None
        elif entity == "location":
            item["address"] = _first_text(node, "address, .address, p") or None
        else:
            item["description"] = _first_text(node, ".description, p") or None
        out.add(entity, item)
        found += 1
    return found


def _page_facts(tree: LexborHTMLParser, base: str) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    title = tree.css_first("title")
    if title is not None:
        facts["title"] = _clean(title.text())
    navs = tree.css("nav")
    if navs and base:
        own = canonical_url(base)
        # Each distinct href once, and no further than the first that names this page.
        hrefs = {a.attributes.get("href") or "" for nav in navs for a in nav.css("a[href]")}
        facts["self_linked"] = any(canonical_url(href, base) == own for href in hrefs)
    return facts


def extract_html(html: str, url: str, surface: str) -> Extraction:
    tree = parse_html(html)
    out = Extraction(connector="generic_html", surface=surface)
    from_jsonld = _jsonld_entities(_jsonld(tree), url, out)
    wanted = SURFACE_TYPES.get(surface)
    from_markup = 0
    if wanted == "job" and not out.entities.get("job"):
        from_markup = _jobs(tree, url, out)
    elif wanted == "pricing_plan":
        from_markup = _plans(tree, out)
    elif wanted == "news" and not out.entities.get("news"):
        from_markup = _news(tree, url, out)
    elif wanted == "person" and not out.entities.get("person"):
        from_markup = _named(tree, PERSON_TOKENS, "person", out)
    elif wanted == "product" and not out.entities.get("product"):
        from_markup = _named(tree, PRODUCT_TOKENS, "product", out)
    elif wanted == "location":
        from_markup = _named(tree, OFFICE_TOKENS, "location", out)
    out.page = _page_facts(tree, url)
    if from_jsonld:
        out.confidence = 0.95
    elif from_markup:
        out.confidence = 0.75
    else:
        out.confidence = 0.3 if wanted else 0.6
    return out
