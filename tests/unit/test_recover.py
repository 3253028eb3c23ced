"""Recover: salvage a damaged file into a new one, never touching the damaged file."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.cli import main
from ora_desktop.core import open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.operations.recover import RecoverError, recover
from ora_desktop.core.rawsql import all_rows
from ora_desktop.core.schema import INIT_SQL

MEMORIES = 1500
PAGE = 4096


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("healthy") / "ora.site.db"
    write_agent(path, MEMORIES, seed=3, task=True, now=datetime(2026, 1, 1, tzinfo=UTC))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def _copy(healthy: Path, folder: Path) -> Path:
    target = folder / "damaged.site.db"
    shutil.copyfile(healthy, target)
    return target


def _roots(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT name, rootpage FROM sqlite_master"))
    finally:
        conn.close()


def _overwrite(path: Path, pages: list[int], fill: bytes = b"\xa5") -> None:
    with open(path, "r+b") as handle:
        for number in pages:
            handle.seek((number - 1) * PAGE)
            handle.write(fill * PAGE)


def _digest(path: Path) -> str:
    return "".join(hashlib.sha256(Path(f"{path}{s}").read_bytes()).hexdigest()
                   for s in ("", "-wal") if Path(f"{path}{s}").exists())


def _ids(path: Path) -> set[str]:
    with open_store(path, readonly=True) as store:
        return {r[0] for r in all_rows(store, "SELECT id FROM memories")}


def test_index_roots_overwritten_every_row_is_saved_by_reading_the_table(healthy: Path, tmp_path: Path) -> None:
    damaged = _copy(healthy, tmp_path)
    roots = _roots(damaged)
    _overwrite(damaged, [roots["idx_memories_type"], roots["idx_memories_health"]])
    before = _digest(damaged)
    report = recover(damaged, tmp_path / "out.site.db")
    assert report.memories == MEMORIES and report.from_table == MEMORIES and report.tasks == 1
    assert report.lost_rows == 0
    assert _ids(tmp_path / "out.site.db") == _ids(healthy)
    assert _digest(damaged) == before  # never written


def test_pages_overwritten_at_several_offsets_saves_every_intact_page(healthy: Path, tmp_path: Path) -> None:
    damaged = _copy(healthy, tmp_path)
    pages = damaged.stat().st_size // PAGE
    hit = [_roots(damaged)["memories"], pages // 5, pages // 3, pages // 2]
    _overwrite(damaged, hit)
    before = _digest(damaged)
    report = recover(damaged, tmp_path / "out.site.db")
    saved = _ids(tmp_path / "out.site.db")
    # Rows live on the memories table's leaf pages; at most the rows of the overwritten pages go.
    assert saved <= _ids(healthy) and len(saved) == report.memories
    assert report.memories >= MEMORIES - 3 * 40 and report.from_pages > 0
    with sqlite3.connect(tmp_path / "out.site.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert _digest(damaged) == before


def test_truncated_file_saves_the_pages_that_remain(healthy: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.site.db"
    data = healthy.read_bytes()
    damaged.write_bytes(data[: len(data) // 2 + 100])
    report = recover(damaged, tmp_path / "out.site.db")
    assert 0 < report.memories < MEMORIES
    assert _ids(tmp_path / "out.site.db") <= _ids(healthy)


def test_damaged_wal_saves_the_committed_frames_before_the_damage(tmp_path: Path) -> None:
    path = tmp_path / "walled.site.db"
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    for n in range(60):
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES (?, ?, "
                     "datetime('now'), datetime('now'))", (f"m{n:03}", f"memory number {n} " + "x" * 300))
        conn.commit()
    copy = tmp_path / "damaged.site.db"
    shutil.copyfile(path, copy)
    shutil.copyfile(f"{path}-wal", f"{copy}-wal")
    conn.close()
    wal = Path(f"{copy}-wal")
    size = wal.stat().st_size
    with open(wal, "r+b") as handle:  # garble the second half of the log
        handle.seek(size // 2)
        handle.write(b"\x00\x13" * ((size - size // 2) // 2))
    before = _digest(copy)
    report = recover(copy, tmp_path / "out.site.db")
    saved = _ids(tmp_path / "out.site.db")
    assert 10 < report.memories < 60 and saved == {f"m{n:03}" for n in range(report.memories)}
    assert _digest(copy) == before


def test_recover_refuses_an_existing_out_and_writes_nothing(healthy: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.site.db"
    out.write_bytes(b"mine")
    with pytest.raises(RecoverError, match="already exists"):
        recover(healthy, out)
    assert out.read_bytes() == b"mine"
    with pytest.raises(RecoverError, match="damaged file itself"):
        recover(healthy, healthy.parent / "." / healthy.name)
    assert list(tmp_path.iterdir()) == [out]


def test_cli_recover_reports_and_refuses_in_one_line(capsys, healthy: Path, tmp_path: Path) -> None:
    damaged = _copy(healthy, tmp_path)
    _overwrite(damaged, [_roots(damaged)["idx_memories_type"]])
    out = tmp_path / "out.site.db"
    assert main(["recover", "--db", str(damaged), "--out", str(out)]) == 0
    assert f"recovered {MEMORIES} memories" in capsys.readouterr().out
    assert main(["recover", "--db", str(damaged), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "already exists" in err
    assert main(["recover", "--db", str(tmp_path / "missing.site.db"), "--out", str(tmp_path / "n.site.db")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_nothing_recovered_writes_no_file(capsys, tmp_path: Path) -> None:
    """A file with no readable row leaves no empty agent behind (it would be listed as an agent)."""
    damaged = tmp_path / "damaged.site.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xa5" * (PAGE * 8 - 16))
    out = tmp_path / "out.site.db"
    report = recover(damaged, out)
    assert not report.written and report.memories == 0
    assert "nothing could be recovered" in report.message and "no file was written" in report.message
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["damaged.site.db"]
    assert main(["recover", "--db", str(damaged), "--out", str(out)]) == 1
    assert "nothing could be recovered" in capsys.readouterr().out
    assert not out.exists()
