"""A 60-step OpenHands SDK conversation, offline, under a condenser: print each condensation it made.

    python benchmarks/sdk_conversation.py [--pipeline PIPELINE.toml] [--steps 60] [--keep DIR]

Runs the scripted conversation of `openhands_memory.integrations.openhands_sdk.testing` (an SDK
`Agent` whose model is answered by a script through litellm's `mock_response`, two real tools that
read and count files of a workspace, `--steps` tool-call steps then `finish`) with:

- `--pipeline FILE`: our pipeline file as the SDK condenser (`OpenHandsMemoryCondenser.from_file`),
  e.g. `openhands_memory/pipelines/sdk_conversation_llm.toml` or `sdk_conversation_masking.toml` (a
  model-backed strategy needs `mock_response` in its `llm_config`: real model requests are refused);
- otherwise the SDK's own `LLMSummarizingCondenser` (`--max-size`, default 24; keep_first 2),
  its summarizer scripted too.

Prints one row per condensation: the agent step it was made at (each model request and each
condensation is a step of the SDK's agent), the model requests before it, the events it forgot,
its summary offset, and the SDK view's size before and after it; then checks every request the
model got is a valid chat. It also times every `condense` call the SDK makes (median, max, total,
against the whole conversation's time), so the SDK's own condenser and ours compare in one command. Needs `openhands-sdk` (Python 3.12+); no network, no key. The exit
status is 1 if the conversation stopped or a request was not a valid chat.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LOG_LEVEL", "WARNING")  # the SDK logs each conversation step at INFO


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", type=Path, help="our pipeline file (TOML/JSON) as the SDK condenser")
    parser.add_argument("--max-size", type=int, default=24, help="without --pipeline: the SDK condenser's max_size")
    parser.add_argument("--steps", type=int, default=60, help="tool-call steps before the finish call")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep the conversation (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists() and (not args.keep.is_dir() or any(args.keep.iterdir())):
        # The SDK would resume (and append to) a conversation left there: never touch what is in it.
        print(f"error: {args.keep}: exists and is not an empty folder; name a new one", file=sys.stderr)
        return 2

    import openhands_memory.llm.llm as llm_module

    # The agent's model is the script's, which our strategies cannot reach: a strategy that would call
    # a real model (no `mock_response` in its file) fails at once instead of going to the network.
    llm_module.ALLOW_MODEL_REQUESTS = False
    from openhands_memory.integrations.openhands_sdk.testing import (
        check_valid_chat,
        run_scripted_conversation,
        summarizing_condenser,
    )

    summarizer = None
    if args.pipeline is not None:
        from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser

        condenser = OpenHandsMemoryCondenser.from_file(args.pipeline)
        name = f"OpenHandsMemoryCondenser({args.pipeline.name})"
    else:
        condenser, summarizer = summarizing_condenser(max_size=args.max_size, keep_first=2)
        name = f"SDK LLMSummarizingCondenser(max_size={args.max_size}, keep_first=2)"

    timings: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sdk-conversation-") as scratch, _timed_condense(type(condenser), timings):
        base = args.keep or Path(scratch)
        started = time.perf_counter()
        try:
            run = run_scripted_conversation(base / "conversations", base / "workspace", condenser=condenser, steps=args.steps)
        except Exception as exc:  # the SDK wraps what the condenser raised: one line, not its traceback
            print(f"error: the conversation stopped: {exc.__cause__ or exc}", file=sys.stderr)
            return 1
        wall = time.perf_counter() - started
        rows = run.condensation_rows()
        invalid = []
        for number, request in enumerate(run.agent_llm.requests, start=1):
            try:
                check_valid_chat(request)
            except AssertionError as exc:
                invalid.append(f"request {number}: {exc}")

        print(f"condenser      {name}")
        print(f"conversation   {run.folder if args.keep else '(temporary)'}")
        print(f"status         {run.status}")
        print(f"agent steps    {len(run.agent_llm.requests) + len(rows)} ({len(run.agent_llm.requests)} model requests, {len(rows)} condensations)")
        print(f"valid chats    {len(run.agent_llm.requests) - len(invalid)} of {len(run.agent_llm.requests)} requests")
        if summarizer is not None:
            print(f"summarizer     {len(summarizer.requests)} calls")
        print(
            f"condenser time {len(timings)} calls, median {1000 * statistics.median(timings):.2f} ms, "
            f"max {1000 * max(timings):.1f} ms, total {sum(timings):.2f} s of {wall:.2f} s (the whole conversation)"
        )
        print()
        print(f"{'step':>5} {'request':>7} {'forgotten':>9} {'summary offset':>14} {'view before':>11} {'view after':>10}")
        for row in rows:
            offset = "-" if row.summary_offset is None else str(row.summary_offset)
            print(f"{row.step:>5} {row.request:>7} {row.forgotten:>9} {offset:>14} {row.view_before:>11} {row.view_after:>10}")
        for line in invalid:
            print(line, file=sys.stderr)
    return 1 if invalid else 0


@contextlib.contextmanager
def _timed_condense(cls: type, timings: list[float]) -> Iterator[None]:
    """Time every `condense` call the SDK makes on `cls` (the condenser's class) while inside."""
    original = cls.condense

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            timings.append(time.perf_counter() - started)

    cls.condense = timed
    try:
        yield
    finally:
        cls.condense = original


if __name__ == "__main__":
    sys.exit(main())
