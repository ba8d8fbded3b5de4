"""The words of a hook's shell command line (plugman.config.binding.words) are the words
`shlex.split(command, comments=True)` gives, the plain split included."""

from __future__ import annotations

import shlex

from hypothesis import example, given
from hypothesis import strategies as st

from plugman.config.binding import words

PIECES = st.sampled_from(
    [
        "a",
        "b/c.sh",
        " ",
        "  ",
        "\t",
        "\n",
        "'",
        '"',
        "\\",
        "#",
        "$X",
        "é",
        "\xa0",
        "\x0b",
        "=",
        "--config=x",
    ]
)


def shlex_words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


@given(st.lists(PIECES | st.text(max_size=4)).map("".join))
@example("bash scripts/start.sh --flag")
@example("echo a#b")
@example("  node  server.js ")
@example("")
def test_a_command_line_splits_as_shlex_splits_it(command: str) -> None:
    assert words({"command": command}, shell=True) == shlex_words(command)
