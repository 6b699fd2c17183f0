"""A throwaway local PostgreSQL server for tests and benchmarks: `initdb` into a temporary folder, `pg_ctl start`.

The server listens on a Unix socket in its own folder only (no TCP port, so nothing outside this
machine can reach it and no port can clash), trusts local connections, and is removed by `stop()`.
PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user (the
Debian package creates it), which owns the folder.

    with LocalPostgres.start() as server:
        url = server.url("postgres")          # postgresql://postgres@/postgres?host=/tmp/...

`find_postgres_bin()` looks for the server's programs in `$OPENHANDS_MEMORY_PG_BIN`, on PATH, then
in Debian's `/usr/lib/postgresql/<version>/bin` (not on PATH), newest version first.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

__all__ = ["LocalPostgres", "PostgresUnavailable", "find_postgres_bin"]

_SERVER_USER = "postgres"
"""Who runs the server when this process is root (PostgreSQL will not run as root)."""


class PostgresUnavailable(RuntimeError):
    """No local server can be started here; the message says why (and how to get one)."""


def find_postgres_bin() -> Path:
    """The folder holding `initdb`, `pg_ctl` and `postgres`.

    Raises:
        PostgresUnavailable: none was found.
    """
    candidates: list[Path] = []
    configured = os.environ.get("OPENHANDS_MEMORY_PG_BIN")
    if configured:
        candidates.append(Path(configured))
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: _version_key(Path(p).parent.name), reverse=True)
    candidates.extend(Path(p) for p in debian)
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise PostgresUnavailable(
        "no PostgreSQL server programs (initdb, pg_ctl) found on PATH, in $OPENHANDS_MEMORY_PG_BIN or in "
        "/usr/lib/postgresql/*/bin: install them (Debian: apt-get install postgresql)"
    )


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


class LocalPostgres:
    """A PostgreSQL server of its own, in a temporary folder, reached by a Unix socket; `stop()` removes it all."""

    def __init__(self, root: Path, socket_dir: Path, bin_dir: Path, run_as: str | None) -> None:
        """Use `start()`."""
        self.root = root
        """The temporary folder: the data folder and the socket live in it."""
        self.socket_dir = socket_dir
        """The folder of the server's Unix socket (the `host` of a connection)."""
        self._bin = bin_dir
        self._run_as = run_as
        self._running = True

    @classmethod
    def start(cls, *, settings: dict[str, str] | None = None, timeout: float = 60.0) -> LocalPostgres:
        """Create a cluster in a new temporary folder and start its server.

        `settings` are extra `postgresql.conf` values (`{"fsync": "off"}`); `timeout` only guards
        against a hang.

        Raises:
            PostgresUnavailable: the programs are missing, or the server would not start (the
                message holds the end of its log).
        """
        bin_dir = find_postgres_bin()
        run_as = _server_user()
        root = Path(tempfile.mkdtemp(prefix="openhands-pg-"))
        data, socket_dir = root / "data", root / "socket"
        socket_dir.mkdir()
        if run_as is not None:
            user = pwd.getpwnam(run_as)
            for path in (root, socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        server = cls(root, socket_dir, bin_dir, run_as)
        try:
            server._run(
                ["initdb", "-D", str(data), "--auth=trust", "--username=postgres", "--encoding=UTF8", "--no-sync",
                 "--no-instructions", "--locale=C"],
                timeout,
            )  # fmt: skip
            options = {
                "listen_addresses": "''",  # the Unix socket only: nothing reaches it from the network
                "unix_socket_directories": f"'{socket_dir}'",
                "max_connections": "100",
                **(settings or {}),
            }
            with open(data / "postgresql.conf", "a", encoding="utf-8") as conf:
                conf.writelines(f"{key} = {value}\n" for key, value in options.items())
            server._run(["pg_ctl", "-D", str(data), "-l", str(root / "server.log"), "-w", "-t", str(int(timeout)), "start"], timeout)
        except BaseException:
            server._running = False
            server._remove()
            raise
        return server

    def url(self, database: str = "postgres") -> str:
        """A libpq URL of `database` on this server (as the `postgres` superuser)."""
        return f"postgresql://postgres@/{quote(database)}?host={quote(str(self.socket_dir), safe='/')}"

    def stop(self) -> None:
        """Stop the server (fast: open connections are cut) and remove its folder; calling it again does nothing."""
        if self._running:
            self._running = False
            try:
                self._run(["pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop"], 60.0)
            except PostgresUnavailable:
                pass  # already gone: the folder is removed below all the same
        self._remove()

    def _remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, command: list[str], timeout: float) -> None:
        argv = [str(self._bin / command[0]), *command[1:]]
        if self._run_as is not None:
            argv = ["runuser", "-u", self._run_as, "--", *argv]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=self.root, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"{command[0]} failed: {exc}") from exc
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
            raise PostgresUnavailable(f"{command[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{tail}".strip())

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalPostgres({str(self.socket_dir)!r}, {'running' if self._running else 'stopped'})"


def _server_user() -> str | None:
    """The user to run the server as: None (this one) unless this process is root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(_SERVER_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root, and there is no {_SERVER_USER!r} user to run the server as "
            "(PostgreSQL refuses root): install the postgresql package, or run as another user"
        ) from None
    if shutil.which("runuser") is None:
        raise PostgresUnavailable("running as root without `runuser` to start the server as another user")
    return _SERVER_USER
