"""What stands between a delivery and the agent loading it (issue 34: "delivered" means the agent
loads it): the agent's folder trust for this project, and, for Claude Code, a plugin of the same
name that Claude installed itself. plugman only reads and reports these; granting an agent's
trust, or retiring its own install, is the user's decision (`plugman import claude` offers the
latter).

Each agent's rule, as its own code has it (what it holds back and the step to trust it are its
`AgentSpec.folder_trust`; reading its trust is a reader here, named there):

- Claude Code 2.1.328: a project's entries (project and local scope) load once the folder's
  trust dialog is accepted: `projects[<folder>].hasTrustDialogAccepted` in `~/.claude.json`
  (`$CLAUDE_CONFIG_DIR/.claude.json`), for the folder or a folder above it, no higher than its
  git root.
- Codex 0.169: `[projects."<folder>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`, for
  the folder's real path, else (no entry for it) its git root's. An untrusted project's
  `.codex/config.toml` (servers), `.codex/hooks.json` and `.codex/agents` are not read; its
  skills load (checked with `codex mcp list` run in the folder).
- Gemini CLI 0.61: with folder trust on (`security.folderTrust.enabled` in the system, else the
  user settings, else the system defaults; on by default), the rules of `trustedFolders.json`
  (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`): the longest rule whose folder (a `TRUST_PARENT` rule's
  parent) holds the real path decides, `DO_NOT_TRUST` or trusted; no rule is untrusted.
  `GEMINI_CLI_TRUST_WORKSPACE` and `GEMINI_RESTRICTED_MODE` overrule the file. In an untrusted
  folder Gemini reads none of the project's settings, skills, commands or subagents and
  disables every MCP server, the user's too (`gemini mcp list`: "Disabled").
- Copilot CLI 1.0.102: a project's MCP files (`.mcp.json`, `.github/mcp.json`) are read only in
  a folder inside one of `trusted_folders` in `$COPILOT_HOME/config.json`, each compared by its
  real path (checked with `copilot mcp list --json`).

Reads are cheap (one small file per agent asked, read once per command) and never fail the
caller: a file that cannot be read counts as no trust given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.state import as_scope
from plugman.runtime.launch import agent_facts

if TYPE_CHECKING:
    from plugman.agents import claude_own

LOADED = "loaded"
WAITS = "waits"
SHADOWED = "shadowed"
DISABLED = "disabled"
EVERY = agent_facts.EVERY

_WORDS = {"mcp": "MCP servers", "agents": "subagents", "plugin": "plugins", "files": "files"}


class Loading(NamedTuple):
    """Whether an agent loads what plugman delivered to it in one scope, and if not, why and
    what the user does about it."""

    state: str  # loaded | waits | shadowed | disabled
    detail: str = ""  # "waits for Codex's folder trust", "shadowed by …"
    step: str = ""  # what to do

    def words(self) -> str:
        return self.state if self.state == LOADED else f"{self.detail} ({self.step})"

    def as_json(self) -> dict[str, str]:
        return {"state": self.state, "detail": self.detail, "step": self.step}


class Gating:
    """The states that gate loading in one project, each read once, when first asked."""

    def __init__(
        self,
        project: Path,
        home: Path,
        env: Mapping[str, str],
        agents: Mapping[str, agent_facts.Agent] | None = None,
    ) -> None:
        """`agents`: the linked agents' facts as the deployment wrote them (`runtime.agent_facts`),
        so `plugman list` imports no agent table; an agent missing there is looked up."""
        self.project, self.home, self.env = project, home, env
        self.agents = dict(agents or {})

    def facts(self, agent: str) -> agent_facts.Agent:
        """The agent's label and folder trust (`AgentSpec.folder_trust`)."""
        found = self.agents.get(agent)
        if found is None:
            # lazy: extensions not loaded by plugman list (<1 ms)
            from plugman import extensions

            try:
                found = extensions.target(agent).facts()
            except UsageError:  # a target no longer registered: no trust to wait for
                found = agent_facts.Agent(agent)
            self.agents[agent] = found
        return found

    def held(self, agent: str, scope: str) -> frozenset[str]:
        """The kinds `agent` loads from `scope` only in a project folder it trusts."""
        trust = self.facts(agent).trust
        return frozenset() if trust is None else trust.held.get(scope, frozenset())

    def loading(self, agent: str, scope: str, kinds: Iterable[str]) -> Loading:
        """Whether `agent` loads the components of `kinds` plugman delivered in `scope`."""
        if self.held(agent, scope).isdisjoint(kinds) or self.trusted(agent):
            return Loading(LOADED)
        label = self.facts(agent).label
        return Loading(WAITS, f"waits for {label}'s folder trust", self.step(agent))

    def trusted(self, agent: str) -> bool:
        """Whether `agent` trusts this project folder (True for an agent with no folder trust)."""
        trust = self.facts(agent).trust
        return True if trust is None else bool(getattr(self, trust.reader))

    def step(self, agent: str) -> str:
        trust = self.facts(agent).trust
        return "" if trust is None else trust.step.format(folder=self.project)

    def note(self, agent: str, scope: str, kinds: Iterable[str]) -> str | None:
        """A deployment's warning when `agent` will not load what it was given in `scope`."""
        found = self.loading(agent, scope, kinds)
        if found.state == LOADED:
            return None
        named = [_WORDS.get(k, k) for k in sorted(self.held(agent, scope) & set(kinds))]
        words = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
        label = self.facts(agent).label
        if scope == "user":
            return (
                f"{label} uses none of your {words} in this folder until you trust it: {found.step}"
            )
        return (
            f"{label} loads none of this project's {words} until you trust the folder: "
            f"{found.step} (plugman never does that for you)"
        )

    @cached_property
    def real(self) -> Path:
        return Path(os.path.realpath(self.project))

    @cached_property
    def git_root(self) -> Path | None:
        return next((f for f in _up_to_git_root(self.real) if (f / ".git").exists()), None)

    @cached_property
    def claude(self) -> bool:
        given = self.env.get("CLAUDE_CONFIG_DIR")  # as claude_plugin.state_file
        state = Path(given) / ".claude.json" if given else self.home / ".claude.json"
        projects = _json(state).get("projects")
        if not isinstance(projects, dict):
            return False
        for start in dict.fromkeys((_absolute(self.project), self.real)):
            for folder in _up_to_git_root(start):
                entry = projects.get(str(folder))
                if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
                    return True
        return False

    @cached_property
    def codex(self) -> bool:
        codex_home = Path(self.env.get("CODEX_HOME") or self.home / ".codex")  # as targets.codex
        config = _toml(codex_home / "config.toml")
        projects = config.get("projects")
        if not isinstance(projects, dict):
            return False
        for folder in (self.real, self.git_root):
            entry = projects.get(str(folder)) if folder is not None else None
            if isinstance(entry, dict) and "trust_level" in entry:
                return bool(entry["trust_level"] == "trusted")
        return False

    @cached_property
    def gemini(self) -> bool:
        told = self.env.get("GEMINI_CLI_TRUST_WORKSPACE")
        if self.env.get("GEMINI_RESTRICTED_MODE") == "true" or told == "false":
            return False
        if told == "true" or not self._gemini_trust_on():
            return True
        given = self.env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        rules = _json(Path(given) if given else self._gemini_dir() / "trustedFolders.json")
        return gemini_rule(rules, self.real) is True

    @cached_property
    def copilot(self) -> bool:
        config = Path(self.env.get("COPILOT_HOME") or self.home / ".copilot") / "config.json"
        folders = _json(config).get("trusted_folders")
        for given in folders if isinstance(folders, list) else []:
            folder = Path(os.path.realpath(given)) if isinstance(given, str) else None
            if folder is not None and (folder == self.real or folder in self.real.parents):
                return True
        return False

    def _gemini_dir(self) -> Path:
        return Path(self.env.get("GEMINI_CLI_HOME") or self.home) / ".gemini"

    def _gemini_trust_on(self) -> bool:
        system = Path(self.env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or _GEMINI_SYSTEM)
        defaults = self.env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        for file in (
            system,
            self._gemini_dir() / "settings.json",
            Path(defaults) if defaults else system.parent / "system-defaults.json",
        ):
            security = _json(file).get("security")
            trust = security.get("folderTrust") if isinstance(security, dict) else None
            enabled = trust.get("enabled") if isinstance(trust, dict) else None
            if isinstance(enabled, bool):
                return enabled
        return True

    def turned_off(self, claude_id: str) -> Loading | None:
        """A plugin plugman gives Claude Code that the user turned off in Claude's settings
        (`enabledPlugins[<id>] = false`; the local, then project, then user file decides)."""
        for file in self._claude_settings:
            enabled = _json(file).get("enabledPlugins")
            value = enabled.get(claude_id) if isinstance(enabled, dict) else None
            if value is False:
                return Loading(
                    DISABLED,
                    f"turned off in Claude Code ({file}: enabledPlugins)",
                    f"turn it on: claude plugin enable {claude_id}",
                )
            if value is not None:
                return None
        return None

    @cached_property
    def _claude_settings(self) -> tuple[Path, ...]:
        given = self.env.get("CLAUDE_CONFIG_DIR")  # as claude_plugin.config_dir
        config = Path(given) if given else self.home / ".claude"
        folder = self.project / ".claude"
        return folder / "settings.local.json", folder / "settings.json", config / "settings.json"

    def shadowed(self, name: str, scope: str) -> Loading | None:
        """Claude Code's own install that holds `name` against plugman's copy delivered in
        `scope` (`claude_own.taking`): plugman leaves the name to it (`claude_native`)."""
        # lazy: agents.claude_own not loaded by plugman list (<1 ms)
        from plugman.agents import claude_own

        at = as_scope(scope)
        own = claude_own.taking(self._claude_installs, name, at) if at else None
        if own is None:
            return None
        return Loading(
            SHADOWED,
            f"shadowed by {own.id} (installed by Claude Code, {own.scope} scope)",
            f"to have plugman's copy: plugman import claude --apply, or {own.uninstall()}",
        )

    @cached_property
    def _claude_installs(self) -> list[claude_own.OwnInstall]:
        # lazy: agents.claude_own not loaded by plugman list (<1 ms)
        from plugman.agents import claude_own

        given = self.env.get("CLAUDE_CONFIG_DIR")  # as claude_plugin.config_dir
        config = Path(given) if given else self.home / ".claude"
        return claude_own.installs(config, self.project)


_GEMINI_SYSTEM = "/etc/gemini-cli/settings.json"


def _absolute(path: str | Path) -> Path:
    """The absolute path, `..` taken out, links left as they are (Node's `path.resolve`)."""
    return Path(os.path.normpath(Path(path).absolute()))


def _up_to_git_root(start: Path) -> list[Path]:
    """`start` and the folders above it, up to the git root holding it (Claude Code's walk)."""
    found = []
    for folder in (start, *start.parents):
        found.append(folder)
        if (folder / ".git").exists():
            break
    return found


def gemini_rule(rules: Mapping[str, Any], real: Path) -> bool | None:
    """Gemini CLI's `isPathTrusted`: the longest rule (by its path as written) whose folder
    holds `real` decides; a `TRUST_PARENT` rule's folder is its path's parent. None: no rule."""
    best, verdict = -1, None
    for written, level in rules.items():
        if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"):
            continue
        folder = _absolute(written)
        folder = folder.parent if level == "TRUST_PARENT" else folder
        folder = Path(os.path.realpath(folder)) if folder.exists() else folder
        length = len(str(_absolute(written)))
        if (folder == real or folder in real.parents) and length > best:
            best, verdict = length, level != "DO_NOT_TRUST"
    return verdict


def _json(file: Path) -> dict[str, Any]:
    """A JSON (or JSONC) object file; {} when missing or unreadable."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        # lazy: manifest.edit.jsonc not loaded by plugman list (+1 ms)
        from plugman.manifest.edit import jsonc

        try:
            data = jsonc.load(text, str(file))
        except PlugmanError:
            return {}
    return data if isinstance(data, dict) else {}


def _toml(file: Path) -> dict[str, Any]:
    import tomllib  # only when Codex's trust is asked

    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
