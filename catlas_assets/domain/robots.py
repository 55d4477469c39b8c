"""robots.txt per RFC 9309, pure: parse once, then answer "may this agent fetch this URL?".

- Groups start with one or more `user-agent` lines; the crawler obeys the group whose
  product token equals its own (case-insensitive), else the `*` group, else nothing
  (everything allowed). Several groups naming the same agent are merged (RFC 9309 2.2.1).
- Within the group the longest matching `allow`/`disallow` path wins; on a tie `allow` wins.
  `*` matches any run of characters and a trailing `$` anchors the end (2.2.3).
- Paths are compared after percent-encoding normalisation: non-ASCII and reserved octets
  percent-encoded, encoded unreserved octets decoded, hex in upper case (2.2.2).
- `/robots.txt` itself is always allowed (2.2.2); only the first `MAX_PARSE_BYTES` are
  parsed (2.5: at least 500 KiB); lines that are not records are ignored, so a binary or
  garbled file yields no rules rather than an error.
- `Crawl-delay` (not in the RFC, widely used) is read per group; `Sitemap:` lines are
  global and exposed for discovery, as are the paths the rules name (`named_paths`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

MAX_PARSE_BYTES = 512 * 1024

# Spellings crawlers commonly accept besides the RFC's keys (RFC 9309 2.2.4 allows leniency).
_KEYS = {
    "user-agent": "user-agent",
    "useragent": "user-agent",
    "user agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow",
    "dissallow": "disallow",
    "dissalow": "disallow",
    "disalow": "disallow",
    "sitemap": "sitemap",
    "site-map": "sitemap",
    "crawl-delay": "crawl-delay",
    "crawldelay": "crawl-delay",
}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters that stand as they are in a path and query (RFC 3986 pchar, "/" and "?"); the
# sub-delimiters include "*" and "$", the pattern syntax of robots.txt rules.
_ALLOWED_RAW = _UNRESERVED | frozenset("!$&'()*+,;=:@/?%")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
# Text made of `_ALLOWED_RAW` alone, "%" left out: it normalises to itself (most paths do).
_AS_IS = re.compile(f"[{re.escape(''.join(sorted(_ALLOWED_RAW - {'%'})))}]*")
_TOKEN = re.compile(r"[A-Za-z_-]+")


@dataclass(frozen=True)
class Rule:
    allow: bool
    pattern: str  # normalised
    line: int  # 1-based line in the file
    raw: str  # the value as written

    def describe(self) -> str:
        return f"{'Allow' if self.allow else 'Disallow'}: {self.raw} (line {self.line})"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: Rule | None  # the rule that decided; None when no rule matched
    group: tuple[str, ...]  # the user-agent values of the group obeyed ("" = none)

    def describe(self) -> str:
        verdict = "allowed" if self.allowed else "disallowed"
        if self.rule is None:
            where = f"group {', '.join(self.group)}" if self.group else "no group for this agent"
            return f"{verdict}: no rule matches ({where})"
        return f"{verdict} by {self.rule.describe()} in group {', '.join(self.group)}"


_AGENTS_REMEMBERED = 16  # agents asked of one robots.txt: catlas's own, `robots check --agent`


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None


@dataclass(frozen=True)
class RobotsTxt:
    """A parsed robots.txt. Build it with `parse`, `allow_all` or `disallow_all`."""

    groups: tuple[_Group, ...] = ()
    sitemaps: tuple[str, ...] = ()
    ignored_lines: int = 0
    everything_disallowed: bool = False  # the RFC's "complete disallow" (unreachable file)
    # The group each agent obeys, found once: every request asks it for the same agent.
    _obeyed: dict[str, tuple[tuple[str, ...], list[Rule], float | None]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def allow_all(cls) -> RobotsTxt:
        return cls()

    @classmethod
    def disallow_all(cls) -> RobotsTxt:
        return cls(everything_disallowed=True)

    @classmethod
    def parse(cls, data: bytes | str) -> RobotsTxt:
        if isinstance(data, bytes):
            text = data[:MAX_PARSE_BYTES].decode("utf-8", errors="replace")
        else:
            text = data[:MAX_PARSE_BYTES]
        text = text.lstrip("\ufeff")
        groups: list[_Group] = []
        sitemaps: list[str] = []
        ignored = 0
        current: _Group | None = None
        in_agents = False  # the previous record was a user-agent line
        for number, raw_line in enumerate(text.splitlines(), start=1):
            line = raw_line.split("#", 1)[0].strip()
            if not line:
                continue
            key, value = _record(line)
            if key is None:
                ignored += 1
                continue
            value = value.strip()
            if key == "sitemap":
                if value:
                    sitemaps.append(value)
                continue  # sitemap records are not part of any group (RFC 9309 2.3.5)
            if key == "user-agent":
                if current is None or not in_agents:
                    current = _Group()
                    groups.append(current)
                current.agents.append(value)
                in_agents = True
                continue
            in_agents = False
            if current is None:
                ignored += 1  # a rule before any user-agent line belongs to no group
                continue
            if key == "crawl-delay":
                delay = _float(value)
                if delay is None:
                    ignored += 1
                else:
                    current.crawl_delay = delay
                continue
            if not value:
                continue  # "Disallow:" with no path allows everything: it is no rule
            current.rules.append(Rule(key == "allow", normalize_pattern(value), number, value))
            directory = _index_directory(value) if key == "allow" else None
            if directory is not None:
                current.rules.append(Rule(True, normalize_pattern(directory), number, value))
        return cls(tuple(groups), tuple(sitemaps), ignored)

    # -- questions -------------------------------------------------------------------------
    def _group_for(self, agent: str) -> tuple[tuple[str, ...], list[Rule], float | None]:
        found = self._obeyed.get(agent)
        if found is None:
            if len(self._obeyed) >= _AGENTS_REMEMBERED:
                self._obeyed.clear()
            found = self._obeyed[agent] = self._find_group(agent)
        return found

    def _find_group(self, agent: str) -> tuple[tuple[str, ...], list[Rule], float | None]:
        token = product_token(agent)
        for wanted in (token, "*"):
            matched = [g for g in self.groups if any(_agent_key(a) == wanted for a in g.agents)]
            if matched:
                rules = [rule for g in matched for rule in g.rules]
                delays = [g.crawl_delay for g in matched if g.crawl_delay is not None]
                agents = tuple(dict.fromkeys(a for g in matched for a in g.agents))
                return agents, rules, (max(delays) if delays else None)
        return (), [], None

    def decide(self, url_or_path: str, agent: str) -> Decision:
        path = match_target(url_or_path)
        if path == "/robots.txt":
            return Decision(True, None, ())
        if self.everything_disallowed:
            return Decision(False, None, ())
        agents, rules, _ = self._group_for(agent)
        best: Rule | None = None
        for rule in rules:
            if not _matches(rule.pattern, path):
                continue
            if (
                best is None
                or len(rule.pattern) > len(best.pattern)
                or (len(rule.pattern) == len(best.pattern) and rule.allow and not best.allow)
            ):
                best = rule
        return Decision(best is None or best.allow, best, agents)

    def allowed(self, url_or_path: str, agent: str) -> bool:
        return self.decide(url_or_path, agent).allowed

    def crawl_delay(self, agent: str) -> float | None:
        return self._group_for(agent)[2]

    def named_paths(self) -> tuple[str, ...]:
        """Every path an `allow`/`disallow` line names, as written, in file order (deduped).

        Whatever group a line is in, it names a real part of the site; whether this crawler
        may fetch it is `allowed`'s question (discovery reads candidates out of these).
        """
        return tuple(dict.fromkeys(rule.raw for group in self.groups for rule in group.rules))


def _record(line: str) -> tuple[str | None, str]:
    """The key and value of a record line; (None, "") when it is no record.

    `Disallow /x` (no colon) is read as Google's parser reads it: a known key, whitespace,
    then the value.
    """
    key, sep, value = line.partition(":")
    known = _KEYS.get(key.strip().lower())
    if sep and known is not None:
        return known, value.strip()
    parts = line.split(None, 1)
    if len(parts) == 2 and ":" not in parts[0]:
        known = _KEYS.get(parts[0].lower())
        if known is not None:
            return known, parts[1].strip()
    return None, ""


def _index_directory(value: str) -> str | None:
    """`Allow: /d/index.html` also allows `/d/` itself (Google: a directory's index page
    is the directory), as the pattern `/d/$`."""
    for suffix in ("/index.html", "/index.htm"):
        if value.endswith(suffix) and "*" not in value:
            return value[: -len(suffix) + 1] + "$"
    return None


def product_token(agent: str) -> str:
    """`catlas/0.1 (+https://…)` -> `catlas`: the token robots.txt groups name."""
    found = _TOKEN.match(agent.strip())
    return found.group(0).lower() if found else agent.strip().lower()


def _agent_key(value: str) -> str:
    value = value.strip()
    return "*" if value == "*" else product_token(value)


def _float(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number >= 0 and number == number and number != float("inf") else None


def _normalize(text: str) -> str:
    """Percent-encoding normalisation of RFC 9309 2.2.2 (both for URLs and for rules)."""
    return text if _AS_IS.fullmatch(text) else _normalize_each(text)


def _normalize_each(text: str) -> str:
    """`_normalize`, character by character."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%" and _PERCENT.match(text, i):
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if char in _ALLOWED_RAW and char != "%":
            out.append(char)  # includes "*" and "$", the pattern syntax of rules
        else:
            out.extend(f"%{octet:02X}" for octet in char.encode("utf-8"))
        i += 1
    return "".join(out)


def normalize_pattern(value: str) -> str:
    return _normalize(value)


def match_target(url_or_path: str) -> str:
    """The normalised path-and-query a URL is matched with ("/" for an empty path)."""
    if "://" in url_or_path:
        parts = urlsplit(url_or_path)
        path = parts.path or "/"
        target = f"{path}?{parts.query}" if parts.query else path
    else:
        target = url_or_path or "/"
    return _normalize(target)


# A pattern as the matcher reads it: literal characters, None for a `*` wildcard, and
# whether a final `$` anchors the end. `%2A` and `%24` stand for a literal `*` and `$`
# (RFC 9309 2.2.3); a `$` anywhere but at the end is a literal too (as Google reads it).
_Compiled = tuple[tuple[str | None, ...], bool]
_COMPILED: dict[str, _Compiled] = {}


def _compile(pattern: str) -> _Compiled:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    items: list[str | None] = []
    i = 0
    while i < len(body):
        if body.startswith(("%2A", "%24"), i):
            items.append("*" if body[i + 1 : i + 3] == "2A" else "$")
            i += 3
            continue
        char = body[i]
        if char == "*":
            if not items or items[-1] is not None:  # "**" is one wildcard
                items.append(None)
        else:
            items.append(char)
        i += 1
    return tuple(items), anchored


def _matches(pattern: str, path: str) -> bool:
    """Does `path` start with a match of `pattern`? Linear in len(pattern) * len(path), with
    no backtracking (the set of reachable path positions is carried along, as Google's
    parser does): `/*a*a*a*a*a*a*a*a*b` answers at once on any path."""
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        compiled = _compile(pattern)
        if len(_COMPILED) < 10_000:  # bounded: patterns come from the outside world
            _COMPILED[pattern] = compiled
    items, anchored = compiled
    if "%2A" in path or "%24" in path:
        path = path.replace("%2A", "*").replace("%24", "$")  # the same octets as the pattern's
    size = len(path)
    # Positions in `path` up to which the pattern read so far can have matched.
    positions = [0]
    for item in items:
        if item is None:
            positions = list(range(positions[0], size + 1))
            continue
        positions = [p + 1 for p in positions if p < size and path[p] == item]
        if not positions:
            return False
    return not anchored or positions[-1] == size
