"""Synthetic OpenHands V0 coding sessions: realistic, deterministic, and as long as you ask.

`synthetic_session(n)` returns exactly `n` events with ids `0..n-1`, shaped like what OpenHands'
CodeActAgent records while it fixes a bug in a small Python project:

- the system prompt with its tools, the user's task, and the workspace-context recall;
- agent turns: shell commands (`pytest` runs that fail with `tests/test_x.py::test_y FAILED` and a
  non-zero exit code, greps, diffs), file reads, `str_replace` / `create` edits, a failed edit
  answered by an `ErrorObservation`, `think` calls, and now and then parallel tool calls (2-3
  actions from one model response, each followed by its observation, in call order);
- now and then an agent question and a user follow-up (with its knowledge recall);
- optionally a `CondensationAction` every `condense_every` events, forgetting an id range of older
  events (never the first four, never an action without its observation), with a summary;
- `AgentFinishAction` last.

Every tool action and its observation carry the same `tool_call_metadata` (with a litellm-style
`model_response`), observations have `cause` set to their action's id, agent actions carry
`llm_metrics`. All text is cut from pseudo-random pools seeded by `seed`, and timestamps count up
from a fixed base time, so the same arguments always give the same events. Generating 100,000
events takes a few seconds.

Regenerate the bundled fixture with::

    python -m openhands_memory.testing.synthetic --events 300 --condense-every 120 \\
        --out fixtures/synthetic_session_300.jsonl --force
"""

from __future__ import annotations

import argparse
import random
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import orjson

from openhands_memory.errors import OutputExistsError
from openhands_memory.events import (
    AgentFinishAction,
    AgentThinkAction,
    AgentThinkObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    ErrorObservation,
    Event,
    FileEditAction,
    FileEditObservation,
    FileReadAction,
    FileReadObservation,
    MessageAction,
    NullObservation,
    RecallAction,
    RecallObservation,
    SystemMessageAction,
    ToolCallMetadata,
    dump_events,
    event_to_dict,
)

__all__ = ["BASE_TIME", "KEEP_FIRST", "MODEL", "main", "synthetic_session", "synthetic_session_dicts"]

BASE_TIME = datetime(2025, 1, 6, 9, 0, 0)
"""The timestamp of event 0; later events count up from it."""
MODEL = "anthropic/claude-sonnet-4-20250514"
"""The model named in every synthetic `model_response` and `llm_metrics`."""
KEEP_FIRST = 4
"""Events a synthetic condensation never forgets: system prompt, task, workspace recall and its answer."""

_BASE_EPOCH = 1736154000  # BASE_TIME as a Unix time (UTC), for `model_response.created`
_CONTEXT_WINDOW = 200_000
_PRICE_IN, _PRICE_OUT, _PRICE_CACHED = 3e-6, 15e-6, 0.3e-6
_WORKDIR = "/workspace/project"
_MIN_EVENTS = KEEP_FIRST + 1  # the header and the finish
_LARGEST_TURN = 8  # events in the longest agent turn (a user follow-up, or 3 parallel calls + slack)

_WORDS = (
    "config", "cache", "token", "value", "item", "result", "path", "entry", "record", "index", "buffer",
    "state", "handler", "request", "response", "session", "payload", "schema", "field", "node", "limit",
    "offset", "retry", "timeout", "client", "reader", "writer", "event", "batch", "header",
)  # fmt: skip
_VERBS = (
    "parse", "load", "save", "build", "check", "merge", "split", "render", "fetch", "resolve", "update",
    "apply", "encode", "decode", "validate", "normalize", "collect", "flush", "open", "close",
)  # fmt: skip
_MODULES = ("parser", "config", "cache", "cli", "models", "storage", "render", "scheduler", "utils", "api")
_PROJECTS = ("tallyho", "quillmap", "ledgerly", "brisket", "pinecone_io", "sprocket", "mapleleaf", "driftwood")

_CODE_TEMPLATES = (
    "    {a} = {b}.get({c!r}, {n})",
    "    if {a} is None:",
    "        raise ValueError(f\"{v} {a}: {{{b}!r}}\")",
    "    for {a} in {b}:",
    "        {a}.{v}({b}, limit={n})",
    "    return {a}",
    "    {a}s = [{v}_{b}(x) for x in {c}]",
    "    # {v} the {a} before the {b} is {v}d again",
    "    with open({a}_path, encoding=\"utf-8\") as fh:",
    "        {a} = json.load(fh)",
    "    self._{a}[{b}] = {c}",
    "    logger.debug(\"{v} %s in %d ms\", {a}, {n})",
    "    try:",
    "        {a} = int({b})",
    "    except (TypeError, ValueError):",
    "        return {n}",
    "    assert {a} >= 0, {b}",
    "    yield from self._{v}({a})",
)
_LOG_TEMPLATES = (
    "src/{p}/{m}.py:{n}:    {a} = {v}_{b}({c})",
    "-rw-r--r-- 1 openhands openhands {n:>6} Jan  6 09:{s:02d} {m}.py",
    "drwxr-xr-x 2 openhands openhands   4096 Jan  6 09:{s:02d} {a}s",
    "Requirement already satisfied: {a}-{b}>={s}.{n} in /usr/lib/python3.12/site-packages",
    "  File \"/workspace/project/src/{p}/{m}.py\", line {n}, in {v}_{a}",
    "    {a} = self._{v}({b}, {c})",
    "{m}.py | {n:>4} {bar}",
    "+    {a} = {v}_{b}({c}, strict=True)",
    "-    {a} = {v}_{b}({c})",
    "INFO:{p}.{m}:{v} {a} ({n} {b}s)",
    "WARNING: {b} {a} is deprecated; use {v}_{c} instead",
)
_THOUGHTS = (
    "Let me look at how `{f}` handles the {a} before I change anything.",
    "The failure points at `{f}` in src/{p}/{m}.py; I will read it.",
    "I should run the tests for {m} to see what is still failing.",
    "The {a} is not reset when the {b} changes; that explains the stale values.",
    "Now that `{f}` is fixed, let me check the callers in {m}.",
    "I'll search for other uses of `{f}` so the fix covers them too.",
    "",
    "",
)
_TASKS = (
    "The test suite of {p} fails since the last refactor: `pytest tests/test_{m}.py` reports errors in "
    "`{f}`. Please find the cause, fix it, and make sure all tests pass.",
    "In {p}, `{f}` returns stale {a}s after the {b} is updated. Fix the bug and add a regression test.",
    "Add a `--{a}-limit` option to the {p} CLI that caps how many {b}s `{f}` processes, with tests.",
)
_FOLLOW_UPS = (
    "Thanks. Please also make `{f}` log a warning when the {a} is empty.",
    "Looks good, but don't change the public signature of `{f}`.",
    "Can you also run the whole test suite, not only tests/test_{m}.py?",
    "Yes, go ahead.",
)
_QUESTIONS = (
    "I fixed `{f}` in src/{p}/{m}.py and the tests for {m} pass. Should I also update the {a} handling "
    "in the other modules?",
    "The failure comes from `{f}`, which mutates the shared {a}. I can copy it or change the callers; "
    "which do you prefer?",
)


class _TextPool:
    """One long pseudo-random text; excerpts are newline-aligned slices of it, so they cost one copy."""

    __slots__ = ("_text", "_starts")

    def __init__(self, lines: Sequence[str]) -> None:
        self._text = "\n".join(lines) + "\n"
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        self._starts = starts

    def excerpt(self, rng: random.Random, size: int) -> str:
        """About `size` characters of whole lines, from a random place (without the last newline)."""
        text, starts = self._text, self._starts
        size = min(size, len(text) // 2)
        first = bisect_right(starts, rng.randrange(len(text) - size)) - 1
        begin = starts[first]
        end = starts[min(bisect_left(starts, begin + size, first + 1), len(starts) - 1)]
        return text[begin : end - 1]


def _fill(rng: random.Random, templates: Sequence[str], project: str) -> str:
    return rng.choice(templates).format(
        a=rng.choice(_WORDS),
        b=rng.choice(_WORDS),
        c=rng.choice(_WORDS),
        v=rng.choice(_VERBS),
        m=rng.choice(_MODULES),
        p=project,
        n=rng.randrange(1, 2000),
        s=rng.randrange(60),
        bar="+" * rng.randrange(1, 30) + "-" * rng.randrange(0, 12),
    )


def _code_lines(rng: random.Random, count: int) -> list[str]:
    lines: list[str] = []
    while len(lines) < count:
        args = ", ".join(rng.sample(_WORDS, rng.randint(1, 3)))
        lines.append(f"def {rng.choice(_VERBS)}_{rng.choice(_WORDS)}({args}):")
        lines.append(f'    """{rng.choice(_VERBS).capitalize()} the {rng.choice(_WORDS)} of a {rng.choice(_WORDS)}."""')
        lines.extend(_fill(rng, _CODE_TEMPLATES, "") for _ in range(rng.randint(2, 9)))
        lines.append("")
    return lines


def _tools() -> list[dict[str, Any]]:
    """The tool definitions CodeActAgent offers (OpenAI function-calling JSON), abridged."""

    def tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }

    return [
        tool(
            "execute_bash",
            "Execute a bash command in the terminal within a persistent shell session.\n\n"
            "* One command at a time: chain several with `&&` or `;`.\n"
            "* Long-running commands: run them in the background and redirect output to a file.\n"
            "* Timeouts: a command that produces no output for 30 seconds returns with exit code -1.",
            {
                "command": {"type": "string", "description": "The bash command to execute."},
                "is_input": {"type": "string", "enum": ["true", "false"], "description": "Input to a running process."},
                "timeout": {"type": "number", "description": "Optional hard timeout in seconds."},
            },
            ["command"],
        ),
        tool(
            "str_replace_editor",
            "Custom editing tool for viewing, creating and editing files in plain-text format.\n"
            "* `view` shows a file with line numbers (`cat -n`), or lists a directory two levels deep.\n"
            "* `create` cannot be used if the path already exists as a file.\n"
            "* `str_replace` replaces exactly one occurrence of `old_str`; it must match verbatim.",
            {
                "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                "path": {"type": "string", "description": "Absolute path to file or directory."},
                "file_text": {"type": "string", "description": "Content of the file to create."},
                "old_str": {"type": "string", "description": "The string in `path` to replace."},
                "new_str": {"type": "string", "description": "The new string."},
                "insert_line": {"type": "integer", "description": "Insert `new_str` after this line."},
                "view_range": {"type": "array", "items": {"type": "integer"}},
            },
            ["command", "path"],
        ),
        tool(
            "think",
            "Use the tool to think about something. It will not obtain new information or make any changes; "
            "it just logs the thought.",
            {"thought": {"type": "string", "description": "The thought to log."}},
            ["thought"],
        ),
        tool(
            "finish",
            "Signals the completion of the current task or conversation.",
            {
                "message": {"type": "string", "description": "Final message to send to the user."},
                "task_completed": {"type": "string", "enum": ["true", "false", "partial"]},
            },
            ["message", "task_completed"],
        ),
    ]


_SYSTEM_PROMPT = """You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.

<ROLE>
Your primary role is to assist users by executing commands, modifying code, and solving technical problems
effectively. You should be thorough, methodical, and prioritize quality over speed.
* If the user asks a question, like "why is X happening", don't try to fix the problem. Just give an answer.
</ROLE>

<EFFICIENCY>
* Each action you take is somewhat expensive. Wherever possible, combine multiple actions into a single action.
* When exploring the codebase, use efficient tools like find, grep, and git commands with appropriate filters.
</EFFICIENCY>

<FILE_SYSTEM_GUIDELINES>
* When a user provides a file path, do NOT assume it's relative to the current working directory.
* If asked to edit a file, edit the file directly, rather than creating a new file with a different filename.
* For global search-and-replace operations, consider using `sed` instead of opening file editors multiple times.
</FILE_SYSTEM_GUIDELINES>

<CODE_QUALITY>
* Write clean, efficient code with minimal comments. Avoid redundancy in comments and function docstrings.
* When implementing solutions, focus on making the minimal changes needed to solve the problem.
* Before implementing any changes, first thoroughly understand the codebase through exploration.
</CODE_QUALITY>

<PROBLEM_SOLVING_WORKFLOW>
1. EXPLORATION: Thoroughly explore relevant files and understand the context before proposing solutions
2. ANALYSIS: Consider multiple approaches and select the most promising one
3. TESTING: For bug fixes, create tests to verify issues before implementing fixes
4. IMPLEMENTATION: Make focused, minimal changes to address the problem
5. VERIFICATION: Test your implementation thoroughly, including edge cases
</PROBLEM_SOLVING_WORKFLOW>"""


class _SessionWriter:
    """Appends the events of one session, keeping the clock, the token counts and the cut points."""

    def __init__(self, n_events: int, seed: int, condense_every: int | None, parallel_every: int | None) -> None:
        self.rng = rng = random.Random(seed)
        self.n_events = n_events
        self.condense_every = condense_every
        self.parallel_every = parallel_every
        self.events: list[Event] = []
        self.project = rng.choice(_PROJECTS)
        self.functions = [f"{rng.choice(_VERBS)}_{rng.choice(_WORDS)}" for _ in range(12)]
        self.code = _TextPool(_code_lines(rng, 6000))
        self.numbered = _TextPool([f"{i:6}\t{line}" for i, line in enumerate(_code_lines(rng, 6000), start=1)])
        self.log = _TextPool([_fill(rng, _LOG_TEMPLATES, self.project) for _ in range(5000)])
        self.clock_us = 0
        self.responses = 0
        self.cost = 0.0
        self.prompt_tokens = self.completion_tokens = self.cache_read_tokens = 0
        self.tokens: list[int] = []  # estimated prompt tokens each event adds to the context
        self.context = 0  # estimated prompt tokens of the current view
        self.cut_points: list[int] = []  # ids after which a turn is complete
        self.forgotten_through = KEEP_FIRST - 1
        self.next_condensation = condense_every

    # -- building blocks -------------------------------------------------------------------------

    def words(self, templates: Sequence[str]) -> str:
        rng = self.rng
        return rng.choice(templates).format(
            f=rng.choice(self.functions),
            a=rng.choice(_WORDS),
            b=rng.choice(_WORDS),
            m=rng.choice(_MODULES),
            p=self.project,
        )

    def size(self) -> int:
        """A text size: mostly a few hundred to a few thousand characters."""
        return max(150, min(6000, int(self.rng.lognormvariate(6.8, 0.7))))

    def module_path(self) -> str:
        return f"{_WORKDIR}/src/{self.project}/{self.rng.choice(_MODULES)}.py"

    def tick(self, low_ms: int, high_ms: int) -> str:
        self.clock_us += self.rng.randrange(low_ms * 1000, high_ms * 1000) + 1
        return (BASE_TIME + timedelta(microseconds=self.clock_us)).strftime("%Y-%m-%dT%H:%M:%S.%f")

    def add(self, cls: type[Event], source: str, stamp: str, **fields: Any) -> Event:
        event = cls(id=len(self.events), timestamp=stamp, source=source, **fields)
        self.events.append(event)
        size = sum(len(v) for v in fields.values() if type(v) is str)
        self.tokens.append(size // 4 + 8)
        self.context += size // 4 + 8
        return event

    def end_turn(self) -> None:
        self.cut_points.append(len(self.events) - 1)

    def respond(
        self, calls: list[tuple[str, str, dict[str, Any]]], content: str | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A litellm-style completion making `calls` (tool_call_id, function, arguments), and the metrics after it."""
        rng = self.rng
        self.responses += 1
        prompt = self.context + 3000
        completion = rng.randrange(40, 900)
        cached = int(prompt * 0.8)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cache_read_tokens += cached
        self.cost += (prompt - cached) * _PRICE_IN + cached * _PRICE_CACHED + completion * _PRICE_OUT
        message: dict[str, Any] = {"content": content, "role": "assistant"}
        if calls:
            message["tool_calls"] = [
                {
                    "function": {"arguments": orjson.dumps(arguments).decode(), "name": name},
                    "id": call_id,
                    "type": "function",
                }
                for call_id, name, arguments in calls
            ]
        response = {
            "id": f"chatcmpl-{rng.getrandbits(96):024x}",
            "created": _BASE_EPOCH + self.clock_us // 1_000_000,
            "model": MODEL,
            "object": "chat.completion",
            "choices": [{"finish_reason": "tool_calls" if calls else "stop", "index": 0, "message": message}],
            "usage": {
                "completion_tokens": completion,
                "prompt_tokens": prompt,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
        metrics = {
            "accumulated_cost": round(self.cost, 6),
            "max_budget_per_task": None,
            "accumulated_token_usage": {
                "model": MODEL,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": 0,
                "context_window": _CONTEXT_WINDOW,
                "per_turn_token": prompt + completion,
                "response_id": "",
            },
            "costs": [],
            "response_latencies": [],
            "token_usages": [],
        }
        return response, metrics

    def call_id(self) -> str:
        return f"toolu_{self.rng.getrandbits(96):024x}"

    # -- tool calls: (function, arguments, action fields, observe) ---------------------------------

    def plan_run(self) -> tuple[str, dict[str, Any], type[Event], dict[str, Any], Any]:
        rng = self.rng
        module = rng.choice(_MODULES)
        roll = rng.random()
        if roll < 0.4:
            command = f"cd {_WORKDIR} && python -m pytest tests/test_{module}.py -q"
            output, code = self.pytest_output(module, failing=rng.random() < 0.5)
        elif roll < 0.6:
            command = f"grep -rn \"{rng.choice(self.functions)}\" src/ tests/"
            code = 1 if rng.random() < 0.15 else 0
            output = "" if code else self.log.excerpt(rng, self.size() // 2)
        elif roll < 0.75:
            command = "git diff"
            path = f"src/{self.project}/{module}.py"
            body = self.code.excerpt(rng, self.size()).replace("\n", "\n ")
            hunk = f"@@ -{rng.randrange(1, 400)},7 +{rng.randrange(1, 400)},8 @@"
            output = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunk}\n {body}"
            code = 0
        else:
            command = rng.choice(
                ("ls -la src/", f"python -m {self.project}.cli --help", "pip install -e .", "git status")
            )
            code = 2 if rng.random() < 0.1 else 0
            output = self.log.excerpt(rng, self.size())

        def observe(cause: int, metadata: ToolCallMetadata, stamp: str) -> None:
            self.add(
                CmdOutputObservation,
                "agent",
                stamp,
                cause=cause,
                tool_call_metadata=metadata,
                content=output,
                command=command,
                metadata={
                    "exit_code": code,
                    "pid": -1,
                    "username": "openhands",
                    "hostname": "runtime-synthetic",
                    "working_dir": _WORKDIR,
                    "py_interpreter_path": "/openhands/poetry/openhands-ai-py3.12/bin/python",
                    "prefix": "",
                    "suffix": f"\n[The command completed with exit code {code}.]",
                },
            )

        return "execute_bash", {"command": command}, CmdRunAction, {"command": command}, observe

    def pytest_output(self, module: str, *, failing: bool) -> tuple[str, int]:
        rng = self.rng
        tests = [
            f"tests/test_{module}.py::test_{rng.choice(_VERBS)}_{rng.choice(_WORDS)}" for _ in range(rng.randint(4, 20))
        ]
        failed = sorted(rng.sample(range(len(tests)), rng.randint(1, 3))) if failing else []
        lines = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.12.1, pytest-8.3.4, pluggy-1.5.0",
            f"rootdir: {_WORKDIR}",
            f"collected {len(tests)} items",
            "",
        ]
        for i, test in enumerate(tests):
            lines.append(f"{test} {'FAILED' if i in failed else 'PASSED'} [{(i + 1) * 100 // len(tests):3d}%]")
        if failed:
            lines += ["", "=================================== FAILURES ==================================="]
            for i in failed:
                name = tests[i].rsplit("::", 1)[1]
                lines.append(f"_{'_' * 20} {name} {'_' * 20}")
                lines.append(self.code.excerpt(rng, self.size() // 2))
                lines.append(f"E       AssertionError: assert {rng.randrange(100)} == {rng.randrange(100)}")
            lines += ["=========================== short test summary info ============================"]
            lines += [f"FAILED {tests[i]} - AssertionError" for i in failed]
        passed = len(tests) - len(failed)
        seconds = rng.randrange(5, 900) / 100
        summary = f"{passed} passed in {seconds:.2f}s"
        lines.append(f"{len(failed)} failed, {summary}" if failed else summary)
        return "\n".join(lines), 1 if failed else 0

    def plan_read(self) -> tuple[str, dict[str, Any], type[Event], dict[str, Any], Any]:
        path = self.module_path()
        content = f"Here's the result of running `cat -n` on {path}:\n{self.numbered.excerpt(self.rng, self.size())}\n"

        def observe(cause: int, metadata: ToolCallMetadata, stamp: str) -> None:
            self.add(
                FileReadObservation, "agent", stamp, cause=cause, tool_call_metadata=metadata, content=content,
                path=path, impl_source="oh_aci",
            )  # fmt: skip

        arguments = {"command": "view", "path": path}
        return "str_replace_editor", arguments, FileReadAction, {"path": path, "impl_source": "oh_aci"}, observe

    def plan_edit(self, *, fail: bool = False) -> tuple[str, dict[str, Any], type[Event], dict[str, Any], Any]:
        rng = self.rng
        path = self.module_path()
        if not fail and rng.random() < 0.25:
            path = f"{_WORKDIR}/tests/test_{rng.choice(_MODULES)}_{rng.randrange(1000)}.py"
            text = self.code.excerpt(rng, self.size())
            arguments = {"command": "create", "path": path, "file_text": text}
            fields = {"path": path, "command": "create", "file_text": text, "impl_source": "oh_aci"}
            content = f"File created successfully at: {path}"
            diff = f"--- {path}\n+++ {path}\n@@ -0,0 +1 @@\n+" + text[:400].replace("\n", "\n+")
            prev_exist = False
        else:
            old = self.code.excerpt(rng, rng.randrange(60, 600))
            new = old.replace("    ", "        ", 1) + f"\n    # {rng.choice(_VERBS)} {rng.choice(_WORDS)}"
            arguments = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
            fields = {"path": path, "command": "str_replace", "old_str": old, "new_str": new, "impl_source": "oh_aci"}
            snippet = self.numbered.excerpt(rng, self.size() // 2)
            content = (
                f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n"
                f"{snippet}\nReview the changes and make sure they are as expected. Edit the file again if necessary."
            )
            minus, plus = old.replace("\n", "\n-"), new.replace("\n", "\n+")
            diff = f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-{minus}\n+{plus}"
            prev_exist = True

        def observe(cause: int, metadata: ToolCallMetadata, stamp: str) -> None:
            if fail:
                self.add(
                    ErrorObservation, "agent", stamp, cause=cause, tool_call_metadata=metadata,
                    content=f"ERROR:\nNo replacement was performed, old_str `{fields.get('old_str', '')[:200]}` "
                    f"did not appear verbatim in {path}.",
                )  # fmt: skip
            else:
                self.add(
                    FileEditObservation, "agent", stamp, cause=cause, tool_call_metadata=metadata, content=content,
                    path=path, prev_exist=prev_exist, old_content=None, new_content=None, impl_source="oh_aci",
                    diff=diff,
                )  # fmt: skip

        return "str_replace_editor", arguments, FileEditAction, fields, observe

    def plan_think(self) -> tuple[str, dict[str, Any], type[Event], dict[str, Any], Any]:
        thought = " ".join(self.words(_THOUGHTS[:6]) for _ in range(self.rng.randint(2, 6)))

        def observe(cause: int, metadata: ToolCallMetadata, stamp: str) -> None:
            self.add(
                AgentThinkObservation, "agent", stamp, cause=cause, tool_call_metadata=metadata,
                content="Your thought has been logged.",
            )  # fmt: skip

        return "think", {"thought": thought}, AgentThinkAction, {"thought": thought}, observe

    # -- turns -----------------------------------------------------------------------------------

    def header(self, task: str) -> None:
        self.add(
            SystemMessageAction, "agent", self.tick(0, 1), content=_SYSTEM_PROMPT, tools=_tools(),
            openhands_version="0.62.0", agent_class="CodeActAgent",
        )  # fmt: skip
        self.add(MessageAction, "user", self.tick(1000, 5000), content=task, file_urls=[], image_urls=[])
        self.add(RecallAction, "user", self.tick(1, 5), recall_type="workspace_context", query=task)
        self.add(
            RecallObservation, "environment", self.tick(1, 20), cause=2, content="Added workspace context",
            recall_type="workspace_context", repo_name=f"example/{self.project}", repo_directory=self.project,
            repo_branch="main", repo_instructions=self.code.excerpt(self.rng, 600),
            runtime_hosts={"http://localhost:52731": 52731}, date=BASE_TIME.date().isoformat(),
            working_dir=_WORKDIR,
        )  # fmt: skip
        self.end_turn()

    def tool_turn(self, plans: list[tuple[str, dict[str, Any], type[Event], dict[str, Any], Any]]) -> None:
        """One model response making `plans` tool calls; each action is followed by its observation."""
        thought = self.words(_THOUGHTS)
        calls = [(self.call_id(), name, arguments) for name, arguments, _, _, _ in plans]
        response, metrics = self.respond(calls, thought or None)
        stamp = self.tick(2000, 30000)
        for index, ((call_id, name, _), (_, _, cls, fields, observe)) in enumerate(zip(calls, plans)):
            metadata = ToolCallMetadata(
                function_name=name, tool_call_id=call_id, model_response=response, total_calls_in_response=len(plans)
            )
            if index == 0 and thought and "thought" not in fields:
                fields = {**fields, "thought": thought}
            if index:
                stamp = self.tick(1, 20)
            action = self.add(cls, "agent", stamp, tool_call_metadata=metadata, llm_metrics=metrics, **fields)
            assert action.id is not None
            observe(action.id, metadata, self.tick(5, 4000))
        self.end_turn()

    def conversation_turn(self) -> None:
        """The agent asks a question; the user answers (with the knowledge recall OpenHands runs)."""
        question = self.words(_QUESTIONS)
        _, metrics = self.respond([], question)
        self.add(
            MessageAction, "agent", self.tick(2000, 20000), content=question, wait_for_response=True,
            llm_metrics=metrics,
        )  # fmt: skip
        answer = self.words(_FOLLOW_UPS)
        self.add(MessageAction, "user", self.tick(30_000, 600_000), content=answer, file_urls=[], image_urls=[])
        recall = self.add(RecallAction, "user", self.tick(1, 5), recall_type="knowledge", query=answer)
        if self.rng.random() < 0.3:
            self.add(
                RecallObservation, "environment", self.tick(1, 20), cause=recall.id,
                content="Added microagent knowledge", recall_type="knowledge", microagent_knowledge=[
                    {"name": "testing", "trigger": "test", "content": self.code.excerpt(self.rng, 400)}
                ],
            )  # fmt: skip
        else:
            self.add(NullObservation, "environment", self.tick(1, 20), cause=recall.id, content="")
        self.end_turn()

    def note_turn(self) -> None:
        """A one-event turn: the agent reports progress without waiting for an answer."""
        text = self.words(_THOUGHTS[:6]) or "Continuing."
        _, metrics = self.respond([], text)
        self.add(MessageAction, "agent", self.tick(2000, 20000), content=text, llm_metrics=metrics)
        self.end_turn()

    def agent_turn(self, remaining: int) -> None:
        """One turn that fits in `remaining` events."""
        rng = self.rng
        if remaining < 2:
            self.note_turn()
            return
        parallel = self.parallel_every
        if remaining >= 6 and parallel and self.responses % parallel == parallel - 1:
            self.tool_turn([rng.choice((self.plan_read, self.plan_run))() for _ in range(rng.choice((2, 3)))])
            return
        roll = rng.random()
        if roll < 0.04 and remaining >= 4:
            self.conversation_turn()
        elif roll < 0.42:
            self.tool_turn([self.plan_run()])
        elif roll < 0.65:
            self.tool_turn([self.plan_read()])
        elif roll < 0.86:
            self.tool_turn([self.plan_edit()])
        elif roll < 0.89:
            self.tool_turn([self.plan_edit(fail=True)])
        else:
            self.tool_turn([self.plan_think()])

    def condense(self) -> None:
        """Forget the oldest turns still in view, keeping the head and the most recent quarter."""
        assert self.condense_every is not None
        start = self.forgotten_through + 1
        limit = len(self.events) - 1 - max(self.condense_every // 4, 4)
        index = bisect_right(self.cut_points, limit) - 1
        if index < 0 or self.cut_points[index] < start:
            return  # nothing old enough to forget yet
        end = self.cut_points[index]
        forgotten = self.events[start : end + 1]
        kinds: dict[str, int] = {}
        for event in forgotten:
            kinds[event.kind] = kinds.get(event.kind, 0) + 1
        summary = (
            f"USER_CONTEXT: {self.events[1].content}\n\n"  # type: ignore[attr-defined]
            f"COMPLETED:\n- events {start}-{end}: "
            + ", ".join(f"{count} {kind}" for kind, count in kinds.items())
            + f"\n- read and edited src/{self.project}/{self.rng.choice(_MODULES)}.py\n\n"
            f"PENDING:\n- {self.words(_THOUGHTS[:6])}\n\n"
            f"CURRENT_STATE:\n- working in {_WORKDIR}; last command exit code {self.rng.choice((0, 1))}"
        )
        _, metrics = self.respond([], summary)
        self.context -= sum(self.tokens[start : end + 1])
        self.add(
            CondensationAction, "agent", self.tick(5000, 40000), forgotten_events_start_id=start,
            forgotten_events_end_id=end, summary=summary, summary_offset=KEEP_FIRST, llm_metrics=metrics,
        )  # fmt: skip
        self.forgotten_through = end
        self.end_turn()

    def finish(self) -> None:
        text = f"I fixed the issue in src/{self.project} and all tests pass."
        call_id = self.call_id()
        arguments = {"message": text, "task_completed": "true"}
        response, metrics = self.respond([(call_id, "finish", arguments)], None)
        metadata = ToolCallMetadata(function_name="finish", tool_call_id=call_id, model_response=response)
        self.add(
            AgentFinishAction, "agent", self.tick(2000, 20000), final_thought=text, task_completed="true",
            tool_call_metadata=metadata, llm_metrics=metrics,
        )  # fmt: skip

    def write(self) -> list[Event]:
        self.header(self.words(_TASKS))
        while (remaining := self.n_events - 1 - len(self.events)) > 0:
            if self.next_condensation is not None and len(self.events) >= self.next_condensation:
                assert self.condense_every is not None
                self.next_condensation += self.condense_every
                self.condense()
                continue
            self.agent_turn(remaining if remaining < _LARGEST_TURN else _LARGEST_TURN)
        self.finish()
        return self.events


def synthetic_session(
    n_events: int,
    *,
    seed: int = 0,
    condense_every: int | None = None,
    parallel_every: int | None = 7,
) -> list[Event]:
    """A deterministic OpenHands V0 coding session of exactly `n_events` events, ids `0..n_events-1`.

    Args:
        n_events: how many events; at least 5 (the four-event header and the finish).
        seed: the same seed always gives equal events.
        condense_every: if set, a `CondensationAction` (an id range and a summary at offset 4) is
            appended at the first turn boundary after every `condense_every` events, when there are
            turns old enough to forget.
        parallel_every: every `parallel_every`-th model response makes 2-3 parallel tool calls;
            None for never.

    Raises:
        ValueError: `n_events` is below 5, or `condense_every` / `parallel_every` is below 1.
    """
    if n_events < _MIN_EVENTS:
        raise ValueError(f"n_events must be at least {_MIN_EVENTS}, got {n_events}")
    if condense_every is not None and condense_every < 1:
        raise ValueError(f"condense_every must be at least 1, got {condense_every}")
    if parallel_every is not None and parallel_every < 1:
        raise ValueError(f"parallel_every must be at least 1, got {parallel_every}")
    return _SessionWriter(n_events, seed, condense_every, parallel_every).write()


def synthetic_session_dicts(
    n_events: int,
    *,
    seed: int = 0,
    condense_every: int | None = None,
    parallel_every: int | None = 7,
) -> list[dict[str, Any]]:
    """The OpenHands JSON dicts (`event_to_dict`) of `synthetic_session` with the same arguments."""
    events = synthetic_session(n_events, seed=seed, condense_every=condense_every, parallel_every=parallel_every)
    return [event_to_dict(event) for event in events]


def main(argv: list[str] | None = None) -> int:
    """Write a synthetic session to a file (JSONL for `.jsonl`, else a JSON list)."""
    parser = argparse.ArgumentParser(
        prog="python -m openhands_memory.testing.synthetic", description=main.__doc__
    )
    parser.add_argument("--events", type=int, required=True, help="how many events (at least 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--condense-every", type=int, default=None, help="add a condensation every N events")
    parser.add_argument(
        "--parallel-every", type=int, default=7, help="every Nth model response makes parallel calls; 0: never"
    )
    parser.add_argument("--out", required=True, help="the file to write (an existing one only with --force)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out file")
    args = parser.parse_args(argv)
    try:
        events = synthetic_session(
            args.events,
            seed=args.seed,
            condense_every=args.condense_every,
            parallel_every=args.parallel_every or None,
        )
    except ValueError as exc:
        parser.error(str(exc))
    try:
        dump_events(events, args.out, overwrite=args.force)
    except OutputExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
