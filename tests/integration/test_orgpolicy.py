"""Issue 27's first "must show": one Claude Code managed-settings.json (a blocked marketplace, a
forced plugin, a blocked plugin, an MCP deny rule and allowManagedHooksOnly) given to the real
Claude Code 2.1.332 and to plugman, which reach the same verdict on each; and nothing forbidden
reaches Codex or Gemini CLI through plugman (read back by their own CLIs: `codex mcp list`,
`codex debug prompt-input`, Codex's `hooks/list`, `gemini mcp list`, `gemini skills list`).

Claude Code reads its managed settings only from `/etc/claude-code/` on Linux: 2.1.332 has no
override (its `CLAUDE_CODE_MANAGED_SETTINGS_PATH` hook is compiled out of the published build,
`function(){return}`). The test never writes the machine's `/etc`: it runs Claude in a private
mount namespace (`unshare -m`, or as an unprivileged user `unshare -Urm`, a user namespace)
where `/etc` is an overlay whose upper layer holds the test's `claude-code/managed-settings.json`;
plugman reads that same file through `PLUGMAN_CLAUDE_MANAGED_DIR`. Where no namespace can be
made, Claude is not asked: plugman's verdicts are held to Claude's, as recorded here from
2.1.332 (`CLAUDE_REFUSES`, and the verdicts the tests assert), and the agents' read-backs still run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.integration import agents
from tests.integration.agents import agent_env, claude_bin, codex_bin, gemini_bin, gemini_mcp_list
from tests.integration.test_agent_hooks import rpc_hooks
from tests.integration.test_agents_real import grant_trust

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
GOOD_HOOK, PLAIN_HOOK = "ORGPOLICY-FORCED-HOOK-5c1e", "ORGPOLICY-PLAIN-HOOK-5c1e"
POLICY = {
    "blockedMarketplaces": [{"source": "pathPattern", "pathPattern": "evil-market"}],
    "enabledPlugins": {"good@op-market": True, "bad@op-market": False},
    "deniedMcpServers": [{"serverUrl": "http://127.0.0.1:9/evil*"}],
    "allowManagedHooksOnly": True,
}


def _skill(name: str) -> str:
    return f"---\nname: {name}\ndescription: {name} for the policy test\n---\nDo it.\n"


def _hooks(marker: str) -> str:
    command = {"type": "command", "command": f"echo {marker}"}
    return json.dumps({"hooks": {"SessionStart": [{"hooks": [command]}]}})


PLUGINS: dict[str, dict[str, dict[str, str]]] = {
    "op-market": {
        "good": {  # forced on: its hook is a managed one
            "skills/good-skill/SKILL.md": _skill("good-skill"),
            "hooks/hooks.json": _hooks(GOOD_HOOK),
            ".mcp.json": json.dumps(
                {
                    "mcpServers": {
                        "notes": {"command": "python3", "args": ["-c", "pass"]},
                        "evil": {"type": "http", "url": "http://127.0.0.1:9/evil"},  # denied
                    }
                }
            ),
        },
        "bad": {"skills/bad-skill/SKILL.md": _skill("bad-skill")},  # blocked
        "plain": {  # installed by the user: its hook is not managed
            "skills/plain-skill/SKILL.md": _skill("plain-skill"),
            "hooks/hooks.json": _hooks(PLAIN_HOOK),
        },
    },
    "evil-market": {"x": {"skills/x-skill/SKILL.md": _skill("x-skill")}},  # blocked
}


def build(root: Path) -> None:
    for market, plugins in PLUGINS.items():
        for name, files in plugins.items():
            folder = root / market / "plugins" / name
            files = {".claude-plugin/plugin.json": json.dumps({"name": name}), **files}
            for rel, text in files.items():
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_text(text, encoding="utf-8")
        catalog = {
            "name": market,
            "owner": {"name": "tests"},
            "plugins": [{"name": n, "source": f"./plugins/{n}"} for n in plugins],
        }
        (root / market / ".claude-plugin").mkdir(parents=True)
        (root / market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


def _unshare(root: Path) -> list[str] | None:
    """The command that gives this machine's user a private mount namespace where an overlay
    can be mounted on /etc (as root `unshare -m`; otherwise a user namespace), or None."""
    if shutil.which("unshare") is None or os.environ.get("PLUGMAN_TEST_NO_NAMESPACE"):
        return None  # (the variable: run the test as on a machine without namespaces)
    for command in (["unshare", "-m"], ["unshare", "-Urm"]):
        upper, work = root / "probe-upper", root / "probe-work"
        for folder in (upper, work):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        script = f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"
        probe = subprocess.run(
            [*command, "sh", "-c", script], capture_output=True, timeout=30, check=False
        )
        if probe.returncode == 0:
            return command
    return None


class Policy(NamedTuple):
    folder: Path  # the managed folder plugman is pointed at
    claude_sees: bool  # whether the real Claude reads the same files (a namespace was made)


@contextlib.contextmanager
def claude_policy(
    root: Path, settings: dict[str, Any], more: dict[str, str] | None = None
) -> Iterator[Policy]:
    """Claude Code's managed folder holding `settings` (and the `more` files, by relative
    path), as the real Claude sees it when a namespace can be made. Never the machine's /etc."""
    upper, work = root / "etc-upper", root / "etc-work"
    folder = upper / "claude-code"
    folder.mkdir(parents=True)
    work.mkdir()
    files = {"managed-settings.json": json.dumps(settings, indent=2), **(more or {})}
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    unshare = _unshare(root)
    if unshare is None:
        yield Policy(folder, claude_sees=False)
        return
    wrapper = root / "claude-in-namespace"
    mount = f"mount -t overlay overlay -o lowerdir=/etc,upperdir={upper},workdir={work} /etc"
    wrapper.write_text(
        f'#!/bin/sh\nexec {" ".join(unshare)} sh -c \'{mount} && exec "$0" "$@"\' '
        f'{claude_bin()} "$@"\n'
    )
    wrapper.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agents, "claude_bin", lambda *_: wrapper)
        yield Policy(folder, claude_sees=True)


class Run:
    def __init__(self, root: Path, managed: Path) -> None:
        self.home, self.project = root / "home", (root / "project")
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.project = self.project.resolve()
        self.env = agent_env(self.home, BIN) | {
            "PLUGMAN_HOME": str(root / "plugman-home"),
            "PLUGMAN_MANAGED_DIR": str(root / "plugman-managed"),
            "PLUGMAN_CLAUDE_MANAGED_DIR": str(managed),
        }
        grant_trust(self.home, self.project)

    def run(self, cmd: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd, cwd=self.project, env=self.env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=150, check=False,
        )  # fmt: skip

    def claude(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run([str(agents.claude_bin()), *args])

    def plugman(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-m", "plugman", "--project", str(self.project), *args])

    def explain(self, subject: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(
            self.plugman("policy", "explain", subject, "--json").stdout
        )
        return found


def test_claude_code_and_plugman_reach_the_same_verdicts_on_one_managed_settings_json(
    tmp_path: Path,
) -> None:
    for find in (claude_bin, codex_bin, gemini_bin):
        find()
    build(tmp_path)
    evil, market = str(tmp_path / "evil-market"), str(tmp_path / "op-market")
    with claude_policy(tmp_path, POLICY) as managed:
        run = Run(tmp_path, managed.folder)
        if managed.claude_sees:  # Claude Code's verdicts (else: as recorded, asserted below)
            added = run.claude("plugin", "marketplace", "add", evil)
            said = added.stdout + added.stderr
            assert added.returncode != 0 and "blocked by enterprise policy" in said, said
            assert run.claude("plugin", "marketplace", "add", market).returncode == 0
            refused = run.claude("plugin", "install", "bad@op-market")
            said = refused.stdout + refused.stderr
            assert refused.returncode != 0 and "blocked by your organization's policy" in said, said
            assert run.claude("plugin", "install", "plain@op-market").returncode == 0
            events = agents.claude_session_events(run.project, run.env)
            init = next(e for e in events if e.get("subtype") == "init")
            ran = [str(e.get("output")) for e in events if e.get("subtype") == "hook_response"]

        # plugman's, on the same file
        blocked = run.plugman("marketplace", "add", evil)
        assert blocked.returncode == 1 and "blocked by blockedMarketplaces" in blocked.stderr
        assert run.plugman("marketplace", "add", market).returncode == 0
        assert run.plugman("agents", "add", "codex", "gemini", "--scope", "project").returncode == 0
        refused = run.plugman("install", "bad", "--scope", "project")
        assert refused.returncode == 1 and "blocked by managed policy" in refused.stderr
        plain = run.plugman("install", "plain", "--scope", "project")
        assert plain.returncode == 0, plain.stderr
        # installs the forced plugin; the organization forcing it is its consent (Claude Code
        # loads it without asking): no `trust approve`, its hook and server reach the agents
        synced = run.plugman("sync")
        assert synced.returncode == 0, synced.stderr
        assert "wait for approval" not in synced.stdout, synced.stdout
        kept = run.plugman("uninstall", "good", "--scope", "project")
        assert kept.returncode == 1 and "required by managed policy" in kept.stderr
        searched = json.loads(run.plugman("search", "skill", "--json").stdout)
        assert "bad@op-market" not in json.dumps(searched)
        verdicts = {
            subject: (found["verdict"], found["rule"], found["where"])
            for subject in ("bad@op-market", "good@op-market", evil, "plugin:good:evil")
            for found in [run.explain(subject)]
        }

        codex_mcp = run.run([str(codex_bin()), "mcp", "list"]).stdout
        codex_prompt = run.run([str(codex_bin()), "debug", "prompt-input", "hi"]).stdout
        codex_hooks = [h["command"] for h in rpc_hooks(codex_bin(), run.project, run.env)]
        gemini_mcp = gemini_mcp_list(run.home, run.project, run.env)
        gemini_skills = run.run([str(gemini_bin()), "skills", "list"]).stdout

    # Claude: the forced plugin loads (without an install) and its hook runs; the plain
    # plugin's hook does not (allowManagedHooksOnly); the denied server is not there
    if managed.claude_sees:
        plugins = [p["source"] for p in init["plugins"]]
        assert "good@op-market" in plugins and "bad@op-market" not in plugins, plugins
        servers = [s["name"] for s in init["mcp_servers"] if "good" in s["name"]]
        assert servers == ["plugin:good:notes"], servers
        assert any(GOOD_HOOK in out for out in ran), ran
        assert not any(PLAIN_HOOK in out for out in ran), ran
    # plugman says the same, and why
    assert verdicts["bad@op-market"][:2] == ("refused", "enabledPlugins: blocked")
    assert verdicts["bad@op-market"][2].endswith(
        'managed-settings.json: enabledPlugins["bad@op-market"]'
    )
    assert verdicts["good@op-market"][0] == "allowed" and "forced" in verdicts["good@op-market"][1]
    assert verdicts[evil][0] == "refused" and "blockedMarketplaces" in verdicts[evil][1]
    assert verdicts[evil][2].endswith("blockedMarketplaces[0]")
    assert verdicts["plugin:good:evil"][0] == "refused"
    assert verdicts["plugin:good:evil"][2].endswith("deniedMcpServers[0]")
    # and nothing forbidden reaches Codex or Gemini
    assert "plugin_good_notes" in codex_mcp and "evil" not in codex_mcp, codex_mcp
    assert "good-skill" in codex_prompt and "plain-skill" in codex_prompt
    assert "bad-skill" not in codex_prompt and "x-skill" not in codex_prompt
    assert any("good@op-market" in c for c in codex_hooks), codex_hooks  # plugman's launcher
    assert not any("plain@op-market" in c for c in codex_hooks), codex_hooks
    assert "plugin_good_notes" in gemini_mcp and "evil" not in gemini_mcp, gemini_mcp
    assert "good-skill" in gemini_skills and "bad-skill" not in gemini_skills


# Each marketplace matcher kind, asked of the real Claude Code (`claude plugin marketplace add`,
# which checks the policy before any I/O; an allowed source then fails offline: hosts under
# .invalid never resolve) and of plugman, on the same managed-settings.json. Where plugman is
# stricter on purpose, STRICTER says why.
BLOCKED = {
    "blockedMarketplaces": [
        {"source": "github", "repo": "Evil-Org/*"},
        {"source": "github", "repo": "acme/bad"},
        {"source": "git", "url": "https://git.bad.invalid/team/repo.git"},
        {"source": "url", "url": "https://m.bad.invalid/market.json"},
        {"source": "hostPattern", "hostPattern": r"^host\.blocked\.invalid$"},
        {"source": "pathPattern", "pathPattern": "evilpath"},
        {"source": "directory", "path": "{root}/dirmk"},
    ]
}
BLOCK_CASES = (
    "evil-org/x", "EVIL-ORG/Y", "acme/bad", "acme/bad#v1", "https://github.com/acme/bad.git",
    "https://github.com/acme/bad", "https://github.com/evil-org/z.git",
    "git@github.com:acme/bad.git", "https://git.bad.invalid/team/repo.git",
    "https://GIT.bad.invalid/team/repo", "https://git.bad.invalid/team/repo.git#main",
    "https://m.bad.invalid/market.json", "https://M.bad.invalid/market.json",
    "https://host.blocked.invalid/a/b.git", "https://host.blocked.invalid/m.json",
    "https://sub.host.blocked.invalid/a.git", "{root}/evilpath", "{root}/dirmk",
)  # fmt: skip
ALLOWED = {
    "strictKnownMarketplaces": [
        {"source": "github", "repo": "acme/*"},
        {"source": "git", "url": "https://git.ok.invalid/team/repo.git"},
        {"source": "git", "url": "https://git.ok.invalid/team/pinned.git", "ref": "v1"},
        {"source": "url", "url": "https://m.ok.invalid/market.json"},
        {"source": "hostPattern", "hostPattern": r"^h\.ok\.invalid$"},
        {"source": "pathPattern", "pathPattern": "okpath"},
        {"source": "directory", "path": "{root}/dirok"},
    ]
}
ALLOW_CASES = (
    "other/x", "https://git.ok.invalid/team/repo.git", "https://git.ok.invalid/team/repo",
    "https://GIT.ok.invalid/team/repo.git", "https://git.ok.invalid/team/repo.git#main",
    "https://git.ok.invalid/team/pinned.git", "https://git.ok.invalid/team/pinned.git#v1",
    "https://m.ok.invalid/market.json", "https://M.ok.invalid/market.json",
    "https://h.ok.invalid/a.git", "https://x.h.ok.invalid/a.git", "https://h.ok.invalid/m.json",
    "{root}/okpath-a", "{root}/dirok", "{root}/other",
)  # fmt: skip
STRICTER = {  # identities compared canonically (plugman.core.identity), where Claude compares text
    "https://GIT.bad.invalid/team/repo": "the blocked repository without `.git`: the same one",
}
SAME_REPOSITORY = {  # allowed by plugman, where Claude compares the text: one repository
    "https://git.ok.invalid/team/repo": "the allowed repository without `.git`: the same one",
}


CLAUDE_REFUSES = {  # the cases the real Claude Code 2.1.332 refuses (checked when it can be run)
    "block": frozenset(BLOCK_CASES)
    - {"https://GIT.bad.invalid/team/repo", "https://sub.host.blocked.invalid/a.git"},
    "allow": frozenset(ALLOW_CASES)
    - {
        "https://git.ok.invalid/team/repo.git", "https://GIT.ok.invalid/team/repo.git",
        "https://git.ok.invalid/team/pinned.git#v1", "https://m.ok.invalid/market.json",
        "https://M.ok.invalid/market.json", "https://h.ok.invalid/a.git",
        "https://h.ok.invalid/m.json", "{root}/okpath-a", "{root}/dirok",
    },
}  # fmt: skip


def _plugmans_spelling(case: str) -> str:
    """Claude's `owner/repo#ref` is plugman's `owner/repo@ref`."""
    return case.replace("#", "@") if re.fullmatch(r"[\w.-]+/[\w.-]+#\S+", case) else case


@pytest.mark.parametrize(
    ("settings", "cases"), [(BLOCKED, BLOCK_CASES), (ALLOWED, ALLOW_CASES)], ids=["block", "allow"]
)
def test_each_marketplace_matcher_gives_claude_codes_verdict(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    settings: dict[str, Any],
    cases: tuple[str, ...],
) -> None:
    from plugman.config import policy
    from plugman.core.paths import Paths
    from plugman.plugins.catalog import registry

    claude_bin()
    root = tmp_path.resolve()
    for name in ("dirmk", "evilpath", "okpath-a", "dirok", "other"):
        (root / name / ".claude-plugin").mkdir(parents=True)
        catalog = {"name": name, "owner": {"name": "t"}, "plugins": []}
        (root / name / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    written = json.loads(json.dumps(settings).replace("{root}", str(root)))
    recorded = CLAUDE_REFUSES["block" if "blockedMarketplaces" in settings else "allow"]
    with claude_policy(root, written) as managed:
        run = Run(root, managed.folder)
        monkeypatch.setenv("PLUGMAN_CLAUDE_MANAGED_DIR", str(managed.folder))
        rules = policy.managed(Paths.from_env(project=run.project))
        differ, refused = [], []
        for template in cases:
            case = template.replace("{root}", str(root))
            if managed.claude_sees:
                said = run.claude("plugin", "marketplace", "add", case)
                claude_refuses = "is blocked by enterprise policy" in said.stdout + said.stderr
                assert claude_refuses == (template in recorded), (case, "recorded for 2.1.332")
            else:
                claude_refuses = template in recorded
            source = registry.classify(_plugmans_spelling(case), run.project)
            found = policy.marketplace_refusal(source.kind, source.location, source.ref, rules)
            plugman_refuses = found is not None
            refused += [case] if claude_refuses else []
            if case in STRICTER:
                assert plugman_refuses and not claude_refuses, case
            elif case in SAME_REPOSITORY:
                assert claude_refuses and not plugman_refuses, case
            elif plugman_refuses != claude_refuses:
                differ.append((case, "claude", claude_refuses, "plugman", plugman_refuses))
    assert not differ
    assert refused and set(refused) < {c.replace("{root}", str(root)) for c in cases}, refused


def test_drop_ins_and_managed_mcp_json_are_read_as_claude_code_reads_them(tmp_path: Path) -> None:
    claude_bin()
    build(tmp_path)
    block_op = json.dumps(
        {"blockedMarketplaces": [{"source": "pathPattern", "pathPattern": "op-"}]}
    )
    corp = {"corp": {"command": "python3", "args": ["-c", "pass"]}}
    more = {
        "managed-settings.d/10-team.json": json.dumps(
            {
                "enabledPlugins": {"bad@op-market": False},  # a later file wins
                "blockedMarketplaces": [{"source": "pathPattern", "pathPattern": "evil-market"}],
            }
        ),
        "managed-settings.d/.hidden.json": block_op,  # neither reads these two
        "managed-settings.d/notes.txt": block_op,
        "managed-mcp.json": json.dumps({"mcpServers": corp}),
    }
    evil, market = str(tmp_path / "evil-market"), str(tmp_path / "op-market")
    with claude_policy(tmp_path, {"enabledPlugins": {"bad@op-market": True}}, more) as policy:
        run, managed = Run(tmp_path, policy.folder), policy.folder
        if policy.claude_sees:  # Claude Code's verdicts (else: as recorded, asserted below)
            said = run.claude("plugin", "marketplace", "add", evil)
            assert "blocked by enterprise policy" in said.stdout + said.stderr
            assert run.claude("plugin", "marketplace", "add", market).returncode == 0
            said = run.claude("plugin", "install", "bad@op-market")
            assert "blocked by your organization's policy" in said.stdout + said.stderr
            assert run.claude("plugin", "install", "good@op-market").returncode == 0
            claude_servers = run.claude("mcp", "list").stdout
            assert "corp:" in claude_servers and "notes" not in claude_servers, claude_servers

        assert "blocked by blockedMarketplaces" in run.plugman("marketplace", "add", evil).stderr
        assert run.plugman("marketplace", "add", market).returncode == 0
        refused = run.plugman("install", "bad", "--scope", "project")
        assert refused.returncode == 1 and "blocked by managed policy" in refused.stderr
        assert run.plugman("install", "good", "--scope", "project").returncode == 0
        resolved = json.loads(run.plugman("config", "resolve", "--json").stdout)
        late = {"enabledPlugins": {"good@op-market": False}}  # blocked once installed
        (managed / "managed-settings.d" / "20-late.json").write_text(json.dumps(late))
        after = json.loads(run.plugman("config", "resolve", "--json").stdout)
    assert list(resolved["mcpServers"]) == ["corp"]  # exclusive, as Claude's own
    assert "good:good-skill" in resolved["skills"]
    assert "good:good-skill" not in after["skills"]  # no longer delivered to any agent
    assert any(d["code"] == "policy-blocked" for d in after["diagnostics"]), after["diagnostics"]


def test_managed_marketplaces_and_forced_plugins_need_no_declaration(tmp_path: Path) -> None:
    claude_bin()
    build(tmp_path)
    source = {"source": "directory", "path": str(tmp_path / "op-market")}
    settings = {
        "extraKnownMarketplaces": {"op-market": {"source": source}},
        "enabledPlugins": {"good@op-market": True},
    }
    with claude_policy(tmp_path, settings) as managed:
        run = Run(tmp_path, managed.folder)
        if managed.claude_sees:  # Claude Code loads the forced plugin of a managed marketplace
            events = agents.claude_session_events(run.project, run.env)
            init = next(e for e in events if e.get("subtype") == "init")
            assert "good@op-market" in [p["source"] for p in init["plugins"]], init["plugins"]
        synced = run.plugman("sync")
        listed = json.loads(run.plugman("list", "--json").stdout)
        explained = run.explain("good@op-market")
    assert synced.returncode == 0, synced.stderr
    assert "good@op-market" in json.dumps(listed), listed
    assert explained["verdict"] == "allowed" and "forced" in explained["rule"]
