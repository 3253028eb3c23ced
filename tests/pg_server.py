"""A throwaway PostgreSQL server for tests and benchmarks (Debian's ``initdb``/``pg_ctl``).

PostgreSQL refuses to run as root, and the tests run as root here: as root the server runs as
the ``postgres`` system user (``runuser -u postgres --``) with its data folder owned by that user;
as anyone else it runs as the caller. It listens on 127.0.0.1 on a free port, its unix socket
lives in the same temporary folder, and :meth:`PgServer.stop` removes everything.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

PASSWORD = "s3cret-test-pw"


def _bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first, then PATH)."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]),
                         reverse=True):
        if Path(folder, "initdb").exists():
            return Path(folder)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError("PostgreSQL's initdb is not installed (packaging/install-system-deps.sh installs "
                       "the Debian 'postgresql' package)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    """One running PostgreSQL cluster; superuser ``postgres`` with :data:`PASSWORD`."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="ora-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "postgres"
        self._as_root = os.geteuid() == 0
        self.started = False

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if self._as_root else []
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120, check=True)

    def start(self) -> PgServer:
        if self._as_root:
            entry = pwd.getpwnam("postgres")
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        else:
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.root.chmod(0o700)
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self._as_root:
            os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.user, "--pwfile", str(pwfile),
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
        options = (f"-k {self.root} -h 127.0.0.1 -p {self.port} -F -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=60")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
                  "-w", "-t", "60", "start")
        self.started = True
        return self

    def stop(self) -> None:
        if self.started:
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", password: str | None = PASSWORD, user: str | None = None) -> str:
        """A ``postgresql://`` URL over TCP (password in the URL unless ``password`` is None)."""
        who = user or self.user
        auth = f"{who}:{password}" if password is not None else who
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement as the superuser in the ``postgres`` database (autocommit)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self, name: str) -> str:
        """Create a fresh database and return its URL."""
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.admin(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextlib.contextmanager
def running_server() -> Iterator[PgServer]:
    """A started server, stopped and removed afterwards (also when the body fails)."""
    server = PgServer()
    try:
        yield server.start()
    finally:
        server.stop()
