"""A deterministic set of company-like web pages for the end-to-end benchmark.

    python bench/pages.py generate OUT [--pages 2000] [--hosts 40] [--seed 16]
    python bench/pages.py change OUT --share 0.1 [--seed 1]

`generate` writes OUT/sites/<host>/... (one folder per host, as nginx serves them by Host),
OUT/manifest.json (every page: host, path, surface, file, bytes) and OUT/sensors.csv (the
`catlas sensors import` file). Each host is a fictional company (`<name>.test`, a reserved
top-level domain, so no name can reach a real site) with a homepage, a careers list and job
pages, pricing, a blog and a newsroom with their posts, docs and company pages. Sizes are
log-normal around a 40 KB median; every page has a head with styles and JSON-LD, a nav, a
footer of links and inline scripts, and a body of job cards, news items or paragraphs.

`change` rewrites a share of the pages (a new item on top of each list, one dropped, the
headline reworded), as a site changes between two visits; the same seed picks the same pages.
Only the standard library is used, so both the product's and the peers' environments run it.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path

NAMES = (
    "northwind", "bluefin", "cobalt", "harbor", "saltmarsh", "pinecrest", "orbit", "quill",
    "ternway", "plover", "finch", "wren", "cadence", "brick", "ember", "lumen", "ridge",
    "alder", "basalt", "cinder", "delta", "fjord", "garnet", "heron", "iris", "juniper",
    "kestrel", "larch", "marlin", "nimbus", "oriel", "pylon", "quartz", "rowan", "sable",
    "tundra", "umber", "vesper", "willow", "yarrow", "zephyr", "aster", "bramble", "corvid",
)  # fmt: skip
KINDS = (
    "robotics", "analytics", "freight", "labs", "cloud", "health", "energy", "systems",
    "payments", "foods", "mobility", "security", "media", "works",
)  # fmt: skip
WORDS = [
    "platform",
    "team",
    "customers",
    "data",
    "secure",
    "fast",
    "growth",
    "global",
    "product",
    "launch",
    "partner",
    "market",
    "engineering",
    "design",
    "support",
    "pricing",
    "plan",
    "annual",
    "monthly",
    "enterprise",
    "startup",
    "scale",
    "reliable",
    "network",
    "cloud",
    "service",
    "integration",
    "workflow",
    "insight",
    "report",
    "quarter",
    "revenue",
    "hiring",
    "remote",
    "office",
    "culture",
    "mission",
    "values",
    "open",
    "source",
    "release",
    "update",
    "feature",
    "roadmap",
    "community",
    "event",
    "webinar",
    "research",
    "study",
    "industry",
    "leader",
    "award",
    "funding",
    "round",
    "series",
    "investors",
    "board",
    "announce",
    "today",
    "new",
    "improved",
    "faster",
    "simpler",
    "together",
    "build",
    "ship",
    "learn",
    "measure",
    "deliver",
    "people",
    "talent",
    "benefits",
    "equity",
    "health",
    "travel",
    "flexible",
    "hybrid",
    "onsite",
    "senior",
    "junior",
    "staff",
]
CITIES = ("Berlin", "London", "Paris", "Lisbon", "Austin", "Toronto", "Remote", "Warsaw")
ROLES = (
    "Software Engineer", "Product Designer", "Data Scientist", "Account Executive",
    "Support Specialist", "Engineering Manager", "Site Reliability Engineer", "Recruiter",
    "Marketing Lead", "Security Analyst", "Technical Writer", "Finance Associate",
)  # fmt: skip
MEDIAN_BYTES = 40_000
SIGMA = 0.45
MIN_BYTES, MAX_BYTES = 10_000, 160_000

# The pages of one site (50 of them): (path pattern, surface, how many, page kind).
LAYOUT = (
    ("/", "homepage", 1, "home"),
    ("/careers", "careers", 1, "jobs"),
    ("/careers/{slug}", "careers", 12, "article"),
    ("/pricing", "pricing", 1, "pricing"),
    ("/blog", "blog", 1, "news"),
    ("/blog/{slug}", "blog", 16, "article"),
    ("/newsroom", "newsroom", 1, "news"),
    ("/newsroom/{slug}", "newsroom", 8, "article"),
    ("/docs/{slug}", "docs", 5, "article"),
    ("/about", "people", 1, "article"),
    ("/products", "products", 1, "pricing"),
    ("/locations", "locations", 1, "article"),
    ("/investors", "investors", 1, "news"),
)


@dataclass(frozen=True)
class Page:
    host: str
    company: str
    path: str
    surface: str
    kind: str
    file: str
    bytes: int = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}{self.path}"


def hosts(count: int) -> list[tuple[str, str]]:
    """(host, company name) for `count` fictional companies, always the same ones."""
    out = []
    for i in range(count):
        name, kind = NAMES[i % len(NAMES)], KINDS[(i * 5) % len(KINDS)]
        suffix = "" if i < len(NAMES) else f"-{i // len(NAMES)}"
        out.append((f"{name}-{kind}{suffix}.test", f"{name.title()} {kind.title()}{suffix}"))
    return out


def plan(pages: int, host_count: int) -> list[Page]:
    """Which pages exist: the site layout on every host, cut or repeated to `pages`."""
    per_host = math.ceil(pages / host_count)
    out: list[Page] = []
    for host, company in hosts(host_count):
        slots: list[tuple[str, str, str]] = []
        round_ = 0
        while len(slots) < per_host:
            for pattern, surface, count, kind in LAYOUT:
                if round_ and "{slug}" not in pattern:
                    continue  # a second round only adds more posts
                for n in range(count):
                    slug = f"{surface}-{round_}-{n:02d}-{_slug(host, surface, round_, n)}"
                    slots.append((pattern.format(slug=slug), surface, kind))
            round_ += 1
        for path, surface, kind in slots[:per_host]:
            file = "index.html" if path == "/" else path.strip("/") + ".html"
            out.append(Page(host, company, path, surface, kind, file))
    return out[:pages]


def _slug(*parts: object) -> str:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()
    rng = random.Random(digest)
    return "-".join(rng.choice(WORDS) for _ in range(3))


# -- HTML ------------------------------------------------------------------------------------
def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _head(page: Page, rng: random.Random, title: str) -> str:
    ld = {
        "@context": "https://schema.org",
        "@type": "Organization",
        "name": page.company,
        "url": f"http://{page.host}/",
        "sameAs": [f"https://social.invalid/{page.host.split('.')[0]}"],
    }
    style = "".join(
        f".c{i}{{margin:{rng.randint(0, 24)}px;padding:{rng.randint(0, 16)}px;"
        f"color:#{rng.randrange(0xFFFFFF):06x}}}"
        for i in range(60)
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} | {page.company}</title>"
        f'<meta name="description" content="{_sentence(rng, 18)}">'
        f'<link rel="canonical" href="{page.url}">'
        '<link rel="stylesheet" href="/assets/site.css">'
        f'<link rel="alternate" type="application/rss+xml" href="/blog/feed.xml">'
        f"<style>{style}</style>"
        f'<script type="application/ld+json">{json.dumps(ld)}</script>'
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"
        f"gtag('js',new Date());gtag('config','{rng.randrange(10**9)}');</script>"
        "</head>"
    )


def _nav(page: Page, rng: random.Random) -> str:
    top = ["/", "/products", "/pricing", "/careers", "/blog", "/newsroom", "/docs", "/about"]
    items = "".join(
        f'<li class="nav-item"><a href="{href}">{href.strip("/").title() or "Home"}</a>'
        f'<ul class="dropdown">'
        + "".join(
            f'<li><a href="{href.rstrip("/")}/{rng.choice(WORDS)}">{rng.choice(WORDS).title()}</a></li>'
            for _ in range(4)
        )
        + "</ul></li>"
        for href in top
    )
    return (
        f'<header class="site-header"><a class="logo" href="/">{page.company}</a>'
        f'<nav aria-label="main"><ul class="nav">{items}</ul></nav>'
        '<a class="cta" href="/pricing">Start free trial</a></header>'
    )


def _footer(page: Page, rng: random.Random) -> str:
    columns = "".join(
        f'<div class="col"><h4>{rng.choice(WORDS).title()}</h4><ul>'
        + "".join(
            f'<li><a href="/{rng.choice(WORDS)}/{rng.choice(WORDS)}">{rng.choice(WORDS).title()}</a></li>'
            for _ in range(8)
        )
        + "</ul></div>"
        for _ in range(5)
    )
    config = {
        "site": page.host,
        "flags": {w: rng.random() < 0.5 for w in rng.sample(WORDS, 30)},
        "build": hashlib.sha1(page.host.encode()).hexdigest(),
    }
    return (
        f'<footer class="site-footer">{columns}<p class="legal">© 2026 {page.company}. '
        f"{_sentence(rng, 12)}</p></footer>"
        f"<script>window.__SITE__={json.dumps(config)};</script>"
        '<script src="/assets/app.js" defer></script>'
    )


def _item(page: Page, rng: random.Random, n: int) -> str:
    """One entry of the page's list: a job card, a news item, a plan, or a paragraph."""
    if page.kind == "jobs":
        role = rng.choice(ROLES)
        return (
            f'<li class="job-card c{n % 60}"><a href="/careers/job-{n}-{rng.randrange(10**6)}">'
            f'<h3 class="job-title">{role}</h3></a><span class="location">{rng.choice(CITIES)}</span>'
            f'<span class="team">{rng.choice(WORDS).title()}</span>'
            f'<p class="summary">{_sentence(rng, 22)}</p></li>'
        )
    if page.kind == "news":
        return (
            f'<li class="news-item"><a href="{page.path.rstrip("/")}/post-{n}-{rng.randrange(10**6)}">'
            f"<h3>{_sentence(rng, 7)}</h3></a><time>2026-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d}</time><p>{_sentence(rng, 30)}</p></li>"
        )
    if page.kind == "pricing":
        return (
            f'<li class="plan"><h3>{rng.choice(WORDS).title()}</h3>'
            f'<p class="price">${rng.randint(5, 900)}/month</p><ul>'
            + "".join(f"<li>{_sentence(rng, 6)}</li>" for _ in range(5))
            + "</ul></li>"
        )
    return f"<p>{_sentence(rng, rng.randint(30, 70))}</p>"


def render(page: Page, seed: int, version: int = 0) -> str:
    """The page's HTML; `version` > 0 is the same page after a change (see `change`)."""
    rng = random.Random(f"{seed}:{page.host}:{page.path}")
    target = min(MAX_BYTES, max(MIN_BYTES, int(MEDIAN_BYTES * math.exp(rng.gauss(0, SIGMA)))))
    fresh = random.Random(f"{seed}:{page.host}:{page.path}:v{version}")
    title = _sentence(fresh if version else rng, 5)[:-1]
    head, nav = _head(page, rng, title), _nav(page, rng)
    footer = _footer(page, rng)
    tag = "ul" if page.kind in ("jobs", "news", "pricing") else "div"
    intro = f"<h1>{title}</h1><p class='lead'>{_sentence(rng, 40)}</p>"
    # The list is drawn from its own stream so a change only moves its first entries.
    items: list[str] = [_item(page, fresh, -k) for k in range(1, version + 1) if version]
    body_rng = random.Random(f"{seed}:{page.host}:{page.path}:items")
    n = 0
    size = len(head) + len(nav) + len(footer) + len(intro) + 200
    while size < target:
        item = _item(page, body_rng, n)
        items.append(item)
        size += len(item)
        n += 1
    if version and len(items) > version + 1:
        del items[version]  # one entry removed, as a filled job or an archived post
    main = f'<main id="content">{intro}<{tag} class="list">{"".join(items)}</{tag}></main>'
    return f"{head}<body>{nav}{main}{footer}</body></html>"


# -- files -----------------------------------------------------------------------------------
def generate(out: Path, pages: int, host_count: int, seed: int) -> list[Page]:
    sites = out / "sites"
    written: list[Page] = []
    for page in plan(pages, host_count):
        html = render(page, seed).encode()
        path = sites / page.host / page.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(html)
        written.append(Page(**{**asdict(page), "bytes": len(html)}))
    for host, _ in hosts(host_count):
        (sites / host).mkdir(parents=True, exist_ok=True)
        (sites / host / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    manifest = {"seed": seed, "pages": [asdict(p) for p in written]}
    (out / "manifest.json").write_text(json.dumps(manifest))
    with (out / "sensors.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["company", "surface", "url"])
        writer.writerows((p.company, p.surface, p.url) for p in written)
    return written


def load(out: Path) -> tuple[int, list[Page]]:
    data = json.loads((out / "manifest.json").read_text())
    return data["seed"], [Page(**p) for p in data["pages"]]


def change(out: Path, share: float, seed: int, version: int = 1) -> list[Page]:
    """Rewrite `share` of the pages (chosen by `seed`) as their `version`; returns them."""
    page_seed, pages = load(out)
    chosen = random.Random(seed).sample(pages, round(len(pages) * share))
    for page in chosen:
        (out / "sites" / page.host / page.file).write_text(render(page, page_seed, version))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("out", type=Path)
    gen.add_argument("--pages", type=int, default=2000)
    gen.add_argument("--hosts", type=int, default=40)
    gen.add_argument("--seed", type=int, default=16)
    chg = sub.add_parser("change")
    chg.add_argument("out", type=Path)
    chg.add_argument("--share", type=float, required=True)
    chg.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.command == "generate":
        written = generate(args.out, args.pages, args.hosts, args.seed)
        sizes = sorted(p.bytes for p in written)
        print(
            f"{len(written)} pages on {args.hosts} hosts in {args.out}; "
            f"median {sizes[len(sizes) // 2] / 1000:.1f} KB, total {sum(sizes) / 1e6:.1f} MB"
        )
    else:
        changed = change(args.out, args.share, args.seed)
        print(f"{len(changed)} pages rewritten in {args.out}")


if __name__ == "__main__":
    main()
