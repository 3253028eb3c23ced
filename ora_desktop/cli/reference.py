"""The command-line reference, generated from the parser's own ``--help`` texts:
``python -m ora_desktop.cli.reference > docs/cli-reference.md`` (a test fails when the committed
file drifts from the parser, as sqlite-utils does with cog)."""

from __future__ import annotations

import argparse
import os
from unittest import mock

from . import build_parser

WIDTH = "100"  # help is wrapped to this many columns, whatever the terminal
HEADER = """# Command-line reference

Every `ora-desktop` command and option, as `--help` prints them. Generated from the parser by
`python -m ora_desktop.cli.reference > docs/cli-reference.md`; do not edit by hand. The
[command-line guide](cli.md) explains the commands with examples.
"""


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``parser``, by name, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def render() -> str:
    """The whole reference as Markdown."""
    with mock.patch.dict(os.environ, {"COLUMNS": WIDTH}):
        parser = build_parser()
        parts = [HEADER, "## ora-desktop\n", "```text", parser.format_help().rstrip(), "```\n"]
        for name, sub in subcommands(parser).items():
            parts += [f"## ora-desktop {name}\n", "```text", sub.format_help().rstrip(), "```\n"]
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
