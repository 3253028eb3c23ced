"""Where rowids sit in a listing's row keys (``array("q")``, a million keys is 8 MB).

A view finds a few listed rows after each write (a changed row, a removed one, the selection)
while an agent may commit ten times a second. One search must neither cost the window much nor
hold the GIL long: the GUI thread waits for the GIL before it can run any Python slot, so a
worker that searches 8 MB in one C call (a ``bytes.find`` for an absent rowid: ~12 ms, ~100 ms
and more for a batch of them) freezes the window for as long. Here:

- with NumPy already imported (meaning search, the facets' vectors), a vectorised comparison,
  which releases the GIL while it scans;
- otherwise a byte search in slices of :data:`SLICE_KEYS` keys, so the interpreter can hand the
  GIL to the GUI thread between slices (NumPy is not imported for this: importing it would hold
  the GIL longer than the search).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence

_KEY = struct.Struct("=q")  # one key as ``array("q")`` stores it
#: Keys searched per slice (1 MB): about a millisecond of C with the GIL held.
SLICE_KEYS = 1 << 17


def positions(keys: Sequence[int], rowids: Sequence[int]) -> dict[int, int]:
    """``{rowid: position}`` of those ``rowids`` listed in ``keys`` (the first place each is)."""
    if not rowids or not len(keys):
        return {}
    numpy = sys.modules.get("numpy")
    if numpy is not None or not (isinstance(keys, array) and keys.typecode == "q"):
        return _vectorised(keys, rowids)
    wanted = {_KEY.pack(rowid): rowid for rowid in rowids}
    found: dict[int, int] = {}
    view = memoryview(keys).cast("B")
    step = SLICE_KEYS * _KEY.size
    for start in range(0, len(view), step):
        data = bytes(view[start:start + step])  # a whole number of keys: no match straddles slices
        for needle, rowid in list(wanted.items()):
            at = data.find(needle)
            while at != -1 and at % _KEY.size:  # a match straddling two keys: look further
                at = data.find(needle, at + 1)
            if at != -1:
                found[rowid] = (start + at) // _KEY.size
                del wanted[needle]
        if not wanted:
            break
    view.release()
    return found


def position(keys: Sequence[int], rowid: int) -> int | None:
    """The position of ``rowid`` in ``keys``, or ``None`` when it is not listed."""
    return positions(keys, [rowid]).get(rowid)


def _as_numpy(keys: Sequence[int]):  # noqa: ANN201 (NumPy is imported only when asked for)
    """The keys as an int64 NumPy array (no copy of an ``array("q")``)."""
    import numpy as np

    if isinstance(keys, array) and keys.typecode == "q":
        return np.frombuffer(keys, dtype=np.int64) if len(keys) else np.empty(0, dtype=np.int64)
    return np.asarray(keys, dtype=np.int64)


def _vectorised(keys: Sequence[int], rowids: Sequence[int]) -> dict[int, int]:
    import numpy as np

    listed = _as_numpy(keys)
    if len(rowids) <= 16:  # one comparison each: C loops that release the GIL
        found = {}
        for rowid in rowids:
            hits = np.flatnonzero(listed == rowid)
            if len(hits):
                found[int(rowid)] = int(hits[0])
        return found
    hits = np.flatnonzero(np.isin(listed, np.asarray(rowids, dtype=np.int64)))
    out: dict[int, int] = {}
    for pos in hits:
        out.setdefault(int(listed[pos]), int(pos))
    return out


__all__ = ["SLICE_KEYS", "position", "positions"]
