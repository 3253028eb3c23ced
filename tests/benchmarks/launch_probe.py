"""Run by ``bench_launch`` in a fresh process: start the app the way ``ora-desktop FILE`` does,
and print the wall-clock time at which the first rows of the table were painted, then quit.

Only the observation is added (a paint spy on the table); everything else — imports, the
``QApplication``, the qasync loop, the window, opening the file — is the real start-up path.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    from PySide6.QtCore import QEvent, QObject, QTimer

    import ora_desktop.gui  # noqa: F401  (PySide6 first, as the real start does through the CLI)
    from ora_desktop.gui import app

    real_build = app.build_window

    def build_window(args, settings=None):  # noqa: ANN001, ANN202
        ctx, window = real_build(args, settings)
        table, model = window.browser.table, window.browser.model

        class PaintSpy(QObject):
            def eventFilter(self, obj, event):  # noqa: N802, ANN001
                if (event.type() == QEvent.Type.Paint and model.rowCount()
                        and model.memory_at(max(0, table.rowAt(0))) is not None):
                    print(f"painted {time.time():.6f}", flush=True)
                    table.viewport().removeEventFilter(self)
                    QTimer.singleShot(0, window.close)
                return False

        window._launch_spy = PaintSpy(window)  # kept referenced by the window
        table.viewport().installEventFilter(window._launch_spy)
        return ctx, window

    app.build_window = build_window
    from ora_desktop.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
