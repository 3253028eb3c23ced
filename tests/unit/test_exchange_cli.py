"""``ora-desktop export`` and ``ora-desktop import``: output, targets, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from ora_desktop.core import create_database
from tests.unit.exchange_support import ODD_TEXTS, all_rows, raw_memories_db, zoo_db
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest


def _home(ora_home: Path) -> Path:
    folder = ora_home / "sites" / "anwe-sh"
    folder.mkdir(parents=True)
    raw_memories_db(folder / "ora.site.db")
    return folder / "ora.site.db"


def test_export_to_stdout_and_to_a_file_then_import_into_a_new_agent(capsys, ora_home: Path, tmp_path: Path) -> None:
    source = _home(ora_home)
    out = cli(capsys, "export", "--site", "anwe-sh", "--agent", "ora")
    assert out.code == 0 and json.loads(out.out.split("\n")[0])["ora_desktop_export"] == 1
    written = cli(capsys, "export", "--db", source, "--format", "csv", "-o", tmp_path / "m.csv")
    assert written.out.strip() == f"exported {len(ODD_TEXTS)} memories from 1 file(s) to {tmp_path / 'm.csv'} (csv)"
    imported = cli(capsys, "import", tmp_path / "m.csv", "--site", "anwe-sh", "--agent", "copy", "--create")
    assert imported.code == 0, imported
    assert f"imported {len(ODD_TEXTS)} memories" in imported.out and "(csv)" in imported.out
    assert all_rows(ora_home / "sites" / "anwe-sh" / "copy.site.db") == all_rows(source)


def test_export_all_with_a_query_and_a_json_summary(capsys, ora_home: Path, tmp_path: Path) -> None:
    _home(ora_home)
    result = cli(capsys, "export", "--all", "--query", "emoji", "--format", "md", "-o", tmp_path / "r.md", "--json")
    assert result.code == 0, result
    assert result.json()["count"] == 1 and "## context (1)" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_import_dry_run_shows_counts_and_first_rows_and_writes_nothing(capsys, tmp_path: Path) -> None:
    target = tmp_path / "a.site.db"
    create_database(target)
    before = content_digest(target)
    result = cli(capsys, "import", zoo_db(tmp_path / "memory.sqlite"), "--db", target, "--dry-run")
    assert result.code == 0, result
    assert result.out.startswith("would import 3 memories") and "by type: conversation 3" in result.out
    assert "user: What port does the staging server listen on?" in result.out
    assert content_digest(target) == before


def test_import_json_and_skip_bad_and_local_only(capsys, tmp_path: Path) -> None:
    target = tmp_path / "a.site.db"
    create_database(target)
    source = tmp_path / "in.jsonl"
    good = {"id": "g", "content": "good", "created_at": "2025-01-01 00:00:00", "updated_at": "2025-01-01 00:00:00"}
    source.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "health_score": 7}) + "\n",
                      encoding="utf-8")
    result = cli(capsys, "import", source, "--db", target, "--skip-bad", "--local-only", "--json")
    assert result.code == 0, result
    data = result.json()
    assert data["added"] == 1 and data["skipped"] == [
        {"where": "line 2", "field": "health_score", "problem": "7 is outside the allowed range 0.0 to 1.0"}]
    assert [r[-1] for r in all_rows(target)] == ["local_only"]
    plain = cli(capsys, "import", source, "--db", target, "--skip-bad")
    assert "skipped line 2, field health_score: 7 is outside the allowed range" in plain.out


def test_import_errors_are_one_line_and_change_nothing(capsys, tmp_path: Path) -> None:
    target = tmp_path / "a.site.db"
    create_database(target)
    before = content_digest(target)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "content": "c", "created_at": "2025-01-01", "updated_at": "soon"}\n', encoding="utf-8")
    assert_one_line_error(cli(capsys, "import", bad, "--db", target), "line 1, field updated_at",
                          "nothing was imported")
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    assert_one_line_error(cli(capsys, "import", tmp_path / "notes.txt", "--db", target), "none of the import formats")
    assert_one_line_error(cli(capsys, "import", tmp_path / "missing.db", "--db", target), "missing.db", "no such file")
    assert_one_line_error(cli(capsys, "import", bad, "--db", tmp_path / "new.site.db"), "--create")
    assert_one_line_error(cli(capsys, "import", bad, "--db", target, "--from", "zoo"), "is not a zoo")
    assert_one_line_error(cli(capsys, "import", bad, "--site", "../x", "--agent", "a"), "site")
    assert_one_line_error(cli(capsys, "export", "--db", tmp_path / "nope.site.db"), "nope.site.db")
    assert_one_line_error(cli(capsys, "export", "--db", target, "-o", tmp_path), "is a folder")
    assert content_digest(target) == before


def test_import_into_a_new_agent_previews_creating_nothing_and_warns_of_another_agents_export(
        capsys, ora_home: Path, tmp_path: Path) -> None:
    """An export names its site and agent: importing it into another agent warns (text and
    --json); --create with --dry-run previews a new agent without creating its file."""
    _home(ora_home)
    cli(capsys, "export", "--site", "anwe-sh", "--agent", "ora", "-o", tmp_path / "ora.jsonl")
    new = ora_home / "sites" / "other-site" / "helper.site.db"
    preview = cli(capsys, "import", tmp_path / "ora.jsonl", "--site", "other-site", "--agent", "helper",
                  "--create", "--dry-run", "--json")
    assert preview.code == 0, preview
    data = preview.json()
    assert data["added"] == len(ODD_TEXTS) and data["target"] == str(new)
    assert data["origins"] == [{"site": "anwe-sh", "agent": "ora"}]
    assert "anwe-sh/ora" in data["warning"] and "other-site/helper" in data["warning"]
    assert not new.exists() and not new.parent.exists()
    done = cli(capsys, "import", tmp_path / "ora.jsonl", "--site", "other-site", "--agent", "helper", "--create")
    assert done.code == 0 and f"imported {len(ODD_TEXTS)} memories" in done.out
    assert done.err.strip() == "warning: ora.jsonl holds memories of anwe-sh/ora, not of other-site/helper: " \
        "they will become this agent's memories"
    back = cli(capsys, "import", tmp_path / "ora.jsonl", "--site", "anwe-sh", "--agent", "ora", "--json")
    assert back.code == 0 and back.json()["warning"] is None  # its own agent: no warning


def test_a_failed_import_into_a_new_agent_leaves_no_file(capsys, ora_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "content": "c", "created_at": "2025-01-01", "updated_at": "soon"}\n', encoding="utf-8")
    assert_one_line_error(cli(capsys, "import", bad, "--site", "fresh", "--agent", "bot", "--create"),
                          "line 1, field updated_at", "nothing was imported")
    assert not (ora_home / "sites" / "fresh").exists()  # neither the agent file nor its new site folder
    assert_one_line_error(cli(capsys, "import", bad, "--site", "fresh", "--agent", "../bot", "--create"), "agent")
    assert not (ora_home / "sites" / "fresh").exists()


def test_importing_another_agents_file_names_it_in_the_warning(capsys, ora_home: Path) -> None:
    source = _home(ora_home)  # anwe-sh/ora
    create_database(ora_home / "sites" / "anwe-sh" / "writer.site.db")
    result = cli(capsys, "import", source, "--site", "anwe-sh", "--agent", "writer", "--dry-run", "--json")
    assert result.code == 0, result
    assert result.json()["origins"] == [{"site": "anwe-sh", "agent": "ora"}]
    assert "holds memories of anwe-sh/ora, not of anwe-sh/writer" in result.json()["warning"]
