"""The real ``python -m ora_desktop`` process: export a file, import it elsewhere, import a
neighbouring store twice, and refuse a bad source with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli_process import ora
from tests.unit.exchange_support import all_rows, chatlog_db, raw_memories_db

pytestmark = pytest.mark.slow  # starts real processes


def test_export_import_round_trip_and_a_neighbour_as_a_user_would(tmp_path: Path) -> None:
    source = raw_memories_db(tmp_path / "src.site.db")
    ora("export", "--db", source, "-o", tmp_path / "src.jsonl")
    ora("import", tmp_path / "src.jsonl", "--db", tmp_path / "copy.site.db", "--create")
    assert all_rows(tmp_path / "copy.site.db") == all_rows(source)
    chat = chatlog_db(tmp_path / "chat.db")
    first = json.loads(ora("import", chat, "--db", tmp_path / "copy.site.db", "--json").stdout)
    second = json.loads(ora("import", chat, "--db", tmp_path / "copy.site.db", "--json").stdout)
    assert (first["format"], first["added"], first["collapsed"]) == ("chatlog", 3, 1)
    assert (second["added"], second["kept"]) == (0, 3)
    bad = ora("import", tmp_path / "src.site.db-missing", "--db", tmp_path / "copy.site.db", check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
