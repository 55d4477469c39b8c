"""The one way secrets are hidden wherever text leaves catlas: `catlas settings`, error
messages, run details (and so log lines and Dagster run metadata built from them).

A secret is what a URL carries for authentication: the password of its userinfo (a
database password, an S3 secret key as `s3://KEY:SECRET@bucket`), a token-like query
value, or the token path of a chat webhook.
"""

from __future__ import annotations

import re

MASK = "***"

# A scheme is short: bounding it keeps the scan linear on any text (a page's error too).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)([^/@\s:'\"]*):([^/@\s'\"]*)@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:token|key|secret|password|passwd|pwd|signature|sig|auth|api_key|apikey|"
    r"access_token|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s'\"]+"
)
# Slack and Discord put the webhook's secret in its path.
_WEBHOOK_PATH = re.compile(
    r"(?i)(://(?:hooks\.slack\.com/(?:services|workflows|triggers)|"
    r"(?:\w+\.)?discord(?:app)?\.com/api/webhooks)/)[^\s?#'\"]+"
)


def masked(text: str) -> str:
    """`text` with every secret a URL in it carries replaced by `***`."""
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{MASK}@", text)
    text = _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _WEBHOOK_PATH.sub(lambda m: f"{m.group(1)}{MASK}", text)
