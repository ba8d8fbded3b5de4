"""Hiding secret values in anything plugman shows (unless `--show-secrets`).

A value is secret when it sits under an env or header name that looks like a credential (a
`_`/`-`-separated part such as TOKEN, SECRET, PASSWORD, KEY, AUTH, COOKIE, PAT, DSN,
CREDENTIALS), in an Authorization header, or in a URL's password or credential-like query.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")  # no default: a default may be secret
CREDENTIAL = re.compile(
    r"(?:^|[_-])(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|APIKEY|AUTH|AUTHORIZATION|COOKIE|PAT|"
    r"DSN|CREDENTIALS?|SESSION)(?:$|[_-])",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    return bool(CREDENTIAL.search(name))


def is_reference(value: Any) -> bool:
    """True when `value` holds only `${VAR}` references (after an auth scheme): nothing secret."""
    if not isinstance(value, str) or "${" not in value:
        return False
    return REFERENCE.sub("", value).strip() in ("", "Bearer", "Basic", "Token")


def entry(value: dict[str, Any]) -> dict[str, Any]:
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
    return masked


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
