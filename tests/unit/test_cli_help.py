"""Every subcommand (of every feature) has help text and is documented (README.md or docs/)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from ora_desktop.cli import build_parser
from tests.unit.test_cli_helpers import cli

ROOT = Path(__file__).resolve().parents[2]


def documentation() -> str:
    """The README and every guide under docs/, as one text (not the reference generated from --help,
    which names every command by construction)."""
    pages = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli-reference.md")]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def _children(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    found: dict[str, tuple[str, argparse.ArgumentParser]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found.update({name: (helps.get(name, ""), sub) for name, sub in action.choices.items()})
    return found


def subcommands() -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """name -> (help text, parser) for every top-level subcommand."""
    return _children(build_parser())


def all_commands() -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Like :func:`subcommands`, nested ones included ("backups restore")."""
    out: dict[str, tuple[str, argparse.ArgumentParser]] = {}
    todo = list(subcommands().items())
    while todo:
        name, (help_text, parser) = todo.pop()
        out[name] = (help_text, parser)
        todo.extend((f"{name} {child}", entry) for child, entry in _children(parser).items())
    return out


def test_the_memory_commands_are_registered() -> None:
    names = set(subcommands())
    assert names >= {"sites", "list", "show", "add", "edit", "rm", "touch", "recall", "important", "link",
                     "supersede", "check-schema", "demo", "trash", "undelete"}


@pytest.mark.parametrize("name", sorted(all_commands()))
def test_every_subcommand_has_help_text(name: str) -> None:
    help_text, parser = all_commands()[name]
    assert help_text.strip(), f"'ora-desktop {name}' has no help text in the command list"
    assert (parser.description or "").strip(), f"'ora-desktop {name}' has no description"
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction) and action.dest != "help":
            assert action.help, f"'ora-desktop {name}': argument {action.dest!r} has no help"


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_is_documented(name: str) -> None:
    text = documentation()
    assert re.search(rf"ora-desktop {re.escape(name)}(?![\w-])", text), \
        f"neither README.md nor docs/ mentions 'ora-desktop {name}'"


@pytest.mark.parametrize("name", sorted(all_commands()))
def test_every_subcommand_help_runs(capsys, name: str) -> None:
    result = cli(capsys, *name.split(), "--help")
    assert result.code == 0 and f"ora-desktop {name}" in result.out and not result.err


def test_top_level_help_lists_the_commands(capsys) -> None:
    result = cli(capsys, "--help")
    assert result.code == 0
    for name in ("list", "show", "demo", "check-schema"):
        assert name in result.out


def test_no_arguments_or_only_files_start_the_window(capsys, monkeypatch) -> None:
    calls: list[list[str]] = []
    read_ahead = []
    monkeypatch.setattr("ora_desktop.cli.common.start_window",
                        lambda argv, first_rows=None: calls.append(argv) or read_ahead.append(first_rows) or 0)
    assert cli(capsys, ).code == 0
    assert cli(capsys, "--read-only", "a.site.db", "--home", "/tmp/x").code == 0
    assert cli(capsys, "list", "--db", "a.site.db").code != 0  # a command never starts the window
    assert calls == [[], ["--read-only", "a.site.db", "--home", "/tmp/x"]]
    # the file the window shows first is read while the window is imported, as it will open it
    assert read_ahead[0] is None
    assert read_ahead[1].path == Path("a.site.db").resolve() and read_ahead[1].readonly


def test_the_read_ahead_reads_the_file_the_window_showed_last(seed_db, isolated_dirs, monkeypatch) -> None:
    """The window reopens the agent viewed last; the read-ahead must read that file, not the first."""
    from ora_desktop.cli import _read_ahead

    seed_db(site="acme-shop", agent="legacy")
    chosen = seed_db(site="anwe-sh", agent="ora")
    first = _read_ahead([])
    assert first is not None and first.path.name == "legacy.site.db"
    settings = isolated_dirs / "config" / "Ora" / "Ora Desktop.conf"
    settings.parent.mkdir(parents=True)
    settings.write_text(f"[files]\nlast={chosen}\n", encoding="utf-8")
    assert _read_ahead([]).path == chosen
    settings.write_bytes(b"[files]\nlast=\xff\xfe\n")  # unreadable settings: the first file, no error
    assert _read_ahead([]).path.name == "legacy.site.db"
