"""Ctrl-C and SIGTERM stop a benchmark running in worker processes: the workers end with it, nothing is written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
BUNDLED = REPO / "fixtures" / "synthetic_session_300.jsonl"

EXIT_GUARD_SECONDS = 60
"""How long the command may take to end once signalled: a guard, never a measure. Without the fix it ran
every queued run first (600 runs here: minutes), and a second Ctrl-C hung for good."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker processes in /proc (Linux)"),
]


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _is_running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _busy_bench(tmp_path: Path) -> subprocess.Popen[str]:
    """`openhands-memory bench` of 600 runs in two worker processes (the work is made to seem worth them)."""
    for index in range(600):
        (tmp_path / f"noop{index}.toml").write_text('[condenser]\ntype = "noop"\n')
    script = textwrap.dedent(
        f"""
        import glob, sys
        import openhands_memory.bench.work as work
        work.workers_for = lambda logs, pipelines, jobs=None: 2  # the bundled log alone is not worth a worker
        from openhands_memory.cli import run
        sys.argv = ["openhands-memory", "bench", {str(BUNDLED)!r}, "--pipeline", *sorted(glob.glob({str(tmp_path / "noop*.toml")!r})),
                    "--tokenizer", "approximate", "--no-plot", "--jobs", "2", "--out", {str(tmp_path / "out")!r}]
        run()
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def _workers_at_work(bench: subprocess.Popen[str]) -> list[int]:
    """The two workers, once each has done some work (waits for them; fails if the command ends first)."""
    while True:
        assert bench.poll() is None, bench.communicate()
        workers = [pid for pid in _children(bench.pid) if _is_worker(pid)]
        if len(workers) == 2 and all(_cpu_ticks(pid) > 100 for pid in workers):  # imported and replaying
            return workers
        time.sleep(0.2)


@pytest.mark.parametrize(
    ("send", "code", "said"),
    [
        (lambda bench: os.killpg(bench.pid, signal.SIGINT), {130}, "interrupted"),  # Ctrl-C: the whole process group
        # Twice: the second may land while it ends (then Python ends by SIGINT, -2): it ends all the same, never hangs.
        (lambda bench: os.killpg(bench.pid, signal.SIGINT) or time.sleep(0.05) or os.killpg(bench.pid, signal.SIGINT),
         {130, -signal.SIGINT}, "interrupted"),  # fmt: skip
        (lambda bench: bench.send_signal(signal.SIGTERM), {143}, "terminated"),  # `kill PID`: the command alone
    ],
    ids=["ctrl-c", "ctrl-c-twice", "sigterm"],
)
def test_a_signal_stops_the_workers_and_the_command_writing_nothing(send, code: set[int], said: str, tmp_path: Path) -> None:
    bench = _busy_bench(tmp_path)
    try:
        workers = _workers_at_work(bench)
        send(bench)
        out, err = bench.communicate(timeout=EXIT_GUARD_SECONDS)
    finally:
        if bench.poll() is None:
            os.killpg(bench.pid, signal.SIGKILL)
    assert bench.returncode in code, err
    assert said in err.splitlines()
    assert "Traceback" not in err.split(said)[0]  # the workers ignore Ctrl-C: their parent stops them
    assert out == ""  # no table: the runs were not all done
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing written, not even half
    assert [pid for pid in workers if _is_running(pid)] == []
