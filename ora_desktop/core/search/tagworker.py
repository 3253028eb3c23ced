"""Tags and CJK text beside the index build, on the other core.

While the build's ``INSERT … SELECT`` fills FTS5 (inside SQLite, which releases Python's GIL), a
:class:`TagWorker` thread reads the text of the batches already committed to the file being
built, from that file's own FTS5 content (so tags and trigrams always describe the indexed
text), extracts their tags and picks the texts holding CJK characters (:mod:`.cjk`). The build
inserts what is ready at the start of its next batch; whatever is not ready when the words are
all indexed is left to :func:`.build.finish_tags`.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from pathlib import Path

from .cjk import has_cjk
from .sidecar import _text, connect_sidecar
from .tags import extract_tags

TagRow = tuple[int, str, str]
CjkRow = tuple[int, str]


def tags_and_cjk(rows: list[tuple[int, object]]) -> tuple[list[TagRow], list[CjkRow]]:
    """The tag rows and the CJK rows of ``(fid, content)`` pairs."""
    texts = [(fid, _text(content)) for fid, content in rows]
    tags = [(fid, kind, value) for fid, text in texts for kind, value in extract_tags(text)]
    return tags, [(fid, text) for fid, text in texts if has_cjk(text)]


class TagWorker:
    """Extracts the tags and CJK texts of fid ranges handed to it with :meth:`submit`, in order,
    on a thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._jobs: queue.Queue[tuple[int, int] | None] = queue.Queue()
        self._ready: queue.Queue[tuple[int, list[TagRow], list[CjkRow]]] = queue.Queue()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"tags {path.name}", daemon=True)
        self._thread.start()

    def submit(self, low: int, high: int) -> None:
        """Work on the documents with ``low < fid <= high`` (already committed)."""
        self._jobs.put((low, high))

    def ready(self) -> tuple[int | None, list[TagRow], list[CjkRow]]:
        """(the highest fid whose range is done, the tag rows and CJK rows of every range done)
        since the last call, without waiting; (None, [], []) when nothing is done."""
        upto, tags, cjk = None, [], []
        while True:
            try:
                upto, found, texts = self._ready.get_nowait()
            except queue.Empty:
                return upto, tags, cjk
            tags.extend(found)
            cjk.extend(texts)

    def close(self) -> None:
        """Stop after the range in hand, whose result is dropped. Not waited for: the build
        puts the words in place meanwhile (the thread runs no statement once stopped)."""
        self._stop.set()
        self._jobs.put(None)

    def _run(self) -> None:
        conn = None
        try:
            conn = connect_sidecar(self._path)
            conn.execute("PRAGMA query_only = ON")
            while (job := self._jobs.get()) is not None and not self._stop.is_set():
                rows = conn.execute("SELECT id, c0 FROM fts_content WHERE id > ? AND id <= ? ORDER BY id",
                                    job).fetchall()
                found, texts = tags_and_cjk(rows)
                if self._stop.is_set():
                    break
                self._ready.put((job[1], found, texts))
        except (sqlite3.Error, OSError) as exc:  # the build goes on; finish_tags extracts the rest
            self.error = exc
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
