"""One huge event: loading time against the size of a single event, JSON list and JSONL side by side.

    python benchmarks/bench_one_big_event.py [--sizes 25 50 100] [--repeat 1]

For each size (millions of characters) it writes, in a temporary folder, a two-event log whose
first event is a message of that many characters, as a JSON list (`orjson` with indent 2) and as
JSONL, plus a JSON list whose huge string holds `}, {` every megabyte (so the reader cannot guess
where the event ends and scans it byte-exactly), and times `load_events` on each in a fresh
process (the best of `--repeat`). Loading should grow linearly with the size (issue 29, item 5).
The exit status is 0: this is a report.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

_MEASURE = """
import sys, time
from openhands_memory.events import load_events
started = time.perf_counter()
events = load_events(sys.argv[1])
print(time.perf_counter() - started)
"""


def _write_logs(folder: Path, size: int) -> dict[str, Path]:
    def log(content: str) -> list[dict[str, object]]:
        def message(event_id: int, text: str) -> dict[str, object]:
            return {
                "id": event_id,
                "timestamp": "2024-01-01T00:00:00",
                "source": "user",
                "message": text[:20],
                "action": "message",
                "args": {"content": text, "image_urls": None, "wait_for_response": False},
            }

        return [message(0, content), message(1, "done")]

    plain = log("x" * size)
    megabyte = "x" * (1_000_000 - 10) + '"}, {"a": '
    tricky = log((megabyte * (size // len(megabyte) + 1))[:size])
    paths = {
        "json list": folder / f"plain-{size}.json",
        "json list, '}, {' inside": folder / f"tricky-{size}.json",
        "jsonl": folder / f"plain-{size}.jsonl",
    }
    paths["json list"].write_bytes(orjson.dumps(plain, option=orjson.OPT_INDENT_2))
    paths["json list, '}, {' inside"].write_bytes(orjson.dumps(tricky, option=orjson.OPT_INDENT_2))
    paths["jsonl"].write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in plain))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100], help="millions of characters")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure (the best is reported)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'size':>6}  {'layout':<26} {'load (s)':>9}")
        for millions in args.sizes:
            for layout, path in _write_logs(Path(tmp), millions * 1_000_000).items():
                runs = [
                    float(subprocess.run([sys.executable, "-c", _MEASURE, str(path)], check=True, capture_output=True, text=True).stdout)
                    for _ in range(args.repeat)
                ]
                print(f"{millions:>5}M  {layout:<26} {min(runs):>9.2f}", flush=True)
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
