"""The one host resolver: a host map (like curl's --resolve) or DNS plus destination safety.

With ``CATLAS_HOSTS`` set, only the listed hosts resolve and each connects to its mapped
address, URL and Host header unchanged; those destinations are trusted (the fixture web
lives on loopback). Otherwise names resolve through DNS and every answer is checked
before connecting, and the checked address is the one connected to, so a second DNS
answer cannot swap in a private address.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from pathlib import Path

from catlas_assets.domain.failures import forbidden_address, ip_literal
from catlas_assets.errors import ConfigError


@dataclass(frozen=True)
class Destination:
    address: str
    port: int | None  # None: keep the URL's port
    trusted: bool  # listed in the host map: exempt from the private-address block


class ResolutionError(Exception):
    """The name does not resolve (the DNS failure class)."""


class UnsafeDestination(Exception):
    """Every address of the name is refused (the BLOCKED_DESTINATION failure class)."""


class HostMap:
    def __init__(self, entries: dict[str, tuple[str, int]]) -> None:
        self.entries = entries

    @classmethod
    def parse(cls, text: str, source: str = "host map") -> HostMap:
        entries: dict[str, tuple[str, int]] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            target, *hosts = line.split()
            address, sep, port_text = target.rpartition(":")
            # An IPv6 address needs brackets: in `::1 host` the port is missing, not `1`.
            unbracketed_v6 = ":" in address and not (address[0] == "[" and address[-1] == "]")
            if not sep or not address or not port_text.isdigit() or not hosts or unbracketed_v6:
                raise ConfigError(
                    f"{source} line {number}: expected 'ADDR:PORT HOST [HOST ...]', got {raw.strip()!r}"
                )
            port = int(port_text)
            if not 0 < port < 65536:
                raise ConfigError(f"{source} line {number}: port {port} out of range")
            for host in hosts:
                entries[host.lower().rstrip(".")] = (address.strip("[]"), port)
        return cls(entries)

    @classmethod
    def load(cls, path: str) -> HostMap:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError(
                f"CATLAS_HOSTS={path!r}: cannot read the host map ({exc.strerror})"
            ) from None
        return cls.parse(text, source=f"CATLAS_HOSTS {path}")


class Resolver:
    def __init__(self, host_map: HostMap | None = None) -> None:
        self.host_map = host_map

    async def resolve(self, host: str, port: int) -> Destination:
        name = host.lower().rstrip(".").strip("[]")
        if self.host_map is not None:
            mapped = self.host_map.entries.get(name)
            if mapped is not None:
                return Destination(mapped[0], mapped[1], trusted=True)
            if _is_ip(name) and (reason := forbidden_address(name)) is not None:
                # A URL naming a private address directly is refused, not "unknown".
                raise UnsafeDestination(f"{host}: {reason}")
            raise ResolutionError(f"{host} is not in the host map")
        return await self.resolve_by_dns(host, port)

    async def resolve_by_dns(self, host: str, port: int) -> Destination:
        """DNS, then destination safety: the first address that is not refused."""
        name = host.lower().rstrip(".").strip("[]")
        if _is_ip(name) and (reason := forbidden_address(name)) is not None:
            raise UnsafeDestination(f"{host}: {reason}")  # `0177.0.0.1` is 127.0.0.1
        reasons = []
        for address in await self.lookup(name, port):
            reason = forbidden_address(address)
            if reason is None:
                return Destination(address, None, trusted=False)
            reasons.append(reason)
        raise UnsafeDestination(
            f"{host} resolves only to refused addresses: {', '.join(sorted(set(reasons)))}"
        )

    async def lookup(self, name: str, port: int) -> list[str]:
        """The addresses DNS gives for `name` (tests replace this: no real DNS here)."""
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                name, port, type=socket.SOCK_STREAM
            )
        except (socket.gaierror, UnicodeError) as exc:
            detail = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid name"
            raise ResolutionError(f"{name} does not resolve ({detail})") from None
        return [str(info[4][0]) for info in infos]


def _is_ip(name: str) -> bool:
    return ip_literal(name) is not None
