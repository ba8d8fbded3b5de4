"""Agents as data: one renderer reads every `AgentSpec`; a spec is also how an extension can
describe its own agent."""

from __future__ import annotations

from pathlib import Path

from plugman import extensions
from plugman.agents.targets import AgentSpec, Given, Mcp, Place, Refs, Servers, in_home, target

SPECS = tuple(extensions.targets(entry_points=False).values())  # the built-in agents


def test_every_builtin_spec_is_a_registered_target() -> None:
    names = [spec.name for spec in SPECS]
    assert len(names) == len(set(names))
    registered = extensions.targets()
    for spec in SPECS:
        assert registered[spec.name] is spec  # the record is what the seam gives


def test_a_field_the_transport_has_no_place_for_is_never_written() -> None:
    """Reported as left out, and left out in every spelling (an input, a by-name field)."""
    servers: Servers = {
        "local": {"command": "x", "headers": {"API_TOKEN": "${API_TOKEN}"}},
        "remote": {"type": "http", "url": "https://h/mcp", "env": {"GH_TOKEN": "${GH_TOKEN}"}},
    }
    for name in ("vscode", "codex", "copilot-cli"):
        rendered = target(extensions.target(name)).render(Given(servers, {}, {}))
        (part,) = rendered.files["mcp"]
        assert set(part.entries["local"]) <= {"type", "command"}, name
        assert set(part.entries["remote"]) <= {"type", "url"}, name
        assert len(rendered.unsupported) == 2, name


def test_an_extension_can_describe_its_agent_as_a_spec() -> None:
    spec = AgentSpec(
        name="mine",
        label="Mine",
        user=in_home(".mine.json"),
        project=None,
        mcp=Mcp(
            key=("tools",),
            transports=("stdio",),
            renames={"command": "run"},
            refs=Refs(spelling="%VAR%"),
        ),
    )
    mine = target(spec)
    servers: Servers = {"gh": {"command": "gh", "env": {"T": "${GH_TOKEN}"}}, "w": {"url": "u"}}
    rendered = mine.render(Given(servers, {}, {}))
    assert rendered.files["mcp"][0].entries == {"gh": {"run": "gh", "env": {"T": "%GH_TOKEN%"}}}
    assert rendered.unsupported == ["w: transport 'http' is not supported by Mine; skipped"]
    assert mine.scopes == spec.scopes_of() == ("user",)
    place = Place("user", Path("/h"), Path("/p"), {})
    assert mine.files(place)["mcp"].path == Path("/h/.mine.json")


def test_only_claude_code_writes_the_projects_mcp_json() -> None:
    """Claude Code reads the project's `.mcp.json` and loads a linked plugin natively, so a
    server another agent got there would reach Claude twice (seen with Copilot CLI 1.0.102,
    which reads `.github/mcp.json` as well)."""
    place = Place("project", Path("/h"), Path("/p"), {})
    for spec in SPECS:
        if spec.name == "claude-code":
            continue
        for role, loc in spec.locate(place).items():
            assert loc.path != Path("/p/.mcp.json"), (spec.name, role)
    copilot = extensions.target("copilot-cli").locate(place)
    assert copilot["mcp"].path == Path("/p/.github/mcp.json")
