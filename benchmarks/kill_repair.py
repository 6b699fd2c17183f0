"""Kill -9 `openhands-memory repair` at random moments of its writing phase; count what each kill left.

    python benchmarks/kill_repair.py [--kills 20] [--events 1500] [--size 60000] [--seed 1]

It writes a damaged JSONL log (`--events` messages of `--size` characters, a garbage line every
twelfth of the log) in a temporary folder, times the writing phase of one repair (from the first
file it creates beside the log to its exit), then `--kills` times: copies the log into a fresh
folder, starts `repair_log` in a new process, waits for its first file, kills it after a random
fraction of that phase, notes what is beside the log, runs the repair again to the end, and checks
that the folder holds the log and one sidecar, nothing hidden, and that the two hold every line
of the original (issue 29, item 8). The exit status is 0: this is a report.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

_CHILD = (
    "import sys; from openhands_memory.stream import repair_log; print('start', flush=True); "
    "repair_log(sys.argv[1])"
)


def _damaged_log(path: Path, events: int, size: int) -> None:
    lines = []
    for i in range(events):
        record = {"id": i, "timestamp": "2025-01-01T00:00:00", "source": "user", "message": "m", "action": "message"}
        lines.append(orjson.dumps({**record, "args": {"content": "x" * size}}))
        if i % max(events // 12, 1) == events // 24:
            lines.append(b"garbage line " + b"\x00" * 50)
    path.write_bytes(b"\n".join(lines) + b"\n")


def _repair(folder: Path, kill_after: float | None = None) -> float:
    """Run a repair; returns how long it wrote, or kills it `kill_after` seconds after its first file."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(folder / "events.jsonl")], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "start\n"
    while len(os.listdir(folder)) == 1 and child.poll() is None:
        time.sleep(0.0005)
    started = time.perf_counter()
    if kill_after is not None:
        time.sleep(kill_after)
        child.send_signal(signal.SIGKILL)
    child.wait()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--events", type=int, default=1500)
    parser.add_argument("--size", type=int, default=60_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "damaged.jsonl"
        _damaged_log(source, args.events, args.size)
        original = Counter(source.read_bytes().split(b"\n")[:-1])

        def fresh(name: str) -> Path:
            folder = Path(tmp) / name
            folder.mkdir()
            shutil.copy(source, folder / "events.jsonl")
            return folder

        phase = _repair(fresh("timing"))
        print(f"writing phase of one repair: {phase:.3f} s")
        interrupted = dirty = lost = 0
        for kill in range(args.kills):
            folder = fresh(f"kill-{kill}")
            _repair(folder, rng.uniform(0, phase))
            left = sorted(p.name for p in folder.iterdir() if p.name != "events.jsonl")
            replaced = (folder / "events.jsonl").read_bytes() != source.read_bytes()
            interrupted += bool(left) and not replaced
            _repair(folder)
            after = sorted(p.name for p in folder.iterdir() if p.name != "events.jsonl")
            clean = len(after) == 1 and not after[0].startswith(".")
            dirty += not clean
            kept = (folder / "events.jsonl").read_bytes().split(b"\n")[:-1]
            moved = [
                line.split(b"\t", 1)[1]
                for name in after
                if not name.startswith(".")
                for line in (folder / name).read_bytes().split(b"\n")[:-1]
            ]
            lost += bool(original - Counter(kept + moved))
            print(f"kill {kill:2}: left {left or 'nothing'}; after the next repair: {after}{'' if clean else '  <- leftovers'}")
        print(
            f"{args.kills} kills: {interrupted} mid-repair (something left, the log not replaced yet); "
            f"after the next repair {dirty} folders held more than the log and one sidecar; {lost} lost a line"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
