"""Credentials for private npm registries, from the user's own `.npmrc` as npm reads them:
`//HOST[:PORT]/PATH/:_authToken=TOKEN` (sent as `Authorization: Bearer`), `:_auth=BASE64` or
`:username=` with `:_password=BASE64` (Basic), each value after `${VAR}` expansion from the
environment. A request gets the entry whose `//HOST/PATH/` is the longest prefix of its URL, so a
token goes only to the registry it names (and plugman.core.download never sends it on to where
that registry redirects).

Only the user's file is read (`$NPM_CONFIG_USERCONFIG`, else `~/.npmrc`), never a project's: a
cloned repository's `.npmrc` could otherwise send the user's `${NPM_TOKEN}` to a registry its
marketplace entry names. Nothing here is logged or shown.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
FIELDS = ("_authToken", "_auth", "username", "_password")


def credentials(url: str, env: Mapping[str, str]) -> dict[str, str]:
    """The `Authorization` header the user's .npmrc gives `url` (none: empty)."""
    entries = _entries(_file(env), env)
    parts = urlsplit(url)
    here = f"//{parts.netloc}{parts.path}"
    scopes = sorted({s for s, _ in entries if here.startswith(s)}, key=len, reverse=True)
    if not scopes:
        return {}
    mine = {field: value for (scope, field), value in entries.items() if scope == scopes[0]}
    if token := mine.get("_authToken"):
        return {"Authorization": f"Bearer {token}"}
    if basic := mine.get("_auth"):
        return {"Authorization": f"Basic {basic}"}
    user, password = mine.get("username"), mine.get("_password")
    if user and password:
        pair = f"{user}:{base64.b64decode(password).decode('utf-8', 'replace')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    return {}


def _file(env: Mapping[str, str]) -> Path:
    given = env.get("NPM_CONFIG_USERCONFIG") or env.get("npm_config_userconfig")
    if given:
        return Path(given).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".npmrc"


def _entries(path: Path, env: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """(`//HOST/PATH/`, field) -> value, for the credential fields of a .npmrc."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or not key.startswith("//") or key.lstrip()[:1] in ("#", ";"):
            continue
        scope, _, field = key.strip().rpartition(":")
        value = VARIABLE.sub(lambda m: env.get(m.group(1), ""), value.strip().strip("\"'"))
        if field in FIELDS and scope and value:
            found[(scope if scope.endswith("/") else scope + "/", field)] = value
    return found
