"""Sessions: imported conversation memories keep their session, project and model as tags;
``list --session S`` (and ``Store.conversation``) reads one conversation oldest first, like the
seed's ``get_conversation_history``; ``session:S`` filters a search."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import create_database, open_store, tag_facets
from ora_desktop.core.exchange import ImportOptions
from ora_desktop.core.search import search
from tests.unit.exchange_support import chatlog_db, context_memory_db
from tests.unit.test_cli_helpers import assert_one_line_error, cli


@pytest.fixture
def target(ora_home: Path) -> Path:
    path = ora_home / "sites" / "s" / "ora.site.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    create_database(path)
    return path


T = ("--site", "s", "--agent", "ora")


@pytest.fixture
def imported(tmp_path: Path, target: Path) -> Path:
    with open_store(target) as store:
        store.import_from(context_memory_db(tmp_path / "context.db"), options=ImportOptions(messages=True))
        store.import_from(chatlog_db(tmp_path / "chat.db"))
    return target


def test_imports_keep_session_project_and_model_as_tags(imported: Path) -> None:
    facets = tag_facets(imported)
    # context-memory: summary, snippet and two key messages of one session, a summary of the other;
    # chat log: s2's message repeats s1's text and collapsed into it; the summary of both is s1's too.
    assert facets["session"] == {"sess-auth-01": 4, "sess-cors-02": 1, "s1": 3}
    assert facets["project"] == {"/home/ana/src/shop": 4, "/home/ana/src/api": 1}
    assert facets["model"] == {"gpt-4o": 2}
    assert facets["topic"]["jwt"] == 4  # topics stay bare


def test_conversation_lists_one_session_oldest_first(capsys, imported: Path) -> None:
    with open_store(imported, readonly=True) as store:
        conversation = store.conversation("sess-auth-01")
        assert store.conversation("sess-auth") == []  # a session id is matched whole
        assert [m.title.split(" ")[0] for m in store.conversation("s1")] == ["user:", "assistant:", "Install"]
    assert [m.title.split(" ")[0] for m in conversation] == ["user:", "assistant:", "Signs", "Added"]
    listed = cli(capsys, "list", *T, "--session", "sess-auth-01", "--json").json()
    assert [m["id"] for m in listed["memories"]] == [m.id for m in conversation]
    newest = cli(capsys, "list", *T, "--session", "sess-auth-01", "--descending", "--json").json()
    assert [m["id"] for m in newest["memories"]] == [m.id for m in reversed(conversation)]
    paged = cli(capsys, "list", *T, "--session", "sess-auth-01", "--limit", "3", "--json").json()
    rest = cli(capsys, "list", *T, "--session", "sess-auth-01", "--limit", "3", "--after", paged["next_after"],
               "--json").json()
    assert [m["id"] for m in paged["memories"] + rest["memories"]] == [m.id for m in conversation]
    assert cli(capsys, "list", *T, "--session", "sess-auth-01", "--count").out.strip() == "4"
    table = cli(capsys, "list", *T, "--session", "sess-cors-02").out
    assert "Fixed the CORS preflight" in table and "JWT" not in table
    assert_one_line_error(cli(capsys, "list", *T, "--session", " "), "session")


def test_session_filter_in_search(capsys, imported: Path) -> None:
    with open_store(imported, readonly=True) as store:
        ids = {m.id for m in store.conversation("sess-auth-01")}
    assert {h.id for h in search(imported, "session:sess-auth-01").hits} == ids
    assert {h.id for h in search(imported, "refresh session:sess-auth-01").hits} < ids
    assert not ids & {h.id for h in search(imported, "-session:sess-auth-01 tag:topic=jwt OR cors").hits}
    data = cli(capsys, "search", "session:sess-cors-02", *T, "--json").json()
    assert [h["memory"]["content"].split("\n")[0] for h in data["hits"]] == ["Fixed the CORS preflight on /api/orders"]
