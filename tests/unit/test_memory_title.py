"""A memory's title: its first non-blank line, as the CLI, undo steps and dialogs name it."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from ora_desktop.core import Memory


def with_content(content: str) -> Memory:
    memory = Memory.__new__(Memory)
    for f in dataclasses.fields(Memory):
        object.__setattr__(memory, f.name, None)
    object.__setattr__(memory, "content", content)
    return memory


def first_non_blank_line(content: str) -> str:
    """The rule, read off every line of the content."""
    for line in content.splitlines():
        if line.strip():
            return line.strip()
    return ""


PIECES = st.sampled_from(["a", "word", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
                          "\x1f", "\x85", "\u2028", "\u2029", "\u3000", "\xa0", "日本"])


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=50).map("".join))
def test_the_title_is_the_first_non_blank_line_stripped(content):
    assert with_content(content).title == first_non_blank_line(content)


def test_the_title_of_a_log_of_megabytes():
    log = "\n  \n\t2026-01-01 INFO worker started  \r\n" + "2026-01-01 INFO job done\n" * 100_000
    assert with_content(log).title == "2026-01-01 INFO worker started"
    assert with_content("one line, no end").title == "one line, no end"
    assert with_content(" \n \n").title == ""
