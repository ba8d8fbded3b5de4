"""The folder a plugin's skill is deployed under, in agents that read SKILL.md folders, and
its SKILL.md when the folder's name is not the skill's own.

A skill keeps its plain name (`deployed(plugin, skill)`); when two plugins bring skills of one
name into one folder, the deployment (which sees every plugin) asks for the namespaced one
(`namespace=True`, `namespaced(plugin, name)`). The Agent Skills standard wants `name` in the
front matter to equal the folder's name, `[a-z0-9-]`, at most 64 characters: when it does not,
the SKILL.md is rewritten with that one value changed and every other byte kept.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from plugman.agents.translate.common import NAME_MAX, Refused, skill_name
from plugman.manifest import frontmatter
from plugman.manifest.model import Skill

_NAME_LINE = re.compile(r"^name[ \t]*:[^\r\n]*(\r?\n[ \t]+[^\r\n]*)*", re.MULTILINE)
_PLAIN = re.compile(r"[a-z][a-z0-9-]*")


class Deployed(NamedTuple):
    folder: str  # the folder's name under the agent's skills folder
    skill_md: bytes | None  # the SKILL.md to write there; None: copy the skill's folder as is


def namespaced(plugin: str, name: str) -> str:
    """`<plugin>-<name>` as a skill name (the plain name when the plugin's name gives nothing),
    shortened with a hash of both when longer than 64 characters."""
    prefix, plain = skill_name(plugin), skill_name(name)
    full = f"{prefix}-{plain}" if prefix and plain else prefix or plain
    if len(full) <= NAME_MAX:
        return full
    digest = hashlib.sha256(f"{plugin}\0{name}".encode()).hexdigest()[:8]
    return f"{full[: NAME_MAX - 9].rstrip('-')}-{digest}"


def deployed(plugin: str, skill: Skill, *, namespace: bool = False) -> Deployed | Refused:
    """Where `skill` of `plugin` goes, and its SKILL.md when the name in it must change."""
    folder = namespaced(plugin, skill.name) if namespace else skill_name(skill.name)
    if not folder:
        return Refused(f"skill {skill.name!r} of plugin {plugin}: no skill name can be made of it")
    if skill.frontmatter.get("name") == folder:
        return Deployed(folder, None)
    return Deployed(folder, renamed(skill.path.read_bytes(), folder))


def renamed(data: bytes, name: str) -> bytes:
    """SKILL.md bytes with the front matter's `name` set to `name`; every other byte kept (a
    file without front matter gets one holding only `name`)."""
    value = (
        name if _PLAIN.fullmatch(name) and name not in ("null", "true", "false") else f'"{name}"'
    )
    text = data.decode("utf-8", errors="surrogateescape")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text.removeprefix("\ufeff")
    found = frontmatter.split(text)
    newline = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
    if found is None:
        out = f"---{newline}name: {value}{newline}---{newline}{text}"
    else:
        start = text.index("\n") + 1
        block = found[0]
        match = _NAME_LINE.search(block)
        if match is None:
            block = f"name: {value}{newline}{block}"
        else:
            block = block[: match.start()] + f"name: {value}" + block[match.end() :]
        out = text[:start] + block + text[start + len(found[0]) :]
    return (bom + out).encode("utf-8", errors="surrogateescape")
