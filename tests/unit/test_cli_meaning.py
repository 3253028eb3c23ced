"""The command line of search by meaning: search --mode, embed, duplicates, merge, add refusing
a duplicate. Errors are one line and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from tests.unit.search_support import make_file
from tests.unit.test_cli_helpers import cli

ROWS = [
    {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "type": "preference",
     "importance": 8},
    {"id": "jwt2", "content": "User prefers JWT authentication kept in httpOnly cookies", "importance": 5},
    {"id": "deploy", "content": "Deploys run through `git push production main`", "importance": 6},
    {"id": "coffee", "content": "The office coffee machine is on the third floor", "importance": 2},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def test_search_modes(capsys, db: Path) -> None:
    lexical = cli(capsys, "search", "--db", db, "where do deploys go?")
    assert lexical.code == 0 and "partial matches" in lexical.out and "lexical search" in lexical.err
    hybrid = cli(capsys, "search", "--db", db, "--mode", "hybrid", "where do deploys go?", "--json")
    assert hybrid.code == 0 and json.loads(hybrid.out)["hits"][0]["id"] == "deploy"
    assert "embedding ora.site.db" in hybrid.err  # progress on standard error
    default = cli(capsys, "search", "--db", db, "how should I store the auth token?")
    lines = default.out.splitlines()
    first_hit = lines[next(i for i, line in enumerate(lines) if line.startswith("score")) + 1]
    assert default.code == 0 and first_hit.split()[2] == "jwt"  # hybrid once vectors exist
    assert lines[0].startswith("partial matches")  # its note kept in hybrid too
    filtered = cli(capsys, "search", "--db", db, "--mode", "semantic", "auth token type:fact", "--json")
    assert [h["id"] for h in json.loads(filtered.out)["hits"]] == ["jwt2"]


def test_search_mode_errors(capsys, db: Path) -> None:
    bad = cli(capsys, "search", "--db", db, "--mode", "fuzzy", "x")
    assert bad.code == 2 and "invalid choice: 'fuzzy'" in bad.err and "Traceback" not in bad.err
    many = cli(capsys, "search", "--all", "--mode", "semantic", "x")
    assert many.code != 0 and "searches one file" in many.err and len(many.err.strip().splitlines()) == 1


def test_embed_then_duplicates(capsys, db: Path) -> None:
    embedded = cli(capsys, "embed", "--db", db)
    assert embedded.code == 0 and "4 memories embedded" in embedded.out
    found = cli(capsys, "duplicates", "--db", db, "--json")
    assert found.code == 0
    assert json.loads(found.out) == {"groups": [{"kind": "near", "similarity": pytest.approx(0.9, abs=0.1),
                                                 "ids": ["jwt", "jwt2"]}]}
    text = cli(capsys, "duplicates", "--db", db)
    assert "group 1: near" in text.out and "jwt2" in text.out
    none = cli(capsys, "duplicates", "--db", db, "--threshold", "0.999")
    assert none.code == 0 and "no duplicates among 4 memories" in none.out
    bad = cli(capsys, "duplicates", "--db", db, "--threshold", "2")
    assert bad.code == 2 and "must be above 0 and at most 1" in bad.err


def test_add_names_the_existing_duplicate_and_changes_nothing(capsys, db: Path) -> None:
    refused = cli(capsys, "add", "--db", db, "the office  COFFEE machine is on the third floor")
    assert refused.code != 0 and "memory coffee already holds this text" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    with open_store(db, readonly=True) as store:
        assert store.count() == 4
    allowed = cli(capsys, "add", "--db", db, "the office coffee machine is on the third floor", "--allow-duplicate")
    assert allowed.code == 0
    with open_store(db, readonly=True) as store:
        assert store.count() == 5


def test_merge(capsys, db: Path) -> None:
    merged = cli(capsys, "merge", "--db", db, "jwt", "jwt2", "--json")
    assert merged.code == 0
    payload = json.loads(merged.out)
    assert payload["kept"]["id"] == "jwt" and payload["superseded"] == ["jwt2"]
    missing = cli(capsys, "merge", "--db", db, "jwt", "nope")
    assert missing.code != 0 and "'nope'" in missing.err and "Traceback" not in missing.err
