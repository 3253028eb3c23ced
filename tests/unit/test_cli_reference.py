"""docs/cli-reference.md is the parser's own help: it fails here the moment a command or an
option changes without the reference being regenerated."""

from __future__ import annotations

from pathlib import Path

from ora_desktop.cli import build_parser
from ora_desktop.cli.reference import render, subcommands

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli-reference.md"


def test_the_cli_reference_matches_the_parser():
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        "docs/cli-reference.md is out of date: python -m ora_desktop.cli.reference > docs/cli-reference.md")


def test_the_reference_has_a_section_for_every_command():
    text = REFERENCE.read_text(encoding="utf-8")
    names = subcommands(build_parser())
    assert "install-desktop" in names and len(names) > 30
    assert all(f"\n## ora-desktop {name}\n" in text for name in names)
