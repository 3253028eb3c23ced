"""Subcommands of the maintenance feature."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
