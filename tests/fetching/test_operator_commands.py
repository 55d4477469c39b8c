"""What operators see: `catlas robots check`, `catlas sensors --status`, `catlas review list`.

The `catlas` script runs in a subprocess against the fixture web; the state it reads was
made through the services on the same SQLite file.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from catlas_assets.cli import app as cli
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

CATLAS = Path(sys.executable).with_name("catlas")


@pytest.fixture
def env(tmp_path: Path, web: FixtureWeb) -> dict[str, str]:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    return {
        **os.environ,
        "CATLAS_HOSTS": str(hosts),
        "CATLAS_STATE_DIR": str(tmp_path / "state"),
        "CATLAS_NOW": DEFAULT_NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "COLUMNS": "300",
    }


def catlas(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The installed script, as a shell runs it (exit code, stdout, stderr)."""
    return subprocess.run(
        [str(CATLAS), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(env, monkeypatch, capsys) -> Callable[..., Ran]:
    """The same entry point in this process (fast: no interpreter start per command)."""
    for name, value in env.items():
        if name.startswith("CATLAS_") or name == "COLUMNS":
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(cli.console, "_width", 300)

    def run(*args: str) -> Ran:
        capsys.readouterr()
        try:
            cli.main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def test_robots_check_exits_1_for_a_disallowed_url_as_a_shell_sees_it(env, web) -> None:
    blocked = catlas(env, "robots", "check", "http://faultline.dev/private/secret")
    assert blocked.returncode == 1, blocked.stderr
    assert "disallowed by Disallow: /private/ (line 6) in group catlas" in blocked.stdout
    assert [r.path for r in web.requests] == ["/robots.txt"]  # never the page itself


def test_a_plain_http_robots_check_loads_no_https_machinery(env, web) -> None:
    """A plain-http check is one HTTP/1.1 request: neither httpcore (with anyio, the https
    side) nor aiohttp is imported, no trust store is loaded (tens of ms), and the answer
    is the same."""
    probe = (
        "import ssl, sys\n"
        "loads = []\n"
        "for name in ('load_verify_locations', 'load_default_certs', 'set_default_verify_paths'):\n"
        "    real = getattr(ssl.SSLContext, name)\n"
        "    def counted(self, *a, _real=real, **k):\n"
        "        loads.append(1)\n"
        "        return _real(self, *a, **k)\n"
        "    setattr(ssl.SSLContext, name, counted)\n"
        "from catlas_assets.cli import main\n"
        "try:\n"
        "    main(['robots', 'check', 'http://faultline.dev/private/secret'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "print('trust store loads:', len(loads))\n"
        "print('loaded:', sorted({'aiohttp', 'httpcore', 'anyio'} & set(sys.modules)))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert "disallowed by Disallow: /private/ (line 6) in group catlas" in ran.stdout, ran.stderr
    assert ran.stdout.splitlines()[-3:] == [
        "exit 1",
        "trust store loads: 0",
        "loaded: []",
    ]
    assert [r.path for r in web.requests] == ["/robots.txt"]


def test_robots_check_names_the_deciding_rule(run_cli, web: FixtureWeb) -> None:
    allowed = run_cli("robots", "check", "http://faultline.dev/private/press-kit")
    assert allowed.returncode == 0
    assert "allowed by Allow: /private/press-kit$ (line 7) in group catlas" in allowed.stdout
    assert "sitemap: http://faultline.dev/sitemap.xml" in allowed.stdout
    other = run_cli("robots", "check", "http://faultline.dev/not-for-catlas", "--agent", "xbot")
    assert other.returncode == 0 and "allowed: no rule matches (group *)" in other.stdout
    ours = run_cli("robots", "check", "http://faultline.dev/not-for-catlas")
    assert ours.returncode == 1 and "Disallow: /not-for-catlas (line 8)" in ours.stdout
    assert {r.path for r in web.requests} == {"/robots.txt"}


def test_robots_check_reports_an_unavailable_robots_txt_and_bad_input(run_cli) -> None:
    down = run_cli("robots", "check", "http://robots-500.faultline.dev/")
    assert down.returncode == 1
    assert "postponed: robots.txt unavailable" in down.stdout and "HTTP 500" in down.stdout
    bad = run_cli("robots", "check", "http://faultline.dev:99999/x")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("catlas: error: malformed URL") and bad.stderr.count("\n") == 1


def test_sensors_by_status_and_the_review_queue_show_why(env, run_cli) -> None:
    settings = Settings(
        state_dir=env["CATLAS_STATE_DIR"], hosts=env["CATLAS_HOSTS"], domain_spacing_s=0.0
    )
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(3))
    try:
        company = catalog.add_company(runtime, name="Faultline", website="http://faultline.dev/")
        failing = catalog.add_sensor(
            runtime, company_id=company, surface="status", url="http://faultline.dev/error"
        )
        blocked = catalog.add_sensor(
            runtime, company_id=company, surface="careers", url="http://faultline.dev/private/x"
        )
        for _ in range(5):  # HTTP_5XX turns failing at its fifth failure
            run_one(runtime, failing, force=True)
        run_one(runtime, blocked, force=True)
    finally:
        runtime.close()

    shown = run_cli("sensors", "--status", "failing")
    assert shown.returncode == 0, shown.stderr
    assert "failing (HTTP_5XX)" in shown.stdout
    assert "HTTP 500 from http://faultline.dev/error" in shown.stdout
    assert "private/x" not in shown.stdout
    why = run_cli("sensors", "--status", "blocked")
    assert "Disallow: /private/ (line 6)" in why.stdout

    queue = run_cli("review", "list", "--kind", "blocked_source")
    assert queue.returncode == 0
    assert "blocked_source" in queue.stdout and "1 review item(s)" in queue.stdout
    assert "0 review item(s)" in run_cli("review", "list", "--kind", "sensor_stale").stdout
