"""Direct launch plans: a hook with nothing to translate run by `sh`, no Python started.

An agent that sends Claude Code's own event JSON (its event and tool names, `hook_event_name`
and `cwd`: `HookSpelling.direct`) gets `plugman-hook AGENT EVENT HOOK-ID` in its file for a
plugin's hook that needs no approval, has no `if` rule, runs in the foreground and selects every
call of its event (matcher none or `*`): the launcher would only pass the event through. That
dispatcher (`plugman-hook.sh` here, installed beside `plugman` as the wheel's shared script)
finds the project as plugman does and sources this hook's sh plan in plugman's state folder,
`<state>/plans/sh<project>/<AGENT>.<EVENT>.<HOOK-ID>.sh`; with none, or when the plan returns,
it runs `plugman hooks exec` with the same words (the JSON plan, else the full launcher).

The sh plan is rendered from the hook's JSON plan (plugman.runtime.launch.plans) by the fast
path (plugman.cli.fast_launch) right after it found that plan fresh by content, so it says
nothing a resolve did not. It checks, with shell builtins only (one `export -p` in a subshell):
that it is this project, this state folder and this environment (the JSON plan's key, and no
variable that turns plans off), that no transaction is open, that this plugman version is the
one installed (its `dist-info` folder), that every watched file is still as it was — present
ones not newer than the plan (its mtime is set 2 s before the stamp was checked, and a plan is
written only when every watched file is older than that), absent ones still absent, the folders
holding plugman's files not changed either (a backup moved over `trust.json` keeps its old
mtime, its folder's changes) — and that the handler's command is found; then it exports the
plugin's environment and execs the handler: its stdin, stdout, stderr and exit code are the
agent's own, and the agent's timeout (the handler's + `LAUNCH_MARGIN`) is the one that applies.
A plan whose stamp holds a link or an unreadable file is not written. Only a plugin's hooks
get one: their files are in the content-addressed store, so no approved digest needs checking.

On the fast path: imports `os`, `sys` and `time` only (plus planfile).
"""

# ruff: noqa: PTH100, PTH103, PTH105, PTH112, PTH116, PTH118, PTH119, PTH120, PTH123
# (os.path on strings: pathlib is not loaded on the fast path, +3 ms)
from __future__ import annotations

import os
import sys

from plugman.runtime.launch import planfile

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms on the fast path)
if TYPE_CHECKING:
    from collections.abc import Mapping

FOLDER = "plans/sh"  # beside the JSON plans' folders: creating it changes no watched folder
DISPATCHER = "plugman-hook"  # the script's name on PATH (pyproject's shared-scripts)
BEFORE = 2.0  # seconds the plan's mtime is set back from when its stamp was checked
OFF = ("PLUGMAN_OPT_", "PLUGMAN_FAULT", "PLUGMAN_NO_PLANS")  # planfile.NO_PLAN in `export -p`
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def folder(state: str, project: str) -> str:
    """The folder of one project's sh plans (the dispatcher builds the same path)."""
    return state + "/" + FOLDER + project.rstrip("/")


def name(agent: str, event: str, ref: str) -> str | None:
    """The plan's file name; None where the dispatcher would not look for it."""
    words = (agent, event, ref)
    if any(not w or "/" in w or "\0" in w for w in words):
        return None
    found = f"{agent}.{event}.{ref}.sh"
    return found if len(found.encode()) < 240 else None


def quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _identifier(text: object) -> bool:
    return (
        isinstance(text, str)
        and bool(text)
        and not text[0].isdigit()
        and all(c in _NAME_CHARS for c in text)
    )


def eligible(plan: Mapping[str, object]) -> bool:
    """Whether the launcher would only pass this hook's event through: every call selected,
    no `if`, foreground, no tool to rename, a plugin's handler with its environment plain."""
    argv, added, stamp = plan.get("argv"), plan.get("env"), plan.get("stamp")
    if plan.get("match") is not True or plan.get("if") is not None or plan.get("background"):
        return False
    if plan.get("tools") != {} or not isinstance(plan.get("data"), str):
        return False
    if not isinstance(argv, list) or not argv or not isinstance(added, dict):
        return False
    words = [*argv, *added.values()]
    if not all(isinstance(w, str) and "\0" not in w for w in words):
        return False
    if not all(_identifier(k) for k in added) or not isinstance(stamp, list):
        return False
    return all(entry[1] == "-" or entry[1].startswith(("f:", "d")) for entry in stamp)


def render(plan: Mapping[str, object], state: str, project: str, dist: str) -> str:
    """The sh plan of an `eligible` JSON plan (see the module's doc)."""
    key = plan["key"]
    assert isinstance(key, dict)
    env = key["env"]
    lines = [
        f"# plugman sh plan: {' '.join(str(key[k]) for k in ('agent', 'event', 'ref'))}"
        " (plugman.runtime.launch.shplan; written by plugman, sourced by plugman-hook)",
        f'[ "$_plugman_project" = {quote(project.rstrip("/"))} ] &&'
        f' [ "$_plugman_state" = {quote(state)} ] || return 0',
        "case $(export -p) in " + " | ".join(f"*{n}*" for n in OFF) + ") return 0 ;; esac",
    ]
    tests = [
        f'[ -z "${{{n}+x}}" ]' if v is None else f'[ "${{{n}+x}}${{{n}-}}" = {quote("x" + v)} ]'
        for n, v in env.items()
    ]
    lines.append(" && ".join(tests) + " || return 0")
    journal = '"$_plugman_state/journal"/'
    lines.append(
        f"for _plugman_f in {journal}* {journal}.[!.]* {journal}..?*; do"
        ' [ -e "$_plugman_f" ] && return 0; done'
    )
    lines.append(f"[ -d {quote(dist)} ] || return 0")
    present, absent, parents = [], [], []
    inside = project.rstrip("/") + "/"
    for path, was in plan["stamp"]:  # type: ignore[attr-defined]
        if was == "-":
            absent.append(quote(path))
            continue
        kind = "-f" if was.startswith("f:") else "-d"
        newer = "" if was == "d" else f' && ! [ {quote(path)} -nt "$_plugman_plan" ]'
        present.append(f"[ {kind} {quote(path)} ] && ! [ -L {quote(path)} ]{newer} || return 0")
        parent = os.path.dirname(path)
        if was.startswith("f:") and not path.startswith(inside):
            parents.append(quote(parent))
    lines += present
    for parent in dict.fromkeys(parents):
        lines.append(f'! [ {parent} -nt "$_plugman_plan" ] || return 0')
    if absent:
        lines.append(
            f"for _plugman_f in {' '.join(absent)}; do"
            ' [ -e "$_plugman_f" ] || [ -L "$_plugman_f" ] && return 0; done'
        )
    argv, added, data = plan["argv"], plan["env"], plan["data"]
    assert isinstance(argv, list) and isinstance(added, dict) and isinstance(data, str)
    lines.append(f"[ -d {quote(data)} ] || return 0")
    lines.append(f"command -v {quote(argv[0])} >/dev/null 2>&1 || return 0")
    exported = {"CLAUDE_PROJECT_DIR": project, **added, "CLAUDE_PLUGIN_DATA": data}
    lines.append("export " + " ".join(f"{k}={quote(v)}" for k, v in exported.items()))
    lines.append(
        f'[ -z "${{{planfile.TRACE}-}}" ] ||'
        f' echo "direct hooks exec $*" 2>/dev/null >>"${planfile.TRACE}"'
    )
    lines.append("exec " + " ".join(quote(w) for w in argv))
    return "\n".join(lines) + "\n"


def dist_info() -> str | None:
    """The installed plugman's `dist-info` folder (its name holds the version): a plugman
    installed over this one removes it, which stops every sh plan written by this one."""
    from plugman import __version__  # lazy: a leaf, as in planfile.load

    wanted = f"plugman-{__version__}.dist-info"
    for entry in sys.path:
        found = os.path.join(entry or ".", wanted)
        if os.path.isdir(found):
            return os.path.abspath(found)
    return None


def refresh(plan: Mapping[str, object], state: str, project: str, env: Mapping[str, str]) -> None:
    """Write the sh plan of `plan` (just found fresh by content) when it is `eligible` and
    every watched file is older than the plan will say; a failure is no error (the next call
    takes the JSON plan again)."""
    key = plan.get("key")
    if not isinstance(key, dict) or not eligible(plan):
        return
    file_name = name(str(key["agent"]), str(key["event"]), str(key["ref"]))
    dist = dist_info()
    if file_name is None or dist is None:
        return
    import time  # lazy: a builtin module, only a plan being written needs it

    when = time.time() - BEFORE
    path = os.path.join(folder(state, project), file_name)
    try:
        text = render(plan, state, project, dist).encode()
        if _current(path, text, plan) or not _older(plan, when):
            return
        data = plan["data"]
        assert isinstance(data, str)
        os.makedirs(data, exist_ok=True)
        _write(path, text, when)
    except OSError:
        return
    planfile.trace(env, "sh-plan", [str(key["agent"]), str(key["event"]), str(key["ref"])])


def _current(path: str, text: bytes, plan: Mapping[str, object]) -> bool:
    """Whether the sh plan at `path` says `text` and is fresh (the call came another way)."""
    try:
        with open(path, "rb") as stream:
            same = stream.read() == text
        return same and _older(plan, os.stat(path).st_mtime)
    except OSError:
        return False


def _older(plan: Mapping[str, object], when: float) -> bool:
    """Whether every present watched path (and the folders the plan watches) is older than
    `when`: a change after it then makes the path newer than the plan."""
    stamp = plan["stamp"]
    assert isinstance(stamp, list)
    project = str(plan["key"]["project"]).rstrip("/") + "/"  # type: ignore[index]
    for path, was in stamp:
        if was == "-":
            continue
        checked = [] if was == "d" else [path]
        if was.startswith("f:") and not path.startswith(project):
            checked.append(os.path.dirname(path))
        for one in checked:
            if os.stat(one).st_mtime >= when:
                return False
    return True


def _write(path: str, data: bytes, when: float) -> None:
    """Write whole, 0600, with its mtime at `when` (the dispatcher's `-nt` reference)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.utime(temp, (when, when))
    os.replace(temp, path)
