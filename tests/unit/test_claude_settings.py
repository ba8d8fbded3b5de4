"""Claude Code's marketplace sources as plugman's `marketplace add` text
(plugman.config.claude_settings.source_text), each form of the settings reference."""

from __future__ import annotations

from typing import Any

import pytest

from plugman.config.claude_settings import enabled_plugins, marketplaces, source_text
from plugman.config.claude_source import ClaudeSource

ADDABLE = [
    ({"source": "directory", "path": "/m"}, "/m"),
    ({"source": "file", "path": "/m/catalog.json"}, "/m/catalog.json"),
    ({"source": "git", "url": "https://git.test/m.git", "ref": "v1"}, "https://git.test/m.git#v1"),
    ({"source": "github", "repo": "o/r"}, "o/r"),
    ({"source": "github", "repo": "o/r", "ref": "main"}, "o/r@main"),
    ({"source": "url", "url": "https://x.test/marketplace.json"}, "https://x.test/marketplace.json"),
]  # fmt: skip

NOT_ADDABLE = [
    ({"source": "github", "repo": "o/r", "path": "sub"}, "path inside"),
    ({"source": "git", "url": "https://git.test/m.git", "path": "sub"}, "path inside"),
    ({"source": "url", "url": "https://x.test/m.json", "headers": {"A": "b"}}, "headers"),
    ({"source": "settings", "name": "n", "plugins": []}, "settings source"),
    ({"source": "npm", "package": "p"}, "npm source"),
    ({}, "unknown source"),
]


@pytest.mark.parametrize(("source", "text"), ADDABLE)
def test_each_source_plugman_can_add_becomes_its_text(source: dict[str, Any], text: str) -> None:
    assert source_text(ClaudeSource.of(source))[0] == text


@pytest.mark.parametrize(("source", "why"), NOT_ADDABLE)
def test_a_source_plugman_cannot_add_says_why(source: dict[str, Any], why: str) -> None:
    text, words = source_text(ClaudeSource.of(source))
    assert text is None and why in words


def test_both_spellings_and_only_booleans_are_read() -> None:
    settings = {
        "additionalMarketplaces": {"a": {"source": {"source": "directory", "path": "/old"}}},
        "extraKnownMarketplaces": {
            "a": {"source": {"source": "directory", "path": "/new"}},
            "b": "not an object",
        },
        "enabledPlugins": {"x@a": True, "y@a": False, "z@a": "yes"},
    }
    assert marketplaces(settings) == {"a": ClaudeSource.of({"source": "directory", "path": "/new"})}
    assert enabled_plugins(settings) == {"x@a": True, "y@a": False}
