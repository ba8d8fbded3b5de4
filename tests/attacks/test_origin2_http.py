"""A credential's origin, compared canonically (issue 33: secrets go to their origin only).

core.http_auth.origin reads a URL as the URL standard does (core.identity.web_url: case, a
trailing dot, IPv4 numbers, the default port) and refuses any URL that urllib, which connects,
reads as another host: where a marketplace's headers helper's credentials may go is compared
on that. End to end: a real https site on a loopback address gets the helper's header for a
download from its own origin however it is spelled, and another origin gets none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plugman.core import http_auth
from plugman.core.download import download
from plugman.core.errors import FetchError

SAME = [
    ("http://127.0.0.1:5000/m.json", "http://2130706433:5000/a.zip"),
    ("http://127.0.0.1:5000/m.json", "http://0x7f.1:5000/a.zip"),
    ("https://plugins.example.com/m.json", "HTTPS://Plugins.Example.COM.:443/a.zip"),
]
OTHER = [
    ("https://plugins.example.com/m.json", "http://plugins.example.com/a.zip"),
    ("https://plugins.example.com/m.json", "https://plugins.example.com:8443/a.zip"),
    ("http://127.0.0.1:5000/m.json", "http://127.0.0.1:5000\\@127.0.0.2:5000/a.zip"),
    ("http://127.0.0.1:5000/m.json", "http://127.0.0.1:bad/a.zip"),
]


@pytest.mark.parametrize(("market", "url"), SAME)
def test_one_origin_however_spelled(market: str, url: str) -> None:
    """Paired: the spellings of one origin are one origin (the helper's credentials follow)."""
    assert http_auth.origin(market) == http_auth.origin(url)


@pytest.mark.parametrize(("market", "url"), OTHER)
def test_another_origin_is_another(market: str, url: str) -> None:
    """Attack: a URL naming another scheme, port, or a host urllib reads differently from the
    URL standard (`a\\@b`: the standard's host is `a`, urllib connects to `b`) is not the
    marketplace's origin: its credentials do not go there."""
    assert http_auth.origin(market) != http_auth.origin(url)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from tests.integration import http_fixture
    from tests.integration.test_private_sources import PRIVATE, certificate

    tls = certificate(tmp_path, monkeypatch)
    with http_fixture.serving(PRIVATE, tls) as found:
        found.put("/a.zip", b"archive", "application/zip")
        yield found


def test_the_helper_header_reaches_its_own_origin_spelled_otherwise(site, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Paired: a download from the marketplace's origin (spelled with another case and its
    default form) carries the helper's header."""
    helper = """printf '{"Authorization": "Bearer team-token"}'"""
    url = site.base.replace("https://", "HTTPS://") + "/a.zip"
    with http_auth.inherit(site.base + "/marketplace.json", helper, "team"):
        download(url, tmp_path / "a.zip")
    assert site.authorizations == ["Bearer team-token"]


def test_the_helper_header_does_not_reach_another_origin(site, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Attack: the marketplace's catalog points a plugin at another origin (another port of
    the same host): the download gets no credentials."""
    helper = """printf '{"Authorization": "Bearer team-token"}'"""
    other = site.base.rsplit(":", 1)[0] + ":1"
    with http_auth.inherit(other + "/marketplace.json", helper, "team"):
        download(site.base + "/a.zip", tmp_path / "a.zip")
    assert site.authorizations == [None]
    with pytest.raises(FetchError), http_auth.inherit(site.base + "/m.json", helper, "team"):
        download(site.base + "\\@127.0.0.3:1/a.zip", tmp_path / "b.zip")
    assert site.authorizations == [None]
