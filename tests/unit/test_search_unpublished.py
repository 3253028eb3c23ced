"""The search index never moves past a commit SQL cannot see yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core.search import search
from tests.unit.log_support import agent, index_header, write_index_header
from tests.unit.search_support import ids, make_file


@pytest.mark.parametrize("log", ["appended to", "restarted by"])
def test_an_edit_in_the_log_but_not_yet_published_is_found_once_it_is(ora_home: Path, log: str) -> None:
    """A writer appends a commit's frames to the log before the wal-index publishes them; a
    refresh in between must not take that commit as read (SQL showed the old text, and an edit of
    an existing memory was then missed by search for good). Replayed exactly: the index header is
    put back as it was before the edit, then restored. The edit either follows other frames in
    the log or is the first of a log it restarts."""
    rows = [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 20} for i in range(1, 301)]
    rows[9]["content"] = "an okapi grazes"
    db = make_file(ora_home / "agent.site.db", rows)
    assert ids(search(db, "okapi")) == ["m10"]  # built; its reader keeps the log from now on
    if log == "appended to":
        agent(db, "UPDATE memories SET content = 'a warm-up edit' WHERE id = 'm2'")
        assert ids(search(db, "okapi")) == ["m10"]  # the log read to its end
    before = index_header(db)
    agent(db, "UPDATE memories SET content = 'a giraffe grazes' WHERE id = 'm10'")  # updated_at kept
    after = index_header(db)
    write_index_header(db, before)  # the edit's frames are in the log, not yet published
    assert ids(search(db, "giraffe")) == []
    write_index_header(db, after)  # now it is
    assert ids(search(db, "giraffe")) == ["m10"]
    assert ids(search(db, "okapi")) == []
