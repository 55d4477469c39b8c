"""The webhook notifier: posts one Slack-compatible JSON message per change or run verdict.

Off unless `CATLAS_NOTIFY_WEBHOOK_URL` is set. Each request carries the change id as an
`Idempotency-Key` header, so a receiver can drop the rare duplicate of a delivery whose
acknowledgement was lost; catlas itself marks a change delivered right after a 2xx.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from catlas_assets.domain.masking import masked


@dataclass(frozen=True)
class Delivery:
    ok: bool
    detail: str = ""


def slack_message(
    change: dict[str, Any], company: str, *, page_url: str = "", diff_url: str = ""
) -> dict[str, Any]:
    """The message of one change: headline, summary, the page's URL and a link to its diff."""
    headline = f"[{change['kind']}] {company} · {change['surface']}"
    text = f"{headline}: {change['summary']}"
    links = [f"<{page_url}|page>" if page_url else "", f"<{diff_url}|diff>" if diff_url else ""]
    link_line = " · ".join(link for link in links if link)
    if page_url:
        text += f" {page_url}"
    if diff_url:
        text += f" (diff: {diff_url})"
    body = f"*{headline}*\n{change['summary']}" + (f"\n{link_line}" if link_line else "")
    return {
        "text": text,
        "blocks": [
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": body},
            },
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"change {change['change_id']} · significance "
                        f"{change['significance']:.2f} · {change['detected_at']:%Y-%m-%d %H:%M}Z",
                    }
                ],
            },
        ],
    }


def run_start_message(title: str, run_id: str) -> dict[str, Any]:
    """A site crawl's start message: operators see a run begin, not only end."""
    return {
        "text": f"[started] {title}: run {run_id}",
        "blocks": [
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": f"*[started] {title}*\nrun {run_id}"},
            }
        ],
    }


def run_message(title: str, summary_line: str, *, failed: bool) -> dict[str, Any]:
    """A finished run's verdict (a site crawl's complete or fail message)."""
    headline = f"[{'failed' if failed else 'done'}] {title}"
    return {
        "text": f"{headline}: {summary_line}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*\n{summary_line}"}}
        ],
    }


class WebhookNotifier:
    def __init__(self, url: str, *, timeout_s: float = 10.0, user_agent: str = "catlas") -> None:
        self.url = url
        self._client = httpx.Client(timeout=timeout_s, headers={"User-Agent": user_agent})

    def send(self, key: str, message: dict[str, Any]) -> Delivery:
        """Post `message` once; `key` (a change or run id) is its Idempotency-Key."""
        try:
            response = self._client.post(self.url, json=message, headers={"Idempotency-Key": key})
        except httpx.HTTPError as exc:
            # Stored and shown by `catlas changes`: the webhook's token never with it.
            return Delivery(False, masked(f"{type(exc).__name__}: {exc}")[:300])
        if 200 <= response.status_code < 300:
            return Delivery(True)
        return Delivery(False, f"HTTP {response.status_code}")

    def close(self) -> None:
        self._client.close()
