"""A Claude-format command (`commands/*.md`: front matter `description`, `argument-hint`,
`allowed-tools`, `model`; a body using `$ARGUMENTS`, `$1`…, `` !`cmd` ``, `@file`) in another
agent's form. `command(path, plugin, fmt)` gives one `Translated` file or `Refused`.

What each form keeps (everything else is a note, never silent):

- `gemini-toml` (`<name>.toml`): `description` and `prompt`; `$ARGUMENTS` → `{{args}}`,
  `` !`cmd` `` → `!{cmd}` (Gemini runs it, after asking). `$1`… and `@file` stay as text (Gemini
  has no positional arguments, and `@{…}` would inject a file the author did not mark). A body
  that already holds `!{` or `@{` is refused: Gemini would run or inject it.
- `as-skill` (`<name>/SKILL.md`, Codex, Copilot CLI): `name` (the command's, as a skill name)
  and `description` (the command's, else its first line); the body as is. A skill takes no
  arguments: `$ARGUMENTS` and `$1`… stay as text, noted.
- `markdown` (`<name>.md`): the body only (Cursor, Windsurf workflows, Kiro prompts read no
  front matter); `$ARGUMENTS` stays as text (the words after the command follow the prompt).
- `opencode-md` (`<name>.md`): `description`; OpenCode reads `$ARGUMENTS`, `$1`, `` !`cmd` ``,
  `@file` itself.
- `vscode-prompt-md` (`<name>.prompt.md`): `description`, `argument-hint`; `$ARGUMENTS` →
  `${input:args}`.
- `continue-md` (`<name>.md`): `name`, `description`, `invokable: true`; `$ARGUMENTS` →
  `{{{ input }}}`.
- `claude-md`: the file as is.

`${CLAUDE_PLUGIN_ROOT}` becomes `root` (the plugin's installed folder) when given.
"""

from __future__ import annotations

from pathlib import Path

from plugman.agents.translate.common import (
    SHELL,
    Refused,
    Result,
    Source,
    Translated,
    left_out,
    markdown,
    plugin_root,
    positional,
    read,
    safe_name,
    skill_name,
    text_field,
    toml_table,
)

ARGUMENTS = "$ARGUMENTS"
FORMATS = (
    "gemini-toml",
    "as-skill",
    "markdown",
    "opencode-md",
    "vscode-prompt-md",
    "continue-md",
    "claude-md",
)


def command(
    path: Path, plugin: str, fmt: str, *, root: str | None = None, data: bytes | None = None
) -> Result:
    """The command file at `path` of plugin `plugin` in form `fmt`."""
    source = read(path, data)
    if isinstance(source, Refused):
        return source
    where = f"command {source.name} of plugin {plugin}"
    if not safe_name(source.name):
        return Refused(f"{where}: its name cannot be a file name")
    if fmt == "claude-md":
        return Translated(f"{source.name}.md", source.raw)
    make = _FORMS.get(fmt)
    if make is None:
        return Refused(f"{where}: no command form {fmt!r}")
    text, notes = plugin_root(source.body, root, _LABELS[fmt])
    result = make(source._replace(body=text), where)
    if isinstance(result, Translated):
        return result._replace(notes=tuple(notes) + result.notes)
    return result


def gemini_toml(source: Source, where: str) -> Result:
    label = "Gemini CLI"
    for trigger in ("!{", "@{"):
        if trigger in source.body:
            return Refused(f"{where}: its text holds `{trigger}`, which {label} would run")
    notes = left_out(source.meta, ("description",), label + " TOML")
    text = source.body.replace(ARGUMENTS, "{{args}}")
    if "{{args}}" in source.body:
        notes.append("`{{args}}` in the text: Gemini puts the arguments there")
    for match in SHELL.finditer(text):
        inner = match.group(1).replace("{{args}}", "")
        if "{" in inner or "}" in inner:
            return Refused(f"{where}: `{match.group(0)}` cannot be a Gemini `!{{…}}` (braces)")
    if SHELL.search(text):
        text = SHELL.sub(lambda m: "!{" + m.group(1) + "}", text)
        notes.append("`!`cmd`` → `!{cmd}`: Gemini asks before it runs a command")
    notes += positional(text, label)
    fields = {"description": d} if (d := text_field(source.meta, "description")) else {}
    fields["prompt"] = text
    return Translated(f"{source.name}.toml", toml_table(fields), tuple(notes))


def as_skill(source: Source, where: str) -> Result:
    label = "a skill"
    name = skill_name(source.name)
    if not name:
        return Refused(f"{where}: its name has no letter or digit to make a skill name of")
    notes = (
        [f"named `{name}`: a skill name is lowercase `[a-z0-9-]`"] if name != source.name else []
    )
    description = text_field(source.meta, "description")
    if description is None:
        first = next((line for line in source.body.splitlines() if line.strip()), "")
        description = first.strip().lstrip("#").strip()[:1024]
        if not description:
            return Refused(f"{where}: no description and an empty body")
        notes.append("no `description`: its first line is the skill's description")
    notes += left_out(source.meta, ("description",), label)
    if ARGUMENTS in source.body:
        notes.append(f"`{ARGUMENTS}` kept as text: {label} takes no arguments")
    notes += positional(source.body, label)
    meta = {"name": name, "description": description[:1024]}
    return Translated(f"{name}/SKILL.md", markdown(meta, source.body), tuple(notes))


def plain_markdown(source: Source, where: str) -> Result:
    label = "a plain Markdown command"
    notes = left_out(source.meta, (), label)
    if ARGUMENTS in source.body:
        notes.append(f"`{ARGUMENTS}` kept as text: the words after the command follow the prompt")
    notes += positional(source.body, label)
    if SHELL.search(source.body):
        notes.append("`!`cmd`` kept as text: nothing runs it")
    return Translated(f"{source.name}.md", source.body.encode(), tuple(notes))


def opencode_md(source: Source, where: str) -> Result:
    notes = left_out(source.meta, ("description",), "an OpenCode command")
    meta = {"description": d} if (d := text_field(source.meta, "description")) else {}
    return Translated(f"{source.name}.md", markdown(meta, source.body), tuple(notes))


def vscode_prompt_md(source: Source, where: str) -> Result:
    label = "a VS Code prompt file"
    kept = ("description", "argument-hint")
    notes = left_out(source.meta, kept, label)
    meta = {key: v for key in kept if (v := text_field(source.meta, key))}
    text = source.body.replace(ARGUMENTS, "${input:args}")
    notes += positional(text, label)
    if SHELL.search(text):
        notes.append("`!`cmd`` kept as text: nothing runs it")
    return Translated(f"{source.name}.prompt.md", markdown(meta, text), tuple(notes))


def continue_md(source: Source, where: str) -> Result:
    label = "a Continue prompt file"
    notes = left_out(source.meta, ("description",), label)
    meta: dict[str, object] = {"name": source.name}
    if description := text_field(source.meta, "description"):
        meta["description"] = description
    meta["invokable"] = True
    text = source.body.replace(ARGUMENTS, "{{{ input }}}")
    notes += positional(text, label)
    if SHELL.search(text):
        notes.append("`!`cmd`` kept as text: nothing runs it")
    return Translated(f"{source.name}.md", markdown(meta, text), tuple(notes))


_FORMS = {
    "gemini-toml": gemini_toml,
    "as-skill": as_skill,
    "markdown": plain_markdown,
    "opencode-md": opencode_md,
    "vscode-prompt-md": vscode_prompt_md,
    "continue-md": continue_md,
}
_LABELS = {
    "gemini-toml": "Gemini CLI",
    "as-skill": "the agent",
    "markdown": "the agent",
    "opencode-md": "OpenCode",
    "vscode-prompt-md": "VS Code",
    "continue-md": "Continue",
}
