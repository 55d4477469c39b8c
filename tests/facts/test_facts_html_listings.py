"""Jobs and plans on pages with no job or plan markup of their own: a header-named jobs
table (a hand-built WordPress careers page, mailto links), a Tailwind list of links to ATS
postings with relative dates beside them, and Webflow pricing cards whose price element
carries both billing periods. Each added or removed posting must be a typed delta."""

from __future__ import annotations

from catlas_assets.domain.extract.html import extract_html
from catlas_assets.domain.extract.job_listings import is_posting_url
from catlas_assets.domain.reconcile import reconcile

TABLE = """<html><body><main class="entry-content"><h2>Vacatures</h2>
<table class="wp-block-table"><thead><tr><th>Functie</th><th>Locatie</th><th>Afdeling</th>
<th></th></tr></thead><tbody>
{rows}
</tbody></table></main></body></html>"""
ROW = (
    '<tr><td><a href="mailto:hr@dijkwerf.nl?subject={slug}">{title}</a></td><td>{city}</td>'
    "<td>{dept}</td><td></td></tr>"
)


def _table(*jobs: tuple[str, str, str]) -> str:
    rows = "".join(
        ROW.format(slug=t.lower().replace(" ", "-"), title=t, city=c, dept=d) for t, c, d in jobs
    )
    return TABLE.format(rows=rows)


def _titles(html: str, url: str = "https://dijkwerf.nl/nl/vacatures") -> list[str]:
    return sorted(j["title"] for j in extract_html(html, url, "careers").entities.get("job", []))


def test_a_header_named_jobs_table_gives_one_job_per_row() -> None:
    page = _table(("Dijkwerker", "Lelystad", "Bouw"), ("Planner", "Utrecht", "Kantoor"))
    jobs = extract_html(page, "https://dijkwerf.nl/nl/vacatures", "careers").entities["job"]
    assert sorted((j["title"], j["locations"][0], j["department"]) for j in jobs) == [
        ("Dijkwerker", "Lelystad", "Bouw"),
        ("Planner", "Utrecht", "Kantoor"),
    ]


def test_a_row_added_to_a_jobs_table_is_a_job_added() -> None:
    url = "https://dijkwerf.nl/nl/vacatures"
    before = extract_html(_table(("Dijkwerker", "Lelystad", "Bouw")), url, "careers")
    after = extract_html(
        _table(("Dijkwerker", "Lelystad", "Bouw"), ("Sluiswachter", "Den Oever", "Beheer")),
        url,
        "careers",
    )
    delta = reconcile(before, after)
    assert [j["name"] for j in delta.added["job"]] == ["Sluiswachter"]


def test_a_table_without_a_title_column_is_no_job_listing() -> None:
    page = "<table><thead><tr><th>Plan</th><th>Price</th></tr></thead><tr><td>A</td><td>1</td></tr></table>"
    assert _titles(page) == []


LIST = """<html><body><nav><a href="/careers/jobs/1-about">About us</a></nav>
<main><h1>Open roles</h1><ul role="list" class="divide-y divide-gray-100">{items}</ul>
<a class="btn" href="https://boards.greenhouse.io/tallyforge">View all open roles</a></main></body></html>"""
ITEM = (
    '<li class="flex justify-between py-5"><p class="text-sm font-semibold">'
    '<a href="https://boards.greenhouse.io/tallyforge/jobs/{id}">{title}</a></p>'
    '<p class="text-xs">Engineering</p><p class="text-xs text-gray-400">{ago}</p></li>'
)


def _list(*jobs: tuple[str, str, str]) -> str:
    return LIST.format(items="".join(ITEM.format(id=i, title=t, ago=a) for i, t, a in jobs))


def test_a_list_of_links_to_postings_gives_one_job_per_posting() -> None:
    page = _list(("41", "Data Engineer", "3 days ago"), ("42", "Designer", "2 weeks ago"))
    assert _titles(page, "https://tallyforge.com/careers") == ["Data Engineer", "Designer"]


def test_a_posting_gone_from_the_list_is_a_job_removed_and_relative_dates_are_not_jobs() -> None:
    url = "https://tallyforge.com/careers"
    jobs = [("41", "Data Engineer", "3 days ago"), ("42", "Designer", "2 weeks ago")]
    before = extract_html(_list(*jobs, ("43", "Recruiter", "1 month ago")), url, "careers")
    aged = [(i, t, "4 days ago" if a == "3 days ago" else a) for i, t, a in jobs]
    after = extract_html(_list(*aged), url, "careers")
    delta = reconcile(before, after)
    assert [j["name"] for j in delta.removed["job"]] == ["Recruiter"]
    assert not delta.added.get("job") and not delta.updated.get("job")


CARDS = """<html><body><main><ul id="jobs_list_container">{items}</ul></main></body></html>"""
CARD = (
    '<li class="w-full"><a class="flex flex-col py-6" href="/jobs/{id}-{slug}">'
    '<span class="company-link-style">{title}</span><div class="mt-1 text-md"><span>Sales</span>'
    '<span>&middot;</span><span>Leeds</span></div><div class="text-sm">{ago}</div></a></li>'
)


def test_a_link_that_wraps_a_whole_card_is_titled_by_its_first_part() -> None:
    items = "".join(
        CARD.format(id=i, slug=t.lower().replace(" ", "-"), title=t, ago=a)
        for i, t, a in [("7", "Account Executive", "il y a 3 jours"), ("8", "Buyer", "vor 2 Tagen")]
    )
    assert _titles(CARDS.format(items=items), "https://work.tallyforge.com/") == [
        "Account Executive",
        "Buyer",
    ]


def test_one_link_to_a_posting_is_a_button_not_a_listing() -> None:
    assert _titles(_list(("41", "Data Engineer", "today")), "https://tallyforge.com/careers") == []


def test_posting_urls() -> None:
    assert is_posting_url("https://boards.greenhouse.io/acme/jobs/123")
    assert is_posting_url("https://jobs.lever.co/acme/6f1c-uuid")
    assert is_posting_url("https://careers.acme.com/jobs/846942-data-engineer")
    assert is_posting_url("https://acme.recruitee.com/o/data-engineer")
    assert not is_posting_url("https://boards.greenhouse.io/acme")
    assert not is_posting_url("https://acme.com/careers")
    assert not is_posting_url("https://jobs.lever.co/acme")


WEBFLOW = """<html><body><div class="pricing-grid">
<div class="pricing-card w-node-starter"><h3 class="plan-name">Starter</h3>
<div class="price-text" data-annual="{sa}" data-monthly="{sm}">${sm}<span class="period">/month</span></div>
<ul role="list" class="feature-list w-list-unstyled"><li>3 projects</li></ul>
<a href="/signup" class="button w-button">Get started</a></div>
<div class="pricing-card w-node-scale"><h3 class="plan-name">Scale</h3>
<div class="price-text">Contact sales</div></div></div></body></html>"""


def test_webflow_pricing_cards_with_both_periods_on_the_price_element() -> None:
    url = "https://quarrylane.io/pricing"
    before = extract_html(WEBFLOW.format(sm=12, sa=10), url, "pricing")
    plans = {p["name"]: p for p in before.entities["pricing_plan"]}
    assert set(plans) == {"Starter", "Scale"}
    assert plans["Starter"]["price"] == 12.0 and plans["Starter"]["billing_period"] == "month"
    assert plans["Starter"]["prices"] == {"monthly": 12.0, "annual": 10.0}
    after = extract_html(WEBFLOW.format(sm=15, sa=12), url, "pricing")
    delta = reconcile(before, after)
    changed = delta.updated.get("pricing_plan", []) + delta.added.get("pricing_plan", [])
    assert changed and not delta.removed.get("pricing_plan")


def test_a_plans_features_are_its_list_items_text_in_order_without_empty_ones() -> None:
    # A Webflow card's checklist: an icon-only item (no text) and items whose text is
    # split over inline markup and indentation.
    page = (
        '<html><body><div class="pricing-card"><h3 class="plan-name">Team</h3>'
        '<div class="price-text">$29/month</div><ul class="feature-list">'
        "<li>  Unlimited\n   <strong>projects</strong> </li>"
        '<li><img src="/check.svg" alt=""></li>'
        "<li>SSO</li><li> </li><li>Audit <em>log</em></li></ul></div></body></html>"
    )
    (plan,) = extract_html(page, "https://quarrylane.io/pricing", "pricing").entities[
        "pricing_plan"
    ]
    assert plan["features"] == ["Unlimited projects", "SSO", "Audit log"]


def test_a_second_card_of_one_plan_name_at_another_price_is_another_plan() -> None:
    url = "https://quarrylane.io/pricing"
    card = (
        '<div class="pricing-card"><h3 class="plan-name">Starter</h3>'
        '<div class="price-text" data-monthly="{m}">${m}/month</div></div>'
    )
    before = extract_html(f"<html><body>{card.format(m=12)}</body></html>", url, "pricing")
    twice = f"<html><body>{card.format(m=12)}{card.format(m=12)}</body></html>"
    assert len(extract_html(twice, url, "pricing").canonical().entities["pricing_plan"]) == 1
    other = f"<html><body>{card.format(m=12)}{card.format(m=20)}</body></html>"
    after = extract_html(other, url, "pricing")
    delta = reconcile(before, after)
    assert [p["attributes"]["price"] for p in delta.added["pricing_plan"]] == [20.0]
    assert not delta.updated.get("pricing_plan") and not delta.removed.get("pricing_plan")


COLLECTION = """<html><body><div class="w-dyn-list"><div role="list" class="w-dyn-items">{items}</div>
</div><div class="w-dyn-empty"><div>No items found.</div></div></body></html>"""
POST = (
    '<div role="listitem" class="w-dyn-item"><a href="/journal/{slug}" class="post-card w-inline-block">'
    '<div class="post-category">Field</div><h3 class="post-heading">{title}</h3>'
    '<div class="post-date">{date}</div></a></div>'
)


def _collection(*posts: tuple[str, str]) -> str:
    items = "".join(
        POST.format(slug=t.lower().replace(" ", "-"), title=t, date=d) for t, d in posts
    )
    return COLLECTION.format(items=items)


def test_a_webflow_collection_list_gives_one_post_per_item_without_time_elements() -> None:
    url = "https://quarrylane.io/journal"
    before = extract_html(_collection(("Quarry maps", "March 2, 2026")), url, "blog")
    after = extract_html(
        _collection(("Stone grades", "March 9, 2026"), ("Quarry maps", "March 2, 2026")),
        url,
        "blog",
    )
    assert [n["title"] for n in before.entities["news"]] == ["Quarry maps"]
    delta = reconcile(before, after)
    assert [n["name"] for n in delta.added["news"]] == ["Stone grades"]


def test_job_rows_named_by_class_or_by_their_posting_id() -> None:
    page = (
        '<div class="jobs"><div class="job-row"><span class="job-title">Welder</span>'
        '<span class="job-loc">Leeds</span><span class="job-dept">Works</span></div>'
        '<div data-job="77"><span class="job-title">Planner</span>'
        '<span class="job-loc">York</span></div></div>'
    )
    jobs = extract_html(page, "https://tallyforge.com/careers", "careers").entities["job"]
    assert sorted((j["title"], j["locations"][0]) for j in jobs) == [
        ("Planner", "York"),
        ("Welder", "Leeds"),
    ]
    assert {j["title"]: j["team"] for j in jobs}["Welder"] == "Works"


def test_a_new_card_of_one_plan_name_above_the_old_one_is_the_new_plan() -> None:
    url = "https://quarrylane.io/pricing"
    card = (
        '<div class="pricing-plan"><h3>Team</h3>'
        '<p class="price" data-monthly="{m}">${m}<span class="period">/month</span></p></div>'
    )
    before = extract_html(f"<html><body>{card.format(m=19)}</body></html>", url, "pricing")
    above = f"<html><body>{card.format(m=35)}{card.format(m=19)}</body></html>"
    delta = reconcile(before, extract_html(above, url, "pricing"))
    assert [p["attributes"]["price"] for p in delta.added["pricing_plan"]] == [35.0]
    assert not delta.updated.get("pricing_plan")
    assert not [e for e in delta.events if e["event"] == "superseded"]
    assert sorted(i["key"] for i in delta.current.entities["pricing_plan"]) == ["team", "team#2"]
