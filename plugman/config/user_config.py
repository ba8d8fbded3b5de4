"""A plugin's `userConfig` (docs/claude-format.md#user-config): checking the values given,
where they live, and putting them into the plugin's MCP servers and hooks.

Where values live. Non-sensitive values go into the scope's install record, under its top-level
`config` table (`<state>/installed/<scope>.json`), never into plugman.toml or plugman.lock: those
are committed for a project, and Claude Code keeps `pluginConfigs` user-only (it ignores project
and local entries) because a value is this user's, on this machine. The record is journaled with
the install, and uninstall drops the plugin's table with its entry. Sensitive values go into the
secret store (`plugman.core.secrets`) under `plugin-config:<plugin id>:<KEY>` (user scope; other
scopes add `:<record name>`, so two projects keep their own), and nowhere else.

In the resolved config a value replaces `${user_config.KEY}` in server entries and exec-form hook
handlers, and `CLAUDE_PLUGIN_OPTION_<KEY>` is set for the plugin's stdio servers (their `env`)
and hooks. Shell-parsed fields (a shell-form hook `command`, an MCP `headersHelper`) may not use
`${user_config.*}` (Claude Code rejects it since 2.1.207): the entry is dropped. A sensitive
value is written `${PLUGMAN_OPT_<PLUGIN>_<KEY>}` in every resolution's server entries (so an
entry's approval hash never depends on a secret), and resolution expands it from the store's
values where plugman runs the server itself (probe, the gateway, `plugman mcp run`, which an
agent's file names in place of a plugin server needing one: `plugman.runtime.launch.server`). A hook
run here gets the value put in. A value missing from the
store is taken from that variable in plugman's environment (CI).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.expand import substitute
from plugman.core.errors import UsageError
from plugman.manifest.model import UserOption

PLACEHOLDER = re.compile(r"\$\{user_config\.([A-Za-z_]\w*)\}")
OPTION_PREFIX = "CLAUDE_PLUGIN_OPTION_"
AGENT_PREFIX = "PLUGMAN_OPT_"
TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
Value = str | list[str]


def store_key(plugin_id: str, key: str, record: str = "user") -> str:
    """The secret store's key of one sensitive value (`record`: the scope record's name)."""
    return f"plugin-config:{plugin_id}:{key}" + ("" if record == "user" else f":{record}")


def variable(plugin_name: str, key: str) -> str:
    """The environment variable an agent's file names for a sensitive value."""
    return AGENT_PREFIX + re.sub(r"\W", "_", f"{plugin_name}_{key}").upper()


def option_variable(key: str) -> str:
    return OPTION_PREFIX + key.upper()


def parse_pairs(pairs: list[str], plugin_id: str) -> dict[str, str]:
    """`KEY=VALUE` texts as a mapping (a later KEY wins)."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"{plugin_id}: {pair!r} is not KEY=VALUE", hint="write --config KEY=VALUE"
            )
        found[key.strip()] = value
    return found


def check(
    plugin_id: str, options: tuple[UserOption, ...], given: Mapping[str, str]
) -> dict[str, Value]:
    """The given values checked against their options and in their stored form; a bad one is a
    usage error naming the plugin, the key and what is expected."""
    known = {o.key: o for o in options}
    found: dict[str, Value] = {}
    for key, text in given.items():
        option = known.get(key)
        if option is None:
            names = ", ".join(sorted(known)) or "none"
            raise UsageError(f"{plugin_id} has no option {key!r}", hint=f"its options: {names}")
        found[key] = _value(plugin_id, option, text)
    return found


def _value(plugin_id: str, option: UserOption, text: str) -> Value:
    def bad(expected: str) -> UsageError:
        shown = "(hidden)" if option.sensitive else repr(text)
        return UsageError(f"{plugin_id}: option {option.key} = {shown} is not {expected}")

    if option.type == "number":
        try:
            number = float(text)
        except ValueError:
            raise bad("a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise bad("a finite number")
        if (option.min is not None and number < option.min) or (
            option.max is not None and number > option.max
        ):
            raise bad(f"a number from {_range(option)}")
        return str(int(number)) if number.is_integer() else str(number)
    if option.type == "boolean":
        if text.strip().lower() not in (*TRUE, *FALSE):
            raise bad("a boolean (true or false)")
        return "true" if text.strip().lower() in TRUE else "false"
    if option.type in ("directory", "file"):
        path = Path(text).expanduser()
        if not (path.is_dir() if option.type == "directory" else path.is_file()):
            raise bad(f"an existing {option.type}")
        return str(path.resolve())
    items = [part.strip() for part in text.split(",")] if option.multiple else [text]
    for item in items:
        if (option.min is not None and len(item) < option.min) or (
            option.max is not None and len(item) > option.max
        ):
            raise bad(f"a text of {_range(option)} characters")
    return items if option.multiple else text


def _range(option: UserOption) -> str:
    low = "-inf" if option.min is None else f"{option.min:g}"
    high = "inf" if option.max is None else f"{option.max:g}"
    return f"{low} to {high}"


def missing(options: tuple[UserOption, ...], have: set[str]) -> list[UserOption]:
    """The required options with no value and no default."""
    return [o for o in options if o.required and o.default is None and o.key not in have]


class Values(NamedTuple):
    """One plugin's values as its entries get them."""

    text: dict[str, str]  # KEY -> what `${user_config.KEY}` becomes (sensitive: `${VARIABLE}`)
    unset: frozenset[str]  # required keys with no value and no default
    secrets: dict[str, str]  # VARIABLE -> the sensitive value it stands for

    def plain(self) -> dict[str, str]:
        """`text` with each sensitive value itself in place of its variable."""
        return {k: substitute(v, self.secrets) for k, v in self.text.items()}

    def env(self, plain: bool) -> dict[str, str]:
        """`CLAUDE_PLUGIN_OPTION_<KEY>` for every key that has a value."""
        return {option_variable(k): v for k, v in (self.plain() if plain else self.text).items()}


def values(
    plugin_name: str,
    options: tuple[UserOption, ...],
    stored: Mapping[str, Any],
    secret: Callable[[str], str | None],
    env: Mapping[str, str],
) -> Values:
    """Each option's text: the stored value, else (sensitive) the store's or the environment's,
    else its default. A sensitive value is written as `${PLUGMAN_OPT_...}` (expanded from
    `secrets` where plugman runs the entry, left for an agent to expand in its files)."""
    text: dict[str, str] = {}
    unset: set[str] = set()
    secrets: dict[str, str] = {}
    for option in options:
        name = variable(plugin_name, option.key)
        value: Any = stored.get(option.key)
        if option.sensitive:
            found = secret(option.key) or env.get(name)
            if found:
                secrets[name] = found
                text[option.key] = "${" + name + "}"
                continue
        if value is None:
            value = option.default
        if value is None and option.required:
            unset.add(option.key)
        elif value is None:
            text[option.key] = ""  # an optional value nobody gave
        elif isinstance(value, list):
            text[option.key] = ",".join(map(str, value))
        elif isinstance(value, bool):
            text[option.key] = "true" if value else "false"
        else:
            text[option.key] = str(value)
    return Values(text, frozenset(unset), secrets)


def used(value: Any) -> set[str]:
    """The keys `${user_config.KEY}` names anywhere in `value`."""
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    if isinstance(value, list):
        return set().union(*map(used, value)) if value else set()
    if isinstance(value, dict):
        return set().union(*map(used, value.values())) if value else set()
    return set()


def put(value: Any, text: Mapping[str, str]) -> Any:
    """`value` with every `${user_config.KEY}` that has a value replaced."""
    if isinstance(value, str):
        return PLACEHOLDER.sub(lambda m: text.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [put(item, text) for item in value]
    if isinstance(value, dict):
        return {key: put(item, text) for key, item in value.items()}
    return value


def fix_command(plugin_id: str, keys: list[str], scope: str) -> str:
    pairs = " ".join(f"{key}=VALUE" for key in sorted(keys))
    where = "" if scope == "user" else f" --scope {scope}"
    return f"run: plugman configure {plugin_id} {pairs}{where}"
