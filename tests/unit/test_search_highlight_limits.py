"""Highlighting what an agent wrote: huge memories are highlighted in a capped window, NULs never shift marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core.search import search
from tests.unit.maintenance_support import make_db


def test_highlights_on_a_huge_memory_are_windowed_and_capped(ora_home: Path) -> None:
    from ora_desktop.core.search.highlight import MAX_SPANS, WINDOW_CHARS, match_spans

    text = "intro words " * 5000 + "zanzibar filler " * 60_000  # the first match far into the text
    spans = match_spans(text, "zanzibar")
    first = text.index("zanzibar")
    assert spans[0] == (first, first + len("zanzibar"))
    assert 0 < len(spans) <= MAX_SPANS
    assert all(text[s:e] == "zanzibar" for s, e in spans)
    assert spans[-1][1] - spans[0][0] <= WINDOW_CHARS


@pytest.mark.parametrize("poison", ["\x00", "\x02", "\x03"])
def test_a_nul_or_marker_byte_in_the_content_does_not_shift_highlights(ora_home: Path, poison: str) -> None:
    from ora_desktop.core.search.highlight import match_spans

    text = f"visible{poison} hiddensecret and more"
    (span,) = match_spans(text, "hiddensecret")
    assert text[span[0]:span[1]] == "hiddensecret"
    db = make_db(ora_home / "sites" / "s" / "nul.site.db", [{"id": "n", "content": text}])
    (hit,) = search(db, "hiddensecret").hits
    assert [hit.memory.content[s:e] for s, e in hit.spans] == ["hiddensecret"]
