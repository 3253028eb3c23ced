"""Consolidation people accept: readable extractive summaries that keep code, paths and commands
whole, name what they merged and stay bounded; a dry run to review; apply all or one cluster,
each one journalled step that ``undo`` takes back (library and CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.operations.consolidate import MAX_SUMMARY_CHARS, consolidate, units
from ora_desktop.core.operations.undo import undo
from tests.unit.search_support import make_file
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest

OLD = "2024-01-10 10:00:00"
TAX = [
    "computeTax in src/tax/compute.ts computes the order tax from the region rates.\n"
    "export async function computeTax(order) {\n  const res = await rates(order.region);\n"
    "  return res.total * 0.2;\n}",
    "computeTax in src/tax/compute.ts computes the order tax from the region rates, rounded to cents.\n"
    "npm test -- tax",
    "computeTax in src/tax/compute.ts computes the tax of an order from the rates of its region.",
]
BACKUP = [
    "The Postgres database is backed up every night at 2am. Backups go to the S3 bucket.",
    "Nightly Postgres database backups are stored in S3.",
    "Postgres database backups run nightly; restore them from the S3 bucket.",
]
ROWS = ([{"id": f"tax{i}", "content": c, "health_score": 0.2, "importance": 4 + i, "created_at": OLD}
         for i, c in enumerate(TAX)]
        + [{"id": f"pg{i}", "content": c, "health_score": 0.2, "importance": 3, "created_at": OLD}
           for i, c in enumerate(BACKUP)]
        + [{"id": "cat", "content": "The office cat is called Miso", "health_score": 0.1, "created_at": OLD}])
T = ("--site", "s", "--agent", "ora")


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def test_units_keep_code_paths_and_commands_whole() -> None:
    found = units(TAX[0])
    assert found[0] == ("prose", "computeTax in src/tax/compute.ts computes the order tax from the region rates.")
    assert ("code", "export async function computeTax(order) {\n  const res = await rates(order.region);\n"
                    "  return res.total * 0.2;\n}") in found
    assert ("code", "npm test -- tax") in units(TAX[1])  # a command is never split at its dots or dashes


def test_dry_run_numbers_clusters_and_summaries_are_readable(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        result = consolidate(store, dry_run=True)
    assert [c.number for c in result.clusters] == [1, 2]
    tax = next(c for c in result.clusters if "tax0" in c.ids)
    assert set(tax.ids) == {"tax0", "tax1", "tax2"}
    text = tax.summary
    assert text.endswith(f"Merged from 3 memories: {', '.join(tax.ids)}.")
    assert "{." not in text and "src/tax/compute.ts" in text
    body = text.rsplit("\n\n", 1)[0]
    assert len(body) <= MAX_SUMMARY_CHARS
    pieces = [u for c in TAX for _k, u in units(c)]
    for block in body.split("\n\n"):  # every block is a member's own code or sentences, whole
        if block.startswith("```"):
            assert block.strip("`\n") in pieces
        else:
            assert all(any(p.rstrip(".") in s for s in pieces) for p in block.split(". "))


def test_apply_one_cluster_is_one_journal_step_that_undo_takes_back(db: Path) -> None:
    with open_store(db) as store:
        review = consolidate(store, dry_run=True)
        second = review.clusters[1]
        result = consolidate(store, dry_run=False, clusters=[2])
        assert result.applied == (2,) and len(result.summaries) == 1 and len(result.entries) == 1
        summary = store.get(result.summaries[0])
        assert summary.content == second.summary
        assert all(store.get(i).superseded_by == summary.id for i in second.ids)
        assert all(store.get(i).superseded_by is None for i in review.clusters[0].ids)  # not applied
        undone = undo(store)
        assert undone.entry.id == result.entries[0]
        assert store.find(summary.id) is None  # in the trash, recoverable
        assert all(store.get(i).superseded_by is None for i in second.ids)


def test_cli_dry_run_apply_and_undo(capsys, db: Path) -> None:
    before = content_digest(db)
    listed = cli(capsys, "consolidate", *T)
    assert listed.code == 0 and "cluster 1:" in listed.out and "cluster 2:" in listed.out, listed
    assert "Merged from 3 memories" in listed.out and "nothing changed" in listed.out
    assert content_digest(db) == before
    data = cli(capsys, "consolidate", *T, "--apply", "--json").json()
    assert len(data["summaries"]) == 2 and all(c["applied"] for c in data["clusters"])
    steps = cli(capsys, "undo", *T, "--list", "--json").json()
    assert [s["label"].split(" into ")[0] for s in steps[:2]] == ["consolidate 3 memories"] * 2
    assert cli(capsys, "undo", *T).code == 0
    assert cli(capsys, "undo", *T).code == 0
    with open_store(db, readonly=True) as store:
        assert store.count() == len(ROWS)  # both summaries gone, every member live again


def test_cli_unknown_cluster_or_cluster_without_apply_is_one_line(capsys, db: Path) -> None:
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "consolidate", *T, "--apply", "--cluster", "7"), "7")
    assert_one_line_error(cli(capsys, "consolidate", *T, "--cluster", "1"), "--apply")
    assert content_digest(db) == before

