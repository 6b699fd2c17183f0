"""Importing other agents' logs: a big log of each format against an OpenHands JSONL log of the same size.

    python benchmarks/bench_other_agents.py [--megabytes 100] [--repeat 3] [--formats claude-code,codex,...] [--codex-ciphertext 824]
        [--out benchmarks/results/other_agents.json]

It writes, in a temporary folder, one log of about `--megabytes` MB for each format, built from the
repository's `fixtures/other-agents/` samples (a turn repeated, each tool result 4 KB):

- Claude Code: the session's first turns on one branch (thinking, a `Bash` call, a `Read` call, their
  results), a block a record as Claude Code writes them (records of one response share its `message.id`);
- Codex: the rollout's turn as Codex writes it: the user's message and its `user_message` copy, the
  reasoning, a `shell` call, its `token_count`, the output, the answer, its `agent_message` copy and its
  `token_count`. A reasoning item carries its encrypted reasoning: `--codex-ciphertext` characters of
  it (824 by default, the smallest in public recordings of the Responses API: a minimal-effort
  reasoning item with an empty summary; more effort writes more; the fixture holds a 14-character
  placeholder, which `--codex-ciphertext 14` keeps);
- SWE-agent: a function-calling `history` (a `bash` call and its `tool` message a turn; no `trajectory`
  copy, so every byte is read);
- mini-swe-agent: the 1.x trajectory's text-format turns (a ```` ```bash ```` reply, its output);

and a synthetic OpenHands JSONL log of about the same size (`openhands_memory.testing.synthetic`). It
times `load_events` on each: the median of `--repeat` runs, each in a fresh process, alternating between
the logs (a machine busy for a while slows all alike). It prints one row a log: wall seconds, MB/s, the
seconds per MB against the OpenHands log's, and the same in CPU seconds of the process (which vary less
on a machine others use), and writes the same rows as JSON to `--out`. The exit status is 0 either
way: this is a report.
"""

from __future__ import annotations

import argparse
import base64
import copy
import functools
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "fixtures" / "other-agents"
OUTPUT = "x" * 4000
"""Every tool result: 4 KB."""

_TIME = """
import logging, sys, time
logging.disable(logging.WARNING)
from openhands_memory.events import load_events
start, cpu = time.perf_counter(), time.process_time()
events = load_events(sys.argv[1])
print(time.perf_counter() - start, time.process_time() - cpu, len(events))
"""


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / name).read_text().splitlines()]


def write_claude_session(path: Path, size: int) -> str:
    """A Claude Code session of about `size` bytes, one branch; says how many records."""
    turn = [r for r in _jsonl("claude_code_session.jsonl") if r.get("uuid") in ("u1", "a1", "a2", "u2", "a3", "u3")]
    count, parent = 0, None
    with path.open("w") as file:
        while file.tell() < size:
            for template in turn:
                record = copy.deepcopy(template)
                count += 1
                record["uuid"], record["parentUuid"], parent = f"r{count}", parent, f"r{count}"
                message = record["message"]
                for block in message["content"] if isinstance(message.get("content"), list) else ():
                    if block.get("type") == "tool_use":
                        block["id"] = f"t{count}"
                    elif block.get("type") == "tool_result":
                        block["tool_use_id"], block["content"] = f"t{count - 1}", OUTPUT
                if "id" in message:
                    message["id"] = f"{message['id']}-{count // len(turn)}"  # a1 and a2 stay one response
                file.write(json.dumps(record) + "\n")
    return f"{count:,} records"


CODEX_CIPHERTEXT = 824
"""The characters of a reasoning item's `encrypted_content` (see the module docstring)."""


def write_codex_rollout(path: Path, size: int, ciphertext: int = CODEX_CIPHERTEXT) -> str:
    """A Codex rollout of about `size` bytes, each reasoning item with `ciphertext` characters of encrypted
    reasoning; says how many lines."""
    records = _jsonl("codex_rollout.jsonl")
    header = records[:4]  # session_meta, developer and environment messages, turn_context
    turn = [records[i] for i in (4, 5, 6, 7, 8, 9, 13, 14, 15)]  # user, copy, reasoning, call, usage, output, answer, copy, usage
    encrypted = ("gAAAAAB" + base64.urlsafe_b64encode(bytes(range(256)) * (ciphertext // 256 + 1)).decode())[:ciphertext]
    count = 0
    with path.open("w") as file:
        for record in header:
            file.write(json.dumps(record) + "\n")
            count += 1
        while file.tell() < size:
            for template in turn:
                record = copy.deepcopy(template)
                count += 1
                payload = record["payload"]
                if payload.get("type") == "function_call":
                    payload["call_id"], payload["id"] = f"call_{count}", f"fc_{count}"
                elif payload.get("type") == "function_call_output":
                    payload["call_id"], payload["output"] = f"call_{count - 2}", OUTPUT
                elif payload.get("type") == "reasoning":
                    payload["id"], payload["encrypted_content"] = f"rs_{count}", encrypted
                file.write(json.dumps(record) + "\n")
    return f"{count:,} lines"


def write_swe_agent_trajectory(path: Path, size: int) -> str:
    """A SWE-agent function-calling `.traj` of about `size` bytes; says how many history messages."""
    history: list[dict] = [
        {"message_type": "system_prompt", "role": "system", "content": "SETTING: You are an autonomous programmer.", "agent": "main"},
        {"message_type": "observation", "role": "user", "content": "Fix the failing test in calc.py", "agent": "main"},
    ]
    turn_size = len(OUTPUT) + 600
    for number in range(max(1, size // turn_size)):
        call = f"call_{number}"
        history.append(
            {"message_type": "action", "role": "assistant", "content": "Let's run the tests.", "thought": "Let's run the tests.",
             "action": "pytest -q", "agent": "main",
             "tool_calls": [{"function": {"arguments": json.dumps({"command": "pytest -q"}), "name": "bash"}, "id": call, "type": "function"}]}
        )  # fmt: skip
        history.append({"message_type": "observation", "role": "tool", "content": OUTPUT, "agent": "main", "tool_call_ids": [call]})
    document = {
        "environment": "swe_main",
        "trajectory": [],
        "history": history,
        "info": {"model_stats": {"instance_cost": 1.0, "tokens_sent": 1000, "tokens_received": 100, "api_calls": len(history) // 2}},
        "replay_config": json.dumps({"agent": {"model": {"name": "claude-sonnet-4-5-20250929"}}}),
    }
    path.write_text(json.dumps(document))
    return f"{len(history):,} messages"


def write_mini_trajectory(path: Path, size: int) -> str:
    """A mini-swe-agent 1.x `.traj.json` of about `size` bytes; says how many messages."""
    sample = json.loads((SAMPLES / "mini_swe_agent_v1.traj.json").read_text())
    messages = sample["messages"][:2]
    reply = sample["messages"][2]
    turn_size = len(json.dumps(reply)) + len(OUTPUT) + 60
    for number in range(max(1, size // turn_size)):
        step = copy.deepcopy(reply)
        step["extra"]["response"]["id"] = f"chatcmpl-{number}"
        messages += [step, {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{OUTPUT}\n</output>"}]
    path.write_text(json.dumps({**sample, "messages": messages}))
    return f"{len(messages):,} messages"


def write_openhands_log(path: Path, size: int) -> str:
    """A synthetic OpenHands JSONL log of about `size` bytes (22 MB is 10k events); says how many events."""
    events = max(1000, int(size / 2200))
    subprocess.run(
        [sys.executable, "-m", "openhands_memory.testing.synthetic", "--events", str(events), "--condense-every", "200", "--out", str(path)],
        check=True,
    )
    return f"{events:,} events"


WRITERS: dict[str, tuple[str, str, Callable[[Path, int], str]]] = {
    "claude-code": ("Claude Code JSONL", "session.jsonl", write_claude_session),
    "codex": ("Codex rollout JSONL", "rollout.jsonl", write_codex_rollout),
    "swe-agent": ("SWE-agent .traj", "swe.traj", write_swe_agent_trajectory),
    "mini-swe-agent": ("mini-swe-agent .traj.json", "mini.traj.json", write_mini_trajectory),
}


def timed(paths: list[Path], repeat: int) -> list[tuple[float, float]]:
    """The median wall and CPU seconds of `load_events` on each path; runs alternate between the paths, so
    that a machine busy for a while slows all alike (on a shared machine the CPU seconds vary less)."""
    runs: list[list[tuple[float, float]]] = [[] for _ in paths]
    for _ in range(repeat):
        for times, path in zip(runs, paths):
            out = subprocess.run([sys.executable, "-c", _TIME, str(path)], check=True, capture_output=True, text=True).stdout
            wall, cpu, _ = out.split()
            times.append((float(wall), float(cpu)))
    return [(statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)) for times in runs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default=",".join(WRITERS), help="comma-separated: " + ", ".join(WRITERS))
    parser.add_argument(
        "--codex-ciphertext", type=int, default=CODEX_CIPHERTEXT, help="characters of encrypted reasoning a Codex reasoning item carries"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "other_agents.json", help="the JSON report")
    args = parser.parse_args(argv)
    size = int(args.megabytes * 1_000_000)
    formats = [name.strip() for name in args.formats.split(",") if name.strip()]
    unknown = [name for name in formats if name not in WRITERS]
    if unknown:
        parser.error(f"unknown format(s) {', '.join(unknown)}: choose from {', '.join(WRITERS)}")
    with tempfile.TemporaryDirectory() as folder:
        logs = [("OpenHands JSONL", Path(folder) / "openhands.jsonl", write_openhands_log)]
        writers = {**WRITERS, "codex": (*WRITERS["codex"][:2], functools.partial(write_codex_rollout, ciphertext=args.codex_ciphertext))}
        logs += [(label, Path(folder) / name, write) for label, name, write in (writers[fmt] for fmt in formats)]
        whats = [write(path, size) for _, path, write in logs]
        seconds = timed([path for _, path, _ in logs], args.repeat)
        rows = [(label, path.stat().st_size / 1_000_000, what, *time) for (label, path, _), what, time in zip(logs, whats, seconds)]
    wall_base, cpu_base = rows[0][3] / rows[0][1], rows[0][4] / rows[0][1]
    print("| log | size | what | load_events | MB/s | s/MB vs OpenHands | CPU s | CPU s/MB vs OpenHands |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for label, megabytes, what, wall, cpu in rows:
        print(
            f"| {label} | {megabytes:.1f} MB | {what} | {wall:.2f} s | {megabytes / wall:.0f} | {(wall / megabytes) / wall_base:.2f}x "
            f"| {cpu:.2f} s | {(cpu / megabytes) / cpu_base:.2f}x |"
        )
    report = {
        "megabytes": args.megabytes,
        "repeat": args.repeat,
        "codex_ciphertext": args.codex_ciphertext,
        "rows": [
            {"log": label, "megabytes": megabytes, "what": what, "wall_s": wall, "cpu_s": cpu,
             "wall_per_mb_vs_openhands": (wall / megabytes) / wall_base, "cpu_per_mb_vs_openhands": (cpu / megabytes) / cpu_base}
            for label, megabytes, what, wall, cpu in rows
        ],
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"JSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
