"""What changed in a file since this process last synced it with a server, from the change feed.

A sync pushes every memory that differs from what was last synced (:mod:`.baseline`): one pass
over the file, a content fingerprint per row (seconds at a million memories). When a store of
this process holds the file open (the window; a library user), its change feed
(:mod:`..feedreaders`) has heard every commit since the last sync's read — ours, an agent's, a
job's — by id. A cursor on that feed is taken right before each sync reads what to push and kept
once the sync succeeds; the next sync then compares only the memories it names. Whenever the feed
cannot vouch (no store held the file open all along, the feed fell behind and answered a reload,
the last sync failed, another server), the answer is ``None``: the file's log (:mod:`.logged`),
else the full pass.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .. import feedreaders

_cursors: dict[tuple[str, str], feedreaders.FeedReader] = {}
_lock = threading.Lock()


def _key(path: Path, server_id: str) -> tuple[str, str]:
    return str(Path(path).resolve()), server_id


def changed(path: Path, server_id: str) -> frozenset[str] | None:
    """Ids of the memories added or changed since the last sync of ``path`` with ``server_id``
    in this process read the file; None when the feed cannot vouch (see the module docstring).
    Takes the cursor: a sync that fails keeps none, so the next one makes the full pass."""
    with _lock:
        reader = _cursors.pop(_key(path, server_id), None)
    if reader is None or feedreaders.log_for(path) is not reader.log:
        return None
    looked, change = reader.looked()
    if not looked:
        return None  # a commit of ours was being accounted for: not sure
    if change is None:
        return frozenset()
    if not change:
        return None
    return change.added | change.changed


def start(path: Path, server_id: str) -> feedreaders.FeedReader | None:
    """A cursor from now, to hand to :func:`keep` once the sync succeeded (None: no store of
    the file is open here to hear changes). Take it right after :func:`changed` read the last one,
    before the sync writes or reads anything: every commit is then heard by one of them."""
    log = feedreaders.log_for(path)
    # (No look: :func:`changed` has just looked; a commit since is heard by this cursor when the
    # next look finds it. A look in the middle of a sync would cut its commits in two for the
    # other readers.)
    return None if log is None else log.reader(own=True, look=False)


def keep(path: Path, server_id: str, reader: feedreaders.FeedReader | None) -> None:
    """The sync that took ``reader`` succeeded: the next one reads the feed from there."""
    if reader is None:
        return
    with _lock:
        _cursors[_key(path, server_id)] = reader


__all__ = ["changed", "keep", "start"]
