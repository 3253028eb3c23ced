"""Extra panels, loaded lazily so the window works before (or without) each of them.

Each entry is ``(title, module, class name)``; the class is constructed as
``cls(ctx: AppContext, parent)``. A panel whose module cannot be imported is skipped and logged.
The window adds them just after it first paints (``load_panels_async``), so they never delay
the first rows; ``jobs.service.start(ctx)`` runs then too.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from PySide6.QtWidgets import QWidget

log = logging.getLogger("ora_desktop.gui")

PANELS = [
    ("Jobs", "ora_desktop.gui.jobs.view", "JobsView"),
    ("Backups", "ora_desktop.gui.backups.view", "BackupsView"),
    ("Charts", "ora_desktop.gui.charts.view", "ChartsView"),
    ("Task", "ora_desktop.gui.tasks.view", "TaskView"),
    ("Sync", "ora_desktop.gui.sync.view", "SyncView"),
    ("Duplicates", "ora_desktop.gui.duplicates.view", "DuplicatesView"),
    ("Review", "ora_desktop.gui.review.view", "ReviewView"),
    ("Context", "ora_desktop.gui.context_view.view", "ContextView"),
    ("Graph", "ora_desktop.gui.graph.view", "GraphView"),
]

SERVICES = [("ora_desktop.gui.jobs.service", "start")]


def load_panels(ctx: Any, parent: QWidget | None = None) -> Iterator[tuple[str, QWidget]]:
    """Yield ``(title, widget)`` for every panel that imports and constructs."""
    for title, module_name, class_name in PANELS:
        panel = _build(ctx, parent, title, class_name, lambda name=module_name: importlib.import_module(name))
        if panel is not None:
            yield title, panel


async def load_panels_async(ctx: Any, parent: QWidget | None = None) -> AsyncIterator[tuple[str, QWidget]]:
    """Like :func:`load_panels`, importing each module on a worker thread first (imports are the
    slow part; building the widget stays on the GUI thread), so the window paints meanwhile."""
    for title, module_name, class_name in PANELS:
        try:
            module = await ctx.run(importlib.import_module, module_name)
        except ImportError as exc:
            log.info("panel %s not available: %s", title, exc)
            continue
        panel = _build(ctx, parent, title, class_name, lambda module=module: module)
        if panel is not None:
            yield title, panel


def _build(ctx: Any, parent: QWidget | None, title: str, class_name: str, module: Any) -> QWidget | None:
    """``cls(ctx, parent)`` of a panel, or ``None`` (logged) when it is missing or fails."""
    try:
        cls = getattr(module(), class_name)
    except (ImportError, AttributeError) as exc:
        log.info("panel %s not available: %s", title, exc)
        return None
    try:
        return cls(ctx, parent)
    except Exception:
        log.exception("panel %s failed to start", title)
        return None


async def start_services_async(ctx: Any) -> list[str]:
    """Like :func:`start_services`, importing on a worker thread first."""
    for module_name, _function in SERVICES:
        try:
            await ctx.run(importlib.import_module, module_name)
        except ImportError:
            pass
    return start_services(ctx)


def start_services(ctx: Any) -> list[str]:
    """Call ``start(ctx)`` of each optional in-app service that exists; returns those started."""
    started = []
    for module_name, function in SERVICES:
        try:
            start = getattr(importlib.import_module(module_name), function)
        except (ImportError, AttributeError) as exc:
            log.info("service %s not available: %s", module_name, exc)
            continue
        try:
            start(ctx)
            started.append(module_name)
        except Exception:
            log.exception("service %s failed to start", module_name)
    return started
