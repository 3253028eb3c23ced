"""Going from a panel to a memory in the main table (shared by the Review, Context and Graph tabs)."""

from __future__ import annotations

from typing import Any


def show_in_table(ctx: Any, memory_id: str, switch_tab: bool = True) -> bool:
    """Select ``memory_id`` in the Memories tab of the window (and show that tab when asked).

    Returns False (with a status line) when there is no main window to show it in.
    """
    window = ctx.window
    if window is None:
        ctx.status.emit(f"{memory_id}: open the main window to see it in the table")
        return False
    if switch_tab:
        window.tabs.setCurrentIndex(0)
    window.browser.follow(memory_id)
    return True


def curator_of(ctx: Any) -> Any | None:
    """The window's curator (its undo stack and editing commands), or ``None`` without a window."""
    return ctx.window.curator if ctx.window is not None else None
