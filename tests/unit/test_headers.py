"""headersHelper's pure parts: which servers are shared, how headers merge, what output is."""

from __future__ import annotations

import pytest

from plugman.config.merge import Origin, Server
from plugman.core.errors import PlugmanError
from plugman.runtime.transport.headers import merged, parse, shared


def test_shared_servers_are_a_plugins_and_a_projects() -> None:
    def server(name: str, origin: Origin) -> Server:
        return Server(name, {"type": "http", "url": "http://127.0.0.1:1/"}, origin)

    servers = {
        "mine": server("mine", Origin("user", "plugman.toml")),
        "here": server("here", Origin("local", "plugman.toml")),
        "team": server("team", Origin("project", ".mcp.json")),
        "plugin:p:s": server("plugin:p:s", Origin("plugin", ".mcp.json", "p")),
        "boss": server("boss", Origin("managed", "managed-mcp.json")),
    }
    assert shared(servers) == {"team", "plugin:p:s"}


def test_helped_headers_replace_static_ones_whatever_their_case() -> None:
    static = {"Authorization": "Bearer old", "X-Team": "a"}
    assert merged(static, {"authorization": "Bearer new"}) == {
        "X-Team": "a",
        "authorization": "Bearer new",
    }


@pytest.mark.parametrize(
    ("stdout", "says"),
    [
        (b"Authorization: Bearer s3cret", "did not print a JSON object"),
        (b'"s3cret"', "printed JSON str, not an object"),
        (b'{"X-Key": 42, "Y": "s3cret"}', "the value of header X-Key is not a string"),
        (b"\xff\xfe", "did not print a JSON object"),
    ],
)
def test_bad_helper_output_is_refused_without_repeating_it(stdout: bytes, says: str) -> None:
    with pytest.raises(PlugmanError) as caught:
        parse(stdout)
    assert says in str(caught.value)
    assert "s3cret" not in str(caught.value)
