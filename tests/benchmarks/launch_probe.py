"""Run by ``bench_launch`` in a fresh process: start the app the way ``ora-desktop FILE`` does,
and print the wall-clock time at which the first rows of the table were painted, then quit.

Only the observation is added (a paint spy on the table, installed where the real start imports
the window); everything else — imports in their order, reading the file ahead, the
``QApplication``, the qasync loop, the window, opening the file — is the real start-up path.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    from ora_desktop.cli import common
    from ora_desktop.cli import main as cli_main

    real_start = common.start_window

    def start_window(argv, first_rows=None):  # noqa: ANN001, ANN202
        """Qt and the window are imported here, where the real start imports them."""
        from PySide6.QtCore import QEvent, QObject, QTimer

        from ora_desktop.gui import app

        real_build = app.build_window_async

        async def build_window_async(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            ctx, window = await real_build(*args, **kwargs)
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

        app.build_window_async = build_window_async
        return real_start(argv, first_rows)

    common.start_window = start_window
    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
