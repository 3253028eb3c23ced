"""Screenshots of the real window on a demo home: ``make screenshots`` (``python -m tests.screenshots``).

Writes a demo ``ORA_HOME`` (``core.demo.write_demo_home``) and the app's own folders into a
temporary directory, starts the real window on the qasync loop (under ``xvfb-run`` from the
Makefile, or any display), selects an agent and saves PNGs of the main views into
``screenshots/`` with ``QWidget.grab().save()``:

    01-memories.png     the memory table with a memory selected and its detail
    02-search.png       search as you type, matched words highlighted
    03-jobs.png         the schedule and history after a few runs
    04-jobs-preview.png a cleanup's dry-run preview, waiting for confirmation
    05-backups.png      backups of the agent, after "Back up now"
    06-restore.png      the restore confirmation
    07-charts.png       charts for the whole home
    08-task.png         a spawned task agent's task, input and output
    09-review.png       the review desk: a flag first, what needs attention, what is new
    10-context.png      what store.context() hands the agent, and what the budget left out
    11-graph.png        a memory's links and supersession chain, two hops out
    (09–11 also as *-1366x768.png: the same view in a laptop-sized window)
    12-duplicates.png   groups of duplicate memories, members side by side, ready to merge
    13-find-replace.png Find and Replace on the selection, its live preview   (13–16 at 1366×768)
    14-stored-values.png a memory's row as stored, every column and its storage class
    15-saved-searches.png saved searches under the sidebar
    16-change-history.png the file's change history (the undo journal shared with the CLI)
    17-consolidation.png the Review tab's consolidation desk: proposed clusters and their summaries
    18-history.png      a memory's History section in the detail pane (the memory pinned first)
    19-import-new-agent.png importing another agent's export into a new agent (the warning)  (19–23 at 1366×768)
    20-trash.png        Edit > Deleted memories, sortable, with Restore and Delete permanently
    21-task-table.png   the Task tab's sortable table of task_context rows
    22-high-contrast.png View > High contrast
    23-large-font.png   the window with a 16 pt system font
    (11-graph also shows typed links: contradicts and supports, coloured and labelled)
    24-matched-column.png the Matched column: a search's words in context beside Content (1366×768)
    25-cell-edit.png    importance edited in its cell (F2: Enter saves, Escape cancels) (1366×768)

Options: ``--out DIR`` (default ``screenshots``), ``--memories N`` (default 3000), ``--dark``.
Views that are not in the window yet are reported and skipped, never faked.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ora_desktop.core.rawsql import all_rows

WIDTH, HEIGHT = 1480, 920


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.screenshots", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="screenshots", help="folder for the PNGs (default: screenshots)")
    parser.add_argument("--memories", type=int, default=3000, help="demo memories in total (default 3000)")
    parser.add_argument("--dark", action="store_true", help="force the dark palette")
    parser.add_argument("--views", default="memories,search,jobs,backups,charts,task,review,context,graph,duplicates,"
                                          "curating,window,cells",
                        help="which views to shoot, comma-separated (default: all)")
    return parser.parse_args(argv)


def isolate(root: Path) -> Path:
    """Point ORA_HOME and the XDG folders into ``root`` so the user's files are never touched."""
    for var, name in (("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                      ("XDG_STATE_HOME", "state")):
        (root / name).mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(root / name)
    os.environ["ORA_HOME"] = str(root / "ora")
    # Expiry cleanup off, so the window's scheduler (which runs overdue jobs at start) leaves
    # the demo's expired memories for the cleanup preview to show.
    config = root / "config" / "ora-desktop" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[schedule]\ncleanup = "off"\n')
    return root / "ora"


async def until(condition: Callable[[], object], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def settle(seconds: float = 0.6) -> None:
    """Let background loads finish and the window repaint."""
    await asyncio.sleep(seconds)


def find(window, cls_name: str):
    """The first child widget whose class is called ``cls_name`` (None if the window has none)."""
    from PySide6.QtWidgets import QWidget

    for widget in window.findChildren(QWidget):
        if type(widget).__name__ == cls_name:
            return widget
    return None


def reveal(widget) -> None:
    """Make ``widget`` the visible page of every tab widget, stack or dock that holds it."""
    from PySide6.QtWidgets import QDockWidget, QStackedWidget, QTabWidget

    child, parent = widget, widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QStackedWidget) and parent.indexOf(child) >= 0:
            parent.setCurrentWidget(child)
            tabs = parent.parentWidget()
            if isinstance(tabs, QTabWidget):
                tabs.setCurrentWidget(child)
        elif isinstance(parent, QDockWidget):
            parent.show()
            parent.raise_()
        child, parent = parent, parent.parentWidget()


class Shooter:
    def __init__(self, window, out: Path) -> None:
        self.window = window
        self.out = out
        self.saved: list[Path] = []
        self.skipped: list[str] = []

    def save(self, name: str, widget=None) -> None:
        path = self.out / f"{name}.png"
        pixmap = (widget or self.window).grab()
        if pixmap.isNull() or not pixmap.save(str(path)):
            self.skipped.append(f"{name}: could not grab/save")
            return
        self.saved.append(path)
        print(f"saved {path} ({pixmap.width()}x{pixmap.height()})")

    def skip(self, name: str, why: str) -> None:
        self.skipped.append(f"{name}: {why}")
        print(f"skipped {name}: {why}", file=sys.stderr)


class Session:
    """The running window and what the sections share."""

    def __init__(self, ctx, window, shooter: Shooter, home: Path) -> None:
        from ora_desktop.core import AgentFile

        self.ctx, self.window, self.shooter = ctx, window, shooter
        self.ora = AgentFile("anwe-sh", "ora", home / "sites" / "anwe-sh" / "ora.site.db")
        self.task = AgentFile("anwe-sh", "task-123", home / "sites" / "anwe-sh" / "task-123.site.db")

    def select(self, agent) -> None:
        """Select ``agent`` the way a person would (the sidebar), else through the context."""
        sidebar = find(self.window, "Sidebar")
        if sidebar is not None and hasattr(sidebar, "select_path"):
            sidebar.select_path(agent.path)
        if self.ctx.current_path() != agent.path:
            self.ctx.set_current(agent)


def _select_row(table, row: int) -> None:
    if hasattr(table, "select_row"):
        table.select_row(row)
    else:
        table.selectRow(row)


async def memories(s: Session, table) -> None:
    """The memory table with a memory selected and its detail."""
    await until(lambda: table.model() is not None and table.model().rowCount() > 0)
    _select_row(table, 2)
    await settle(1.0)
    s.shooter.save("01-memories")


async def search(s: Session, bar) -> None:
    """Typing a query letter by letter; matches highlighted in the table and the detail."""
    field = bar.field
    field.setFocus()
    for prefix in ("c", "ch", "che", "check", "checkout"):
        field.setText(prefix)
        await asyncio.sleep(0.08)
    await settle(1.5)
    table = find(s.window, "MemoryTable")
    if table is not None:
        _select_row(table, 0)
        await settle(0.8)
    s.shooter.save("02-search")
    field.clear()
    await settle(0.8)


async def jobs(s: Session, view) -> None:
    """A decay (previewed, confirmed) and a backup for the history, then a cleanup preview."""
    await until(lambda: view.snapshot is not None)
    for name in ("decay", "backup"):
        view.job.setCurrentIndex(view.job.findData(name))
        view.schedule.clearSelection()
        view.run_now()
        if name == "decay" and await until(lambda: view.preview is not None and view.preview.isVisible()):
            view.preview.confirm.click()
        await until(lambda job=name: not view.busy and view.last_report is not None
                    and view.last_report.job == job and not view.last_report.dry_run)
    await settle(1.0)
    s.shooter.save("03-jobs")
    view.job.setCurrentIndex(view.job.findData("cleanup"))
    view.run_now()
    if await until(lambda: view.preview is not None and view.preview.isVisible()):
        await settle(0.5)
        s.shooter.save("04-jobs-preview", view.preview)
        view.preview.reject()
    else:
        s.shooter.skip("04-jobs-preview", "the preview did not open")
    await settle(0.5)


async def backups(s: Session, view) -> None:
    """Back up now, then the confirmation of a restore (cancelled)."""
    from PySide6.QtWidgets import QMessageBox

    await until(lambda: view.listing is not None)
    view.back_up()
    await until(lambda: not view.busy and view.listing is not None and len(view.listing.backups) >= 2)
    await settle(0.5)
    s.shooter.save("05-backups")
    view.table.selectRow(1)
    view.ask_restore()
    if await until(lambda: view.confirm is not None and view.confirm.isVisible()):
        await settle(0.4)
        s.shooter.save("06-restore", view.confirm)
        view.confirm.button(QMessageBox.StandardButton.Cancel).click()
    else:
        s.shooter.skip("06-restore", "the confirmation did not open")
    await settle(0.4)


async def charts(s: Session, view) -> None:
    """Every chart, for every agent."""
    view.scope.setCurrentIndex(view.scope.findData("all"))
    await until(lambda: view.data is not None and view.data.files > 1 and not view._latest.busy)
    await settle(1.0)
    s.shooter.save("07-charts")


async def task(s: Session, view) -> None:
    """The spawned task agent's task, input and output."""
    s.select(s.task)
    await until(lambda: view.stack.currentIndex() == 1)
    await settle(1.0)
    s.shooter.save("08-task")


async def duplicates(s: Session, view) -> None:
    """Groups of exact and near duplicates, the first group's members side by side."""
    s.select(s.ora)
    view.find_button.click()
    await until(lambda: view.group_list.count() > 0, timeout=120)
    pairs = [i for i, g in enumerate(view.groups) if g.kind == "near" and len(g.ids) == 2 and g.similarity >= 0.85]
    view.group_list.setCurrentRow(pairs[0] if pairs else 0)  # a pair of restatements, side by side
    await settle(1.0)
    s.shooter.save("12-duplicates")


SMALL = (1366, 768)  # a common laptop screen: the desk's views must work there too


async def small_too(s: Session, name: str) -> None:
    """The same view in a 1366×768 window (then back to the usual size)."""
    s.window.resize(*SMALL)
    await settle(0.8)
    s.shooter.save(f"{name}-1366x768")
    s.window.resize(WIDTH, HEIGHT)
    await settle(0.4)


async def review(s: Session, view) -> None:
    """The review desk: a flag with its note first, then what needs attention and what is new."""
    from ora_desktop.core.operations import review as rv

    s.select(s.ora)
    await until(lambda: view.result is not None and view.table.rowCount() > 0)
    store = s.ctx.store_for(s.ora.path)
    fading = next((i for i in view.result.items if i.needs_attention), view.result.items[0])
    await s.ctx.run(rv.flag, store, fading.memory.id, "Still true after the move to the new host?")
    await until(lambda: view.table.items and "flagged" in view.table.items[0].reasons)
    view.table.selectRow(0)
    await settle(1.0)
    s.shooter.save("09-review")
    await small_too(s, "09-review")


async def context_tab(s: Session, view) -> None:
    """What store.context() would hand the agent for a question, and what the budget left out."""
    s.select(s.ora)
    view.question.setText("why did the checkout fail?")
    view.budget.setValue(600)
    view.bundle = None
    view.refresh()
    await until(lambda: view.bundle is not None)
    await settle(1.0)
    s.shooter.save("10-context")
    await small_too(s, "10-context")


async def graph(s: Session, view) -> None:
    """The neighbourhood of the most linked memory, two hops out."""
    s.select(s.ora)
    store = s.ctx.store_for(s.ora.path)
    rows = await s.ctx.run(all_rows, store, "SELECT id FROM memories WHERE related_to LIKE '[\"%' "
                                            "ORDER BY superseded_by IS NOT NULL DESC, length(related_to) DESC LIMIT 1")
    if not rows:
        s.shooter.skip("11-graph", "the demo has no linked memory")
        return
    from ora_desktop.core.operations.links import add_link

    origin = rows[0][0]
    others = await s.ctx.run(all_rows, store, "SELECT id FROM memories WHERE id != ? AND (superseded_by IS NULL "
                                              "OR superseded_by = '') ORDER BY rowid LIMIT 2", (origin,))
    for (other,), kind in zip(others, ("contradicts", "supports"), strict=False):
        await s.ctx.run(add_link, store, origin, other, kind)
    view.show_id(origin)
    await until(lambda: view.graph is not None and view.graph.origin == origin)
    await settle(1.0)
    s.shooter.save("11-graph")
    s.window.resize(*SMALL)
    await settle(0.5)
    view.fit()
    await settle(0.5)
    s.shooter.save("11-graph-1366x768")
    s.window.resize(WIDTH, HEIGHT)
    await settle(0.4)


async def curating(s: Session, table) -> None:
    """The curator's dialogs and lists, in a laptop-sized window."""
    window = s.window
    window.resize(*SMALL)
    s.select(s.ora)
    await until(lambda: table.model() is not None and table.model().rowCount() > 2)
    table.select_row(0)
    table.selectionModel().select(table.model().index(1, 0), table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    await settle(0.5)
    window.curator.find_replace()
    await until(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible())
    dialog = window.curator.dialog
    dialog.scope.setCurrentIndex(dialog.scope.count() - 1)  # the whole file: a fuller preview
    dialog.find.setText("deploy")
    dialog.replacement.setText("release")
    await until(lambda: dialog.replace_button.isEnabled())
    await settle(0.5)
    s.shooter.save("13-find-replace", dialog)
    dialog.reject()
    detail = s.window.browser.detail
    table.select_row(0)
    await until(lambda: detail.memory is not None)
    detail.show_stored()
    await until(lambda: detail.stored_dialog is not None and detail.stored_dialog.isVisible())
    await settle(0.5)
    s.shooter.save("14-stored-values", detail.stored_dialog)
    detail.stored_dialog.reject()
    from ora_desktop.gui.search.saved import SavedSearch

    window.saved.list.save(SavedSearch("Deploy facts", "deploy type:fact"))
    window.saved.list.save(SavedSearch("Fading important memories", "importance:>=7 health:<0.5"))
    window.saved.apply(window.saved.list.searches[0])
    await settle(1.5)
    s.shooter.save("15-saved-searches")
    window.curator.show_history()
    await until(lambda: window.curator.dialog is not None and window.curator.dialog.isVisible())
    await settle(0.8)
    s.shooter.save("16-change-history", window.curator.dialog)
    window.curator.dialog.reject()
    window.resize(WIDTH, HEIGHT)
    await settle(0.4)


async def curator_views(s: Session, view) -> None:
    """The consolidation desk (Review tab) and a memory's History section with its Pin toggle."""
    from ora_desktop.core.operations import edits

    window = s.window
    s.select(s.ora)
    window.tabs.setCurrentWidget(view)
    await until(lambda: view.result is not None)
    dialog = view.consolidate()
    await until(lambda: dialog.clusters.count() > 0 or "No cluster" in dialog.note.text(), timeout=120)
    await settle(0.8)
    s.shooter.save("17-consolidation", dialog)
    dialog.reject()
    window.tabs.setCurrentIndex(0)
    table = window.browser.table
    await until(lambda: table.model() is not None and table.model().rowCount() > 0)
    table.select_row(0)
    detail = window.browser.detail
    await until(lambda: detail.memory is not None)
    store = s.ctx.store_for(s.ora.path)
    memory = detail.memory
    await s.ctx.run(edits.edit, store, memory.id, {"importance": min(10, (memory.importance or 5) + 1)})
    await s.ctx.run(edits.edit, store, memory.id, {"content": memory.content + " (checked by a person)"})
    table.select_row(1)
    await settle(0.5)
    table.select_row(0)
    await until(lambda: "edit content" in detail.history.text())
    detail.pin_button.click()
    await until(lambda: detail.pin_button.isChecked())
    detail.ensureWidgetVisible(detail.history)
    await settle(0.8)
    s.shooter.save("18-history", detail)


async def window_views(s: Session, table) -> None:
    """Import into a new agent, the trash and the task table sorted, high contrast and a 16 pt
    font, all at 1366×768."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication

    from ora_desktop.core.operations.export import export_memories

    window = s.window
    window.resize(*SMALL)
    s.select(s.ora)
    await until(lambda: table.model() is not None and table.model().rowCount() > 2)
    source = s.ctx.home.root.parent / "legacy-export.jsonl"  # in the temporary folder
    other = next((a for a in s.ctx.home.agents() if a.agent != "ora" and not a.is_task_agent), None)
    await s.ctx.run(export_memories, [other.path if other else s.task.path], source)
    dialog = window.exchanger.preview(source)
    dialog.into.setCurrentIndex(dialog.into.findText("A new agent…"))
    dialog.new_name.setText("legacy-copy")
    await until(lambda: dialog.result is not None and dialog.import_button.isEnabled())
    await settle(0.6)
    s.shooter.save("19-import-new-agent", dialog)
    dialog.reject()
    source.unlink(missing_ok=True)
    table.select_row(0)
    table.selectionModel().select(table.model().index(1, 0), table.selectionModel().SelectionFlag.Select
                                  | table.selectionModel().SelectionFlag.Rows)
    window.curator.delete_action.trigger()
    await until(lambda: window.curator.undo_action.text().startswith("&Undo delete"))
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    await until(lambda: view.list.topLevelItemCount() > 0)
    await settle(0.6)
    s.shooter.save("20-trash", view)
    view.close()
    task_view = find(window, "TaskView")
    if task_view is not None:
        reveal(task_view)
        s.select(s.task)
        await until(lambda: task_view.stack.currentIndex() == 1)
        await settle(0.8)
        s.shooter.save("21-task-table")
        s.select(s.ora)
    window.tabs.setCurrentIndex(0)
    await until(lambda: table.model() is not None and table.model().rowCount() > 2)
    table.select_row(2)
    window.contrast.action.setChecked(True)
    await settle(1.0)
    s.shooter.save("22-high-contrast")
    window.contrast.action.setChecked(False)
    before = QApplication.font()
    big = QFont(before)
    big.setPointSizeF(16)
    QApplication.setFont(big)
    await settle(1.0)
    s.shooter.save("23-large-font")
    QApplication.setFont(before)
    s.ctx.settings.remove("view/high_contrast")
    window.resize(WIDTH, HEIGHT)
    await settle(0.4)


async def cells(s: Session, table) -> None:
    """The Matched column during a search, and editing in a cell, in a laptop-sized window."""
    from ora_desktop.gui.memories.columns import column_index

    window, browser = s.window, s.window.browser
    window.resize(*SMALL)
    s.select(s.ora)
    await until(lambda: table.model() is not None and table.model().rowCount() > 2)
    table.set_column_visible(column_index("snippet"), True)
    browser.search.field.setText("retries")
    await until(lambda: browser.controller.answer is not None and not browser.model.is_loading())
    await settle(1.5)
    table.select_row(0)
    await settle(0.8)
    s.shooter.save("24-matched-column")
    browser.search.field.clear()
    table.set_column_visible(column_index("snippet"), False)
    await settle(1.0)
    table.setFocus()
    table.select_row(1)
    table.setCurrentIndex(table.model().index(1, column_index("importance")))
    table.cells.start(table.currentIndex())
    await settle(0.5)
    s.shooter.save("25-cell-edit")
    table.cells.cancel(quietly=True)
    window.resize(WIDTH, HEIGHT)
    await settle(0.4)


#: (--views key, first PNG name, widget class to find in the window, section).
SECTIONS = (
    ("memories", "01-memories", "MemoryTable", memories),
    ("search", "02-search", "SearchBar", search),
    ("jobs", "03-jobs", "JobsView", jobs),
    ("backups", "05-backups", "BackupsView", backups),
    ("charts", "07-charts", "ChartsView", charts),
    ("task", "08-task", "TaskView", task),
    ("review", "09-review", "ReviewView", review),
    ("context", "10-context", "ContextView", context_tab),
    ("graph", "11-graph", "GraphView", graph),
    ("duplicates", "12-duplicates", "DuplicatesView", duplicates),
    ("curating", "13-find-replace", "MemoryTable", curating),
    ("curator", "17-consolidation", "ReviewView", curator_views),
    ("window", "19-import-new-agent", "MemoryTable", window_views),
    ("cells", "24-matched-column", "MemoryTable", cells),
)


async def shoot(args: argparse.Namespace, home: Path) -> Shooter:
    from PySide6.QtWidgets import QApplication

    from ora_desktop.gui.app import build_window
    from ora_desktop.gui.app import parse_args as app_args

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ctx, window = build_window(app_args(["--home", str(home)]))
    window.resize(WIDTH, HEIGHT)
    window.show()
    if hasattr(window, "start"):
        window.start()
    session = Session(ctx, window, Shooter(window, out), home)
    await settle(1.0)
    session.select(session.ora)
    await settle(1.5)
    from ora_desktop.gui.panels import panel_classes  # added after the first rows: wait for them on a busy machine

    await until(lambda: len(window.panels) >= len(panel_classes()), timeout=60)
    wanted = set(args.views.split(","))
    for key, name, class_name, section in SECTIONS:
        if key not in wanted:
            continue
        widget = find(window, class_name)
        if widget is None:
            session.shooter.skip(name, f"no {class_name} in the window")
            continue
        reveal(widget)
        await section(session, widget)

    window.close()
    await settle(0.3)
    ctx.close()
    window.deleteLater()
    await settle(0.2)
    QApplication.processEvents()
    return session.shooter


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="ora-screenshots-") as tmp:
        home = isolate(Path(tmp))
        from ora_desktop.core.demo import write_demo_home

        write_demo_home(home, memories=args.memories)
        import PySide6  # noqa: F401  (before qasync)
        import qasync

        from ora_desktop.gui.app import make_application

        app = make_application()
        app.setQuitOnLastWindowClosed(False)  # closing the window must not stop the loop under us
        if args.dark:
            from ora_desktop.gui.theme import dark_palette

            app.setPalette(dark_palette())
        with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
            shooter = runner.run(shoot(args, home))
        if hasattr(app, "shutdown"):
            app.shutdown()  # tear Qt down now, not during interpreter finalization
    print(f"{len(shooter.saved)} screenshot(s) in {args.out}/")
    for line in shooter.skipped:
        print(f"  not taken: {line}", file=sys.stderr)
    return 0 if shooter.saved and not shooter.skipped else 1


if __name__ == "__main__":
    raise SystemExit(main())
