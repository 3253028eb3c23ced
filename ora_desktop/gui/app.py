"""Start the window: ``main(argv) -> int``.

Creates the ``QApplication``, runs the qasync loop through
``asyncio.Runner(loop_factory=qasync.QEventLoop)``, installs the exception hook (a dialog with
copyable details; the app keeps running) and logging to the user log folder.
Options: ``--read-only``, ``--home DIR`` and ``.site.db`` paths to open.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import qasync  # PySide6 is already loaded by ora_desktop.gui (it must come first)
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from .. import __version__
from ..core import OraHome, open_store
from ..core.desktop_files import APP_ID
from ..core.logs import configure, file_handler, log_file
from ..core.private import private_dir, touch_private
from ..views.first_rows import FirstRows
from .context import AppContext
from .errors import install_excepthook
from .resources import app_icon
from .theme import apply_theme

log = logging.getLogger("ora_desktop.gui")
ORGANIZATION = "Ora"
APPLICATION = "Ora Desktop"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ora-desktop", description="The Ora Desktop window.")
    parser.add_argument("--read-only", action="store_true", help="open every file read-only")
    parser.add_argument("--home", help="Ora home folder (default: $ORA_HOME or ~/.ora)")
    parser.add_argument("files", nargs="*", help=".site.db files to open")
    return parser.parse_args(list(argv))


def setup_logging() -> Path | None:
    """Log to ``<user log dir>/ora-desktop.log`` (rotated), once (``core.logs``)."""
    if file_handler() is not None:
        return None
    configure("window")
    return log_file()


def make_application(argv: Sequence[str] = ()) -> QApplication:
    """The ``QApplication`` with names, icon and theme set (reuses an existing instance)."""
    # X11's WM_CLASS instance (Qt reads RESOURCE_NAME) and Wayland's app id both name the desktop
    # entry, so a dock ties the window to its launcher (StartupWMClass=org.ora.Desktop).
    os.environ.setdefault("RESOURCE_NAME", APP_ID)
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "ora-desktop", *argv])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    apply_theme(app)
    return app


def build_window(args: argparse.Namespace, settings: QSettings | None = None,
                 first_rows: FirstRows | None = None):  # noqa: ANN201
    """The context and main window for parsed ``args`` (used by ``main``, tests and benchmarks);
    ``first_rows``: the file read ahead while the window was being imported, if any."""
    from .main_window import MainWindow

    ctx = _context(args, settings, first_rows)
    window = MainWindow(ctx)  # its start() adds the extra panels and starts the jobs service
    _open_files(window, args)
    return ctx, window


def _context(args: argparse.Namespace, settings: QSettings | None, first_rows: FirstRows | None) -> AppContext:
    home = OraHome(args.home) if args.home else OraHome()
    ctx = AppContext(home, settings or private_settings(), read_only=args.read_only)
    ctx.adopt_first_rows(first_rows)
    return ctx


def _open_files(window, args: argparse.Namespace) -> None:  # noqa: ANN001 (a MainWindow)
    for name in args.files:
        window.open_file(Path(name))
    tune_gc()


def private_settings() -> QSettings:
    """The window's ``QSettings``, its file created 0600 in a 0700 folder first (recent files name
    memory files; Qt's atomic save keeps an existing file's mode)."""
    settings = QSettings()
    path = Path(settings.fileName())
    with contextlib.suppress(OSError):
        private_dir(path.parent)
        touch_private(path)
    return settings


def tune_gc() -> None:
    """Keep garbage-collection pauses off the GUI thread's back: everything built so far (Qt
    wrappers, modules) is moved out of the collector's sight, and young collections run less
    often. A full collection over the app's objects otherwise takes 20-40 ms at random moments."""
    gc.freeze()  # no full collection first: that alone would block for ~100 ms
    gc.set_threshold(10_000, 20, 20)
    gc.enable()  # the command line turns it off while the window's modules load


async def build_window_async(args: argparse.Namespace, settings: QSettings | None = None,
                             first_rows: FirstRows | None = None):  # noqa: ANN201
    """:func:`build_window`, with the window's modules imported on a worker thread first (the
    import is the slow part of starting; the GUI thread stays free meanwhile), and the window
    built in event-loop turns (the detail pane, the Memories tab, the rest, the files opened, its parts drawn
    once ahead of ``show()``: ``MainWindow.prepare_first_paint``), so that no one turn blocks the
    GUI thread for long; returns in a turn of its own.

    No garbage collection runs meanwhile (as from the command line's start): a full collection
    over the objects the import made (~100 ms) would land in one of these turns; tune_gc() turns
    it back on, tuned, once the window is built."""
    gc.disable()
    try:
        await asyncio.get_running_loop().run_in_executor(None, importlib.import_module, "ora_desktop.gui.main_window")
        from .detail.view import DetailPane
        from .main_window import MainWindow
        from .memories.page import MemoryBrowser

        ctx = _context(args, settings, first_rows)
        detail = DetailPane(ctx)
        await asyncio.sleep(0)
        browser = MemoryBrowser(ctx, detail=detail)
        await asyncio.sleep(0)
        window = MainWindow(ctx, browser)
        await asyncio.sleep(0)
        _open_files(window, args)
        for _part in window.prepare_first_paint():
            await asyncio.sleep(0)
    finally:
        gc.enable()  # done by tune_gc() already, unless the build failed
    await asyncio.sleep(0)
    return ctx, window


async def _run(args: argparse.Namespace, first_rows: FirstRows | None = None) -> int:
    app = QApplication.instance()
    loop = asyncio.get_running_loop()
    install_excepthook(loop)
    ctx, window = await build_window_async(args, first_rows=first_rows)
    with contextlib.suppress(ValueError):  # Ctrl+C in the terminal closes the window (main thread only)
        signal.signal(signal.SIGINT, lambda *_: window.close())
    window.show()
    window.start()
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    window.closed.connect(closed.set)
    await closed.wait()
    ctx.close()
    return 0


def main(argv: Sequence[str] | None = None, first_rows: FirstRows | None = None) -> int:
    """Run the window until it is closed; returns the exit code. ``first_rows``: the file the
    window shows first, already being read (``ora-desktop FILE`` starts it before importing Qt);
    without it, the last file given starts being read now, while the window is imported."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if first_rows is None and args.files:
        first_rows = FirstRows(open_store, args.files[-1], readonly=args.read_only)
    target = setup_logging()
    make_application()
    log.info("Ora Desktop %s starting (log: %s)", __version__, target)
    app = QApplication.instance()
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        return runner.run(_run(args, first_rows))


if __name__ == "__main__":
    raise SystemExit(main())
