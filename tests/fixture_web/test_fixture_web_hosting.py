"""Host routing, path mapping, methods and connection handling of the fixture web."""

from __future__ import annotations

import pytest

from fixture_web import FixtureWeb, default_root

NORTHWIND = "northwind-robotics.com"


@pytest.mark.parametrize(
    ("host", "marker"),
    [
        ("northwind-robotics.com", "Northwind Robotics"),
        ("bluefin-analytics.io", "Bluefin"),
        ("orbitpay.com", "Orbit"),
    ],
)
def test_each_host_serves_its_own_homepage(client, host, marker) -> None:
    response = client.get(host, "/")
    assert response.status_code == 200
    assert marker in response.text
    assert "<header" in response.text and "<main" in response.text and "<footer" in response.text


def test_host_header_port_and_case_are_ignored(client) -> None:
    plain = client.get(NORTHWIND, "/careers")
    variant = client.get("Northwind-Robotics.COM:8443", "/careers")
    assert variant.status_code == 200
    assert variant.content == plain.content


def test_served_hosts_cover_every_site_folder(web: FixtureWeb) -> None:
    folders = sorted(p.name for p in default_root().iterdir() if p.is_dir())
    assert web.hosts == folders
    assert {
        "bluefin-analytics.io",
        "northwind-robotics.com",
        "orbitpay.com",
        "status.bluefin-analytics.io",
        "www.northwind-robotics.com",
        "faultline.dev",
        "robots-500.faultline.dev",
    } <= set(web.hosts)


def test_unknown_host_is_404_with_small_html(client) -> None:
    response = client.get("unknown.example", "/")
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>404 Not Found</h1>" in response.text
    assert len(response.content) < 1000


def test_unknown_path_is_404(client) -> None:
    response = client.get(NORTHWIND, "/no-such-page")
    assert response.status_code == 404
    assert "etag" not in response.headers


def test_only_get_and_head_are_allowed(client) -> None:
    for method in ("POST", "PUT", "DELETE"):
        response = client.request(method, NORTHWIND, "/careers")
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    ("host", "path", "content_type"),
    [
        (NORTHWIND, "/", "text/html; charset=utf-8"),
        (NORTHWIND, "/robots.txt", "text/plain; charset=utf-8"),
        (NORTHWIND, "/sitemap.xml", "application/xml"),
        ("status.bluefin-analytics.io", "/api/v2/summary.json", "application/json"),
    ],
)
def test_content_type_follows_the_file_extension(client, host, path, content_type) -> None:
    response = client.get(host, path)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    assert int(response.headers["content-length"]) == len(response.content)


def test_paths_map_to_files_with_and_without_suffixes(client) -> None:
    careers = client.get(NORTHWIND, "/careers").content
    assert client.get(NORTHWIND, "/careers/").content == careers
    assert client.get(NORTHWIND, "/careers.html").content == careers
    assert client.get(NORTHWIND, "/careers?utm_source=x").content == careers
    assert client.get(NORTHWIND, "/blog/fleet-3-2").status_code == 200


def test_site_config_and_hidden_files_are_never_served(client) -> None:
    assert client.get("orbitpay.com", "/_site.toml").status_code == 404
    assert client.get("orbitpay.com", "/_site").status_code == 404


def test_www_host_redirects_every_path_to_the_apex(client) -> None:
    response = client.get("www.northwind-robotics.com", "/pricing?plan=pro")
    assert response.status_code == 301
    assert response.headers["location"] == "http://northwind-robotics.com/pricing?plan=pro"
    assert client.get("www.northwind-robotics.com", "/").headers["location"] == (
        "http://northwind-robotics.com/"
    )


def test_robots_and_sitemap_point_at_each_other(client) -> None:
    robots = client.get(NORTHWIND, "/robots.txt").text
    assert "Allow: /" in robots
    assert "Sitemap: http://northwind-robotics.com/sitemap.xml" in robots
    sitemap = client.get(NORTHWIND, "/sitemap.xml").text
    for path in ("/careers", "/pricing", "/blog"):
        assert f"<loc>http://northwind-robotics.com{path}</loc>" in sitemap


def test_keep_alive_reuses_one_connection(client) -> None:
    ports = set()
    for path in ("/", "/careers", "/pricing", "/blog"):
        response = client.get(NORTHWIND, path)
        assert response.status_code == 200
        ports.add(response.extensions["network_stream"].get_extra_info("client_addr")[1])
    assert len(ports) == 1


def test_date_header_is_the_virtual_now(client, web: FixtureWeb) -> None:
    web.set_day(3)
    assert client.get(NORTHWIND, "/").headers["date"] == "Thu, 08 Jan 2026 08:00:00 GMT"


def test_address_and_port_describe_the_listener(web: FixtureWeb) -> None:
    assert web.address == f"127.0.0.1:{web.port}"
    assert web.port > 0
