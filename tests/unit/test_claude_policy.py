"""Claude Code's managed settings as plugman's policy: its files merged as Claude Code 2.1.332
merges them (managed-settings.json, then managed-settings.d/*.json by name), combined with
plugman's managed-settings.toml the stricter way, failing closed with located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.config import claude_policy, policy
from plugman.config.merge import Hook, Layers, Origin, resolve
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths, claude_managed_default
from plugman.manifest.diagnostics import Sink


@pytest.fixture
def paths(isolated_home: Path) -> Paths:
    found = Paths.from_env(project=isolated_home)
    found.claude_managed_dropins.mkdir(parents=True)
    found.managed_dir.mkdir(parents=True)
    return found


def claude(paths: Paths, name: str, data: object) -> Path:
    file = paths.claude_managed_dir / name
    file.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return file


def test_drop_ins_merge_as_claude_code_merges_them(paths: Paths) -> None:
    base = claude(paths, "managed-settings.json", {
        "deniedMcpServers": [{"serverName": "a"}],
        "allowManagedHooksOnly": True,
        "enabledPlugins": {"p@m": True},
    })  # fmt: skip
    ten = claude(paths, "managed-settings.d/10-team.json", {
        "deniedMcpServers": [{"serverName": "b"}, {"serverName": "a"}],
        "allowManagedHooksOnly": False,
        "enabledPlugins": {"p@m": False},
    })  # fmt: skip
    claude(paths, "managed-settings.d/20-more.json", {"enabledPlugins": {"q@m": True}})
    claude(paths, "managed-settings.d/.hidden.json", {"deniedMcpServers": [{"serverName": "h"}]})
    claude(paths, "managed-settings.d/notes.txt", {"deniedMcpServers": [{"serverName": "t"}]})
    found = claude_policy.load(paths)
    assert [(r.name, r.origin) for r in found.denied] == [  # concatenated, without duplicates
        ("a", f"{base}: deniedMcpServers[0]"),
        ("b", f"{ten}: deniedMcpServers[0]"),
    ]
    assert found.allow_managed_hooks_only is False  # a later scalar wins
    where = f'{ten}: enabledPlugins["p@m"]'
    assert found.plugin_rule("p@m") == policy.PluginRule("p@m", False, where)
    assert found.plugin_rule("q@m") is not None and found.plugin_rule("q@m").enabled  # type: ignore[union-attr]


def test_where_both_speak_the_stricter_wins(paths: Paths) -> None:
    paths.managed_settings.write_text(
        "allowManagedHooksOnly = false\n"
        'allowedMcpServers = [{serverName = "x"}, {serverName = "y"}]\n'
        'deniedMcpServers = [{serverName = "z"}]\n'
        'strictKnownMarketplaces = [{source = "github", repo = "acme/*"}]\n'
    )
    file = claude(paths, "managed-settings.json", {
        "allowManagedHooksOnly": True,
        "allowedMcpServers": [{"serverName": "x"}],
        "deniedMcpServers": [{"serverName": "w"}],
        "strictKnownMarketplaces": [{"source": "github", "repo": "acme/plugins"}],
    })  # fmt: skip
    rules = policy.managed(paths)
    assert rules.allow_managed_hooks_only  # a flag true in either
    assert policy.refusal("x", {"command": "x"}, rules, {}) is None  # allowed by both
    no = policy.server_verdict("y", {"command": "y"}, rules, {})  # allowed by plugman's only
    assert no == policy.Verdict(
        False, "not allowed by allowedMcpServers (no matching serverName)",
        f"{file}: allowedMcpServers",
    )  # fmt: skip
    assert policy.refusal("z", {"command": "z"}, rules, {})  # denied by either
    assert policy.refusal("w", {"command": "w"}, rules, {})
    github = "https://github.com/acme/{}.git"
    assert policy.marketplace_refusal("git", github.format("plugins"), None, rules) is None
    refused = policy.marketplace_verdict("git", github.format("other"), None, rules)
    assert refused is not None and refused.origin == f"{file}: strictKnownMarketplaces"


def test_what_cannot_be_read_fails_closed_with_a_located_error(paths: Paths) -> None:
    claude(paths, "managed-settings.json", '{"deniedMcpServers": [\n  {"serverName": "a"},,\n]}')
    located = r"managed-settings.json: not valid JSON \(line 2, column 23\)"
    with pytest.raises(PlugmanError, match=located) as bad:
        policy.managed(paths)
    assert bad.value.where == str(paths.claude_managed_settings)
    claude(paths, "managed-settings.json", "[]")
    with pytest.raises(PlugmanError, match="must be a JSON object"):
        policy.managed(paths)
    file = claude(paths, "managed-settings.json", {
        "enabledPlugins": {"p@m": "yes"},
        "deniedMcpServers": {"serverName": "a"},
    })  # fmt: skip
    sinks: list[Sink] = []

    def sink_for(path: Path) -> Sink:
        sinks.append(Sink(str(path)))
        return sinks[-1]

    rules = policy.managed(paths, sink_for)
    where = f'{file}: enabledPlugins["p@m"]'
    assert rules.plugin_rule("p@m") == policy.PluginRule("p@m", False, where)
    assert policy.refusal("anything", {"command": "x"}, rules, {})  # a broken deny list: all
    errors = {(d.file, d.path) for s in sinks for d in s.items if d.severity == "error"}
    assert errors == {(str(file), 'enabledPlugins["p@m"]'), (str(file), "deniedMcpServers")}


def test_claude_codes_folder_per_platform(paths: Paths) -> None:
    assert claude_managed_default("linux") == Path("/etc/claude-code")
    assert claude_managed_default("darwin") == Path("/Library/Application Support/ClaudeCode")
    assert str(claude_managed_default("win32")) == "C:\\Program Files\\ClaudeCode"
    env = {"PLUGMAN_HOME": "/h", "PLUGMAN_CLAUDE_MANAGED_DIR": "/elsewhere"}
    assert Paths.from_env(env, Path("/p")).claude_managed_settings == Path(
        "/elsewhere/managed-settings.json"
    )


def test_claudes_managed_mcp_json_is_exclusive_too(paths: Paths) -> None:
    claude(paths, "managed-mcp.json", {"mcpServers": {"corp": {"command": "corp-server"}}})
    result = invoke(["mcp", "add", "mine", "--", "x"])
    assert result.exit_code == 1 and "enterprise MCP configuration is active" in result.output
    listed = invoke(["config", "resolve", "--json"])
    assert list(json.loads(listed.stdout)["mcpServers"]) == ["corp"], listed.stdout


def test_policy_explain_says_which_rule_and_file_decided(paths: Paths) -> None:
    file = claude(paths, "managed-settings.json", {
        "blockedMarketplaces": [{"source": "github", "repo": "Evil/*"}],
        "enabledPlugins": {"bad@m": False},
        "deniedMcpServers": [{"serverName": "leaky"}],
    })  # fmt: skip
    text = invoke(["policy", "explain", "bad@m"])
    assert text.exit_code == 1
    assert text.output.splitlines()[:3] == [
        "plugin bad@m: refused",
        "  rule   enabledPlugins: blocked",
        f'  where  {file}: enabledPlugins["bad@m"]',
    ]
    found = json.loads(invoke(["policy", "explain", "evil/repo", "--json"]).stdout)
    assert (found["kind"], found["verdict"]) == ("marketplace", "refused")
    assert found["where"] == f"{file}: blockedMarketplaces[0]"
    server = json.loads(invoke(["policy", "explain", "leaky", "--json"]).stdout)
    assert (server["kind"], server["verdict"], server["rule"]) == (
        "server", "refused", "denied by deniedMcpServers serverName='leaky'",
    )  # fmt: skip
    fine = invoke(["policy", "explain", "other@m", "--json"])
    assert fine.exit_code == 0 and json.loads(fine.stdout)["verdict"] == "allowed"
    added = invoke(["marketplace", "add", "evil/plugins"])
    assert added.exit_code == 1 and "blocked by blockedMarketplaces" in added.output


def test_allow_managed_hooks_only_keeps_the_hooks_of_forced_plugins() -> None:
    def hook(plugin: str) -> Hook:
        return Hook(
            "Stop", None, {"type": "command", "command": plugin}, Origin("plugin", "f", plugin)
        )

    forced = policy.Policy(
        allow_managed_hooks_only=True,
        plugins=(policy.PluginRule("f@m", True, ""), policy.PluginRule("b@m", False, "")),
    )
    result = resolve(Layers(None, (), (hook("f@m"), hook("u@m"), hook("b@m"))), forced, {})
    assert [h.handler["command"] for h in result.hooks] == ["f@m"]


@pytest.mark.parametrize(
    ("kind", "location"),
    [
        ("git", "git@github.com:acme/bad.git"),  # a github block rule matches SSH too
        ("git", "ssh://git@github.com/ACME/bad"),
        ("url", "https://M.bad.example/market.json"),  # a blocked URL in any case
    ],
)
def test_block_rules_match_what_claude_code_blocks(kind: str, location: str) -> None:
    rules = policy.parse(
        {
            "blockedMarketplaces": [
                {"source": "github", "repo": "acme/bad"},
                {"source": "url", "url": "https://m.bad.example/market.json"},
            ]
        }
    )
    assert policy.marketplace_refusal(kind, location, None, rules)
    allowed = policy.parse({"strictKnownMarketplaces": [{"source": "github", "repo": "acme/bad"}]})
    # one repository, however spelled (plugman.core.identity): its SSH URL is allowed too
    assert policy.marketplace_refusal("git", "git@github.com:acme/bad.git", None, allowed) is None
    assert policy.marketplace_refusal("git", "git@github.com:acme/good.git", None, allowed)


def test_disable_direct_mcp_skills_is_read_and_said_not_deliverable(paths: Paths) -> None:
    """Claude Code 2.1.332's managed `disableDirectMcpSkills`: read from its managed settings
    (no unknown-key warning), stricter wins with plugman's own, and `config resolve` says the
    other agents cannot be given it; outside managed settings it is ignored, as in Claude."""
    file = claude(paths, "managed-settings.json", {"disableDirectMcpSkills": True})
    assert claude_policy.load(paths).disable_direct_mcp_skills
    assert policy.managed(paths).disable_direct_mcp_skills
    result = invoke(["--project", str(paths.project_dir), "config", "resolve", "--json"])
    found = [
        d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "policy-not-delivered"
    ]
    assert [(d["file"], d["path"], d["severity"]) for d in found] == [
        (str(file), "disableDirectMcpSkills", "warning")
    ]
    claude(paths, "managed-settings.json", {"disableDirectMcpSkills": False})
    assert not policy.managed(paths).disable_direct_mcp_skills
    (paths.project_dir / "plugman.toml").write_text("disableDirectMcpSkills = true\n")
    result = invoke(["--project", str(paths.project_dir), "config", "resolve", "--json"])
    said = json.loads(result.stdout)["diagnostics"]
    assert [d["code"] for d in said] == ["ignored-key"], said
