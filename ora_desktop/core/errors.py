"""Exceptions raised by the engine: one root, ``OraError``, with messages that name the file."""

from __future__ import annotations

from pathlib import Path


class OraError(Exception):
    """Base of every error the engine raises on purpose. Its message is meant for a person."""


class FileProblem(OraError):
    """A database file cannot be used; the message names the file and what is wrong."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class FileMissing(FileProblem):
    """The path does not exist."""


class EmptyFile(FileProblem):
    """The file has zero bytes."""


class NotSQLite(FileProblem):
    """The file does not start with the SQLite header (or is encrypted)."""


class CorruptFile(FileProblem):
    """The file is SQLite but truncated or malformed."""


class WrongSchema(FileProblem):
    """The file is SQLite but has no usable ``memories`` table."""


class DatabaseLocked(FileProblem):
    """Another process held a lock longer than the busy timeout."""


class ReadOnlyDatabase(FileProblem):
    """A write was asked of a store opened read-only, or of a file we cannot write."""


class InvalidValue(OraError):
    """A field value outside the seed's CHECK constraints (or otherwise unusable)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class InvalidName(OraError):
    """A site slug or agent name that could escape its folder (``/``, ``..``, leading dot)."""


class NotFound(OraError):
    """A memory id (or other key) that is not in the database."""


class Conflict(OraError):
    """The row changed underneath an edit: its ``version`` (a fingerprint of every column) moved on."""

    def __init__(self, memory_id: str, message: str) -> None:
        self.memory_id = memory_id
        super().__init__(message)


class Duplicate(OraError):
    """An add refused because a live memory already holds the same text (``existing_id``)."""

    def __init__(self, existing_id: str, message: str) -> None:
        super().__init__(message)
        self.existing_id = existing_id
