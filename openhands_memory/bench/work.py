"""How much work a benchmark is: the logs its paths name, their size, and how many worker processes that is worth.

- `find_logs(paths)`: a log file or a session folder is one log; any other folder is a folder of
  logs, and stands for the logs in it (`*.json`, `*.jsonl`, session folders), in name order.
- `workers_for(logs, pipelines, jobs)`: worker processes only when the work pays for starting
  them. A spawned worker imports the library before its first run (about a second of CPU here),
  while a run replays about 3 MB of log a second: two small logs in two workers took 18 times as
  long as in this process. So one worker per `WORK_PER_WORKER` bytes of log to replay (the logs'
  size times the pipelines), at most `jobs`, and none (1: this process) below two.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from openhands_memory._locations import is_database_url
from openhands_memory.errors import MalformedEventError

__all__ = ["WORK_PER_WORKER", "available_cpus", "find_logs", "is_session_folder", "log_bytes", "workers_for"]

WORK_PER_WORKER = 16 << 20
"""Bytes of log to replay (summed over the pipelines) that make one more worker process worth starting:
about five seconds of runs, against about one to start a worker."""

# `<id>.json` (OpenHands V0) or `event-<index>-<uuid>.json` (an OpenHands SDK conversation's `events/`).
_EVENT_FILE = re.compile(r"[0-9]{1,18}\.json|event-[0-9]{5,18}-[0-9A-Fa-f-]{8,}\.json")
_LOG_SUFFIXES = (".json", ".jsonl", ".traj")  # .traj: SWE-agent trajectories


def is_session_folder(folder: Path) -> bool:
    """Whether `folder` is an OpenHands session folder (`events/`, or `<id>.json` files) or an SDK conversation's
    (`events/`, or `event-<index>-<uuid>.json` files), read as one log."""
    if (folder / "events").is_dir():
        return True
    with os.scandir(folder) as entries:
        return any(_EVENT_FILE.fullmatch(entry.name) for entry in entries)


def find_logs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The logs `paths` name: a file or a session folder is one; another folder stands for the logs in it.

    A folder of logs gives its `*.json` and `*.jsonl` files and its session folders (hidden
    names left out), sorted by name; a path that does not exist is kept, for the run to report; a
    `postgresql://` URL is kept as it is.

    Raises:
        MalformedEventError: a folder that is neither a session folder nor holds any log.
    """
    logs: list[Path] = []
    for given in paths:
        if is_database_url(given):  # a conversation in PostgreSQL: one log, kept as its URL
            logs.append(given)  # type: ignore[arg-type]
            continue
        path = Path(given)
        if not path.is_dir() or is_session_folder(path):
            logs.append(path)
            continue
        found = sorted(
            entry
            for entry in path.iterdir()
            if not entry.name.startswith(".")
            and (entry.is_file() and entry.suffix in _LOG_SUFFIXES or entry.is_dir() and is_session_folder(entry))
        )
        if not found:
            raise MalformedEventError(
                "a folder with no log in it: no *.json or *.jsonl file, no session folder (events/<id>.json)", path=path
            )
        logs.extend(found)
    return logs


def log_bytes(path: str | os.PathLike[str]) -> int:
    """The size of a log on disk: its file, or every file of a session folder (0 if it cannot be read)."""
    where = Path(path)
    try:
        if not where.is_dir():
            return where.stat().st_size
        return sum(file.stat().st_size for file in where.rglob("*.json") if file.is_file())
    except OSError:
        return 0


def workers_for(logs: Sequence[str | os.PathLike[str]], pipelines: int, jobs: int | None = None) -> int:
    """How many worker processes replaying every log through `pipelines` pipelines is worth; 1: none, run here.

    At most `jobs` (None: the CPUs this process may use) and one per run, and one per
    `WORK_PER_WORKER` bytes of log to replay, so that small work never waits for workers to start.
    """
    limit = jobs if jobs is not None else available_cpus()
    work = sum(log_bytes(log) for log in logs) * pipelines
    return max(1, min(limit, len(logs) * pipelines, work // WORK_PER_WORKER))


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
