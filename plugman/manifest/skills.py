"""SKILL.md files, and the front matter of plugin commands and agents."""

from __future__ import annotations

import re
from pathlib import Path

from plugman.core.jsonvalue import JSONObject
from plugman.manifest import frontmatter, schema
from plugman.manifest.diagnostics import WARNING, Sink
from plugman.manifest.model import Skill
from plugman.manifest.names import unsafe_reason
from plugman.manifest.reader import Report

SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_SKILL_NAME = 64
MAX_DESCRIPTION = 1024
MAX_LISTING = 1536  # description + when_to_use, as shown to the model
AGENT_UNSUPPORTED = ("hooks", "mcpServers", "permissionMode")


def find(folder: Path) -> list[Path]:
    """SKILL.md files in `folder`: the folder itself, or its direct subfolders."""
    if (folder / "SKILL.md").is_file():
        return [folder / "SKILL.md"]
    if not folder.is_dir():
        return []
    return sorted(p / "SKILL.md" for p in folder.iterdir() if (p / "SKILL.md").is_file())


def load(file: Path, report: Report) -> Skill | None:
    """A skill: its name (front matter, else folder) and checked front matter."""
    sink = report.sink(file)
    text = report.read_text(file, sink)
    if text is None:
        return None
    folder = file.parent.name
    try:  # Claude Code reads broken front matter leniently: a warning, as for agents
        meta = frontmatter.parse(text, sink, WARNING)
    except frontmatter.Unreadable:
        return Skill(folder, file, None, {})
    if meta is None:
        sink.warning(
            "no-frontmatter",
            "SKILL.md has no front matter",
            (),
            "start the file with ---, a 'name' and a 'description', then ---",
        )
        return Skill(folder, file, None, {})
    schema.validate(meta, "skill.schema.json", sink)
    name = meta.get("name") if isinstance(meta.get("name"), str) else folder
    assert isinstance(name, str)
    _check_name(name, folder, "name" in meta, sink)
    description = meta.get("description")
    _check_description(meta, sink)
    return Skill(name, file, description if isinstance(description, str) else None, meta)


def _check_name(name: str, folder: str, declared: bool, sink: Sink) -> None:
    """Checks on the skill's name: from its front matter (`declared`) or its folder."""
    where = ("name",) if declared else ()
    what = "skill name" if declared else "skill folder name"
    reason = unsafe_reason(name.replace("/", "-"))  # a '/' only makes an odd command name
    if reason:
        sink.error(
            "unsafe-name",
            f"{what} {name!r} {reason}",
            where,
            "use lowercase letters, digits and '-'",
        )
        return
    if len(name) > MAX_SKILL_NAME:
        sink.error(
            "too-long",
            f"{what} is {len(name)} characters; the limit is {MAX_SKILL_NAME}",
            where,
            "shorten it",
        )
    elif not SKILL_NAME.match(name):
        sink.warning(
            "name-not-kebab",
            f"{what} {name!r} is not lowercase kebab-case",
            where,
            "use lowercase letters, digits and single hyphens",
        )
    if declared and name != folder:
        message = f"skill name {name!r} differs from its folder {folder!r}"
        sink.warning(
            "skill-name-mismatch", message, where, "rename the folder or the skill so they match"
        )


def _check_description(meta: JSONObject, sink: Sink) -> None:
    description = meta.get("description")
    if description is None:
        sink.warning(
            "missing-description",
            "skill has no 'description'",
            (),
            "describe what the skill does and when to use it; the model reads it",
        )
        return
    if not isinstance(description, str):
        return
    if len(description) > MAX_DESCRIPTION:
        sink.warning(
            "too-long",
            f"description is {len(description)} characters; the limit is {MAX_DESCRIPTION}",
            ("description",),
            "shorten it",
        )
    extra = meta.get("when_to_use")
    total = len(description) + (len(extra) if isinstance(extra, str) else 0)
    if total > MAX_LISTING:
        sink.warning(
            "too-long",
            f"description and when_to_use are {total} characters; agents cut them at {MAX_LISTING}",
            ("description",),
            "shorten them",
        )


def check_markdown(file: Path, report: Report, *, agent: bool) -> None:
    """A command or agent file: its front matter must parse; agents can't declare some keys."""
    sink = report.sink(file)
    text = report.read_text(file, sink)
    try:
        meta = frontmatter.parse(text, sink, WARNING) if text is not None else None
    except frontmatter.Unreadable:
        return
    if not meta or not agent:
        return
    for key in AGENT_UNSUPPORTED:
        if key in meta:
            sink.warning(
                "unsupported-key",
                f"plugin agents do not support {key!r}",
                (key,),
                "remove it; it is ignored for agents shipped in a plugin",
            )
