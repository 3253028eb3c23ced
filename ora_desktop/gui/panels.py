"""The extra panels (tabs after Memories) and the in-app services, added once the window is up.

:func:`panel_classes` imports the panels with plain import statements, so import-linter sees
them and a broken import fails loudly (in tests and in the window) instead of silently dropping a
tab. Once the window has painted its first rows it calls :func:`import_later` and
:func:`load_panels_async`: the imports (the slow part) run on a worker thread, each widget is built
on the GUI thread as ``cls(ctx, parent)``, so the panels never delay the first rows.
``jobs.service.start(ctx)`` runs then too (:func:`start_services`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from PySide6.QtWidgets import QWidget


def panel_classes() -> list[tuple[str, type[QWidget]]]:
    """``(title, widget class)`` of every extra panel, in tab order (imports them)."""
    from .backups.view import BackupsView
    from .charts.view import ChartsView
    from .context_view.view import ContextView
    from .duplicates.view import DuplicatesView
    from .graph.view import GraphView
    from .jobs.view import JobsView
    from .review.view import ReviewView
    from .sync.view import SyncView
    from .tasks.view import TaskView

    return [("Jobs", JobsView), ("Backups", BackupsView), ("Charts", ChartsView), ("Task", TaskView),
            ("Sync", SyncView), ("Duplicates", DuplicatesView), ("Review", ReviewView),
            ("Context", ContextView), ("Graph", GraphView)]


def load_panels(ctx: Any, parent: QWidget | None = None) -> Iterator[tuple[str, QWidget]]:
    """Yield ``(title, widget)`` for every panel, built on this (the GUI) thread."""
    for title, cls in panel_classes():
        yield title, cls(ctx, parent)


async def load_panels_async(ctx: Any, parent: QWidget | None = None) -> AsyncIterator[tuple[str, QWidget]]:
    """Like :func:`load_panels`, importing the panels on a worker thread first (imports are the
    slow part; building the widgets stays on the GUI thread), so the window paints meanwhile.
    The event loop runs between two panels: each takes 3-7 ms to build, all nine at once ~36 ms
    (more under load) that the window could not paint or take input."""
    for title, cls in await ctx.run(panel_classes):
        yield title, cls(ctx, parent)
        await asyncio.sleep(0)


def import_later() -> None:
    """Import what the window uses only when triggered (edits, purge, recover, export, import,
    the search engine and search by meaning): the window starts without them, and calls this on
    a worker thread once the first rows are painted, so the first use does not wait for an
    import on the GUI thread."""
    from ..core.exchange import FORMATS  # noqa: F401
    from ..core.operations import edits, export, importing, merge, purge, recover, undo  # noqa: F401
    from ..core.search import build, counting, engine, semantic  # noqa: F401
    from .exchange import dialogs  # noqa: F401


def start_services(ctx: Any) -> None:
    """Start the in-app services of this window: the maintenance scheduler (``jobs.service``)."""
    from .jobs import service

    service.start(ctx)


async def start_services_async(ctx: Any) -> None:
    """Like :func:`start_services`, importing on a worker thread first."""
    await ctx.run(_import_services)
    start_services(ctx)


def _import_services() -> None:
    from .jobs import service  # noqa: F401  (imported here, off the GUI thread)
