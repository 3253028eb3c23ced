"""Short forms of content shown in the table, the detail pane's title and the link lists."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ora_desktop.gui.formatting import first_line


def whole_text_first_line(text: str, limit: int) -> str:
    """The rule, read off the whole text: the first line that is not blank, stripped and cut."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


PIECES = st.sampled_from(["a", "word", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x1c", "\u2028", "\u3000",
                          "\x85", "日本", "é", "x" * 40, " " * 40])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=60).map("".join), st.integers(min_value=1, max_value=50))
def test_the_first_line_is_the_first_non_blank_line_stripped_and_cut(text, limit):
    assert first_line(text, limit) == whole_text_first_line(text, limit)


def test_a_megabyte_memory_shows_its_first_line():
    log = "\n\n   2026-01-01 INFO worker started   \n" + "2026-01-01 INFO job done\n" * 100_000
    assert first_line(log) == "2026-01-01 INFO worker started"
    assert first_line("   " + "x" * 1_000_000, 10) == "x" * 9 + "…"
    assert first_line("head" + " " * 5_000 + "\nnext", 10) == "head"  # trailing blanks are not the line
    assert first_line("head" + " " * 5_000 + "tail", 10) == "head" + " " * 5 + "…"
    assert first_line(" \n\t\n") == ""
