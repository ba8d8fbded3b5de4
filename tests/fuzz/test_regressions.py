"""The bugs the fuzz tests found, one plain test each (so they stay fixed whatever the fuzzers
generate next)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plugman.config.merge import Layers, Origin, Server, resolve
from plugman.config.policy import marketplace_refusal, url_matches
from plugman.core.errors import PlugmanError
from plugman.extensions import source_locations
from plugman.manifest import frontmatter, jsonloc
from plugman.manifest.diagnostics import Sink, format_path
from plugman.manifest.validate import validate
from plugman.output.findings import FORMATS, validation
from tests.fuzz import harness
from tests.policy_rules import ruled


def write(root: Path, rel: str, text: str) -> Path:
    return harness.write(root, rel, text.encode("utf-8", "surrogatepass"))


def checked(root: Path, file: Path) -> list[str]:
    """Validate `file`, hold every finding to the fuzz checks, render every output format."""
    result = validate([file], source_keys=source_locations)
    harness.check_validation(result, root, render=True)
    return [d.code for d in result.diagnostics]


def test_a_number_with_5000_digits_is_a_located_syntax_error(tmp_path: Path) -> None:
    # was: ValueError (Python's int() digit limit) escaping jsonloc.parse
    with pytest.raises(jsonloc.JsonSyntaxError) as caught:
        jsonloc.parse('{\n  "version": ' + "1" * 5000 + "\n}")
    assert (caught.value.line, caught.value.column) == (2, 14)
    file = write(tmp_path, ".claude-plugin/plugin.json", '{"name": "p", "x": ' + "9" * 4301 + "}")
    assert checked(tmp_path, file) == ["json-syntax"]


HIDDEN = {"hidden-text", "invisible-text"}  # what the escapes decode to (manifest.hidden)


def test_keys_with_control_characters_or_lone_surrogates_print_safely(tmp_path: Path) -> None:
    # was: the key path carried "\x1b[2J" (a terminal escape) as is, and "\ud800" made
    # every output format raise UnicodeEncodeError
    file = write(
        tmp_path,
        ".claude-plugin/plugin.json",
        '{"name": "p", "\\ud800": 1, "\\u001b[2J": 2, "skills": "\\u001f"}',
    )
    result = validate([file], source_keys=source_locations)
    paths = sorted(d.path for d in result.diagnostics if d.code not in HIDDEN)
    # one finding at `skills`: a path not starting with './' is refused as Claude Code refuses
    # it, before its file is looked for
    assert paths == ['["\\u001b[2J"]', '["\\ud800"]', "skills"]
    # and the escapes that decode to terminal controls are hidden text (manifest.hidden)
    assert any(d.code == "hidden-text" for d in result.diagnostics)
    for fmt in FORMATS:
        validation(result, fmt).encode("utf-8")
    harness.check_validation(result, tmp_path)  # hints quoting the path are escaped too
    assert (
        format_path(("a", 'q"\\', "名前", "\U000e0001")) == 'a["q\\"\\\\"]["名前"]["\\U000e0001"]'
    )


def test_sink_escapes_messages_and_hints() -> None:
    sink = Sink("f")
    sink.error("c", "bad \x1b[31m", hint="write './\ud800'")
    [d] = sink.items
    assert (d.message, d.hint) == ("bad \\u001b[31m", "write './\\ud800'")


@pytest.mark.parametrize("name", ['["x"]', '{"a": 1}'])
def test_a_marketplace_name_of_the_wrong_type(tmp_path: Path, name: str) -> None:
    # was: TypeError: unhashable type (the name was looked up in a frozenset)
    file = write(tmp_path, ".claude-plugin/marketplace.json", f'{{"name": {name}, "plugins": []}}')
    assert "schema-type" in checked(tmp_path, file)


@pytest.mark.parametrize("path", ["./" + "a" * 300, "./" + "a/" * 2100])
def test_a_component_path_too_long_for_the_file_system(tmp_path: Path, path: str) -> None:
    # was: OSError (ENAMETOOLONG) from Path.is_symlink()
    manifest = json.dumps({"name": "p", "skills": path, "commands": [path]})
    file = write(tmp_path, ".claude-plugin/plugin.json", manifest)
    assert checked(tmp_path, file).count("missing-file") == 2


def test_a_hook_timeout_too_large_for_a_float(tmp_path: Path) -> None:
    # was: OverflowError from timeout / 60
    handler = '{"type": "command", "command": "x", "timeout": 1' + "0" * 400 + "}"
    file = write(
        tmp_path, "hooks/hooks.json", '{"hooks": {"Stop": [{"hooks": [' + handler + "]}]}}"
    )
    assert checked(tmp_path, file) == ["timeout-in-ms"]


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("created: 2020-13-45", "month must be in 1..12"),  # was: ValueError
        ("n: " + "1" * 5000, "cannot be read"),  # was: ValueError (int() digit limit)
        ("x: !!float 'x'", "could not convert"),  # was: ValueError
        ("x: !!bool 'maybe'", "tagged value"),  # was: KeyError
        ("x: !!timestamp 'x'", "tagged value"),  # was: AttributeError
        ("x: !!int ''", "tagged value"),  # was: IndexError
        ("x: 0x" + "f" * 4000, "too many digits"),  # was: an int Python cannot print or dump
        ("a: &x [*x]", "nested deeper"),  # was: RecursionError
        ("&a {b: *a}", "nested deeper"),  # was: RecursionError
    ],
)
def test_front_matter_values_pyyaml_cannot_convert(block: str, problem: str) -> None:
    sink = Sink("SKILL.md")
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse(f"---\n{block}\n---\nbody\n", sink)
    [d] = sink.items
    assert (d.code, d.line) == ("yaml-syntax", 2)
    assert problem in d.message


def test_yaml_errors_are_located_on_newline_counted_lines() -> None:
    # was: PyYAML's line (a lone "\r" or U+2028 starts a line in YAML), which pointed past the
    # line's end or past the file's
    sink = Sink("SKILL.md")
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse("---\nmeta:\n  au\rr: x\n  v: 'q'\n---\n", sink)
    assert (sink.items[0].line, sink.items[0].column) == (4, 4)
    sink = Sink("SKILL.md")
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse("---\na: 😀\u2028b: c: d\n---\n", sink)
    assert (sink.items[0].line, sink.items[0].column) == (2, 10)


@pytest.mark.parametrize(
    "value", ["2001-02-28 25:61:00", "2001-02-28T10:00:00Z", "2001-2-3 1:02:03"]
)
def test_front_matter_fast_path_leaves_timestamps_to_pyyaml(value: str) -> None:
    # was: the fast path read these as strings; PyYAML reads a timestamp (or fails on 25:61).
    # Its timestamp pattern had "\\ " (a literal space under re.VERBOSE) where PyYAML has " ".
    assert frontmatter.simple_mapping(f"created: {value}") is None


def test_front_matter_fast_path_leaves_long_keys_to_pyyaml() -> None:
    # was: the fast path read a 5000-character key that PyYAML refuses (a simple key is at most
    # 1024 characters), so the same file was valid or not depending on its other lines
    block = "a" * 5000 + ": x"
    assert frontmatter.simple_mapping(block) is None
    sink = Sink("SKILL.md")
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse(f"---\n{block}\n---\n", sink)
    assert frontmatter.simple_mapping("a" * 1000 + ": x") == {"a" * 1000: "x"}


def test_front_matter_aliases_cannot_expand_without_end(tmp_path: Path) -> None:
    # was: minutes of CPU (nine levels of nine aliases each are 387 million values)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    sink = Sink("SKILL.md")
    start = time.perf_counter()
    with pytest.raises(frontmatter.Unreadable):
        frontmatter.parse("---\n" + "\n".join(lines) + "\n---\n", sink)
    assert time.perf_counter() - start < 5
    assert "aliases" in sink.items[0].message
    # an error even in a SKILL.md, where broken YAML is only a warning: plugman's own limit
    file = write(tmp_path, "skills/s/SKILL.md", "---\n" + "\n".join(lines) + "\n---\n")
    assert [
        (d.severity, d.code) for d in validate([file], source_keys=source_locations).diagnostics
    ] == [("error", "yaml-syntax")]


@pytest.mark.parametrize("value", ["[" * 50_000 + "]" * 50_000, "- " * 50_000 + "x"])
def test_deeply_nested_front_matter_does_not_crash_the_interpreter(
    tmp_path: Path, value: str
) -> None:
    # was: a segmentation fault (libyaml's composer recursing in C); run in a child process so
    # a regression fails this test instead of killing the test run
    file = write(tmp_path, "skills/s/SKILL.md", f"---\na: {value}\n---\nbody\n")
    code = (
        "import sys; from pathlib import Path; from plugman.manifest.validate import validate; "
        "from plugman.extensions import source_locations as keys; "
        "print([d.code for d in validate([Path(sys.argv[1])], source_keys=keys).diagnostics])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(file)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "yaml-syntax" in done.stdout


USER = Origin("user", "~/plugman.toml")


@pytest.mark.parametrize("args", [None, 5, {"a": 1}])
def test_resolve_with_args_that_are_not_a_list(args: object) -> None:
    # was: TypeError in resolve.endpoint and policy._matches ("args": null in a .mcp.json is
    # a schema error, but the entry still reaches resolution)
    server = Server("a", {"command": "npx", "args": args}, USER)
    policy = ruled(denied=({"serverCommand": ["npx"]},))
    assert resolve(Layers(None, (server,)), ruled(), {}).servers["a"] == server
    assert [d.reason for d in resolve(Layers(None, (server,)), policy, {}).dropped] == ["policy"]


def test_resolve_with_a_server_command_rule_that_is_not_a_list() -> None:
    # was: TypeError iterating the rule; now a deny rule it cannot read denies every server
    server = Server("a", {"command": "x"}, USER)
    result = resolve(Layers(None, (server,)), ruled(denied=({"serverCommand": 5},)), {})
    assert list(result.servers) == []


@pytest.mark.parametrize("url", ["http://[::1", "http://h:x/", "http://h:99999/"])
def test_urls_that_do_not_parse_match_no_rule_that_needs_them(url: str) -> None:
    # was: ValueError from urlsplit (the bracket) and from .port (where a rule names a port)
    assert not url_matches("http://h:1/*", url)
    assert not url_matches(url, "http://h/")
    assert not url_matches("http://*", url)  # the URL standard does not parse it
    server = Server("a", {"type": "http", "url": url}, USER)
    # fail closed: a URL no parser reads cannot be cleared by a URL deny list
    denied = resolve(Layers(None, (server,)), ruled(denied=({"serverUrl": "http://h:1/*"},)), {})
    assert list(denied.servers) == []
    named = resolve(Layers(None, (server,)), ruled(denied=({"serverName": "b"},)), {})
    assert list(named.servers) == ["a"]


def test_marketplace_policy_with_a_malformed_url_or_pattern() -> None:
    # was: ValueError (urlsplit) and re.error tracebacks from `plugman marketplace add`
    blocked = ruled(blocked_marketplaces=({"hostPattern": "example"},))
    assert marketplace_refusal("git", "https://[::1/x.git", None, blocked) is None
    broken = ruled(blocked_marketplaces=({"hostPattern": "(a"},))
    with pytest.raises(PlugmanError, match="not a valid regular expression"):
        marketplace_refusal("git", "https://github.com/o/r.git", None, broken)
