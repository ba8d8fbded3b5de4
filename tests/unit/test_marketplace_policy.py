from __future__ import annotations

from typing import Any

import pytest

from plugman.config.policy import Policy, marketplace_refusal
from tests.policy_rules import ruled

GH = "https://github.com/acme/plugins.git"
CASES: list[tuple[Policy, str, str, str | None, bool]] = [
    (Policy(), "git", GH, None, True),
    (ruled(known_marketplaces=()), "git", GH, None, False),
    (
        ruled(known_marketplaces=({"source": "github", "repo": "acme/plugins"},)),
        "git",
        GH,
        None,
        True,
    ),
    (ruled(known_marketplaces=({"source": "github", "repo": "acme/*"},)), "git", GH, None, True),
    (
        ruled(known_marketplaces=({"source": "github", "repo": "acme/plugins", "ref": "v1"},)),
        "git",
        GH,
        None,
        False,
    ),
    (ruled(known_marketplaces=({"source": "git", "url": GH},)), "git", GH + "/", None, False),
    (ruled(known_marketplaces=({"hostPattern": r"^github\.com$"},)), "git", GH, None, True),
    (
        ruled(known_marketplaces=({"source": "directory", "path": "/opt/m"},)),
        "directory",
        "/opt/m",
        None,
        True,
    ),
    (ruled(known_marketplaces=({"pathPattern": "^/opt/"},)), "directory", "/home/x", None, False),
    (
        ruled(blocked_marketplaces=({"source": "github", "repo": "ACME/*"},)),
        "git",
        GH,
        "v2",
        False,
    ),
    (
        ruled(
            known_marketplaces=({"source": "github", "repo": "acme/*"},),
            blocked_marketplaces=({"source": "github", "repo": "acme/plugins"},),
        ),
        "git",
        GH,
        None,
        False,
    ),
    (
        ruled(known_marketplaces=({"source": "url", "url": "https://h/m.json"},)),
        "url",
        "https://h/m.json",
        None,
        True,
    ),
]


@pytest.mark.parametrize(("policy", "kind", "location", "ref", "allowed"), CASES)
def test_marketplace_policy(
    policy: Policy, kind: str, location: str, ref: Any, allowed: bool
) -> None:
    assert (marketplace_refusal(kind, location, ref, policy) is None) is allowed
