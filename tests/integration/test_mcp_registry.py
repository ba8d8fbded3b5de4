"""The MCP Registry: `mcp add NAME --from SERVER_JSON` and `search --registry URL`, against a
real HTTP server on 127.0.0.1 serving server.json files and /v0.1/servers pages recorded in the
published schema's shape (tests/integration/mcp_registry/)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman.cli import invoke
from tests.integration.helpers import fails, run, snapshot
from tests.integration.http_fixture import Site, serving

FIXTURES = Path(__file__).parent / "mcp_registry"
WEATHER = FIXTURES / "weather.server.json"
REMOTE_KEY = "planted-remote-api-key-51e0"
TENANT = "acme-eu"


@pytest.fixture
def site() -> Iterator[Site]:
    with serving() as found:
        found.put("/servers/weather.json", WEATHER.read_bytes())
        yield found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def add(project: Path, name: str, source: str, *pick: str) -> dict[str, object]:
    found: dict[str, object] = run("mcp", "add", name, "--from", source, *pick, project=project)
    return found


def test_npm_pypi_and_remote_become_three_resolved_servers_with_references(
    project: Path, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    npm = add(project, "weather-npm", str(WEATHER), "--package", "1")
    pypi = add(project, "weather-py", site.base + "/servers/weather.json", "--prefer", "pypi")
    remote = add(project, "weather-remote", str(WEATHER), "--remote", "1", "--scope", "user")
    assert npm["entry"] == {
        "type": "stdio",
        "command": "npx",
        "args": [
            "-y",
            "--node-options",
            "--max-old-space-size=512",
            "@acme/weather-mcp@1.4.2",
            "${WEATHER_NPM_CONFIG_PATH}",
            "--units",
            "${WEATHER_NPM_UNITS:-metric}",
        ],
        "env": {
            "GITHUB_TOKEN": "${GITHUB_TOKEN}",
            "WEATHER_LOG_LEVEL": "${WEATHER_LOG_LEVEL:-info}",
        },
    }
    assert npm["needs"] == ["WEATHER_NPM_CONFIG_PATH", "GITHUB_TOKEN"]
    assert "optional --region left out (no default)" in npm["warnings"]  # type: ignore[operator]
    assert pypi["entry"] == {
        "type": "stdio",
        "command": "uvx",
        "args": [
            "acme-weather-mcp==1.4.2",
            "--api-base",
            "https://${WEATHER_PY_REGION:-eu}.api.acme.example",
        ],
        "env": {"API_KEY": "${API_KEY}"},
    }
    assert remote["entry"] == {
        "type": "http",
        "url": "https://${WEATHER_REMOTE_TENANT}.mcp.acme.example/mcp",
        "headers": {"Authorization": "Bearer ${WEATHER_REMOTE_API_KEY}", "X-Client": "plugman"},
    }
    assert str(remote["from"]).startswith("io.github.acme/weather 1.4.2: remote streamable-http")
    # the files hold references only
    written = (project / ".plugman" / "local.toml").read_text()
    assert '"${GITHUB_TOKEN}"' in written and "ghp_planted" not in written
    # with the variables set, all three resolve; the secret values stay masked
    monkeypatch.setenv("WEATHER_NPM_CONFIG_PATH", "/tmp/cache")
    monkeypatch.setenv("WEATHER_REMOTE_API_KEY", REMOTE_KEY)
    monkeypatch.setenv("WEATHER_REMOTE_TENANT", TENANT)
    result = invoke(["--project", str(project), "config", "resolve", "--json"])
    assert result.exit_code == 0, result.output
    assert REMOTE_KEY not in result.output
    resolved = json.loads(result.stdout)
    servers = resolved["mcpServers"]
    assert sorted(servers) == ["weather-npm", "weather-py", "weather-remote"]
    assert servers["weather-remote"]["url"] == f"https://{TENANT}.mcp.acme.example/mcp"
    assert servers["weather-npm"]["args"][4] == "/tmp/cache"
    assert servers["weather-py"]["args"][2] == "https://eu.api.acme.example"
    # an agent's file gets the references themselves
    native = invoke(["--project", str(project), "config", "resolve", "--target", "claude-code"])
    assert "Bearer ${WEATHER_REMOTE_API_KEY}" in native.stdout
    assert REMOTE_KEY not in native.output


def test_an_unset_secret_drops_the_server_and_names_the_variable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(project, "weather-sse", str(WEATHER), "--remote", "2")
    resolved = run("config", "resolve", project=project)
    assert "weather-sse" not in resolved["mcpServers"]
    dropped = [d for d in resolved["diagnostics"] if "'weather-sse'" in d["message"]]
    assert [d["code"] for d in dropped] == ["missing-variable"]
    assert "unset: WEATHER_SSE_X_API_KEY" in dropped[0]["message"]
    monkeypatch.setenv("WEATHER_SSE_X_API_KEY", REMOTE_KEY)
    assert "weather-sse" in run("config", "resolve", project=project)["mcpServers"]


def test_oci_package_runs_in_docker_with_its_variables_passed(project: Path) -> None:
    oci = add(project, "weather-oci", str(WEATHER), "--prefer", "oci", "--scope", "project")
    assert oci["entry"] == {
        "type": "stdio",
        "command": "docker",
        "args": [
            "run",
            "-i",
            "--rm",
            "--network",
            "host",
            "-e",
            "API_KEY",
            "ghcr.io/acme/weather-mcp:1.4.2",
        ],
        "env": {"API_KEY": "${API_KEY}"},
    }
    assert '"API_KEY": "${API_KEY}"' in (project / ".mcp.json").read_text()


def test_picks_that_do_not_exist_are_usage_errors_naming_what_is_offered(project: Path) -> None:
    out = fails("mcp", "add", "w", "--from", str(WEATHER), "--package", "9", project=project)
    assert "io.github.acme/weather has no package 9 (3 offered)" in out
    assert "--package 2: pypi acme-weather-mcp 1.4.2 (stdio)" in out
    out = fails("mcp", "add", "w", "--from", str(WEATHER), "--prefer", "nuget", project=project)
    assert "offers no nuget package" in out
    out = fails("mcp", "add", "w", "--from", str(WEATHER), "--", "npx", "x", project=project)
    assert "--from takes the whole server from its server.json" in out
    out = fails("mcp", "add", "w", "https://x.example/mcp", "--package", "1", project=project)
    assert "choose from a --from server.json" in out


def test_an_invalid_server_json_is_refused_with_located_errors(
    project: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.server.json"
    bad.write_text(
        '{\n  "name": "no-slash",\n  "description": "x",\n  "version": "^1.0",\n'
        '  "packages": [\n    {"registryType": "cargo", "identifier": "x", "version": "1",\n'
        '     "transport": {"type": "stdio"},\n'
        '     "packageArguments": [{"type": "positional"}]}\n  ]\n}\n'
    )
    before = snapshot(project)
    out = fails("mcp", "add", "w", "--from", str(bad), project=project)
    assert f"{bad}:2:3: name: name 'no-slash' is not reverse-DNS" in out
    assert f"{bad}:4:3: version: version '^1.0' is a range" in out
    assert f"{bad}:6:6: packages[0].registryType: registryType 'cargo' must be one of" in out
    assert "packages[0].packageArguments[0]: a positional argument needs 'value'" in out
    assert snapshot(project) == before
    result = invoke(["--project", str(project), "mcp", "add", "w", "--from", str(bad), "--json"])
    assert result.exit_code != 0
    envelope = json.loads(result.stdout)
    assert "not a valid server.json" in envelope["error"]["message"]
    out = fails("mcp", "add", "w", "--from", str(tmp_path / "missing.json"), project=project)
    assert "cannot read server.json" in out


def test_search_registry_follows_the_cursor_and_lists_packages_and_remotes(
    site: Site, project: Path
) -> None:
    pages = [(FIXTURES / f"page{n}.json").read_bytes() for n in (1, 2)]

    def servers(query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        assert query["search"] == ["weather"] and query["version"] == ["latest"]
        return 200, "application/json", pages[1 if "cursor" in query else 0]

    site.routes["/v0.1/servers"] = servers
    found = run("search", "--registry", site.base, "weather", project=project)
    assert [s["name"] for s in found["servers"]] == [
        "io.github.acme/weather",
        "io.github.wxco/weather-lite",
        "com.example/weather-remote",
    ]
    first = found["servers"][0]
    assert first["packages"] == ["npm @acme/weather-mcp@1.4.2", "pypi acme-weather-mcp@1.4.2"]
    assert first["remotes"] == ["streamable-http https://{tenant}.mcp.acme.example/mcp"]
    assert found["servers"][1]["status"] == "deprecated"
    assert any("cursor=io.github.wxco" in r for r in site.requests)
    text = invoke(
        ["--project", str(project), "search", "--registry", site.base, "weather", "--limit", "2"],
    )
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines() == [
        "io.github.acme/weather 1.4.2  Forecasts and alerts from the Acme weather API.",
        "  package npm @acme/weather-mcp@1.4.2",
        "  package pypi acme-weather-mcp@1.4.2",
        "  remote  streamable-http https://{tenant}.mcp.acme.example/mcp",
        "io.github.wxco/weather-lite 0.3.0 [deprecated]  Minimal weather lookups.",
        "  package oci docker.io/wxco/weather-lite:0.3.0",
    ]


def test_search_registry_errors_are_clear(site: Site, project: Path) -> None:
    site.put("/v0.1/servers", b"<html>hello</html>", "text/html")
    out = fails("search", "--registry", site.base, "x", project=project)
    assert "did not answer as an MCP Registry" in out
    out = fails("search", "--registry", "http://example.com", "x", project=project)
    assert "plain http only for 127.0.0.1" in out


def test_a_registry_api_item_url_is_read_as_its_server(site: Site, project: Path) -> None:
    item = {
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
            "name": "io.github.acme/dotnet-tools",
            "description": "NuGet-distributed tools.",
            "version": "0.9.1",
            "packages": [
                {
                    "registryType": "nuget",
                    "identifier": "Acme.Mcp.Tools",
                    "version": "0.9.1",
                    "transport": {"type": "stdio"},
                    "packageArguments": [{"type": "positional", "value": "serve"}],
                }
            ],
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active"}},
    }
    path = "/v0.1/servers/io.github.acme%2Fdotnet-tools/versions/latest"
    url = site.put(path, json.dumps(item).encode())
    found = add(project, "tools", url)
    assert found["entry"] == {
        "type": "stdio",
        "command": "dnx",
        "args": ["Acme.Mcp.Tools@0.9.1", "--yes", "serve"],
    }
