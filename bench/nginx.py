"""nginx as a process of the benchmark: its own prefix and config in a temporary folder,
listening on 127.0.0.1 only, one server that picks the site folder by the Host header.

Static files keep nginx's default validators (ETag `"<mtime>-<size>"` and Last-Modified),
so a conditional GET of an unchanged page is answered 304. `wrk` measures what nginx can
serve on this machine, to show it is not the bottleneck of any figure it is compared with.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

CONFIG = """
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
{user}
events {{ worker_connections 8192; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    types {{ text/html html; text/plain txt; }}
    default_type text/html;
    etag on;
    if_modified_since exact;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port} default_server reuseport backlog=4096;
        server_name _;
        root {sites}/$host;
        location / {{ try_files $uri $uri.html $uri/index.html =404; }}
    }}
}}
"""


@dataclass(frozen=True)
class Nginx:
    port: int
    pid: int
    version: str

    def hosts_file(self, path: Path, hosts: list[str]) -> Path:
        """The catlas host map (CATLAS_HOSTS): every site host to this nginx."""
        path.write_text(f"127.0.0.1:{self.port} {' '.join(hosts)}\n")
        return path


def ensure_installed(binary: str, package: str) -> str:
    """The path of `binary`; installs Debian's `package` when it is missing (as root)."""
    found = shutil.which(binary) or (
        f"/usr/sbin/{binary}" if Path(f"/usr/sbin/{binary}").exists() else None
    )
    if found:
        return found
    install = ["apt-get", "install", "-y", "-q", package]
    if subprocess.run(install, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(install, check=True)
    found = shutil.which(binary) or f"/usr/sbin/{binary}"
    if not Path(found).exists():
        raise SystemExit(f"{binary} is still missing after installing {package}")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(sites: Path, *, workers: int = 1) -> Iterator[Nginx]:
    """Run nginx over `sites` (one folder per host) until the block ends."""
    binary = ensure_installed("nginx", "nginx-light")
    version = subprocess.run(
        [binary, "-v"], capture_output=True, text=True, check=False
    ).stderr.strip()
    prefix = Path(tempfile.mkdtemp(prefix="catlas-bench-nginx-"))
    # nginx started by root serves as an unprivileged user, who must read the pages.
    user = ""
    if os.geteuid() == 0:
        name = next((u for u in ("www-data", "nobody") if _user_exists(u)), None)
        user = f"user {name};" if name else "user root;"
        for folder in [sites, *sites.parents]:
            if folder == Path("/"):
                break
            folder.chmod(folder.stat().st_mode | 0o005)
    port = free_port()
    (prefix / "nginx.conf").write_text(
        CONFIG.format(workers=workers, prefix=prefix, user=user, port=port, sites=sites.resolve())
    )
    proc = subprocess.Popen(
        [binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, proc, prefix)
        yield Nginx(port, proc.pid, version)
    finally:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(prefix, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _wait_listening(port: int, proc: subprocess.Popen[bytes], prefix: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
            raise SystemExit(
                f"nginx exited: {proc.stderr.read().decode() if proc.stderr else ''}{log}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("nginx did not start listening within 10 s")


def etag(path: Path) -> str:
    """nginx's ETag of a static file: hex mtime and hex size."""
    st = path.stat()
    return f'"{int(st.st_mtime):x}-{st.st_size:x}"'


def wrk(
    nginx: Nginx,
    targets: list[tuple[str, str, str | None]],
    *,
    connections: int = 64,
    seconds: int = 5,
    threads: int = 1,
) -> float:
    """Requests per second `wrk` gets from nginx cycling through (host, path, etag)."""
    binary = ensure_installed("wrk", "wrk")
    entries = ",".join(
        "{" + f'"{host}","{path}",' + (f"'{tag}'" if tag else "nil") + "}"
        for host, path, tag in targets
    )
    script = (
        f"local t = {{{entries}}}\nlocal i = 0\n"
        "request = function()\n  i = i % #t + 1\n  local e = t[i]\n"
        '  local h = {Host = e[1]}\n  if e[3] then h["If-None-Match"] = e[3] end\n'
        '  return wrk.format("GET", e[2], h)\nend\n'
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        out = subprocess.run(
            [binary, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", f.name,
             f"http://127.0.0.1:{nginx.port}/"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    finally:
        os.unlink(f.name)
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not match or ("Non-2xx" in out and not any(t[2] for t in targets)):
        raise SystemExit(f"wrk failed:\n{out}")
    return float(match.group(1))
