"""Markdown in: ``import review.md`` reads back what ``export --format md`` writes, and
``import notes/ --from markdown`` turns ordinary notes into context memories, one per section,
idempotently, updating changed sections on re-import."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import create_database, open_store
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest, sql

CODE = "Run it with:\n\n```sh\nnpm run build -- --prod\n```\n\n> a quoted line\n# not a heading"
ROWS = [
    ("a", CODE, "fact", 8), ("b", "Prefers short answers", "preference", 4), ("c", "Old plan", "task", 2),
]


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db(ROWS)
    sql(path, "UPDATE memories SET related_to = ?, health_score = 0.42, expires_at = '2030-01-02 03:04:05', "
              "updated_at = '2026-11-20 08:00:00', created_at = '2026-11-01 09:00:00' WHERE id = 'a'",
        (json.dumps(["b", "c"]),))
    sql(path, "UPDATE memories SET superseded_by = 'a', sync_status = 'local_only' WHERE id = 'c'")
    return path


def fields(path: Path) -> dict[str, tuple]:
    with open_store(path, readonly=True) as store:
        return {m.id: (m.content, m.type, m.importance, m.health_score, m.related_to, m.superseded_by,
                       m.sync_status, m.created_at, m.updated_at, m.expires_at) for m in store.list(
                           superseded="show", limit=None)}


def test_review_export_round_trips(db: Path, tmp_path: Path) -> None:
    with open_store(db, readonly=True) as store:
        store.export(tmp_path / "review.md", "md")
    target = tmp_path / "copy.site.db"
    create_database(target)
    with open_store(target) as store:
        result = store.import_from(tmp_path / "review.md")
    assert result.format == "md" and result.added == 3 and not result.skipped
    assert fields(target) == fields(db)


def test_an_edited_review_replaces_on_request(capsys, db: Path, tmp_path: Path) -> None:
    assert cli(capsys, "export", "--db", db, "--format", "md", "-o", tmp_path / "r.md").code == 0
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    (tmp_path / "r.md").write_text(text.replace("> Prefers short answers", "> Prefers short, plain answers")
                                   .replace("importance 4", "importance 6"), encoding="utf-8")
    kept = cli(capsys, "import", tmp_path / "r.md", "--db", db, "--json").json()
    assert (kept["format"], kept["added"], kept["kept"]) == ("md", 0, 3)
    replaced = cli(capsys, "import", tmp_path / "r.md", "--db", db, "--on-conflict", "changed", "--json").json()
    assert replaced["replaced"] == 1
    assert sql(db, "SELECT content, importance FROM memories WHERE id = 'b'") == [("Prefers short, plain answers", 6)]


def test_a_review_without_facts_is_one_line_and_imports_nothing(capsys, db: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_text("# Memories (1)\n\n## fact (1)\n\n### x\n\n> no facts line\n", encoding="utf-8")
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "import", tmp_path / "bad.md", "--db", db), "line 5")
    assert content_digest(db) == before


NOTE = """---
title: Deploys
tags: [ops, release]
---
Intro before any heading.

# Deploying

Go out from `main` only.

```sh
# this is a comment, not a heading
make deploy ENV=prod
```

## Rollback

Run `make rollback`.
"""


def notes_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / "ops").mkdir(parents=True)
    (folder / ".obsidian").mkdir()
    (folder / "ops" / "deploy.md").write_text(NOTE, encoding="utf-8")
    (folder / "todo.md").write_text("- buy milk\n", encoding="utf-8")
    (folder / ".obsidian" / "cache.md").write_text("# hidden\n\nnever imported\n", encoding="utf-8")
    return folder


def test_notes_become_context_memories_per_section(db: Path, tmp_path: Path) -> None:
    folder = notes_folder(tmp_path)
    with open_store(db) as store:
        result = store.import_from(folder, "markdown")
        assert (result.format, result.added) == ("markdown", 4)
        imported = [m for m in store.list(types=("context",), limit=None)]
        by_heading = {m.content.split("\n")[0]: m for m in imported}
        assert set(by_heading) == {"# deploy", "# Deploying", "# Rollback", "# todo"}
        deploying = by_heading["# Deploying"].content
        assert "make deploy ENV=prod" in deploying and "# this is a comment" in deploying  # fences kept whole
        assert deploying.endswith("Tags: file=ops/deploy.md, Deploying, ops, release")
        assert by_heading["# Rollback"].content.endswith("Tags: file=ops/deploy.md, Deploying › Rollback, ops, release")
        assert "never imported" not in " ".join(m.content for m in imported)
        assert store.search("tag:file=ops/deploy.md", limit=10).hits  # the tag extractor reads the line


def test_notes_reimport_adds_nothing_and_updates_changed_sections(capsys, db: Path, tmp_path: Path) -> None:
    folder = notes_folder(tmp_path)
    first = cli(capsys, "import", folder, "--db", db, "--from", "markdown", "--json").json()
    assert first["added"] == 4
    again = cli(capsys, "import", folder, "--db", db, "--from", "markdown", "--json").json()
    assert (again["added"], again["replaced"], again["kept"]) == (0, 0, 4)
    note = folder / "ops" / "deploy.md"
    note.write_text(NOTE.replace("Run `make rollback`.", "Run `make rollback VERSION=prev`."), encoding="utf-8")
    os.utime(note, (note.stat().st_atime + 60, note.stat().st_mtime + 60))
    changed = cli(capsys, "import", folder, "--db", db, "--from", "markdown", "--json").json()
    assert (changed["added"], changed["replaced"], changed["kept"]) == (0, 1, 3)
    assert len(sql(db, "SELECT id FROM memories WHERE content LIKE '%VERSION=prev%'")) == 1
    assert sql(db, "SELECT count(*) FROM memories WHERE type = 'context'") == [(4,)]


def test_a_folder_without_notes_or_without_from_markdown_is_one_line(capsys, db: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "import", tmp_path / "empty", "--db", db, "--from", "markdown"), "no Markdown")
    assert_one_line_error(cli(capsys, "import", notes_folder(tmp_path), "--db", db), "--from markdown")
    assert content_digest(db) == before
