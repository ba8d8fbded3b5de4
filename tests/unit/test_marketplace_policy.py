from __future__ import annotations

from typing import Any

import pytest

from plugman.config.policy import Policy, marketplace_refusal, parse
from plugman.core.errors import PlugmanError
from plugman.manifest.diagnostics import Sink
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
    # one repository, however spelled (plugman.core.identity): a trailing slash is the same
    (ruled(known_marketplaces=({"source": "git", "url": GH},)), "git", GH + "/", None, True),
    (ruled(known_marketplaces=({"source": "git", "url": GH},)), "git", GH[:-4] + "x", None, False),
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


def test_rules_are_parsed_once_with_located_diagnostics() -> None:
    sink = Sink("managed-settings.toml")
    settings = {
        "blockedMarketplaces": [
            {"hostPattern": "(a", "note": "x"},
            "acme",
            {"source": "github", "repo": ["acme/*"]},
        ],
        "allowedMcpServers": {"serverName": "fs"},
        "allowManagedHooksOnly": "yes",
    }
    policy = parse(settings, sink)
    found = {(d.severity, d.path, d.code) for d in sink.items}
    assert found == {
        ("error", "blockedMarketplaces[0].hostPattern", "policy-pattern"),
        ("warning", "blockedMarketplaces[0].note", "unknown-key"),
        ("error", "blockedMarketplaces[1]", "policy-type"),
        ("error", "blockedMarketplaces[1]", "policy-unreadable"),
        ("error", "blockedMarketplaces[2].repo", "policy-type"),
        ("error", "blockedMarketplaces[2]", "policy-unreadable"),
        ("error", "allowedMcpServers", "policy-type"),
        ("error", "allowManagedHooksOnly", "policy-type"),
    }
    assert policy.allowed == ()  # not a list: nothing is allowed until it is fixed
    assert policy.allow_managed_hooks_only  # unreadable: the stricter value
    # the rule with a broken pattern is kept: matching with it still refuses, never allows;
    # the two rules it cannot read block every marketplace until they are fixed
    rules = policy.blocked_marketplaces
    assert [(r.host_pattern, r.unreadable) for r in rules] == [("(a", False), *[(None, True)] * 2]
    with pytest.raises(PlugmanError, match="not a valid regular expression"):
        marketplace_refusal("git", GH, None, policy)
    without_pattern = policy._replace(blocked_marketplaces=rules[1:])
    assert "cannot read" in (marketplace_refusal("git", GH, None, without_pattern) or "")
