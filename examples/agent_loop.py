"""A small coding agent on litellm whose memory is an `openhands_memory.history.History`.

    python examples/agent_loop.py                       # offline: a scripted model, no API key
    python examples/agent_loop.py --model gpt-4o-mini   # a real model (OPENAI_API_KEY, ... as litellm reads them)
    python examples/agent_loop.py --log run.jsonl       # keep the events, then:
    openhands-memory replay run.jsonl --recorded         # ... look at every step the agent took

The agent gets a task and six tools: `execute_bash`, `read_file`, `finish`, OpenHands'
`request_condensation`, and the history's memory tools, `search_history` and `context_reload`
(`History.memory_tools()`), which find and show again events the condenser made it forget. Each
turn, `History.completion` condenses the history when the condenser says so, sends the messages,
and, if the prompt does not fit the model's context window, asks for a condensation and tries
again. The controller below only turns the reply into actions, runs them and appends their
results (the memory tools' calls go to `History.run_memory_tool`, which appends both): the
history does the rest.

Offline, a scripted model (`FakeLLM`) plays the agent. Its third call fails with litellm's
`ContextWindowExceededError`, so the recovery is part of every run; after it, the agent searches
its history for the test's failure, which the condensation forgot, and reloads it. With `--model` (or the
environment variable `AGENT_LOOP_MODEL`) a real model is asked instead; without its API key, the
example stops before any request with one line saying what to set (exit code 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from openhands_memory.condenser import (
    Condenser,
    condensation_request_from_tool_call,
    condensation_request_tool,
    is_condensation_request_call,
)
from openhands_memory.events import (
    Action,
    AgentFinishAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    ErrorObservation,
    EventSource,
    FileReadAction,
    FileReadObservation,
    MessageAction,
    Observation,
    SystemMessageAction,
)
from openhands_memory.errors import OpenHandsMemoryError
from openhands_memory.history import History
from openhands_memory.llm import LLM, LLMConfig, LLMResponse, ToolCall
from openhands_memory.stream import EventStream

SYSTEM_PROMPT = (
    "You are a careful coding agent working in a small Python project. Use the tools to look around, "
    "find the cause of the problem, and call `finish` with a short explanation. Do not edit files."
)

TASK = "`python test_calc.py` fails. Find out why, and explain the bug in one or two sentences."

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a bash command in the project folder and return its output and exit code.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command to run."}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "The file, relative to the project folder."}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "End the task with a message for the user.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": "What you found."}},
                "required": ["message"],
            },
        },
    },
    condensation_request_tool(),
]

CONDENSER_CONFIG: dict[str, Any] = {
    "type": "pipeline",
    "condensers": [
        {"type": "observation_masking", "attention_window": 20},
        {"type": "amortized", "max_size": 40, "keep_first": 2},
    ],
}
"""Offline: mask old tool output, forget the older half past 40 events (or when asked), keep the
system prompt and the task."""

PROJECT = {
    "calc.py": (
        "def average(values):\n"
        '    """The mean of a non-empty list of numbers."""\n'
        "    return sum(values) / (len(values) + 1)\n"
    ),
    "test_calc.py": (
        "from calc import average\n\n"
        "assert average([2, 4, 6]) == 4, average([2, 4, 6])\n"
        'print("ok")\n'
    ),
}

MAX_OUTPUT_CHARS = 10_000


def scripted_model() -> LLM:
    """The offline agent: a fixed script, with one context-window overflow on the way."""
    from openhands_memory.testing.fake_llm import FakeLLM, FakeReply, FakeToolCall, litellm_error

    fake = FakeLLM(
        [
            FakeReply.tool_call("execute_bash", {"command": "python test_calc.py"}, text="Let me run the test first."),
            FakeReply.tool_call("read_file", {"path": "calc.py"}),
            litellm_error("ContextWindowExceededError", "prompt is too long for the context window"),
            # The condensation forgot the test's output (event 3): find it again, then read it whole.
            FakeReply.tool_call("search_history", {"query": "AssertionError test_calc"}, text="What did the test say?"),
            FakeReply.tool_call("context_reload", {"event_id": 3}),
            FakeReply(
                text="Both files, side by side.",
                tool_calls=(
                    FakeToolCall("execute_bash", {"command": "grep -n 'len(values)' calc.py"}),
                    FakeToolCall("read_file", {"path": "test_calc.py"}),
                ),
            ),
            FakeReply.tool_call(
                "finish",
                {
                    "message": "`average` divides by `len(values) + 1` instead of `len(values)`, "
                    "so average([2, 4, 6]) is 3.0, not 4."
                },
            ),
        ]
    )
    return fake.llm(LLMConfig(model="gpt-4o-mini", num_retries=0))


def run_tool(action: Action, workspace: Path) -> Observation:
    """Run one action in the workspace and return its observation (not yet in the stream)."""
    if isinstance(action, CmdRunAction):
        try:
            done = subprocess.run(
                ["bash", "-c", action.command], cwd=workspace, capture_output=True, text=True, timeout=60
            )
            output, exit_code = (done.stdout + done.stderr)[-MAX_OUTPUT_CHARS:], done.returncode
        except subprocess.TimeoutExpired:
            output, exit_code = "the command timed out after 60 seconds", -1
        return CmdOutputObservation(content=output, command=action.command, metadata={"exit_code": exit_code})
    if isinstance(action, FileReadAction):
        path = (workspace / action.path).resolve()
        if not path.is_relative_to(workspace.resolve()):
            return ErrorObservation(content=f"{action.path} is outside the project folder")
        try:
            return FileReadObservation(content=path.read_text()[:MAX_OUTPUT_CHARS], path=action.path)
        except OSError as exc:
            return ErrorObservation(content=f"cannot read {action.path}: {exc.strerror}")
    return ErrorObservation(content=f"no tool runs {action.kind!r}")


def to_action(call: ToolCall, response: LLMResponse, *, thought: str = "") -> Action | None:
    """The action for one tool call of a reply; None for a call of an unknown tool or with bad arguments."""
    if is_condensation_request_call(call):
        return condensation_request_from_tool_call(
            call, model_response=response.raw, total_calls_in_response=len(response.tool_calls)
        )
    arguments = json.loads(call.function.arguments)  # LLM checked that it is a JSON object
    name = call.function.name
    if name == "execute_bash" and isinstance(arguments.get("command"), str):
        return CmdRunAction(command=arguments["command"], thought=thought)
    if name == "read_file" and isinstance(arguments.get("path"), str):
        return FileReadAction(path=arguments["path"], thought=thought)
    if name == "finish":
        return AgentFinishAction(final_thought=str(arguments.get("message", "")), thought=thought)
    return None


def run_agent(history: History, llm: LLM, workspace: Path, *, max_steps: int = 20) -> str | None:
    """Run the agent until it finishes (returns its message), speaks without a tool call, or runs out of steps."""
    tools = [*TOOLS, *history.memory_tools()]
    for step in range(1, max_steps + 1):
        response = history.completion(llm, tools=tools)
        if not response.tool_calls:
            history.add_event(MessageAction(content=response.text), EventSource.AGENT)
            print(f"step {step}: the agent says: {response.text}")
            return None
        for index, call in enumerate(response.tool_calls):
            print(f"step {step}: {call.function.name}({call.function.arguments})")
            if history.is_memory_tool(call.function.name):
                # The history runs its own tools: it appends the call and its result, and returns the result.
                result = history.run_memory_tool(call, response=response)
                print(f"        -> {(result.content.splitlines() or [''])[0][:100]}")
                continue
            action = to_action(call, response, thought=response.text if index == 0 else "")
            if action is None:
                # As OpenHands does: the call is not recorded, an error tells the model what went wrong.
                error = ErrorObservation(content=f"{call.function.name}({call.function.arguments}) is not a valid tool call")
                history.add_event(error, EventSource.ENVIRONMENT)
                continue
            if isinstance(action, CondensationRequestAction):
                history.add_event(action, EventSource.AGENT)  # its tool call recorded already; no result:
                continue  # the next completion condenses
            history.add_tool_call(action, call, response=response)  # the model's call: its tool_call_metadata set
            if isinstance(action, AgentFinishAction):
                return action.final_thought
            observation = history.add_tool_result(run_tool(action, workspace), action)  # its answer: cause, metadata
            last_line = (observation.content.strip().splitlines() or [""])[-1]
            print(f"        -> {last_line[:100]}")
    return None


def make_workspace(folder: Path) -> Path:
    """Write the small project the task is about."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PROJECT.items():
        (folder / name).write_text(text)
    return folder


def main(argv: list[str] | None = None) -> int:
    """Run the agent; 0 when it finished, 1 when it stopped without finishing or failed (one line on stderr)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--model", default=os.environ.get("AGENT_LOOP_MODEL"), help="a litellm model name (default: the offline script)")
    parser.add_argument("--log", type=Path, help="keep the events in this JSONL file (default: in memory)")
    parser.add_argument("--workspace", type=Path, help="the project folder (default: a new temporary folder)")
    parser.add_argument("--max-steps", type=int, default=20, help="give up after this many model calls (default: 20)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except OpenHandsMemoryError as exc:  # a missing API key, a model that keeps failing, a bad log: one line
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


def run(args: argparse.Namespace) -> int:
    """Set up the workspace and the history, run the agent, print what it found."""
    llm = LLM(LLMConfig(model=args.model)) if args.model else scripted_model()
    with tempfile.TemporaryDirectory(prefix="agent-loop-") as scratch:
        workspace = make_workspace(args.workspace or Path(scratch))
        stream = EventStream.open(args.log) if args.log else EventStream()
        with History(stream, condenser=Condenser.from_config(CONDENSER_CONFIG)) as history:
            tools = [*TOOLS, *history.memory_tools()]
            history.add_event(SystemMessageAction(content=SYSTEM_PROMPT, tools=tools), EventSource.AGENT)
            history.add_event(MessageAction(content=TASK), EventSource.USER)
            answer = run_agent(history, llm, workspace, max_steps=args.max_steps)
            condensations = sum(1 for e in history.stream.get_events() if isinstance(e, CondensationAction))
            print()
            print(f"answer: {answer}" if answer is not None else "the agent stopped without finishing")
            print(
                f"{len(history.stream)} events, {condensations} condensation(s), "
                f"{len(history.view)} in view, {llm.metrics.accumulated_token_usage.prompt_tokens:,} prompt tokens"
            )
    return 0 if answer is not None else 1


if __name__ == "__main__":
    sys.exit(main())
