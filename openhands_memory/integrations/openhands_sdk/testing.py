"""A real OpenHands SDK conversation, offline: a scripted model, two real tools, a request recorder.

For tests, benchmarks and fixtures. `run_scripted_conversation(folder, condenser=...)` runs an SDK
`Conversation` (persisted in `folder`) whose agent is an SDK `Agent` with:

- `ScriptedLLM`: an SDK `LLM` whose transport is litellm's own `mock_response`, fed by a script, so
  the SDK formats every request as it would for a real provider and litellm builds every response;
  no network, no key. Every request it is sent (the chat dicts litellm receives) is recorded.
- `list_files` and `run_command`: real SDK tools whose executors read files of a workspace folder
  and run a tiny command in it (argv, no shell, a fixed set of programs).
- any SDK condenser: the SDK's `LLMSummarizingCondenser` (its summarizer another `ScriptedLLM`), or
  ours.

`check_valid_chat(request)` checks a recorded request is a valid chat (invariant 4 of DESIGN.md).
The package's `__init__` does not import this module: it needs `openhands-sdk` (Python >= 3.12).
"""

from __future__ import annotations

import copy
import json
import subprocess
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import Field, PrivateAttr

from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.context.condenser import CondenserBase, LLMSummarizingCondenser
from openhands.sdk.context.view import View
from openhands.sdk.event import Condensation
from openhands.sdk.tool import Action, Observation, Tool, ToolAnnotations, ToolDefinition, ToolExecutor, register_tool

if TYPE_CHECKING:
    from openhands.sdk.conversation.state import ConversationState

__all__ = [
    "CondensationRow",
    "ConversationRun",
    "ListFilesTool",
    "RunCommandTool",
    "ScriptedLLM",
    "agent_script",
    "check_valid_chat",
    "register_tools",
    "run_scripted_conversation",
    "summarizer_script",
    "write_workspace",
]

Reply = dict[str, Any]
"""An assistant message as litellm returns it: `content` and, for tool calls, `tool_calls`."""

Script = Callable[[int, list[dict[str, Any]]], Reply]
"""Answers a request: (0-based call number, the chat dicts sent) -> the assistant message."""


class ScriptedLLM(LLM):
    """An SDK `LLM` answered by a script through litellm's `mock_response`; records every request.

    Only the last hop is replaced: the SDK formats the messages and tools as for a real provider,
    litellm builds the `ModelResponse` from the scripted message, and the SDK parses it into its
    own events. `requests[i]` is the list of chat dicts the i-th call sent. The hook is the SDK's
    `_transport_call` (its one call of `litellm.completion`, synchronous: `Conversation.run`); the
    SDK's own `TestLLM` replaces `completion` whole, so the formatting would not run.
    """

    model: str = Field(default="gpt-4o")
    _script: Script | None = PrivateAttr(default=None)
    _requests: list[list[dict[str, Any]]] = PrivateAttr(default_factory=list)
    _tools: list[list[str]] = PrivateAttr(default_factory=list)

    @classmethod
    def scripted(cls, script: Script, *, usage_id: str, model: str = "gpt-4o") -> ScriptedLLM:
        """A scripted LLM (`usage_id` tells the agent's from the summarizer's in the SDK's metrics)."""
        llm = cls(model=model, usage_id=usage_id, api_key="sk-offline", num_retries=0)
        llm._script = script
        return llm

    @property
    def requests(self) -> list[list[dict[str, Any]]]:
        """The chat dicts of every request sent so far, in order (deep copies)."""
        return self._requests

    @property
    def tool_names(self) -> list[list[str]]:
        """The names of the tools each request offered, in order."""
        return self._tools

    def _transport_call(self, *, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if self._script is None:
            raise RuntimeError("ScriptedLLM has no script: build it with ScriptedLLM.scripted(...)")
        number = len(self._requests)
        self._requests.append(copy.deepcopy(messages))
        self._tools.append([tool["function"]["name"] for tool in kwargs.get("tools") or ()])
        reply = self._script(number, messages)
        kwargs["mock_response"] = _model_response(reply, number=number, model=self.model)
        kwargs.pop("enable_streaming", None)
        return super()._transport_call(messages=messages, enable_streaming=False, **kwargs)


def _model_response(reply: Reply, *, number: int, model: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": reply.get("content")}
    if reply.get("tool_calls"):
        message["tool_calls"] = reply["tool_calls"]
    return {
        "id": f"scripted-{number}",
        "object": "chat.completion",
        "created": 1_800_000_000 + number,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop", "message": message}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call as the OpenAI chat format writes it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


# --- the tools -------------------------------------------------------------------------------------


class ListFilesAction(Action):
    """List the workspace's files, or read one of them."""

    command: Literal["list", "read"] = Field(description="`list` the files, or `read` the file at `path`.")
    path: str = Field(default=".", description="A path inside the workspace.")


class ListFilesObservation(Observation):
    """The file names, or the file's text."""


class ListFilesExecutor(ToolExecutor[ListFilesAction, ListFilesObservation]):
    """Reads the workspace folder; a path outside it is an error the agent reads."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def __call__(self, action: ListFilesAction, conversation: Any = None) -> ListFilesObservation:
        target = (self.root / action.path).resolve()
        if not target.is_relative_to(self.root) or not target.exists():
            return ListFilesObservation.from_text(f"no such path in the workspace: {action.path}", is_error=True)
        if action.command == "list":
            if not target.is_dir():
                return ListFilesObservation.from_text(f"not a folder: {action.path}", is_error=True)
            names = sorted(p.relative_to(self.root).as_posix() for p in target.rglob("*") if p.is_file())
            return ListFilesObservation.from_text("\n".join(names) or "(empty)")
        if not target.is_file():
            return ListFilesObservation.from_text(f"not a file: {action.path}", is_error=True)
        return ListFilesObservation.from_text(target.read_text(encoding="utf-8"))


class ListFilesTool(ToolDefinition[ListFilesAction, ListFilesObservation]):
    """Lists and reads the files of the conversation's workspace."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        root = Path(params.get("root") or conv_state.workspace.working_dir)  # type: ignore[union-attr]
        return [
            cls(
                description="List the files of the workspace, or read one of them.",
                action_type=ListFilesAction,
                observation_type=ListFilesObservation,
                executor=ListFilesExecutor(root),
                annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False),
            )
        ]


PROGRAMS = frozenset({"echo", "wc", "sort", "head", "tail", "cat", "ls"})
"""The programs `run_command` runs: small, deterministic, local."""


class RunCommandAction(Action):
    """Run one small program in the workspace (argv, no shell)."""

    argv: list[str] = Field(description=f"The program and its arguments; the program is one of {sorted(PROGRAMS)}.")


class RunCommandObservation(Observation):
    """The program's output and exit code."""

    exit_code: int = Field(default=0, description="The program's exit code (-1: not run).")


class RunCommandExecutor(ToolExecutor[RunCommandAction, RunCommandObservation]):
    """Runs the program with the workspace as its working folder."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def __call__(self, action: RunCommandAction, conversation: Any = None) -> RunCommandObservation:
        if not action.argv or action.argv[0] not in PROGRAMS:
            return RunCommandObservation.from_text(
                f"not an allowed program: {action.argv[:1]}; allowed: {sorted(PROGRAMS)}", is_error=True, exit_code=-1
            )
        done = subprocess.run(  # noqa: S603 - argv of an allowed program, no shell
            action.argv, cwd=self.root, capture_output=True, text=True, timeout=60, check=False
        )
        text = done.stdout + (f"\n[stderr]\n{done.stderr}" if done.stderr else "") + f"\n[exit code {done.returncode}]"
        return RunCommandObservation.from_text(text, is_error=done.returncode != 0, exit_code=done.returncode)


class RunCommandTool(ToolDefinition[RunCommandAction, RunCommandObservation]):
    """Runs a small program in the conversation's workspace."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        root = Path(params.get("root") or conv_state.workspace.working_dir)  # type: ignore[union-attr]
        return [
            cls(
                description="Run a small program (echo, wc, sort, head, tail, cat, ls) in the workspace.",
                action_type=RunCommandAction,
                observation_type=RunCommandObservation,
                executor=RunCommandExecutor(root),
                annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False),
            )
        ]


def register_tools() -> None:
    """Register `list_files` and `run_command` with the SDK (once), so an `Agent` can name them in `Tool(name=...)`."""
    from openhands.sdk.tool import list_registered_tools

    registered = set(list_registered_tools())
    for tool in (ListFilesTool, RunCommandTool):
        if tool.name not in registered:
            register_tool(tool.name, tool)


# --- the script ------------------------------------------------------------------------------------


def write_workspace(root: Path, *, files: int = 12) -> list[str]:
    """Fill `root` with `files` small text files of different sizes; returns their names."""
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for index in range(files):
        name = f"notes/part_{index:02d}.txt"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"part {index} line {line}: " + "lorem ipsum " * (1 + (index * 7 + line) % 5) for line in range(3 + index * 4)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        names.append(name)
    return names


def agent_script(steps: int, files: Sequence[str]) -> Script:
    """The agent's script: `steps` tool calls that walk the workspace (list, read, count, echo), then `finish`.

    Every third call makes two parallel calls (one response, two actions), so batches are exercised.
    """

    def answer(number: int, messages: list[dict[str, Any]]) -> Reply:
        if number >= steps:
            return {
                "content": "All files checked.",
                "tool_calls": [tool_call(f"call_{number:03d}_a", "finish", {"message": f"Checked {len(files)} files."})],
            }
        name = files[number % len(files)]
        calls = [_call(number, "a", name)]
        if number % 3 == 2:
            calls.append(_call(number + 1, "b", files[(number + 5) % len(files)]))
        return {"content": f"Step {number}: looking at {name}.", "tool_calls": calls}

    return answer


def _call(number: int, suffix: str, name: str) -> dict[str, Any]:
    call_id = f"call_{number:03d}_{suffix}"
    match number % 4:
        case 0:
            return tool_call(call_id, "list_files", {"command": "read", "path": name})
        case 1:
            return tool_call(call_id, "run_command", {"argv": ["wc", "-l", name]})
        case 2:
            return tool_call(call_id, "list_files", {"command": "list", "path": "notes"})
        case _:
            return tool_call(call_id, "run_command", {"argv": ["echo", f"checked {name} at step {number}"]})


def summarizer_script() -> Script:
    """The summarizer's script: a numbered summary naming how many events it was asked about."""

    def answer(number: int, messages: list[dict[str, Any]]) -> Reply:
        text = json.dumps(messages[-1].get("content"))
        return {"content": f"Summary {number + 1}: the agent listed, read and counted notes files ({text.count('<EVENT')} events)."}

    return answer


# --- running it ------------------------------------------------------------------------------------


@dataclass
class ConversationRun:
    """What a scripted conversation did."""

    folder: Path
    """The SDK's persistence folder of the conversation (it holds `events/` and `base_state.json`)."""
    agent_llm: ScriptedLLM
    """The agent's model; `agent_llm.requests` is every request it was sent."""
    condensations: list[Condensation] = field(default_factory=list)
    """The SDK `Condensation` events, in order."""
    events: list[Any] = field(default_factory=list)
    """Every event of the conversation, in order."""
    summarizer: ScriptedLLM | None = None
    """The summarizer's model, when the condenser is the SDK's summarizing one built here."""
    workspace: Path = field(default_factory=Path)
    """The folder the tools worked in."""
    status: str = ""
    """The conversation's execution status when `run()` returned (`finished` when the agent called `finish`)."""
    requests_before: list[int] = field(default_factory=list)
    """For each condensation, the agent's model requests made before it."""

    def condensation_rows(self) -> list[CondensationRow]:
        """Each condensation as the SDK made it: its step, what it forgot, the view before and after."""
        rows = []
        for number, (condensation, requests) in enumerate(zip(self.condensations, self.requests_before, strict=True)):
            position = self.events.index(condensation)
            rows.append(
                CondensationRow(
                    step=requests + number + 1,
                    request=requests,
                    forgotten=len(condensation.forgotten_event_ids),
                    summary_offset=condensation.summary_offset,
                    view_before=len(View.from_events(self.events[:position])),
                    view_after=len(View.from_events(self.events[: position + 1])),
                    summary=condensation.summary,
                )
            )
        return rows


@dataclass(frozen=True)
class CondensationRow:
    """One condensation of a scripted conversation, as `benchmarks/sdk_conversation.py` prints it."""

    step: int
    """The agent step it was made at (1-based; each model request and each condensation is a step)."""
    request: int
    """The agent's model requests made before it."""
    forgotten: int
    """Events it forgot."""
    summary_offset: int | None
    """Where its summary goes in the view (None: no summary)."""
    view_before: int
    """Events of the SDK's view before it."""
    view_after: int
    """Events of the SDK's view once it is applied (its summary included)."""
    summary: str | None
    """Its summary."""


def summarizing_condenser(*, max_size: int = 24, keep_first: int = 2) -> tuple[LLMSummarizingCondenser, ScriptedLLM]:
    """The SDK's `LLMSummarizingCondenser` with a small `max_size` and a scripted summarizer."""
    summarizer = ScriptedLLM.scripted(summarizer_script(), usage_id="condenser")
    return LLMSummarizingCondenser(llm=summarizer, max_size=max_size, keep_first=keep_first), summarizer


def run_scripted_conversation(
    persistence_dir: Path,
    workspace: Path,
    *,
    condenser: CondenserBase | None,
    steps: int = 60,
    files: int = 12,
    task: str = "Check every notes file in the workspace and report.",
) -> ConversationRun:
    """Run the scripted SDK conversation to its `finish`: `steps` tool-call steps, then the finish call.

    The conversation is persisted under `persistence_dir` (the SDK adds the conversation id's hex);
    `ConversationRun.folder` is that folder.
    """
    register_tools()
    names = write_workspace(workspace, files=files)
    llm = ScriptedLLM.scripted(agent_script(steps, names), usage_id="agent")
    agent = Agent(
        llm=llm,
        tools=[Tool(name=ListFilesTool.name), Tool(name=RunCommandTool.name)],
        include_default_tools=["FinishTool"],
        condenser=condenser,
    )
    run = ConversationRun(folder=Path(), agent_llm=llm, workspace=workspace)

    def on_event(event: Any) -> None:
        run.events.append(event)
        if isinstance(event, Condensation):
            run.requests_before.append(len(llm.requests))

    conversation = Conversation(
        agent=agent,
        workspace=str(workspace),
        persistence_dir=str(persistence_dir),
        conversation_id=uuid.UUID(int=24),
        callbacks=[on_event],
        max_iteration_per_run=4 * steps + 20,
        visualizer=None,
    )
    try:
        conversation.send_message(task)
        conversation.run()
        run.folder = Path(conversation.state.persistence_dir or persistence_dir)
        run.status = str(conversation.state.execution_status.value)
    finally:
        conversation.close()
    run.condensations = [event for event in run.events if isinstance(event, Condensation)]
    return run


# --- checks ----------------------------------------------------------------------------------------


def check_valid_chat(messages: Sequence[dict[str, Any]]) -> None:
    """Raise AssertionError unless `messages` is a valid chat.

    System first (and only there); every assistant `tool_calls` entry is answered by exactly one
    `tool` message with its id before the next assistant or user turn; no `tool` message answers a
    call that is not pending; no call is left unanswered at the end.
    """
    if not messages or messages[0].get("role") != "system":
        raise AssertionError(f"the chat does not start with the system message: {[m.get('role') for m in messages[:2]]}")
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and index:
            raise AssertionError(f"message {index}: a second system message")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise AssertionError(f"message {index}: tool result {call_id!r} answers no pending call ({pending})")
            pending.remove(call_id)
            continue
        if pending:
            raise AssertionError(f"message {index} ({role}): tool calls {pending} unanswered before it")
        if role == "assistant":
            ids = [call["id"] for call in message.get("tool_calls") or []]
            if len(set(ids)) != len(ids):
                raise AssertionError(f"message {index}: repeated tool call ids {ids}")
            pending = ids
    if pending:
        raise AssertionError(f"tool calls {pending} unanswered at the end")
