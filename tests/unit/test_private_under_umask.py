"""Whatever the umask, what Ora Desktop creates is its owner's only: files 0600, folders 0700.

Each test runs under ``umask 000`` (where a plain ``open``/``mkdir``/``sqlite3.connect`` gives
0666/0777) and checks mode bits, since tests run as root and permissions do not bind.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ora_desktop.core import open_store, paths
from ora_desktop.core.private import touch_private
from ora_desktop.core.search.vectors import get_vectors
from tests.unit.test_cli_helpers import cli


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    yield
    os.umask(old)


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(os.lstat(path).st_mode))


def test_add_create_makes_a_private_file_in_private_new_folders(capsys, ora_home: Path) -> None:
    result = cli(capsys, "add", "the deploy key is in vault", "--site", "new-site", "--agent", "ora", "--create")
    assert result.code == 0, result
    site = ora_home / "sites" / "new-site"
    db = site / "ora.site.db"
    # the new site folder and the sites folder above it; the -wal/-shm SQLite made beside the file
    assert {p.name: mode(p) for p in (ora_home / "sites", site, db)} == {
        "sites": "0o700", "new-site": "0o700", "ora.site.db": "0o600"}
    with open_store(db) as store:  # a connection open: its -wal and -shm exist
        store.add("a second memory", "fact", 5)
        siblings = {p.name: mode(p) for p in site.iterdir()}
    assert siblings.get("ora.site.db-wal") == "0o600" and siblings.get("ora.site.db-shm") == "0o600", siblings


def test_import_create_makes_a_private_file(capsys, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    stamp = '"created_at": "2026-01-01 00:00:00", "updated_at": "2026-01-01 00:00:00"'
    source.write_text('{"id": "a", "content": "secret", "type": "fact", "importance": 5, ' + stamp + "}\n")
    target = tmp_path / "deep" / "er" / "agent.site.db"
    result = cli(capsys, "import", str(source), "--db", str(target), "--create")
    assert result.code == 0, result
    assert [mode(p) for p in (tmp_path / "deep", tmp_path / "deep" / "er", target)] == ["0o700", "0o700", "0o600"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "md"])
def test_export_output_is_private(capsys, seed_db, tmp_path: Path, fmt: str) -> None:
    seed_db([("m1", "the deploy key is in vault", "fact", 5)])
    out = tmp_path / f"all.{fmt}"
    result = cli(capsys, "export", "--site", "anwe-sh", "--agent", "ora", "-o", str(out), "--format", fmt)
    assert result.code == 0, result
    assert "deploy key" in out.read_text() and mode(out) == "0o600"
    out.chmod(0o644)  # exporting over a file someone else could read leaves one only we can
    assert cli(capsys, "export", "--site", "anwe-sh", "--agent", "ora", "-o", str(out), "--format", fmt).code == 0
    assert mode(out) == "0o600"


def test_vector_lock_and_sidecar_are_private(seed_db) -> None:
    db = seed_db([("m1", "the deploy key is in vault", "fact", 5)])
    index = get_vectors(db)
    with index.file_lock:
        lock = Path(index.file_lock.lock_file)
        assert lock.name.endswith(".vec.db.lock") and mode(lock) == "0o600"
    conn = index._connect()
    conn.close()
    assert mode(index.sidecar) == "0o600"
    assert mode(paths.cache_dir()) == "0o700" and mode(index.sidecar.parent) == "0o700"


def test_touch_private_tightens_an_existing_file_without_opening_it(tmp_path: Path) -> None:
    loose = tmp_path / "loose.db"
    loose.write_text("")
    loose.chmod(0o666)
    touch_private(loose)
    assert mode(loose) == "0o600"
    fresh = touch_private(tmp_path / "a" / "b.db")
    assert mode(fresh) == "0o600" and mode(tmp_path / "a") == "0o700"
