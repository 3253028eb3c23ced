"""What a killed process leaves behind never keeps a purged text: real processes die mid-way.

- A purge killed after its commit is finished by purging the same id again (exit 0, it says what
  it found), which scrubs the search index and, with ``--rewrite-backups``, the backups.
- A reindex killed mid-build leaves ``<sidecar>.building-*``: the next build removes it, and so
  does every purge's scrub.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.backup import create_backup
from ora_desktop.core.search import ensure_index
from ora_desktop.core.search.sidecar import sidecar_path
from tests.conftest import raw_seed_db

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # starts real processes
SECRET = "zqx7vortexpurgedsecret9"
ROWS = [("s", f"the vault code is {SECRET}", "fact", 5), ("a", "alpha memory about harbour cranes", "fact", 5)]

# A purge whose process dies (SIGKILL-like, no cleanup) right after its transaction committed,
# before it scrubbed any sidecar or backup.
DIES_AFTER_COMMIT = """
import os, sys
from ora_desktop.core import open_store, scrub
scrub.forget = lambda *a, **k: os._exit(9)
with open_store(sys.argv[1]) as store:
    store.purge([sys.argv[2]])
"""
# A reindex whose process dies after writing every text into its build file, before the rename.
DIES_MID_BUILD = """
import os, sys
from ora_desktop.core.search import build
build.os.replace = lambda *a, **k: os._exit(9)
build.ensure_index(sys.argv[1], rebuild=True)
"""


def run(script: str, *argv: object) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", script, *map(str, argv)], env=env, timeout=300,
                          cwd=ROOT).returncode


def ora(*argv: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)


def holds(path: Path) -> bool:
    return any(SECRET.encode() in Path(f"{path}{s}").read_bytes()
               for s in ("", "-wal", "-journal") if Path(f"{path}{s}").exists())


def builds(db: Path) -> list[Path]:
    sidecar = sidecar_path(db)
    return sorted(sidecar.parent.glob(f"{sidecar.name}.building-*"))


@pytest.fixture
def db(ora_home: Path) -> Path:
    path = raw_seed_db(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)
    ensure_index(path)
    assert holds(sidecar_path(path))
    return path


def test_a_purge_killed_after_its_commit_is_finished_by_purging_again(db: Path) -> None:
    backup = create_backup(db).path
    assert run(DIES_AFTER_COMMIT, db, "s") == 9
    with open_store(db) as store:
        assert store.find("s") is None  # the commit happened
    assert holds(sidecar_path(db)), "the killed purge left the text in the index (the case to finish)"

    again = ora("purge", "s", "--db", db, "--yes", "--rewrite-backups", "--json")
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["already_gone"] == ["s"] and out["index_held"] == ["s"]
    assert "no longer in" in out["message"] and "search index" in out["message"]
    assert out["backups_rewritten"] == [str(backup)]
    assert not holds(sidecar_path(db)) and not holds(backup) and not holds(db)

    third = ora("purge", "s", "--db", db, "--yes")  # nothing left anywhere: still done, and said so
    assert third.returncode == 0, third.stderr
    assert "no longer in" in third.stdout and "held nothing" in third.stdout


def test_a_killed_reindex_leaves_build_files_the_next_build_removes(db: Path) -> None:
    assert run(DIES_MID_BUILD, db) == 9
    left = builds(db)
    assert left and any(holds(p) for p in left), "the killed build left its copy of the texts"
    result = ora("reindex", "--db", db)
    assert result.returncode == 0, result.stderr
    assert builds(db) == []


def test_a_purge_scrubs_a_killed_reindex_build_files(db: Path) -> None:
    assert run(DIES_MID_BUILD, db) == 9
    assert builds(db)
    with open_store(db) as store:
        store.purge(["s"])
    assert builds(db) == []
    assert not [p for p in sidecar_path(db).parent.iterdir() if holds(p)]
