"""`_site.toml` routes: day windows, statuses, redirects, headers, delays, and bad configs."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from fixture_web import FixtureWeb, SiteError, load_site

HOST = "example.test"
PAGE = "<html><body><h1>Plans</h1></body></html>\n"


def test_status_route_applies_only_inside_its_window(make_web) -> None:
    client = make_web(
        {
            f"{HOST}/plans.html": PAGE,
            f"{HOST}/_site.toml": '[[route]]\npath = "/plans"\nfrom_day = 2\nuntil_day = 4\n'
            "status = 410\n",
        }
    )
    assert [client.on_day(day, HOST, "/plans").status_code for day in range(6)] == [
        200,
        200,
        410,
        410,
        200,
        200,
    ]
    gone = client.on_day(3, HOST, "/plans")
    assert "<h1>410 Gone</h1>" in gone.text
    assert client.on_day(4, HOST, "/plans").text == PAGE


def test_redirect_route_keeps_the_path_and_query(make_web) -> None:
    client = make_web(
        {
            f"{HOST}/_site.toml": '[[route]]\npath = "/old/*"\nstatus = 308\n'
            'redirect = "https://new.test{path}"\n'
        }
    )
    response = client.get(HOST, "/old/a/b?x=1")
    assert response.status_code == 308
    assert response.headers["location"] == "https://new.test/old/a/b?x=1"
    assert client.get(HOST, "/other").status_code == 404


def test_status_route_with_custom_headers_and_body(make_web) -> None:
    client = make_web(
        {
            f"{HOST}/_site.toml": '[[route]]\npath = "/busy"\nstatus = 503\n'
            'headers = { "Retry-After" = "120", "Content-Type" = "text/plain; charset=utf-8" }\n'
            'body = "come back later"\n'
        }
    )
    response = client.get(HOST, "/busy")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "120"
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == "come back later"


def test_first_matching_route_wins_over_files(make_web) -> None:
    client = make_web(
        {
            f"{HOST}/plans.html": PAGE,
            f"{HOST}/_site.toml": '[[route]]\npath = "/plans"\nstatus = 500\n\n'
            '[[route]]\npath = "/plans"\nstatus = 404\n',
        }
    )
    assert client.get(HOST, "/plans").status_code == 500


def test_delay_route_slows_one_page_without_blocking_others(make_web) -> None:
    client = make_web(
        {
            f"{HOST}/slow.html": PAGE,
            f"{HOST}/fast.html": PAGE,
            f"{HOST}/_site.toml": '[[route]]\npath = "/slow"\ndelay_ms = 600\n'
            'headers = { "X-Fixture" = "slow" }\n',
        }
    )
    slow_result: dict[str, Any] = {}

    def fetch_slow() -> None:
        # Its own connection, so the client's connection stays free for the fast request.
        started = time.monotonic()
        response = httpx.get(f"http://{client.web.address}/slow", headers={"Host": HOST})
        done = time.monotonic()
        slow_result.update(response=response, elapsed=done - started, done=done)

    thread = threading.Thread(target=fetch_slow)
    thread.start()
    time.sleep(0.1)
    fast = client.get(HOST, "/fast")
    fast_done = time.monotonic()
    thread.join()

    # The fast page was answered while the slow one was still waiting.
    assert fast.status_code == 200 and fast_done < slow_result["done"]
    slow = slow_result["response"]
    assert slow_result["elapsed"] >= 0.6
    # A delay-only route modifies the file's answer: same body and validators, extra header.
    assert slow.status_code == 200 and slow.text == PAGE
    assert slow.headers["x-fixture"] == "slow" and "etag" in slow.headers


def test_only_from_day_files_do_not_exist_before_their_day(make_web) -> None:
    client = make_web({f"{HOST}/launch.d04.html": PAGE, f"{HOST}/index.html": "home\n"})
    assert client.on_day(3, HOST, "/launch").status_code == 404
    assert client.on_day(4, HOST, "/launch").status_code == 200
    assert client.get(HOST, "/").text == "home\n"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"_site.toml": '[[route]]\npath = "/x"\nstatuss = 404\n'}, "unknown key"),
        ({"_site.toml": '[[route]]\npath = "/x"\nredirect = "/y"\n'}, "redirect needs"),
        (
            {"_site.toml": '[[route]]\npath = "/x"\nstatus = 404\nfrom_day = 3\nuntil_day = 3\n'},
            "until_day",
        ),
        ({"_site.toml": '[[route]]\npath = "x"\nstatus = 404\n'}, "starting with '/'"),
        ({"_site.toml": "[route]\npath = 1\n"}, "array of tables"),
        ({"_site.toml": "routes = []\n"}, "unknown table"),
        ({"careers.d5.html": "x"}, "2 digits"),
        ({"careers.html": "a", "careers.d00.html": "b"}, "second version"),
    ],
)
def test_a_broken_site_folder_fails_loudly(tmp_path, files, message) -> None:
    for name, text in files.items():
        path = tmp_path / HOST / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    with pytest.raises(SiteError, match=message):
        FixtureWeb(tmp_path)


def test_site_resolve_is_a_pure_lookup_by_path_query_and_day(tmp_path) -> None:
    folder = tmp_path / HOST
    folder.mkdir()
    (folder / "plans.html").write_text(PAGE)
    (folder / "plans.d03.html").write_text(PAGE + "<!-- v2 -->\n")
    (folder / "_site.toml").write_text(
        '[[route]]\npath = "/plans?preview=1"\nstatus = 302\nredirect = "/plans"\n'
    )
    site = load_site(folder)
    assert site.resolve("/plans", "", 2).body == PAGE.encode()
    day3 = site.resolve("/plans/", "", 3)
    assert day3.status == 200 and day3.body.endswith(b"<!-- v2 -->\n")
    assert day3.headers["Last-Modified"] == "Thu, 08 Jan 2026 00:00:00 GMT"
    assert site.resolve("/plans", "preview=1", 0).headers["Location"] == "/plans"
    assert site.resolve("/missing", "", 0).status == 404
