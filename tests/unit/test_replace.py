"""Find and replace across memories: a preview first, then one statement and one undo step."""

from __future__ import annotations

import sqlite3

import pytest

from ora_desktop.cli import main
from ora_desktop.core import InvalidValue, open_store
from ora_desktop.core.operations import undo
from ora_desktop.core.operations.replace import plan_replace, replace_text

ROWS = [("m1", "Deploys go out from staging every Monday", "fact", 5),
        ("m2", "staging is rebuilt nightly; staging keys rotate", "fact", 5),
        ("m3", "Production is untouched", "fact", 5),
        ("m4", "STAGING in capitals is another word", "fact", 5)]


def contents(path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT id, content FROM memories"))


def test_preview_then_replace_then_undo(seed_db) -> None:
    path = seed_db(ROWS)
    before = contents(path)
    with open_store(path) as store:
        plan = plan_replace(store, ["m1", "m2", "m3", "m4"], "staging", "preprod")
        assert (plan.memories, plan.matches) == (2, 3)
        assert [p.id for p in plan.preview] == ["m1", "m2"]
        assert "from staging every" in plan.preview[0].before and "from preprod every" in plan.preview[0].after
        assert contents(path) == before  # a preview writes nothing
        done = replace_text(store, ["m1", "m2", "m3", "m4"], "staging", "preprod")
        assert done.change.changed == {"m1", "m2"}
    after = contents(path)
    assert after["m2"] == "preprod is rebuilt nightly; preprod keys rotate"
    assert after["m3"] == before["m3"] and after["m4"] == before["m4"]  # case-sensitive, as written
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT sync_status FROM memories WHERE id = 'm1'").fetchone() == ("pending",)
    with open_store(path) as store:
        undo.undo(store)  # one step puts every text back
    assert contents(path) == before


def test_bad_input_changes_nothing(seed_db) -> None:
    path = seed_db(ROWS)
    before = contents(path)
    with open_store(path) as store:
        with pytest.raises(InvalidValue, match="cannot be empty"):
            replace_text(store, ["m1"], "", "x")
        assert not replace_text(store, ["m3"], "staging", "x").change  # nothing held it
    assert contents(path) == before


def test_cli_replace_previews_with_dry_run_and_replaces(capsys, seed_db) -> None:
    path = seed_db(ROWS)
    assert main(["replace", "--db", str(path), "staging", "preprod", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would replace 3 times in 2 memories" in out and "m1" in out
    assert "preprod" not in contents(path)["m1"]
    assert main(["replace", "--db", str(path), "staging", "preprod", "--id", "m1"]) == 0
    assert "replaced 1 time in 1 memory" in capsys.readouterr().out
    assert contents(path)["m1"] == "Deploys go out from preprod every Monday"
    assert contents(path)["m2"].startswith("staging")  # only the memory named
    assert main(["replace", "--db", str(path), "", "x"]) == 2
    assert "cannot be empty" in capsys.readouterr().err
