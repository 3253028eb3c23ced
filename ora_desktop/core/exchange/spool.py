"""The checked rows of an import, kept on disk between reading the source and writing the file.

An import reads and checks every row before it writes the first (so a bad row writes nothing),
then writes in chunks. A million rows held as Python tuples take over a gigabyte; here they wait
in a private temporary file (created unlinked, readable by this process only), in pickled
batches, and come back one chunk at a time.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

Values = tuple[Any, ...]
BATCH = 5000


class Spool:
    """Rows appended in order, read back once in parts of a size asked for at each part."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="ora-import-")  # noqa: SIM115 (closed by close())
        self._batch: list[Values] = []
        self.count = 0

    def append(self, values: Values) -> None:
        self._batch.append(values)
        self.count += 1
        if len(self._batch) >= BATCH:
            self._dump()

    def parts(self, size: Callable[[], int]) -> Iterator[list[Values]]:
        """The rows in order, in parts of ``size()`` rows (asked before each part); at least one
        part, empty when no row was appended."""
        self._dump()
        self._file.seek(0)
        buffer: list[Values] = []
        left = self.count
        while True:
            want = max(1, size())
            while len(buffer) < want and left > len(buffer):
                buffer += pickle.load(self._file)
            part, buffer = buffer[:want], buffer[want:]
            left -= len(part)
            yield part
            if not left:
                return

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _dump(self) -> None:
        if self._batch:
            pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._batch = []
