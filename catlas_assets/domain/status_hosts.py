"""Status pages off the company's domain: a vendor's hosted page or a status host (pure).

Many companies keep their status page where their status vendor hosts it
(`acme.statuspage.io`, `acme.instatus.com`, `acme.betteruptime.com`) or on a status host of
another domain they own (`status.acme-cloud.io`), and link it from the footer only. Such a
link names the status surface although it leaves the company's domain: the vendor's domain
says so, or the host's first label and the anchor text ("Status", "System status") agree.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from catlas_assets.domain.classify import TEXT_KEYWORDS, fold
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import Surface

# Registrable domains whose subdomains are hosted status pages.
STATUS_VENDOR_DOMAINS = frozenset(
    {
        "statuspage.io",  # Atlassian Statuspage
        "instatus.com",
        "betteruptime.com",  # Better Stack
        "statuspal.io",
        "freshstatus.io",
        "hund.io",
        "sorryapp.com",
    }
)
STATUS_LABELS = frozenset({"status", "health", "uptime"})
STATUS_HOST_CONFIDENCE = 0.8
_STATUS_TEXT = frozenset(fold(t) for t in TEXT_KEYWORDS[Surface.STATUS])


def is_offsite_status_page(url: str, text: str, *, company_domain: str) -> bool:
    """Whether a link off `company_domain` is the company's status page."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        return False
    domain = registrable_domain(host)
    if domain == company_domain:
        return False  # the company's own hosts are classified like any link (classify.py)
    if domain in STATUS_VENDOR_DOMAINS:
        return host != domain and not host.startswith("www.")  # a customer's page
    label = host.split(".", 1)[0]
    return label in STATUS_LABELS and fold(" ".join(text.split())) in _STATUS_TEXT
