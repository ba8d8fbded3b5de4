"""Fuzzing resolution: random servers at every scope (entries of every shape, as schema-invalid
files still deliver them), hooks, skills, policies with allow and deny rules of every form,
environments and approvals. `resolve` must not raise, must give the same answer twice and for
servers in any order, and must account for every entry: it wins, is shadowed by a higher scope,
or is dropped with a reason."""

from __future__ import annotations

import json
import random
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from hypothesis import given, note
from hypothesis import strategies as st

from plugman.config.expand import expand_entry
from plugman.config.merge import (
    PRECEDENCE,
    Hook,
    Layers,
    MarkdownComponent,
    Origin,
    Resolved,
    Server,
    content_hash,
    rank,
    resolve,
)
from plugman.config.policy import Policy, marketplace_refusal, refusal, url_matches
from plugman.core.errors import PlugmanError
from plugman.core.identity import web_url
from tests.fuzz import harness
from tests.policy_rules import ruled

RESOLVE_CASES = 3000
URL_CASES = 600
MARKETPLACE_CASES = 300
REASONS = {
    "managed-exclusive",
    "endpoint-duplicate",
    "policy",
    "pending-approval",
    "missing-variable",
    "shadowed",
}

# Small pools, so names, endpoints and variables collide across scopes.
NAMES = ["a", "b", "plugin:p:a", "Weird Name", ""]
VARIABLES = ["HOME", "TOKEN", "A", "UNSET"]
TEXTS = [
    "x",
    "${HOME}",
    "${TOKEN}",
    "${UNSET}",
    "${UNSET:-fallback}",
    "${A}${TOKEN}",
    "${",
    "$HOME",
    "${A:-}",
    "${1BAD}",
    "Bearer ${TOKEN}",
]
COMMANDS = ["npx", "node", "python3", "${A}", "/bin/x", ""]
URLS = [
    "https://a.example.com/mcp",
    "https://A.Example.com./mcp",
    "http://a.example.com:8080/x",
    "https://a.example.com",
    "https://*.example.com/*",
    "https://a.example.com/*",
    "*",
    "http://[::1",
    "http://[::1]:80/",
    "http://h:99999/",
    "http://h:x/",
    "http://h:-1/",
    "${URL}",
    "https://${HOST}/mcp",
    "",
    "not a url",
    "ws://a/",
    "//a.example.com/mcp",
]
PLUGINS = ["p@m", "q@m", "p@other"]
OTHER_SCOPES = [s for s in PRECEDENCE if s != "managed"]
FILES = {
    "managed": ["/etc/plugman/managed-mcp.json"],
    "claude.ai": ["~/.plugman/connectors.json"],
    "user": ["~/plugman.toml"],
    "project": [".mcp.json", "plugman.toml"],
    "local": [".plugman/local.toml"],
}

# Cases are built from a seed with `random` (hypothesis draws the seed): twenty times faster
# than drawing every field, which is what lets this test run thousands of cases. A failure
# prints the case (`note`).


def wild(rnd: random.Random, depth: int = 0) -> Any:
    """Any JSON-like value, for fields of the wrong type."""
    pick = rnd.randrange(9 if depth < 2 else 7)
    if pick == 0:
        return None
    if pick == 1:
        return rnd.random() < 0.5
    if pick == 2:
        return rnd.randint(-3, 3)
    if pick == 3:
        return rnd.choice([0.5, -1e308, 1e308, 2.0])
    if pick in (4, 5):
        return rnd.choice(TEXTS)
    if pick == 6:
        return "".join(chr(rnd.randint(0, 0x2FF)) for _ in range(rnd.randint(0, 4)))
    if pick == 7:
        return [wild(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {rnd.choice(["a", "", "Ab"]): wild(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}


def maybe(rnd: random.Random, make: Callable[[], Any]) -> Any:
    """Mostly a value of the right shape, sometimes any value."""
    return make() if rnd.random() < 0.8 else wild(rnd)


def text(rnd: random.Random) -> str:
    if rnd.random() < 0.8:
        return rnd.choice(TEXTS)
    return "".join(chr(rnd.randint(0x20, 0x7E)) for _ in range(rnd.randint(0, 5)))


def entry(rnd: random.Random) -> dict[str, Any]:
    makers: dict[str, Callable[[], Any]] = {
        "type": lambda: rnd.choice(["stdio", "http", "sse", "ws", "streamable-http"]),
        "command": lambda: rnd.choice(COMMANDS),
        "args": lambda: [rnd.choice(["-y", "pkg", "${A}", "1", text(rnd)]) for _ in range(3)][
            : rnd.randint(0, 3)
        ],
        "env": lambda: {rnd.choice(VARIABLES): text(rnd) for _ in range(rnd.randint(0, 3))},
        "url": lambda: rnd.choice(URLS),
        "headers": lambda: {rnd.choice(["Authorization", "X"]): text(rnd)},
    }
    return {key: maybe(rnd, make) for key, make in makers.items() if rnd.random() < 0.45}


def origin(rnd: random.Random, scope: str) -> Origin:
    if scope == "plugin":
        plugin = rnd.choice(PLUGINS)
        return Origin("plugin", f"/store/{plugin}/.mcp.json", plugin)
    return Origin(scope, rnd.choice(FILES[scope]))


def server(rnd: random.Random, scopes: list[str]) -> Server:
    name = rnd.choice(NAMES) if rnd.random() < 0.9 else text(rnd)
    return Server(name, entry(rnd), origin(rnd, rnd.choice(scopes)))


def hook(rnd: random.Random) -> Hook:
    handler = maybe(rnd, lambda: {"type": "command", "command": rnd.choice(TEXTS)})
    return Hook(
        rnd.choice(["PreToolUse", "Stop", "SessionStart"]),
        rnd.choice([None, "Bash", "*", ""]),
        handler,
        origin(rnd, rnd.choice(PRECEDENCE)),
    )


def skill(rnd: random.Random) -> MarkdownComponent:
    scope = rnd.choice(PRECEDENCE)
    return MarkdownComponent(
        rnd.choice(["s", "t", "u"]), rnd.choice(["a/SKILL.md", "b/SKILL.md"]), origin(rnd, scope)
    )


def rule(rnd: random.Random) -> dict[str, Any]:
    pick = rnd.randrange(4)
    if pick == 0:
        return {"serverName": maybe(rnd, lambda: rnd.choice(NAMES))}
    if pick == 1:
        words = [*COMMANDS, "-y", "pkg"]
        return {"serverCommand": maybe(rnd, lambda: rnd.sample(words, rnd.randint(0, 3)))}
    if pick == 2:
        return {"serverUrl": maybe(rnd, lambda: rnd.choice(URLS))}
    keys = ["serverName", "serverUrl", "serverCommand", "x"]
    return {rnd.choice(keys): wild(rnd) for _ in range(rnd.randint(0, 2))}


def rules(rnd: random.Random) -> tuple[dict[str, Any], ...]:
    return tuple(rule(rnd) for _ in range(rnd.randint(0, 3)))


class Case(NamedTuple):
    layers: Layers
    policy: Policy
    env: dict[str, str]
    approved: frozenset[str]
    references: bool


def make_case(rnd: random.Random) -> Case:
    managed = None
    if rnd.random() < 0.3:
        managed = tuple(server(rnd, ["managed"]) for _ in range(rnd.randint(0, 3)))
    layers = Layers(
        managed,
        tuple(server(rnd, OTHER_SCOPES) for _ in range(rnd.randint(0, 8))),
        tuple(hook(rnd) for _ in range(rnd.randint(0, 5))),
        tuple(skill(rnd) for _ in range(rnd.randint(0, 4))),
    )
    policy = ruled(
        allowed=rules(rnd) if rnd.random() < 0.5 else None,
        denied=rules(rnd),
        allow_all_claude_ai=rnd.random() < 0.5,
        allow_managed_hooks_only=rnd.random() < 0.2,
    )
    variables = [*VARIABLES, "URL", "HOST"]
    values = ["v", "${TOKEN}", "", "a.example.com", "https://a.example.com/mcp"]
    env = {rnd.choice(variables): rnd.choice(values) for _ in range(rnd.randint(0, 4))}
    digests = [content_hash(s.name, s.entry) for s in layers.servers]
    digests += [content_hash(f"{h.event}:{h.matcher or '*'}", h.handler) for h in layers.hooks]
    approved = {d for d in digests if rnd.random() < 0.6}
    if rnd.random() < 0.1:
        approved.add("sha256:0")
    return Case(layers, policy, env, frozenset(approved), rnd.random() < 0.3)


def run(case: Case) -> Resolved:
    return resolve(case.layers, case.policy, case.env, case.approved, case.references)


def sorted_reprs(items: list[Any]) -> list[str]:
    return sorted(repr(item) for item in items)


def check(case: Case) -> None:
    result = run(case)
    assert run(case) == result  # the same answer twice
    turned = run(case._replace(layers=case.layers._replace(servers=case.layers.servers[::-1])))
    assert (turned.servers, turned.shadowed) == (result.servers, result.shadowed)
    assert sorted_reprs(turned.dropped) == sorted_reprs(result.dropped)
    for dropped in result.dropped:
        assert dropped.kind in ("server", "hook", "skill"), dropped
        assert dropped.reason in REASONS, dropped
        assert isinstance(dropped.detail, str) and dropped.detail, dropped
    check_servers(case, result)
    check_hooks(case, result)
    inputs = Counter((s.name, s.origin) for s in case.layers.skills)
    outputs = Counter((s.name, s.origin) for s in result.skills.values())
    outputs.update((d.name, d.origin) for d in result.dropped if d.kind == "skill")
    assert inputs == outputs


def check_servers(case: Case, result: Resolved) -> None:
    layers, policy = case.layers, case.policy
    given_servers = [*(layers.managed or ()), *layers.servers]
    inputs = Counter((s.name, s.origin) for s in given_servers)
    outputs = Counter((s.name, s.origin) for s in result.servers.values())
    outputs.update((s.name, s.origin) for group in result.shadowed.values() for s in group)
    outputs.update((d.name, d.origin) for d in result.dropped if d.kind == "server")
    assert inputs == outputs, "a server neither won, was shadowed nor was dropped with a reason"
    for name, server in result.servers.items():
        assert server.name == name
        scope = server.origin.scope
        if layers.managed is not None:
            assert scope == "managed" or (scope == "claude.ai" and policy.allow_all_claude_ai)
        assert all(rank(s.origin) >= rank(server.origin) for s in result.shadowed.get(name, []))
        assert not any(rule.key == "serverName" and rule.name == name for rule in policy.denied)
        originals = [s for s in given_servers if (s.name, s.origin) == (name, server.origin)]
        fits = []
        for original in originals:
            expanded, missing = expand_entry(original.entry, case.env)
            if refusal(name, expanded, policy, case.env) is not None:
                continue
            if scope == "project" and content_hash(name, original.entry) not in case.approved:
                continue
            if case.references:
                fits.append(original.entry == server.entry)
            else:
                fits.append(not missing and expanded == server.entry)
        assert any(fits), f"{name!r} won without being allowed, approved and complete"


def check_hooks(case: Case, result: Resolved) -> None:
    kept = [json.dumps([h.event, h.matcher, h.handler], sort_keys=True) for h in result.hooks]
    for hook in case.layers.hooks:
        name = f"{hook.event}:{hook.matcher or '*'}"
        same = json.dumps([hook.event, hook.matcher, hook.handler], sort_keys=True)
        dropped = any(
            (d.kind, d.name, d.origin) == ("hook", name, hook.origin) for d in result.dropped
        )
        assert hook in result.hooks or dropped or same in kept, hook
    for hook in result.hooks:
        if case.policy.allow_managed_hooks_only:
            assert hook.origin.scope == "managed", hook
        if hook.origin.scope == "project":
            name = f"{hook.event}:{hook.matcher or '*'}"
            assert content_hash(name, hook.handler) in case.approved, hook


def test_resolve(record_property: Callable[[str, object], None]) -> None:
    count = harness.Cases("resolve", RESOLVE_CASES)

    @count.fuzz
    @given(seed=st.integers(0, 2**32 - 1))
    def fuzz(seed: int) -> None:
        count()
        case = make_case(random.Random(seed))
        note(repr(case))
        check(case)

    fuzz()
    count.report(record_property)


WEB = {"http", "https", "ws", "wss"}  # the schemes an agent connects to a server by


def test_url_patterns(record_property: Callable[[str, object], None]) -> None:
    """Any pattern against any URL: an answer, never an exception; a server URL (a web scheme
    and a host as the agents parse it, the WHATWG URL standard: plugman.core.identity) matches
    itself; one they cannot parse, or that Python's urlsplit refuses, matches nothing."""
    count = harness.Cases("policy.url_matches", URL_CASES)
    urls = st.sampled_from(URLS) | st.text(max_size=20) | st.from_regex(r"\Ahttps?://[^/]{0,12}/?")

    @count.fuzz
    @given(pattern=urls, url=urls)
    def fuzz(pattern: str, url: str) -> None:
        count()
        assert isinstance(url_matches(pattern, url), bool)
        try:
            urlsplit(url).port  # noqa: B018 (does it parse?)
        except ValueError:
            assert not url_matches(url, url)
            return
        found = web_url(url)
        if found is None:  # no agent can connect to it: no rule may name it
            assert not url_matches(url, url), url
            return
        if found.scheme not in WEB or not found.host:  # not a server URL: nothing to hold
            return
        assert url_matches(url, url) or "*" in url, url

    fuzz()
    count.report(record_property)


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=3,
)


def or_any(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, strategy, json_values)


def test_marketplace_rules(record_property: Callable[[str, object], None]) -> None:
    """strictKnownMarketplaces / blockedMarketplaces rules of any shape against any source."""
    count = harness.Cases("policy.marketplace_refusal", MARKETPLACE_CASES)
    fields = {
        "source": or_any(st.sampled_from(["github", "git", "url", "directory", "file"])),
        "repo": or_any(st.sampled_from(["o/r", "o/*", "O/R"])),
        "url": or_any(st.sampled_from(URLS)),
        "path": or_any(st.sampled_from(["/m", "./m"])),
        "ref": or_any(st.sampled_from(["main", "v1"])),
        "hostPattern": or_any(st.sampled_from([r"^github\.com$", ".*", "example", "(a"])),
        "pathPattern": or_any(st.sampled_from(["^/m", ".*", "*"])),
    }
    market_rules = st.dictionaries(
        st.sampled_from(sorted(fields)), json_values, max_size=2
    ) | st.one_of(*(st.fixed_dictionaries({key: value}) for key, value in fields.items()))
    policy = st.builds(
        lambda known, blocked: ruled(known_marketplaces=known, blocked_marketplaces=blocked),
        st.none() | st.lists(market_rules, max_size=3).map(tuple),
        st.lists(market_rules, max_size=3).map(tuple),
    )
    locations = st.sampled_from(
        ["https://github.com/o/r.git", "https://github.com/O/R/", "/m", "./m", *URLS]
    )

    @count.fuzz
    @given(
        kind=st.sampled_from(["directory", "git", "url"]),
        location=locations,
        ref=st.none() | st.sampled_from(["main", "v1"]),
        policy=policy,
    )
    def fuzz(kind: str, location: str, ref: str | None, policy: Policy) -> None:
        count()
        try:
            with warnings.catch_warnings():  # re's FutureWarning on a pattern such as "[["
                warnings.simplefilter("ignore", FutureWarning)
                reason = marketplace_refusal(kind, location, ref, policy)
        except PlugmanError as exc:  # the documented answer to a broken policy pattern
            assert "not a valid regular expression" in exc.message
            return
        assert reason is None or (isinstance(reason, str) and reason)

    fuzz()
    count.report(record_property)
