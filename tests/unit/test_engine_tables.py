"""The engine's own tables: one module owns their DDL, a version, ordered migrations at the first
write, a refusal to write a newer file, and a fixture of the tables files hold today."""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

import ora_desktop
from ora_desktop.core import engine_tables
from ora_desktop.core.operations import edits, journal, review, undo
from ora_desktop.core.sync import local

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "engine_v1.site.db"
PACKAGE = Path(ora_desktop.__file__).resolve().parent


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    """A copy of a file written before the engine tables had a version (every table present)."""
    target = tmp_path / "fixture-site" / "ora.site.db"
    target.parent.mkdir()
    shutil.copyfile(FIXTURE, target)
    return target


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


def _rows(path: Path, table: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()


def test_a_file_from_before_versions_is_migrated_at_the_first_write_and_keeps_everything(old_file: Path) -> None:
    before = {t: _rows(old_file, t) for t in ("ora_desktop_trash", "ora_desktop_trash_links", "ora_desktop_journal",
                                             "ora_desktop_review", "ora_desktop_original_bytes", "ora_desktop_state",
                                             "ora_desktop_sync_tombstones")}
    with ora_desktop.open_store(old_file, readonly=True) as store:  # reading changes nothing
        assert local.states(store)[0].clock_offset is None
    with ora_desktop.open_store(old_file) as store:
        kept = next(m for m in store.list(limit=None) if m.importance == 8)
        edits.edit(store, kept.id, {"importance": 9})
    with sqlite3.connect(old_file) as conn:
        version = conn.execute("SELECT value FROM ora_desktop_state WHERE key = ?",
                               (engine_tables.VERSION_KEY,)).fetchone()
        sync_columns = {r[1] for r in conn.execute("PRAGMA table_info(ora_desktop_sync)")}
    assert version == (str(engine_tables.VERSION),)
    assert {"clock_offset", "push_id"} <= sync_columns
    for table, rows in before.items():
        after = _rows(old_file, table)
        if table == "ora_desktop_journal":  # one step more; version 3 gave every step an actor (NULL before),
            # version 4 an undone mark (0: done)
            assert [r[: len(rows[0])] for r in after[: len(rows)]] == rows and len(after) == len(rows) + 1
            assert all(r[-2:] == (None, 0) for r in after[: len(rows)])
        elif table == "ora_desktop_state":
            assert set(rows) < set(after)
        else:
            assert after == rows, table
    # What the old tables hold still works: the trash restores, the journal undoes, marks and sync state read.
    with ora_desktop.open_store(old_file) as store:
        assert undo.undo(store).change  # the edit just made
        deleted = store.trash()[0]
        assert deleted.memory.content == "A memory deleted before the upgrade"
        edits.restore(store, [deleted.trash_id])
        assert store.get(deleted.memory.id).content == deleted.memory.content
        assert [e.label for e in journal.entries(store)]
        result = review.review(store, "fixture")
        assert [item.note for item in result.items if "flagged" in item.reasons] == ["check the vault path"]
        state = local.states(store)[0]
        assert (state.site, state.agent, state.pushed) == ("fixture-site", "ora", 4)


def test_an_older_journal_read_only_lists_its_steps_and_nothing_to_redo(old_file: Path) -> None:
    """A file journalled before steps could be undone and redone (no ``undone`` column) is read as
    it is: every step can be undone, none redone, and reading changes nothing."""
    digest = _digest(old_file)
    with ora_desktop.open_store(old_file, readonly=True) as store:
        steps = journal.entries(store)
        assert steps and not any(e.undone for e in steps)
        assert journal.redoable(store) == [] and journal.next_steps(store).undo == steps[0]
    assert _digest(old_file) == digest


def test_a_file_written_by_a_newer_version_is_not_written(old_file: Path) -> None:
    with sqlite3.connect(old_file) as conn:
        conn.execute("INSERT INTO ora_desktop_state (key, value) VALUES (?, ?)",
                     (engine_tables.VERSION_KEY, str(engine_tables.VERSION + 1)))
    digest = _digest(old_file)
    with ora_desktop.open_store(old_file) as store:
        memory = store.list(limit=1)[0]
        newer, known = engine_tables.VERSION + 1, engine_tables.VERSION
        wording = (rf"written by a newer ora-desktop \(version {newer}; this one knows up to {known}\); "
                   r"upgrade ora-desktop .* nothing was")
        with pytest.raises(engine_tables.NewerTables, match=wording):
            store.update(memory.id, importance=2)
        assert store.get(memory.id).importance == memory.importance  # reading still works
    assert _digest(old_file) == digest


def test_a_new_file_gets_the_version_with_its_first_engine_table(tmp_path: Path) -> None:
    path = ora_desktop.OraHome(tmp_path).create_agent("site", "ora")
    with ora_desktop.open_store(path, journal_as=None) as store:  # not journalled: the engine's own writes
        memory = store.add("plain edits add no engine table")
        with sqlite3.connect(path) as conn:
            assert not conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'ora_desktop%'").fetchall()
        store.delete(memory.id)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM ora_desktop_state WHERE key = ?",
                            (engine_tables.VERSION_KEY,)).fetchone() == (str(engine_tables.VERSION),)


def test_the_tables_the_fixture_holds_are_created_exactly_as_then() -> None:
    """A later change to a table's DDL must come with a migration (and a new fixture)."""
    with sqlite3.connect(FIXTURE) as conn:
        old = {name: sql for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'ora_desktop%'")}
    fresh = sqlite3.connect(":memory:")
    engine_tables.create(fresh, engine_tables.DDL)
    new = {name: sql for name, sql in fresh.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'ora_desktop%'")}
    changed = {name for name in old if new[name] != old[name]}
    # Version 2 added two columns to ora_desktop_sync and versions 3 and 4 one each to ora_desktop_journal,
    # through their migrations; every other table is as it was.
    assert changed == {"ora_desktop_sync", "ora_desktop_journal"}
    assert {s.table for steps in engine_tables.MIGRATIONS.values() for s in steps} == changed


def test_no_other_module_creates_an_engine_table() -> None:
    pattern = re.compile(r"CREATE (TABLE|INDEX)[^\n]*ora_desktop_", re.IGNORECASE)
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name != "engine_tables.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_tables_an_older_version_added_meanwhile_are_migrated_before_new_ones_are_stamped(tmp_path: Path) -> None:
    path = ora_desktop.OraHome(tmp_path).create_agent("site", "ora")
    with ora_desktop.open_store(path, journal_as=None) as store:  # not journalled: no journal table either
        store.add("the first write finds no engine tables")
        with sqlite3.connect(FIXTURE) as old, sqlite3.connect(path) as other:  # an older ora-desktop, meanwhile
            other.execute(old.execute("SELECT sql FROM sqlite_master WHERE name = 'ora_desktop_sync'").fetchone()[0])
        with store.write():
            local.ensure_tables(store)
    with sqlite3.connect(path) as conn:
        assert {"clock_offset", "push_id"} <= {r[1] for r in conn.execute("PRAGMA table_info(ora_desktop_sync)")}
