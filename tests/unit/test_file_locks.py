"""Reading a database file's header must not drop SQLite's locks held by this process.

POSIX releases every lock a process holds on a file when *any* descriptor of that file is
closed (sqlite.org/howtocorrupt.html §2.2). If a header sniff opens and closes the file while a
store has it open, another process that exits believes it was the last user and deletes the
WAL and shared memory under our connection: stale reads, then "disk I/O error".
"""

from __future__ import annotations

import subprocess
import sys

from ora_desktop.core import open_store
from ora_desktop.core.schema import sniff_file

WRITE = ("import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); "
         "s.update('a', content='written by another process ' + sys.argv[2]); s.close()")


def test_sniffing_an_open_file_keeps_our_locks(seed_db):
    path = seed_db([("a", "original", "fact", 5), ("b", "other", "fact", 5)])
    with open_store(path) as store:
        for round_ in range(3):
            sniff_file(path)  # what every search and every second open_store does
            store.get("a")
            subprocess.run([sys.executable, "-c", WRITE, str(path), str(round_)], check=True)
            assert store.get("a").content == f"written by another process {round_}"
            store.update("b", content=f"ours {round_}")
            assert store.get("b").content == f"ours {round_}"
    with open_store(path) as store:
        assert store.get("b").content == "ours 2"
        assert store.get("a").content == "written by another process 2"
