"""Importing other agents' logs: a big Claude Code session against an OpenHands JSONL log of the same size.

    python benchmarks/bench_other_agents.py [--megabytes 100] [--repeat 3]

It writes, in a temporary folder, a Claude Code session of about `--megabytes` MB (the repository's
`fixtures/other-agents/claude_code_session.jsonl` turns repeated on one branch, each tool result
4 KB) and a synthetic OpenHands JSONL log of about the same size (`openhands_memory.testing.synthetic`),
and times `load_events` on each: the median of `--repeat` runs, each in a fresh process, alternating
between the two logs. It prints
one row a log (seconds, MB/s) and the ratio. The exit status is 0 either way: this is a report.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLAUDE = HERE.parent / "fixtures" / "other-agents" / "claude_code_session.jsonl"

_TIME = """
import logging, sys, time
logging.disable(logging.WARNING)
from openhands_memory.events import load_events
start = time.perf_counter()
events = load_events(sys.argv[1])
print(time.perf_counter() - start, len(events))
"""


def write_claude_session(path: Path, size: int) -> int:
    """A Claude Code session of about `size` bytes, one branch; returns its records."""
    records = [json.loads(line) for line in CLAUDE.read_text().splitlines()]
    turn = [r for r in records if r.get("uuid") in ("u1", "a1", "a2", "u2", "a3", "u3")]
    output = "x" * 4000
    count, parent = 0, None
    with path.open("w") as file:
        while file.tell() < size:
            for template in turn:
                record = json.loads(json.dumps(template))
                count += 1
                record["uuid"], record["parentUuid"], parent = f"r{count}", parent, f"r{count}"
                message = record["message"]
                for block in message["content"] if isinstance(message.get("content"), list) else ():
                    if block.get("type") == "tool_use":
                        block["id"] = f"t{count}"
                    elif block.get("type") == "tool_result":
                        block["tool_use_id"], block["content"] = f"t{count - 1}", output
                if "id" in message:
                    message["id"] = f"m{count}"
                file.write(json.dumps(record) + "\n")
    return count


def write_openhands_log(path: Path, size: int) -> int:
    """A synthetic OpenHands JSONL log of about `size` bytes (22 MB is 10k events); returns its events."""
    events = max(1000, int(size / 2200))
    subprocess.run(
        [sys.executable, "-m", "openhands_memory.testing.synthetic", "--events", str(events), "--condense-every", "200", "--out", str(path)],
        check=True,
    )
    return events


def timed(paths: list[Path], repeat: int) -> list[float]:
    """The median seconds of `load_events` on each path; runs alternate between the paths, so that a
    machine busy for a while slows both alike."""
    runs: list[list[float]] = [[] for _ in paths]
    for _ in range(repeat):
        for times, path in zip(runs, paths):
            out = subprocess.run([sys.executable, "-c", _TIME, str(path)], check=True, capture_output=True, text=True).stdout
            times.append(float(out.split()[0]))
    return [statistics.median(times) for times in runs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    size = int(args.megabytes * 1_000_000)
    with tempfile.TemporaryDirectory() as folder:
        claude, openhands = Path(folder) / "session.jsonl", Path(folder) / "openhands.jsonl"
        records = write_claude_session(claude, size)
        events = write_openhands_log(openhands, size)
        logs = [("OpenHands JSONL", openhands, f"{events:,} events"), ("Claude Code JSONL", claude, f"{records:,} records")]
        seconds = timed([path for _, path, _ in logs], args.repeat)
        rows = [(label, path.stat().st_size / 1_000_000, count, time) for (label, path, count), time in zip(logs, seconds)]
    print("| log | size | what | load_events | MB/s |")
    print("|---|---:|---|---:|---:|")
    for label, megabytes, count, seconds in rows:
        print(f"| {label} | {megabytes:.1f} MB | {count} | {seconds:.2f} s | {megabytes / seconds:.0f} |")
    print(f"\nClaude Code / OpenHands, seconds per MB: {(rows[1][3] / rows[1][1]) / (rows[0][3] / rows[0][1]):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
