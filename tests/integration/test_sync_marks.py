"""Pins and typed links in sync, two local files and a real PostgreSQL: made or removed on one
machine, made or removed on the other after both sync; where both changed, the later wins; a
server of the earlier schema gains the table without a version change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from ora_desktop.core.operations.links import add_link, remove_link
from ora_desktop.core.operations.pins import pin, unpin
from ora_desktop.core.sync.server import DDL, SCHEMA_VERSION
from tests.integration.sync_support import Machine

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Machine, Machine]:
    return Machine(tmp_path, "laptop"), Machine(tmp_path, "desktop")


def _shared(url: str, a: Machine, b: Machine) -> None:
    with a.store() as store:
        for name in ("deploy", "freeze", "rollback"):
            store.add(f"The {name} rule", id=name)
    a.sync(url)
    b.sync(url)


def _marks(machine: Machine) -> tuple[list[str], list[tuple[str, str, str]]]:
    with machine.store(readonly=True) as store:
        return store.pinned(), sorted((link.source, link.target, link.type) for link in _typed(store))


def _typed(store):
    from ora_desktop.core.links import typed_links

    return typed_links(store)


def test_a_pin_and_a_typed_link_travel_both_ways_and_so_do_their_removals(pg_url: str, homes) -> None:
    a, b = homes
    _shared(pg_url, a, b)
    with a.store() as store:
        pin(store, "deploy")
        add_link(store, "deploy", "freeze", "contradicts")
    first = a.sync(pg_url)
    assert first.marks_pushed == 2 and "pins and typed links pushed 2" in first.summary
    got = b.sync(pg_url)
    assert got.marks_pulled == 2 and {"deploy", "freeze"} <= got.change.changed
    assert _marks(b) == (["deploy"], [("deploy", "freeze", "contradicts")])
    with b.store() as store:  # the other way: removals, and a new pin
        unpin(store, "deploy")
        remove_link(store, "deploy", "freeze", "contradicts")
        pin(store, "rollback")
        add_link(store, "rollback", "deploy", "supports")
    b.sync(pg_url)
    a.sync(pg_url)
    assert _marks(a) == _marks(b) == (["rollback"], [("rollback", "deploy", "supports")])
    again = a.sync(pg_url)  # settled: nothing moves
    assert (again.marks_pulled, again.marks_pushed) == (0, 0)


@pytest.mark.parametrize(("pinned_at", "removed_at", "winner"), [
    ("2026-03-01 10:00:00", "2026-03-01 11:00:00", "removal"),
    ("2026-03-01 12:00:00", "2026-03-01 11:00:00", "pin"),
])
def test_where_both_changed_the_later_change_wins(pg_url: str, homes, pinned_at: str, removed_at: str,
                                                  winner: str) -> None:
    a, b = homes
    _shared(pg_url, a, b)
    with a.store() as store:
        pin(store, "freeze")
    with b.store() as store:  # b pinned and unpinned it too, unsynced
        pin(store, "freeze")
        unpin(store, "freeze")
    with sqlite3.connect(a.path) as conn:
        conn.execute("UPDATE ora_desktop_pins SET pinned_at = ?", (pinned_at,))
    with sqlite3.connect(b.path) as conn:
        conn.execute("UPDATE ora_desktop_mark_removals SET removed_at = ?", (removed_at,))
    a.sync(pg_url)
    settled = b.sync(pg_url)
    a.sync(pg_url)
    expected = [] if winner == "removal" else ["freeze"]
    assert _marks(a)[0] == _marks(b)[0] == expected
    assert settled.marks_pulled == (1 if winner == "pin" else 0)


def test_a_server_of_the_earlier_schema_gains_the_marks_table_and_keeps_its_version(pg_url: str, homes) -> None:
    a, b = homes
    start, end = DDL.index("CREATE SEQUENCE IF NOT EXISTS ora_marks_change_seq"), DDL.index("INSERT INTO ora_sync_meta")
    earlier = DDL[:start] + DDL[end:]
    assert "ora_marks" not in earlier
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the previous release made it
        conn.execute(earlier)
        conn.execute("UPDATE ora_sync_meta SET value = '2' WHERE key = 'schema_version'")
    _shared(pg_url, a, b)
    with a.store() as store:
        pin(store, "rollback")
    a.sync(pg_url)
    b.sync(pg_url)
    assert _marks(b)[0] == ["rollback"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        version = conn.execute("SELECT value FROM ora_sync_meta WHERE key = 'schema_version'").fetchone()[0]
        rows = conn.execute("SELECT kind, key, present FROM ora_marks").fetchall()
    # The version an earlier ora-desktop checks is unchanged: it keeps syncing memories here.
    assert version == str(SCHEMA_VERSION) == "2" and rows == [("pin", "rollback", True)]


def test_a_pin_on_a_local_only_memory_stays_on_its_machine(pg_url: str, homes) -> None:
    a, b = homes
    _shared(pg_url, a, b)
    with a.store() as store:
        store.add("Only on this laptop", id="private", sync_status="local_only")
        pin(store, ["private", "deploy"])
    assert a.sync(pg_url).marks_pushed == 1
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT key FROM ora_marks").fetchall() == [("deploy",)]
    b.sync(pg_url)
    assert _marks(b)[0] == ["deploy"] and _marks(a)[0] == ["private", "deploy"]
