"""Read records straight from SQLite pages: the page-level half of salvage (:mod:`.operations.recover`).

Follows the file format (https://sqlite.org/fileformat2.html): every table b-tree leaf page
(type ``0x0D``) not on the freelist is parsed cell by cell, payloads are followed into their
overflow pages, and each record is decoded. Nothing here trusts the b-tree's interior pages or
``sqlite_master``, so records on intact leaf pages are found however badly the rest is damaged.
The ``-wal``'s frames (those of its own salt, up to the last commit) replace the pages they hold.
A cell that cannot be decoded is counted, never guessed.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .btree import varint

LEAF_TABLE, INTERIOR_TABLE, LEAF_INDEX, INTERIOR_INDEX = 0x0D, 0x05, 0x0A, 0x02
BTREE_TYPES = (LEAF_TABLE, INTERIOR_TABLE, LEAF_INDEX, INTERIOR_INDEX)


class BadCell(Exception):
    """A cell whose bytes do not decode."""


@dataclass
class PageScan:
    """What a scan of every page found."""

    page_size: int
    pages: int = 0
    leaf_pages: int = 0
    unreadable_pages: int = 0  # neither a b-tree page, nor free, nor overflow
    bad_cells: int = 0


def _page_size(header: bytes, file_size: int) -> int:
    size = int.from_bytes(header[16:18], "big") if len(header) >= 18 else 0
    size = 65536 if size == 1 else size
    if size >= 512 and size & (size - 1) == 0:
        return size
    return 4096  # the default; a damaged header says nothing better


class Pages:
    """The pages of a file (read through ``mmap``, never loaded whole) overlaid by ``-wal`` frames."""

    def __init__(self, data: Any, page_size: int, wal: dict[int, bytes]) -> None:
        self.data, self.page_size, self.wal = data, page_size, wal
        self.count = max([-(-len(data) // page_size), *wal])

    def __contains__(self, number: int) -> bool:
        return 1 <= number <= self.count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, number: int) -> bytes:
        if number in self.wal:
            return self.wal[number]
        page = self.data[(number - 1) * self.page_size:number * self.page_size]
        # A truncated last page is padded: cells beyond the end fail to decode.
        return page if len(page) == self.page_size else page + bytes(self.page_size - len(page))


def load_pages(path: Path, data: Any) -> tuple[int, int, Pages]:
    """(page size, reserved bytes, pages) of a file's bytes ``data``, overlaid with its ``-wal``."""
    page_size = _page_size(data[:100], len(data))
    reserved = data[20] if len(data) > 20 and data[20] < page_size // 4 else 0
    return page_size, reserved, Pages(data, page_size, _wal_pages(Path(f"{path}-wal"), page_size))


def _wal_pages(wal: Path, page_size: int) -> dict[int, bytes]:
    """Pages of the committed frames of ``wal`` (its own salt, up to the last commit frame)."""
    try:
        data = wal.read_bytes()
    except OSError:
        return {}
    if len(data) < 32 or int.from_bytes(data[8:12], "big") != page_size:
        return {}
    salt = data[16:24]
    committed: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    at = 32
    while at + 24 + page_size <= len(data):
        frame = data[at:at + 24]
        if frame[8:16] != salt:
            break
        pending[int.from_bytes(frame[0:4], "big")] = data[at + 24:at + 24 + page_size]
        if int.from_bytes(frame[4:8], "big"):  # a commit frame
            committed.update(pending)
            pending = {}
        at += 24 + page_size
    return committed


def _freelist(pages: Pages, header: bytes) -> set[int]:
    """Pages on the freelist (trunks and leaves); a damaged chain stops the walk."""
    free: set[int] = set()
    trunk = int.from_bytes(header[32:36], "big") if len(header) >= 36 else 0
    while trunk and trunk in pages and trunk not in free:
        free.add(trunk)
        page = pages[trunk]
        count = int.from_bytes(page[4:8], "big")
        if count > (len(page) - 8) // 4:
            break
        free.update(int.from_bytes(page[8 + 4 * i:12 + 4 * i], "big") for i in range(count))
        trunk = int.from_bytes(page[0:4], "big")
    return free


def _decode(payload: bytes) -> list[Any]:
    header_size, at = varint(payload, 0)
    if header_size > len(payload) or header_size < 1:
        raise BadCell("record header runs past the payload")
    types = []
    while at < header_size:
        serial, at = varint(payload, at)
        types.append(serial)
    body = header_size
    values: list[Any] = []
    for serial in types:
        if serial == 0:
            values.append(None)
        elif serial in (8, 9):
            values.append(serial - 8)
        elif 1 <= serial <= 6:
            width = (1, 2, 3, 4, 6, 8)[serial - 1]
            values.append(int.from_bytes(payload[body:body + width], "big", signed=True))
            body += width
        elif serial == 7:
            values.append(struct.unpack(">d", payload[body:body + 8])[0])
            body += 8
        elif serial >= 12:
            length = (serial - 12) // 2
            raw = payload[body:body + length]
            if len(raw) != length:
                raise BadCell("value runs past the payload")
            body += length
            if serial % 2:
                try:
                    values.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    values.append(raw.decode("utf-8", "replace"))
            else:
                values.append(bytes(raw))
        else:
            raise BadCell(f"reserved serial type {serial}")
    if body > len(payload):
        raise BadCell("values run past the payload")
    return values


def _cells(page: bytes, number: int, usable: int, pages: Pages, overflow: set[int],
           scan: PageScan) -> Iterator[list[Any]]:
    start = 100 if number == 1 else 0
    count = int.from_bytes(page[start + 3:start + 5], "big")
    limit_x = usable - 35
    limit_m = ((usable - 12) * 32 // 255) - 23
    for i in range(count):
        try:
            pointer = int.from_bytes(page[start + 8 + 2 * i:start + 10 + 2 * i], "big")
            if not start + 8 <= pointer < usable:
                raise BadCell("cell pointer outside the page")
            size, at = varint(page, pointer)
            _rowid, at = varint(page, at)
            local = size
            if size > limit_x:
                k = limit_m + ((size - limit_m) % (usable - 4))
                local = k if k <= limit_x else limit_m
            payload = bytearray(page[at:at + local])
            if len(payload) != local or at + local > usable:
                raise BadCell("cell runs past the page")
            if local < size:
                nxt = int.from_bytes(page[at + local:at + local + 4], "big")
                seen = 0
                while len(payload) < size:
                    if nxt not in pages or seen > pages.count:
                        raise BadCell("overflow chain broken")
                    overflow.add(nxt)
                    chunk = pages[nxt]
                    payload += chunk[4:usable][: size - len(payload)]
                    nxt = int.from_bytes(chunk[0:4], "big")
                    seen += 1
            yield _decode(bytes(payload))
        except (BadCell, IndexError, struct.error, ValueError):
            scan.bad_cells += 1


def scan_file(path: Path, sink: Callable[[list[Any]], None]) -> PageScan:
    """Pass every record on every table leaf page of ``path`` (and its ``-wal``) to ``sink``;
    read-only. Returns the counts."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        try:
            return _scan(path, data, sink)
        finally:
            if size:
                data.close()


def _scan(path: Path, data: Any, sink: Callable[[list[Any]], None]) -> PageScan:
    page_size, reserved, pages = load_pages(path, data)
    usable = page_size - reserved
    header = pages[1][:100] if 1 in pages else b""
    free = _freelist(pages, header)
    scan = PageScan(page_size, pages=len(pages))
    overflow: set[int] = set()
    other: list[int] = []
    for number in range(1, len(pages) + 1):
        if number in free:
            continue
        page = pages[number]
        kind = page[100 if number == 1 else 0]
        if kind == LEAF_TABLE:
            scan.leaf_pages += 1
            for record in _cells(page, number, usable, pages, overflow, scan):
                sink(record)
        elif kind not in BTREE_TYPES:
            other.append(number)
    scan.unreadable_pages = sum(1 for n in other if n not in overflow and any(pages[n]))
    return scan


def file_size(path: Path) -> int:
    """Bytes of a file and its ``-wal``."""
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())
