"""userConfig values: checking what is given, and what entries get (plugman.config.user_config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugman.config import user_config
from plugman.core.errors import UsageError
from plugman.manifest.model import UserOption

KEY = UserOption("api_key", "string", "API key", "Your key", sensitive=True, required=True)
URL = UserOption("endpoint", "string", "Endpoint", "Base URL", required=True)
RETRIES = UserOption("retries", "number", "Retries", "Attempts", default=2, min=0, max=5)
FLAG = UserOption("verbose", "boolean", "Verbose", "More output")
TAGS = UserOption("tags", "string", "Tags", "Labels", multiple=True, max=5)
OPTIONS = (KEY, URL, RETRIES, FLAG, TAGS)


def test_values_are_checked_and_normalised(tmp_path: Path) -> None:
    folder = UserOption("root", "directory", "Root", "A folder")
    given = {"retries": "3.0", "verbose": "YES", "tags": "a, b", "root": str(tmp_path)}
    assert user_config.check("p@m", (*OPTIONS, folder), given) == {
        "retries": "3",
        "verbose": "true",
        "tags": ["a", "b"],
        "root": str(tmp_path.resolve()),
    }


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"retries": "6"}, "p@m: option retries = '6' is not a number from 0 to 5"),
        ({"retries": "nan"}, "is not a finite number"),
        ({"verbose": "maybe"}, "is not a boolean"),
        ({"tags": "a,toolong"}, "is not a text of -inf to 5 characters"),
        ({"api_key": ""}, None),
        ({"nope": "1"}, "p@m has no option 'nope'"),
    ],
)
def test_bad_values_are_usage_errors(given: dict[str, str], message: str | None) -> None:
    if message is None:
        user_config.check("p@m", OPTIONS, given)
        return
    with pytest.raises(UsageError) as caught:
        user_config.check("p@m", OPTIONS, given)
    assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_a_sensitive_value_is_never_in_an_error() -> None:
    option = UserOption("pin", "number", "PIN", "Secret", sensitive=True, max=10)
    with pytest.raises(UsageError) as caught:
        user_config.check("p@m", (option,), {"pin": "123456"})
    assert "123456" not in str(caught.value) and "(hidden)" in str(caught.value)


def test_values_put_references_for_sensitive_ones() -> None:
    stored = {"endpoint": "https://x.example.com"}
    found = user_config.values("my-plugin", OPTIONS, stored, {"api_key": "s3cret!"}.get, {})
    assert found.text["api_key"] == "${PLUGMAN_OPT_MY_PLUGIN_API_KEY}"
    assert found.secrets == {"PLUGMAN_OPT_MY_PLUGIN_API_KEY": "s3cret!"}
    assert found.plain()["api_key"] == "s3cret!"
    assert found.text["retries"] == "2" and found.text["verbose"] == "" and not found.unset
    entry = {"url": "${user_config.endpoint}/mcp", "headers": {"K": "${user_config.api_key}"}}
    assert user_config.put(entry, found.text) == {
        "url": "https://x.example.com/mcp",
        "headers": {"K": "${PLUGMAN_OPT_MY_PLUGIN_API_KEY}"},
    }
    assert found.env(plain=True)["CLAUDE_PLUGIN_OPTION_API_KEY"] == "s3cret!"


def test_missing_required_and_environment_fallback() -> None:
    none = user_config.values("p", OPTIONS, {}, lambda key: None, {})
    assert none.unset == {"api_key", "endpoint"}
    env = {"PLUGMAN_OPT_P_API_KEY": "from-ci"}
    ci = user_config.values("p", OPTIONS, {}, lambda key: None, env)
    assert ci.unset == {"endpoint"} and ci.secrets == {"PLUGMAN_OPT_P_API_KEY": "from-ci"}
    assert user_config.used({"a": ["${user_config.x}", "${user_config.y_1}"]}) == {"x", "y_1"}
