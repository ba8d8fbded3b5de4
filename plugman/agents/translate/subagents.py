"""A Claude-format subagent (`agents/*.md`: front matter `name`, `description`, `tools`, `model`…;
the body is its system prompt) in another agent's form. `agent(path, plugin, fmt)` gives one
`Translated` file or `Refused`. A subagent without a description, or with an empty prompt
where the form needs one, is refused.

Tools: a Claude `tools` list restricts the subagent. A form that can say so says it in its
own names (Gemini, OpenCode, Kiro: the tools it knows, narrower when some have no equivalent;
Copilot reads Claude's names itself); where it cannot, a subagent without a write tool becomes
read-only where the form has that (Codex `sandbox_mode`, Cursor `readonly`), and otherwise the
restriction is a note. A restriction is never widened silently. `model` names a Claude model,
which no other agent knows: always a note (Cursor's `inherit` excepted).

- `codex-toml` (`<name>.toml`): `name`, `description`, `developer_instructions`.
- `copilot-agent-md` (`<name>.agent.md`, Copilot CLI and VS Code): `name`, `description`,
  `tools`.
- `gemini-md` (`<name>.md`): `name` (`^[a-z0-9-_]+$`), `description`, `kind: local`, `tools`.
- `opencode-md` (`<name>.md`, the file name is the name): `description`, `mode: subagent`,
  `tools` (a map of those switched off).
- `cursor-agent-md` (`<name>.md`): `name`, `description`, `model: inherit`, `readonly`.
- `kiro-json` (`<name>.json`): `name`, `description`, `prompt`, `tools`.
- `claude-md`: the file as is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from plugman.agents.translate.common import (
    Refused,
    Result,
    Source,
    Translated,
    left_out,
    markdown,
    plugin_root,
    read,
    safe_name,
    text_field,
    toml_table,
)
from plugman.core.jsonvalue import JSONObject

FORMATS = (
    "codex-toml",
    "copilot-agent-md",
    "gemini-md",
    "opencode-md",
    "cursor-agent-md",
    "kiro-json",
    "claude-md",
)
WRITES = frozenset({"Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "Task"})
GEMINI_TOOLS = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "replace",
    "MultiEdit": "replace",
    "Bash": "run_shell_command",
    "Grep": "grep_search",
    "Glob": "glob",
    "LS": "list_directory",
    "WebFetch": "web_fetch",
    "WebSearch": "google_web_search",
    "TodoWrite": "write_todos",
}
OPENCODE_TOOLS = {
    "Bash": "bash",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "write",
    "Read": "read",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list",
    "WebFetch": "webfetch",
    "TodoWrite": "todowrite",
    "Task": "task",
}
KIRO_TOOLS = {"Read": "fs_read", "Grep": "fs_read", "Glob": "fs_read", "LS": "fs_read"}
KIRO_TOOLS |= {"Write": "fs_write", "Edit": "fs_write", "MultiEdit": "fs_write"}
KIRO_TOOLS |= {"Bash": "execute_bash"}
_GEMINI_NAME = re.compile(r"[^a-z0-9_-]+")


def agent(
    path: Path, plugin: str, fmt: str, *, root: str | None = None, data: bytes | None = None
) -> Result:
    """The subagent file at `path` of plugin `plugin` in form `fmt`."""
    source = read(path, data)
    if isinstance(source, Refused):
        return source
    name = text_field(source.meta, "name") or source.name
    where = f"subagent {name} of plugin {plugin}"
    if fmt == "claude-md":
        return Translated(f"{source.name}.md", source.raw)
    make = _FORMS.get(fmt)
    if make is None:
        return Refused(f"{where}: no subagent form {fmt!r}")
    description = text_field(source.meta, "description")
    if description is None:
        return Refused(f"{where}: it has no description")
    if not safe_name(name):
        return Refused(f"{where}: its name cannot be a file name")
    prompt, notes = plugin_root(source.body, root, "the agent")
    result = make(source._replace(body=prompt), name, description, where)
    if isinstance(result, Translated):
        return result._replace(notes=tuple(notes) + result.notes)
    return result


def tools(meta: JSONObject) -> list[str] | None:
    """Claude's `tools` ("Read, Grep" or a list); None when every tool is allowed."""
    value = meta.get("tools")
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    return None


def _mapped(allowed: list[str], names: dict[str, str], label: str) -> tuple[list[str], list[str]]:
    known = list(dict.fromkeys(names[tool] for tool in allowed if tool in names))
    unknown = [tool for tool in allowed if tool not in names]
    notes = [f"tools {', '.join(unknown)} left out: {label} has no equivalent"] if unknown else []
    return known, notes


def _model(meta: JSONObject, label: str) -> list[str]:
    if "model" in meta:
        return [f"`model` left out: {label} does not know Claude's model {meta['model']!r}"]
    return []


def _read_only(allowed: list[str] | None) -> bool:
    return allowed is not None and not WRITES.intersection(allowed)


def codex_toml(source: Source, name: str, description: str, where: str) -> Result:
    label = "Codex"
    if not source.body.strip():
        return Refused(f"{where}: an empty prompt (Codex needs `developer_instructions`)")
    notes = left_out(source.meta, ("name", "description", "tools", "model"), label) + _model(
        source.meta, label
    )
    fields = {"name": name, "description": description, "developer_instructions": source.body}
    allowed = tools(source.meta)
    if _read_only(allowed):
        fields["sandbox_mode"] = "read-only"
    elif allowed is not None:
        notes.append("`tools` left out: Codex has no per-agent tool list")
    return Translated(f"{name}.toml", toml_table(fields), tuple(notes))


def copilot_agent_md(source: Source, name: str, description: str, where: str) -> Result:
    label = "a Copilot agent"
    notes = left_out(source.meta, ("name", "description", "tools", "model"), label)
    notes += _model(source.meta, label)
    meta: JSONObject = {"name": name, "description": description}
    if (allowed := tools(source.meta)) is not None:
        meta["tools"] = allowed
    return Translated(f"{name}.agent.md", markdown(meta, source.body), tuple(notes))


def gemini_md(source: Source, name: str, description: str, where: str) -> Result:
    label = "a Gemini agent"
    plain = _GEMINI_NAME.sub("-", name.lower()).lstrip("_")
    if not plain.strip("-_"):
        return Refused(f"{where}: no Gemini agent name (`^[a-z0-9-_]+$`) can be made of it")
    notes = [f"named `{plain}`: a Gemini agent name is `[a-z0-9-_]`"] if plain != name else []
    notes += left_out(source.meta, ("name", "description", "tools", "model"), label)
    notes += _model(source.meta, label)
    meta: JSONObject = {"name": plain, "description": description, "kind": "local"}
    if (allowed := tools(source.meta)) is not None:
        meta["tools"], more = _mapped(allowed, GEMINI_TOOLS, "Gemini CLI")
        notes += more
    return Translated(f"{plain}.md", markdown(meta, source.body), tuple(notes))


def opencode_md(source: Source, name: str, description: str, where: str) -> Result:
    label = "an OpenCode agent"
    notes = left_out(source.meta, ("name", "description", "tools", "model"), label)
    notes += _model(source.meta, label)
    meta: JSONObject = {"description": description, "mode": "subagent"}
    if (allowed := tools(source.meta)) is not None:
        known, more = _mapped(allowed, OPENCODE_TOOLS, "OpenCode")
        notes += more
        meta["tools"] = {
            tool: False for tool in dict.fromkeys(OPENCODE_TOOLS.values()) if tool not in known
        }
    return Translated(f"{name}.md", markdown(meta, source.body), tuple(notes))


def cursor_agent_md(source: Source, name: str, description: str, where: str) -> Result:
    label = "a Cursor agent"
    notes = left_out(source.meta, ("name", "description", "tools", "model"), label)
    meta: JSONObject = {"name": name, "description": description}
    if source.meta.get("model") == "inherit":
        meta["model"] = "inherit"
    else:
        notes += _model(source.meta, label)
    allowed = tools(source.meta)
    if _read_only(allowed):
        meta["readonly"] = True
    elif allowed is not None:
        notes.append("`tools` left out: a Cursor agent has no tool list")
    return Translated(f"{name}.md", markdown(meta, source.body), tuple(notes))


def kiro_json(source: Source, name: str, description: str, where: str) -> Result:
    label = "a Kiro agent"
    notes = left_out(source.meta, ("name", "description", "tools", "model"), label)
    notes += _model(source.meta, label)
    doc: JSONObject = {"name": name, "description": description, "prompt": source.body}
    if (allowed := tools(source.meta)) is not None:
        doc["tools"], more = _mapped(allowed, KIRO_TOOLS, "Kiro")
        notes += more
    data = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return Translated(f"{name}.json", data.encode(), tuple(notes))


_FORMS = {
    "codex-toml": codex_toml,
    "copilot-agent-md": copilot_agent_md,
    "gemini-md": gemini_md,
    "opencode-md": opencode_md,
    "cursor-agent-md": cursor_agent_md,
    "kiro-json": kiro_json,
}
