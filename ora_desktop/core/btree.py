"""Reading SQLite's b-tree pages as bytes: the cells of a table leaf, an interior page's
children, a record's column values (which columns an edit changed), the freelist's trunk pages,
and which written pages the rows and the freelist explain (:func:`accounted`).

The change feed (:mod:`.feed`) compares two versions of a page (before and after another
program's commit) with these, and the search index's log cursor (:func:`.wallog.rows_since`)
names the rows on the pages written; everything here is a pure function of bytes, and garbage
in gives "nothing found" (empty results), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

TABLE_LEAF = 0x0D
TABLE_INTERIOR = 0x05
INDEX_PAGES = (0x02, 0x0A)
LOCK_BYTE = 0x40000000  # the file offset of SQLite's lock bytes: the page holding it is never used


@dataclass(frozen=True, slots=True)
class Cell:
    """One row on a table-leaf page: its stored bytes (local payload and overflow pointer),
    its record's column count and first text column, and its first overflow page (0: none)."""

    data: bytes
    columns: int
    key: str | None
    overflow: int


def varint(page: bytes | memoryview, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at``: (value, offset after it). The one reader of
    them: the feed, the search index's log cursor and salvage (:mod:`.pages`) share it."""
    value = 0
    for i in range(8):
        byte = page[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | page[at + 8], at + 9


def _header_at(pgno: int) -> int:
    return 100 if pgno == 1 else 0


def page_type(page: bytes, pgno: int = 2) -> int:
    """The b-tree page type byte (0 for an empty page)."""
    at = _header_at(pgno)
    return page[at] if len(page) > at else 0


def _local_size(payload: int, usable: int) -> int:
    """How much of a table-leaf payload is stored on the page (the rest overflows)."""
    most = usable - 35
    if payload <= most:
        return payload
    least = ((usable - 12) * 32 // 255) - 23
    local = least + (payload - least) % (usable - 4)
    return local if local <= most else least


def _cell_pointers(page: bytes, at: int, header: int) -> list[int]:
    cells = int.from_bytes(page[at + 3:at + 5], "big")
    start = at + header
    if start + 2 * cells > len(page):
        return []
    return [int.from_bytes(page[start + 2 * i:start + 2 * i + 2], "big") for i in range(cells)]


def leaf_rowids(page: bytes, pgno: int = 2) -> list[int]:
    """Rowids of a table-leaf page's cells, without reading their records (empty for any other
    page, or garbage)."""
    at = _header_at(pgno)
    if page_type(page, pgno) != TABLE_LEAF:
        return []
    out = []
    try:
        for pointer in _cell_pointers(page, at, 8):
            if pointer < at + 8 or pointer >= len(page):
                return []
            rowid = varint(page, varint(page, pointer)[1])[0]
            out.append(rowid - (1 << 64) if rowid >= 1 << 63 else rowid)
    except IndexError:
        return []
    return out


def leaf_cells(page: bytes, usable: int, pgno: int = 2, records: bool = True) -> dict[int, Cell] | None:
    """``{rowid: Cell}`` of a table-leaf page; ``None`` when it is not one (or is garbage).
    ``records`` False: the records' heads are not read (each cell's ``columns`` 0, ``key`` None)."""
    at = _header_at(pgno)
    if page_type(page, pgno) != TABLE_LEAF:
        return None
    out: dict[int, Cell] = {}
    try:
        for pointer in _cell_pointers(page, at, 8):
            if pointer < at + 8 or pointer >= len(page):
                return None
            payload, pos = varint(page, pointer)
            rowid, pos = varint(page, pos)
            if rowid >= 1 << 63:
                rowid -= 1 << 64
            local = _local_size(payload, usable)
            end = pos + local + (4 if local < payload else 0)
            if end > len(page):
                return None
            overflow = int.from_bytes(page[end - 4:end], "big") if local < payload else 0
            columns, key = _record_head(page[pos:pos + local]) if records else (0, None)
            out[rowid] = Cell(bytes(page[pointer:end]), columns, key, overflow)
    except IndexError:
        return None
    return out


def _record_types(record: bytes) -> tuple[int, list[int], int] | None:
    """(header size, each column's serial type, where the header's last varint ended) of a
    record's bytes; ``None`` when the header runs past them."""
    try:
        size, pos = varint(record, 0)
        types = []
        while pos < size:
            serial, pos = varint(record, pos)
            types.append(serial)
    except IndexError:
        return None
    return size, types, pos


def _record_head(record: bytes) -> tuple[int, str | None]:
    """(column count, the first column's text or None) of a record's local bytes."""
    header = _record_types(record)
    if header is None:
        return 0, None
    size, types, _end = header
    if not types or types[0] < 13 or types[0] % 2 == 0:
        return len(types), None
    length = (types[0] - 13) // 2
    if size + length > len(record):
        return len(types), None
    return len(types), record[size:size + length].decode("utf-8", "replace")


def _serial_size(serial: int) -> int | None:
    """Bytes a record value of ``serial`` type takes (``None``: a reserved type)."""
    if serial >= 12:
        return (serial - 12) // 2
    return (0, 1, 2, 3, 4, 6, 8, 8, 0, 0, None, None)[serial]


def record_values(cell: Cell, payload: bytes | None = None) -> list[tuple[int, bytes | None]] | None:
    """Each column's (serial type, stored bytes) of a row, in the table's column order; the bytes
    are ``None`` for a value that lies (partly) on overflow pages, unless ``payload`` (the whole
    record, its overflow pages read) is given. ``None`` when the record cannot be read."""
    data = cell.data
    try:
        _, pos = varint(data, 0)  # payload size
        _, pos = varint(data, pos)  # rowid
    except IndexError:
        return None
    record = payload if payload is not None else data[pos:len(data) - 4] if cell.overflow else data[pos:]
    whole = payload is not None or not cell.overflow
    header = _record_types(record)
    if header is None:
        return None
    size, types, end = header
    values: list[tuple[int, bytes | None]] = []
    body = size
    for serial in types:
        length = _serial_size(serial)
        if length is None:
            return None
        values.append((serial, record[body:body + length] if body + length <= len(record) else None))
        body += length
    if end != size or (whole and body != len(record)) or (not whole and body <= len(record)):
        return None
    return values


def changed_columns(old: Cell, new: Cell, names: Sequence[str], payloads: tuple[bytes, bytes] | None = None
                    ) -> set[str] | None:
    """The names of the columns whose stored values may differ between two versions of one row
    (``names``: the table's columns in order; ``payloads``: both whole records, when the row's
    overflow pages were read). A row that overflows its page is compared as far as its page
    holds it: its record header (each value's type and length) and the values stored there; a
    value that lies on overflow pages counts as changed unless its type says it is the same
    (NULL, 0 or 1, or of another length: changed). ``None`` when either version cannot be read, or
    a record shorter than the table (the defaults of its last columns) is met."""
    before = record_values(old, payloads[0] if payloads else None)
    after = record_values(new, payloads[1] if payloads else None)
    if before is None or after is None or max(len(before), len(after)) > len(names):
        return None
    if len(before) != len(after):
        return None
    return {names[i] for i, (a, b) in enumerate(zip(before, after, strict=True))
            if a[0] != b[0] or a[1] is None or b[1] is None or a[1] != b[1]}


def payload(cell: Cell, page: Callable[[int], bytes | None], usable: int, most: int = 256) -> bytes | None:
    """The whole record of ``cell``: its local bytes, then its overflow pages' (``page(pgno)``:
    one page's bytes, None when not known); None past ``most`` overflow pages or when a page
    is not known."""
    try:
        size, pos = varint(cell.data, 0)
        _, pos = varint(cell.data, pos)
    except IndexError:
        return None
    parts = [cell.data[pos:len(cell.data) - 4 if cell.overflow else len(cell.data)]]
    held, at = len(parts[0]), cell.overflow
    while at and held < size and len(parts) <= most:
        content = page(at)
        if content is None or len(content) < usable:
            return None
        parts.append(content[4:usable])
        held += usable - 4
        at = overflow_next(content)
    return b"".join(parts)[:size] if held >= size else None


def overflow_pages(cell: Cell, page: Callable[[int], bytes | None], most: int = 256) -> list[int] | None:
    """The overflow pages of ``cell`` in order (None when one is not known or past ``most``)."""
    out: list[int] = []
    at = cell.overflow
    while at and len(out) < most:
        out.append(at)
        content = page(at)
        if content is None:
            return None
        at = overflow_next(content)
    return None if at else out


def find_row(root: int, rowid: int, page: Callable[[int], bytes | None], usable: int) -> Cell | None:
    """The cell of ``rowid`` in the table whose b-tree starts at page ``root`` (each page read
    with ``page(pgno)``), None when it is not there or a page is not known."""
    at = root
    for _depth in range(20):
        content = page(at)
        if content is None:
            return None
        head = _header_at(at)
        if page_type(content, at) == TABLE_LEAF:
            cell = (leaf_cells(content, usable, at) or {}).get(rowid)
            return cell
        if page_type(content, at) != TABLE_INTERIOR or len(content) < head + 12:
            return None
        pointers = _cell_pointers(content, head, 12)
        try:  # the first cell whose key is at least rowid (cells are in key order); past all: the right-most
            low, high = 0, len(pointers)
            while low < high:
                middle = (low + high) // 2
                key, _ = varint(content, pointers[middle] + 4)
                if (key - (1 << 64) if key >= 1 << 63 else key) < rowid:
                    low = middle + 1
                else:
                    high = middle
            pointer = pointers[low] if low < len(pointers) else None
            at = int.from_bytes(content[pointer:pointer + 4] if pointer is not None else content[head + 8:head + 12],
                                "big")
        except IndexError:
            return None
    return None


def index_entries(page: bytes, usable: int) -> list[bytes]:
    """The records of an index-leaf page's entries (those held whole on the page); empty when
    it is not one."""
    if page_type(page) != INDEX_PAGES[1]:
        return []
    most = (usable - 12) * 64 // 255 - 23
    out: list[bytes] = []
    try:
        for pointer in _cell_pointers(page, 0, 8):
            size, pos = varint(page, pointer)
            if size <= most:
                out.append(bytes(page[pos:pos + size]))
    except IndexError:
        return []
    return out


def index_rowid(record: bytes) -> int | None:
    """The rowid an index entry points to (its record's last value), None when it has none."""
    header = _record_types(record)
    if header is None or not header[1] or header[1][-1] not in (1, 2, 3, 4, 5, 6, 8, 9):
        return None
    serial = header[1][-1]  # 1-6: a big-endian integer of 1-8 bytes; 8, 9: the rowid 0, 1
    if serial >= 8:
        return serial - 8
    return int.from_bytes(record[len(record) - (_serial_size(serial) or 0):], "big", signed=True)


def children(page: bytes, pgno: int = 2) -> set[int] | None:
    """The child page numbers of a table-interior page; ``None`` when it is not one."""
    at = _header_at(pgno)
    if page_type(page, pgno) != TABLE_INTERIOR or len(page) < at + 12:
        return None
    out = {int.from_bytes(page[at + 8:at + 12], "big")}
    for pointer in _cell_pointers(page, at, 12):
        if pointer + 4 > len(page):
            return None
        out.add(int.from_bytes(page[pointer:pointer + 4], "big"))
    return out


def is_btree(page: bytes, pgno: int) -> bool:
    """Whether a page is a b-tree page (a table or index leaf or interior page)."""
    return page_type(page, pgno) in (TABLE_LEAF, TABLE_INTERIOR, *INDEX_PAGES)


def accounted(written: Collection[int], versions: Iterable[tuple[Callable[[int], bytes | None], Mapping[int, Cell]]],
              header: bytes = b"", page_size: int = 0) -> tuple[set[int], set[int]]:
    """Which ``written`` pages the rows, the freelist and the pointer map explain, and which rows
    wrote past their page. ``versions``: for each version of the pages compared (after, before),
    a page's bytes in it (None: not known) and the cells of the table leaves written in it. Each
    cell's overflow chain is followed through written pages, then the freelist named by page 1
    (its trunk pages and their leaves); with the database ``header`` and ``page_size``, an
    auto-vacuum file's pointer-map pages (each page's parent: no row's bytes) count too.
    Returns (the pages explained, the rowids whose overflow pages were written). A written page
    that is no b-tree page and not explained belongs to no row one can name: an overflow page
    rewritten in place (a same-length edit past the leaf)."""
    versions = list(versions)
    seen: set[int] = set()
    rewritten: set[int] = set()
    for version, cells in versions:
        for rowid, cell in cells.items():
            page = cell.overflow
            while page and page not in seen and page in written:
                seen.add(page)
                rewritten.add(rowid)
                page = overflow_next(version(page) or b"")
    for version, _cells in versions:
        trunk = freelist_trunk(version(1) or b"")
        while trunk and trunk not in seen and trunk in written:
            seen.add(trunk)
            trunk, leaves = trunk_pages(version(trunk) or b"")
            seen.update(leaves)
    if page_size and len(header) >= 56 and int.from_bytes(header[52:56], "big"):  # (a largest root: auto-vacuum)
        seen.update(p for p in written if _pointer_map_page(p, page_size, page_size - header[20]))
    return seen, rewritten


def _pointer_map_page(pgno: int, page_size: int, usable: int) -> bool:
    """Whether page ``pgno`` of an auto-vacuum file is a pointer-map page (SQLite's
    ``ptrmapPageno``: page 2, then one every usable/5 + 1 pages, past the lock-byte page)."""
    if pgno < 2:
        return False
    per_map = usable // 5 + 1
    first = (pgno - 2) // per_map * per_map + 2
    return pgno == (first + 1 if first == LOCK_BYTE // page_size + 1 else first)


def overflow_next(page: bytes) -> int:
    """The next page of an overflow chain (0 at its end)."""
    return int.from_bytes(page[:4], "big") if len(page) >= 4 else 0


def freelist_trunk(page1: bytes) -> int:
    """The first freelist trunk page named by the database header (page 1)."""
    return int.from_bytes(page1[32:36], "big") if len(page1) >= 36 else 0


def trunk_pages(page: bytes) -> tuple[int, list[int]]:
    """(next trunk page, leaf pages) of a freelist trunk page."""
    if len(page) < 8:
        return 0, []
    count = int.from_bytes(page[4:8], "big")
    if 8 + 4 * count > len(page):
        return 0, []
    return (int.from_bytes(page[:4], "big"),
            [int.from_bytes(page[8 + 4 * i:12 + 4 * i], "big") for i in range(count)])
