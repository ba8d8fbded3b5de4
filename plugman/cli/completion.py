"""`plugman completion bash|zsh|fish` and the hidden `plugman __complete WORDS...` it calls.

The script each shell gets is a few lines that hand the words typed so far to `plugman
__complete` and offer what it prints, one candidate a line; everything it offers comes from the
one command table (plugman.cli.commands, each group's rows walked as plugman.cli.app walks
them), so a new command, option or choice is completed without an edit here: command words at
every level, each command's options (long and short), option and argument choices, and a few
values read from plugman's own state files (`VALUES`): installed plugin ids, registered
marketplaces, linked and known agents.

`__complete` runs on every Tab: it imports only the group module on the words' path and the
state readers its value needs, writes nothing (no journal recovery: plugman.core.paths, not
plugman.cli.running.paths_for), runs nothing a project brings (a plugman.toml is only parsed),
and never fails aloud: a broken file offers nothing. A candidate holding a control character
(a newline would split it in two) is never offered; the scripts quote every candidate as a
literal word (bash `printf %q`, zsh's compadd and fish quote theirs), so a plugin id such as
`$(touch x)` is inserted as text, never run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from plugman.cli.argv import FLAG, Argument, Command, Group, Option
from plugman.cli.commands import OPTIONS, TOP_LEVEL

if TYPE_CHECKING:
    from plugman.core.paths import Paths
    from plugman.core.state import Scope

SHELLS = ("bash", "zsh", "fish")
HIDDEN = "__complete"  # the word the scripts call plugman with (in no help)

BASH = """\
# plugman completion for bash: eval "$(plugman completion bash)" in ~/.bashrc
_plugman_complete() {
    local word
    local -a found
    COMPREPLY=()
    mapfile -t found < <(command plugman __complete \\
        "${COMP_WORDS[@]:1:COMP_CWORD-1}" "${COMP_WORDS[COMP_CWORD]}" 2>/dev/null)
    for word in "${found[@]}"; do
        printf -v word '%q' "$word"
        COMPREPLY+=("$word")
    done
}
complete -o default -F _plugman_complete plugman
"""

ZSH = """\
#compdef plugman
# plugman completion for zsh: eval "$(plugman completion zsh)" in ~/.zshrc, after compinit
_plugman() {
    local -a found
    found=("${(@f)$(command plugman __complete "${(@)words[2,CURRENT-1]}" \\
        "${(Q)words[CURRENT]}" 2>/dev/null)}")
    found=("${(@)found:#}")
    if (( ${#found} )); then
        compadd -- "${found[@]}"
    else
        _files
    fi
}
if [[ ${zsh_eval_context[-1]} == loadautoload ]]; then
    _plugman "$@"
else
    compdef _plugman plugman
fi
"""

FISH = """\
# plugman completion for fish: plugman completion fish | source (in config.fish)
function __plugman_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l found (command plugman __complete $words (commandline -ct) 2>/dev/null)
    if test (count $found) -gt 0
        printf '%s\\n' $found
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c plugman -f -a '(__plugman_complete)'
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}


def script(shell: str) -> None:
    sys.stdout.write(SCRIPTS[shell])


INSTALL = (
    "Install it once; a new shell then completes commands, options, choices, installed "
    "plugins, marketplaces and agents.\n\n"
    'bash, in ~/.bashrc: eval "$(plugman completion bash)"\n\n'
    'zsh, in ~/.zshrc after compinit: eval "$(plugman completion zsh)"\n\n'
    "fish: plugman completion fish > ~/.config/fish/completions/plugman.fish"
)
COMPLETION = Command(
    "completion",
    "",
    script,
    (Argument("shell", "bash, zsh or fish.", choices=SHELLS, metavar="SHELL"),),
    epilog=INSTALL,
)


# Where a value comes from ------------------------------------------------------------------


def _scopes(scope: str | None) -> tuple[Scope, ...]:
    # lazy: core.state not loaded by plugman __complete (+31 ms)
    from plugman.core.state import SCOPES

    return tuple(s for s in SCOPES if scope in (None, s))


def installed(paths: Paths, scope: str | None) -> list[str]:
    """The ids of the plugins installed in the scope (every scope: None) of this project."""
    # lazy: core.state not loaded by plugman __complete (+31 ms)
    from plugman.core.state import read_record, record_path

    found: list[str] = []
    for each in _scopes(scope):
        plugins = (read_record(record_path(paths, each)) or {}).get("plugins")
        found += list(plugins) if isinstance(plugins, dict) else []
    return found


def marketplaces(paths: Paths, _scope: str | None) -> list[str]:
    """The names of the registered marketplaces."""
    # lazy: config.policy_plugins, core.state not loaded by plugman __complete (+43 ms)
    from plugman.config.policy_plugins import registry_path
    from plugman.core.state import read_state

    found = (read_state(registry_path(paths), "") or {}).get("marketplaces")
    return list(found) if isinstance(found, dict) else []


def linked(paths: Paths, scope: str | None) -> list[str]:
    """The agents the scope (every scope: None) feeds."""
    # lazy: agents.links not loaded by plugman __complete (+2 ms)
    from plugman.agents.links import linked as links

    return [link.agent for each in _scopes(scope) for link in links(paths, each)]


def agents(_paths: Paths, _scope: str | None) -> list[str]:
    """The agents plugman knows (the built-in ones: an extension's would mean loading it)."""
    from plugman.agents.targets.table import SPECS  # lazy: the agent table, only this Tab

    return [spec.name for spec in SPECS]


Values = Callable[["Paths", "str | None"], list[str]]
# (command words, argument name or option name) -> where its values come from
VALUES: dict[tuple[str, str], Values] = {
    ("uninstall", "names"): installed,
    ("enable", "name"): installed,
    ("disable", "name"): installed,
    ("update", "names"): installed,
    ("info", "plugin"): installed,
    ("configure", "plugin"): installed,
    ("diff", "plugin"): installed,
    ("marketplace update", "names"): marketplaces,
    ("marketplace remove", "name"): marketplaces,
    ("agents add", "names"): agents,
    ("agents remove", "names"): linked,
    ("config resolve", "--target"): agents,
    ("export", "--target"): agents,
}


# The candidates ----------------------------------------------------------------------------


def complete(words: list[str]) -> list[str]:
    """What the last of `words` (the words after `plugman`, the last the one being completed,
    maybe empty) can be: one candidate each, none with a control character."""
    try:
        found = _candidates(words or [""])
    except Exception:
        return []
    return [c for c in dict.fromkeys(found) if c.isprintable()]


def _candidates(words: list[str]) -> list[str]:
    *before, current = _joined(words)
    project, at = None, 0
    while at < len(before) and before[at].startswith("-"):  # the root options
        if before[at] == "--project" and at + 1 < len(before):
            project, at = before[at + 1], at + 1
        at += 1
    if at == len(before):
        if before[-1:] == ["--project"]:
            return []  # a folder: the shell's own
        roots = [n.strip(",") for names, _ in OPTIONS for n in names.split() if n[0] == "-"]
        return _matching(roots if current.startswith("-") else TOP_LEVEL, current)
    walked = _walk(before[at:])
    if walked is None:
        return []
    path, node, rest = walked
    return _at(" ".join(path), node, rest, current, project)


def _joined(words: list[str]) -> list[str]:
    """The words with bash's `=` words joined (bash splits `--scope=us` into `--scope`, `=`,
    `us`): `--scope=` alone is `--scope` and an empty word; `--scope = us`, `--scope us`."""
    if words[-1] == "=" and len(words) > 1 and words[-2].startswith("-"):
        return [*words[:-1], ""]
    return [w for i, w in enumerate(words) if not (w == "=" and i and words[i - 1][:1] == "-")]


def _walk(words: list[str]) -> tuple[list[str], Command | Group, list[str]] | None:
    """The command the words name (as plugman.cli.app walks them), and the words after it."""
    # lazy: cli.app not loaded by plugman __complete (+2 ms)
    from plugman.cli.app import children, top

    node = top(words[0])
    if node is None:
        return None
    path, rest = [words[0]], words[1:]
    while isinstance(node, Group):
        word = next((w for w in rest if not w.startswith("-")), None)
        if word is None:
            break
        found = dict(children(path, node)).get(word)
        if found is None:
            return None
        path, node = [*path, word], found
        rest.remove(word)  # (its first occurrence: the options before it stay)
    return path, node, rest


def _at(
    words: str, node: Command | Group, rest: list[str], current: str, project: str | None
) -> list[str]:
    """The candidates for `current` after `plugman WORDS REST...`."""
    named = {name: option for option in node.options for name in option.names}
    taking = named.get(rest[-1]) if rest and "--" not in rest else None
    if taking is not None and taking.takes != FLAG:
        return _matching(_values(words, taking, rest, project), current)
    if current.startswith("-") and "--" not in rest:
        name, eq, given = current.partition("=")
        if eq and name in named:
            values = _values(words, named[name], rest, project)
            return [f"{name}={value}" for value in _matching(values, given)]
        return _matching(list(named), current)
    if isinstance(node, Group):
        # lazy: cli.app not loaded by plugman __complete (+2 ms)
        from plugman.cli.app import children

        return _matching([name for name, _ in children(words.split(), node)], current)
    argument = _argument(node, rest, named)
    if argument is None:
        return []
    return _matching(_values(words, argument, rest, project), current)


def _argument(node: Command, rest: list[str], named: dict[str, Option]) -> Argument | None:
    """The argument the next positional word is."""
    count, words = 0, iter(rest)
    for word in words:
        option = named.get(word) if word.startswith("-") else None
        if option is not None and option.takes != FLAG:
            next(words, None)
        elif not word.startswith("-") or word == "-":
            count += 1
    arguments = node.arguments
    if count < len(arguments):
        return arguments[count]
    return arguments[-1] if arguments and arguments[-1].many else None


def _values(
    words: str, param: Option | Argument, rest: list[str], project: str | None
) -> list[str]:
    """An option's or argument's values: its choices, or what `VALUES` reads for it."""
    if param.choices:
        return list(param.choices)
    key = param.names[0] if isinstance(param, Option) else param.dest
    source = VALUES.get((words, key))
    if source is None:
        return []
    # lazy: core.paths not loaded by plugman __complete (+2 ms)
    from plugman.core.paths import Paths

    paths = Paths.from_env(project=Path(project) if project else None)
    return source(paths, _given_scope(rest))


def _given_scope(rest: list[str]) -> str | None:
    """The --scope the line gives (`-s x`, `--scope x`, `--scope=x`), if any."""
    for at, word in enumerate(rest):
        if word in ("--scope", "-s") and at + 1 < len(rest):
            return rest[at + 1]
        if word.startswith("--scope="):
            return word.partition("=")[2]
    return None


def _matching(candidates: list[str], current: str) -> list[str]:
    return [c for c in candidates if c.startswith(current)]


def answer(words: list[str]) -> int:
    """`plugman __complete WORDS...`: the candidates, one a line (exit 0, always)."""
    found = complete(words)
    sys.stdout.write("".join(f"{c}\n" for c in found))
    return 0
