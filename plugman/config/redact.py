"""Hiding secret values in anything plugman shows (unless `--show-secrets`).

A value is secret when it sits under an env or header name that looks like a credential (a
`_`/`-`-separated part such as TOKEN, SECRET, PASSWORD, KEY, AUTH, COOKIE, PAT, DSN,
CREDENTIALS), in an Authorization header, or in a URL's password or credential-like query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from plugman.core.jsonvalue import HookEntry, JSONObject, ServerEntry

MASK = "***"
SCHEMES = ("Bearer", "Basic", "Token")
VARIABLE_NAMES = ("env_var", "env_vars")  # Codex's `bearer_token_env_var`: a name, not a value
# `${VAR}`, or `${VAR:-}`: a non-empty default is literal text, and may be a secret
REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-)?\}")
CREDENTIAL = re.compile(
    r"(?:^|[_-])(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|APIKEY|AUTH|AUTHORIZATION|COOKIE|PAT|"
    r"DSN|CREDENTIALS?|SESSION)(?:$|[_-])",
    re.IGNORECASE,
)

# A credential word glued to a prefix, as some tools spell their variables: PGPASSWORD,
# MYSQL_PWD, NPMTOKEN, OPENAIAPIKEY.
GLUED = re.compile(r"(?:PASSWORD|PASSWD|TOKEN|SECRET|APIKEY|_PWD)$", re.IGNORECASE)
# A command-line option whose value is a credential: its last word says so (`--api-key`,
# `--token`, `--password`, `--client-secret`), not a word before (`--key-file`, `--token-url`).
OPTION = re.compile(
    r"^--?(?:[A-Za-z0-9]+[_-])*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|KEY|APIKEY|PAT|CREDENTIALS?)$",
    re.IGNORECASE,
)


class Found(NamedTuple):
    """A literal credential in a server entry: where, the variable to keep it in instead, the
    literal itself (for the caller to keep out of what it shows)."""

    field: str  # env.PGPASSWORD, headers.Authorization, url, args[3]
    variable: str


# Sensitive userConfig values put into this process's resolved config (config.contribute adds
# them): masked wherever they appear, whatever field holds them. Process-wide on purpose: every
# output of the process must hide them, and each command resolves its config afresh.
_SENSITIVE: set[str] = set()


def sensitive(value: str) -> None:
    if len(value) >= 4:  # a one-letter "secret" would mask every such letter
        _SENSITIVE.add(value)


def _scrub(value: Any) -> Any:
    """`value` with every known sensitive value masked, at any depth."""
    if isinstance(value, str):
        for secret in sorted(_SENSITIVE, key=len, reverse=True):
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item) for key, item in value.items()}
    return value


def holds_sensitive(value: str) -> bool:
    """Whether `value` holds a sensitive value this process put into its config (a plugin's
    sensitive option, an `mcp vars` value, both from the secret store)."""
    return any(secret in value for secret in _SENSITIVE)


def message(value: str) -> str:
    """An error, hint or log line with every known sensitive value and every URL's
    credentials masked: what plugman says about a server or hook it started may quote the
    entry as expanded (its command, its URL), and agents keep launchers' stderr in their
    logs."""
    if _SENSITIVE:
        value = _scrub(value)
    if "://" not in value:
        return value
    return _URL.sub(lambda m: url(m.group(0)) if _url_secret(m.group(0)) else m.group(0), value)


def is_secret_name(name: str) -> bool:
    return bool(CREDENTIAL.search(name) or GLUED.search(name))


def is_reference(value: Any) -> bool:
    """True when `value` holds only `${VAR}` references (after an auth scheme): nothing secret."""
    if not isinstance(value, str) or "${" not in value:
        return False
    return REFERENCE.sub("", value).strip() in ("", *SCHEMES)


def entry(value: ServerEntry) -> ServerEntry:
    """A server entry with its secret values masked."""
    masked = dict(value)
    for field in ("env", "headers"):
        if isinstance(value.get(field), dict):
            masked[field] = {
                k: MASK if is_secret_name(k) and v and not is_reference(v) else v
                for k, v in value[field].items()
            }
    if isinstance(value.get("url"), str):
        masked["url"] = url(value["url"])
    return _scrub(masked) if _SENSITIVE else masked


def hook(handler: HookEntry) -> HookEntry:
    """A hook handler with its secret header values masked (an http hook's)."""
    return entry(handler) if "headers" in handler else _scrub(handler)


def url(text: str) -> str:
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", f":{MASK}@")
    query = parts.query
    if query:
        pairs = [
            (k, MASK if is_secret_name(k) else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
        query = urlencode(pairs, safe="*${}:")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def literals(value: JSONObject) -> list[str]:
    """Where a server entry or hook handler holds a literal secret, not a `${VAR}` reference:
    `env.API_KEY`, `headers.Authorization`, `url`, `args[2]` (see `keep_out`)."""
    found = [f.field for f in keep_out("server", value)[1]]
    if _SENSITIVE and _scrub(value) != value:
        found.append("a sensitive plugin option")
    return found


def keep_out(name: str, value: JSONObject) -> tuple[JSONObject, list[Found]]:
    """`value` (a server entry, a hook handler) with each literal credential replaced by a
    `${VARIABLE}` reference, and what was replaced: a credential-named env or header value
    (`PGPASSWORD`, `Authorization: Bearer …`), a URL's password or credential query in `url`,
    an env value or an argument, and the argument after (or `=`) a credential option
    (`--api-key VALUE`, `--token=VALUE`). References, empty values and paths are not
    credentials."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "SERVER"
    entry, found = dict(value), []
    for field in ("env", "headers"):
        given = value.get(field)
        if not isinstance(given, dict):
            continue
        fixed = {}
        for key, item in given.items():
            if is_secret_name(key) and _literal(item) and isinstance(item, str):
                word = "TOKEN" if key.lower() == "authorization" else _variable(key)
                variable = word if field == "env" else f"{stem}_{word}"
                scheme = item.split(" ", 1)[0] if " " in item.strip() else ""
                scheme = scheme if scheme.capitalize() in SCHEMES else ""
                fixed[key] = (f"{scheme} " if scheme else "") + "${" + variable + "}"
                found.append(Found(f"{field}.{key}", variable))
            elif isinstance(item, str) and _url_secret(item):
                fixed[key] = _url_reference(item, _variable(key), found, f"{field}.{key}")
            else:
                fixed[key] = item
        entry[field] = fixed
    if isinstance(value.get("url"), str) and _url_secret(value["url"]):
        entry["url"] = _url_reference(value["url"], stem, found, "url")
    if isinstance(value.get("args"), list):
        entry["args"] = _args(stem, value["args"], found)
    return entry, found


def _variable(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "SECRET"


def _args(stem: str, args: list[Any], found: list[Found]) -> list[Any]:
    fixed = list(args)
    for i, arg in enumerate(args):
        if not isinstance(arg, str):
            continue
        option, eq, given = arg.partition("=")
        if eq and OPTION.match(option) and _credential(given):
            variable = f"{stem}_{_variable(option)}"
            fixed[i] = f"{option}=${{{variable}}}"
            found.append(Found(f"args[{i}]", variable))
        elif OPTION.match(arg) and i + 1 < len(args) and _credential(args[i + 1]):
            variable = f"{stem}_{_variable(arg)}"
            fixed[i + 1] = "${" + variable + "}"
            found.append(Found(f"args[{i + 1}]", variable))
        elif _url_secret(arg) and fixed[i] == arg:
            fixed[i] = _url_reference(arg, stem, found, f"args[{i}]")
    return fixed


def _credential(value: Any) -> bool:
    """A literal that may be a credential: not a reference, an option, a path or empty."""
    if not isinstance(value, str) or not _literal(value) or value.startswith("-"):
        return False
    return not value.startswith(("/", "./", "../", "~", "${"))


def _url_reference(text: str, stem: str, found: list[Found], field: str) -> str:
    """`text` with its URL password and credential query values as `${STEM_…}` references."""
    parts = urlsplit(text)
    netloc = parts.netloc
    if parts.password and _literal(parts.password):
        variable = f"{stem}_PASSWORD"
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:${{{variable}}}@{host}"
        found.append(Found(field, variable))
    pairs = []
    for key, item in parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_name(key) and _literal(item):
            variable = f"{stem}_{_variable(key)}"
            item = "${" + variable + "}"
            found.append(Found(field, variable))
        pairs.append((key, item))
    query = urlencode(pairs, safe="*${}:/") if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _literal(value: Any) -> bool:
    """Does `value` hold literal text beyond `${VAR}` references and an auth scheme?"""
    if not isinstance(value, str):
        return bool(value)
    return REFERENCE.sub("", value).strip() not in ("", *SCHEMES)


def _url_secret(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    if parts.password and _literal(parts.password):
        return True
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    return any(is_secret_name(k) and _literal(v) for k, v in pairs)


# A `KEY: value`, `"KEY": "value"` or `KEY = "value"` line of JSON, TOML or YAML text.
_PAIR = re.compile(
    r"""(?P<key>["']?(?P<name>[A-Za-z0-9_.-]+)["']?\s*[:=]\s*)(?P<value>"[^"]*"|'[^']*'|[^\s,{}\[\]#]+)"""
)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"',]+")


def text(value: str, known: Iterable[str] = ()) -> str:
    """`value` (a config file's text, a diff) with secrets masked: each of the `known` secret
    values, the value of every `KEY: value` pair whose key looks like a credential, and the
    credentials of every URL."""
    for secret in sorted({*known, *_SENSITIVE}, key=len, reverse=True):
        value = value.replace(secret, MASK)
    value = _PAIR.sub(_mask_pair, value)
    return _URL.sub(lambda m: url(m.group(0)) if _url_secret(m.group(0)) else m.group(0), value)


def _mask_pair(match: re.Match[str]) -> str:
    found = match.group("value")
    bare, name = found.strip("\"'"), match.group("name")
    if not is_secret_name(name) or name.lower().endswith(VARIABLE_NAMES):
        return match.group(0)
    if not bare or is_reference(bare) or bare == MASK:
        return match.group(0)
    quote = found[0] if found[0] in "\"'" else ""
    return match.group("key") + quote + MASK + quote
