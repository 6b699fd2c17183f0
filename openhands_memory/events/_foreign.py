"""What every reader of another agent's log shares: building our events, pairing tool calls, counting.

A reader (`_claude_code`, `_codex`, `_swe_agent`, `_mini_swe_agent`) walks its format and tells an
`ImportedLog` what it found: a message, a model response (its text, reasoning and tool calls, with
the usage the provider reported), a tool result, a condensation, or a record no model saw. The log
gives ids 0, 1, 2, ... in that order and builds the events the way OpenHands logs hold them:

- a model response with tool calls becomes one action per call, each with a `ToolCallMetadata`
  whose `model_response` is a litellm-style completion holding every call of that response (and
  its text, and the reasoning as `reasoning_content` / `thinking_blocks`), so `ConversationMemory`
  renders the calls and their results as the agent's chat had them; a response without calls is
  an agent `MessageAction` (reasoning kept in its `reasoning_content` field);
- a shell call (`SHELL_TOOLS`) is a `CmdRunAction` answered by a `CmdOutputObservation`; any other
  tool is an `MCPAction` (name and arguments) answered by an `MCPObservation`;
- a result names its call by id: it gets the action's id as `cause` and a copy of its metadata; a
  result whose call is not in the log keeps metadata of its own (the renderer leaves it out of a
  chat, as an orphan), and is counted;
- the usage of a response is `llm_metrics.token_usages[0]` of its first event, in OpenHands' names
  (`prompt_tokens` counts every prompt token, cached or not; `cache_read_tokens`,
  `cache_write_tokens`, `completion_tokens`, `response_id`, `model`), which `replay.calibration`
  reads as a recorded request;
- the source's id of a record is `original_id`, its time `timestamp`, the model a top-level `model`;
- a record no model saw (titles, snapshots, telemetry, kinds the reader does not know) is a hidden
  `UnknownObservation` holding the record, so it is kept (and written by `convert`) but never shown;
  a record that belongs to one event (Codex's `token_count` of a response, its UI's copy of a message)
  is kept on that event instead (`usage_record`, `copy_records`).

`finish()` logs one warning that counts what was not a plain event (unknown kinds, orphans, records
left hidden or kept on an event, what the reader noted) on the `openhands_memory.events` logger, and
returns the events.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._codec import event_from_dict
from openhands_memory.events.actions import (
    AgentDelegateAction,
    CmdRunAction,
    CondensationAction,
    MCPAction,
    MessageAction,
    SystemMessageAction,
)
from openhands_memory.events.base import Action, Event, ToolCallMetadata
from openhands_memory.events.observations import (
    MAX_CMD_OUTPUT_SIZE,
    AgentDelegateObservation,
    CmdOutputObservation,
    MCPObservation,
    UnknownObservation,
)

__all__ = ["SHELL_TOOLS", "ImportedLog", "ToolCall", "text_of"]

logger = logging.getLogger("openhands_memory.events")

SHELL_TOOLS = frozenset({"bash", "Bash", "shell", "local_shell", "exec_command", "execute_bash", "container.exec"})
"""Tool names whose call runs a shell command (Claude Code's `Bash`, Codex's `shell` / `exec_command` /
`local_shell`, SWE-agent's and mini-swe-agent's `bash`)."""


class ToolCall:
    """One tool call of a model response: the source's call id, the tool's name, its arguments."""

    __slots__ = ("arguments", "call_id", "name")

    def __init__(self, call_id: str, name: str, arguments: Any) -> None:
        self.call_id = call_id
        self.name = name
        self.arguments = arguments


def text_of(value: Any) -> str:
    """The text of a content value: a string, or the `text` of each block of a list, joined by newlines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return orjson.dumps(value, default=str).decode()


def _arguments_json(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments, default=str).decode()


def _arguments_dict(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return {"input": arguments}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {"input": arguments}


def shell_command(arguments: dict[str, Any]) -> str | None:
    """The command of a shell call's arguments (`command` as a string, or an argv list joined), if any."""
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, str):
        return command
    if isinstance(command, list):
        # Codex's `shell` passes argv, usually ["bash", "-lc", "<script>"]: the script is the command.
        if len(command) == 3 and command[1] in ("-lc", "-c") and type(command[0]) is str and type(command[2]) is str:
            return command[2]
        if all(isinstance(part, str) for part in command):
            return " ".join(command)
    return None


class ImportedLog:
    """The events of one imported log, built in order (see the module docstring)."""

    def __init__(self, fmt: str, path: str | os.PathLike[str] | None, *, delegate_tools: frozenset[str] = frozenset()) -> None:
        self.fmt = fmt
        self.delegate_tools = delegate_tools
        """Tools whose call runs a sub-agent (Claude Code's `Task`): an `AgentDelegateAction`, its result an
        `AgentDelegateObservation` (`find_delegations` lists them)."""
        """The format's name, as warnings and `bench` show it (`claude-code`, `codex`, ...)."""
        self.path = path
        self.events: list[Event] = []
        self.calls: dict[str, Action] = {}
        """Call id -> the action of that call."""
        self.answered: set[str] = set()
        self.unknown: Counter[str] = Counter()
        """Record kinds the reader does not know, kept hidden."""
        self.hidden: Counter[str] = Counter()
        """Known record kinds no model saw, kept hidden."""
        self.kept_on: Counter[str] = Counter()
        """Record kinds kept on the event they belong to rather than as events of their own (Codex's
        `token_count` on the response whose usage it reports, its UI's copies on the event they copy)."""
        self.notes: list[str] = []
        """What the reader wants said (a branch chosen, a compaction without summary, ...)."""
        self.orphans = 0
        self.model: str | None = None
        self.pending_text: Event | None = None
        """The text-format turn whose output has not come yet."""

    # -- building ------------------------------------------------------------------------------

    @property
    def next_id(self) -> int:
        """The id the next event gets: its position (events are built with it, which is cheaper than setting it after)."""
        return len(self.events)

    def add(self, event: Event) -> Event:
        """Append `event`, built with `id=self.next_id`."""
        self.events.append(event)
        return event

    def system(self, text: str, *, tools: list[dict[str, Any]] | None = None, **envelope: Any) -> Event:
        """The system prompt (and the tools, when the format records them)."""
        return self.add(SystemMessageAction(id=self.next_id, content=text, tools=tools, source="agent", **_envelope(envelope)))

    def user(self, text: str, *, timestamp: str | None = None, original_id: str | None = None, **envelope: Any) -> Event:
        """A message the agent was given: the user's, or input the agent's harness sent as the user."""
        events = self.events
        fields = {"id": len(events), "content": text, "source": "user"}
        _add_envelope(fields, envelope, timestamp, original_id)
        event = _validate_message(fields)
        events.append(event)
        return event

    def response(
        self,
        *,
        text: str,
        calls: Sequence[ToolCall] = (),
        response_id: str | None = None,
        model: str | None = None,
        reasoning: str | None = None,
        thinking_blocks: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        kept: dict[str, Any] | None = None,
        timestamp: str | None = None,
        original_id: str | None = None,
        **envelope: Any,
    ) -> list[Event]:
        """The events of one model response: one action per tool call, or an agent message.

        `kept` are fields for the first event alone: records of the source that belong to the response
        (Codex's `usage_record` and `copy_records`), kept on it rather than as hidden events.
        """
        model = model or self.model
        shared: dict[str, Any] = {}  # the envelope every event of the response has
        _add_envelope(shared, envelope, timestamp, original_id)
        if model:
            shared["model"] = model
        events = self.events
        if not calls:
            metrics = _metrics(usage, model, response_id) if usage else None
            fields: dict[str, Any] = {"id": len(events), "content": text, "source": "agent", "llm_metrics": metrics}
            fields.update(shared)
            if kept:
                fields.update(kept)
            if reasoning:
                fields["reasoning_content"] = reasoning
            if thinking_blocks:
                fields["thinking_blocks"] = thinking_blocks
            event = _validate_message(fields)
            events.append(event)
            return [event]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": _arguments_json(c.arguments)}}
                for c in calls
            ],
        }
        if reasoning:
            message["reasoning_content"] = reasoning
        if thinking_blocks:
            message["thinking_blocks"] = thinking_blocks
        completion_id = response_id or f"{self.fmt}:{calls[0].call_id}"
        completion: dict[str, Any] = {"id": completion_id, "choices": [{"index": 0, "message": message}]}
        if model:
            completion["model"] = model
        built: list[Event] = []
        total = len(calls)
        first = True
        for call in calls:
            name = call.name
            metadata = _validate_metadata(
                {"function_name": name, "tool_call_id": call.call_id, "model_response": completion, "total_calls_in_response": total}
            )
            arguments = _arguments_dict(call.arguments)
            command = shell_command(arguments) if name in SHELL_TOOLS else None
            if name in self.delegate_tools:
                agent = arguments.get("subagent_type")
                fields = {"id": len(events), "agent": agent if isinstance(agent, str) else name, "inputs": arguments}
                validate = _validate_delegate
            elif command is not None:
                fields = {"id": len(events), "command": command}
                validate = _validate_command
            else:
                fields = {"id": len(events), "name": name, "arguments": arguments}
                validate = _validate_mcp
            fields["thought"] = text if first else ""
            fields["source"] = "agent"
            fields["tool_call_metadata"] = metadata
            if first and usage:
                fields["llm_metrics"] = _metrics(usage, model, completion_id)  # the usage names the completion
            fields.update(shared)
            if first and kept:
                fields.update(kept)
            first = False
            action = validate(fields)
            self.calls[call.call_id] = action
            events.append(action)
            built.append(action)
        return built

    def text_step(self, text: str, command: str, **envelope: Any) -> Event:
        """An agent's turn in a text format (no tool calls): the command it ran, shown as the text it wrote.

        The action is a `CmdRunAction` whose recorded message is the model's whole reply, which the
        renderer shows as the agent's words (the way that agent's model saw its own turn).
        """
        record = {"id": self.next_id, "action": "run", "args": {"command": command, "thought": ""}, "message": text, "source": "agent"}
        event = event_from_dict({**record, **_envelope(envelope)})
        self.pending_text = event
        return self.add(event)

    def text_output(self, text: str, **envelope: Any) -> Event:
        """What the environment answered a text-format turn, shown as the user message the agent got."""
        action, self.pending_text = self.pending_text, None
        return self.add(
            UnknownObservation(
                id=self.next_id,
                observation=f"{self.fmt}:output", content=text, cause=action.id if action is not None else None, source="environment", **_envelope(envelope)
            )
        )

    def result(
        self,
        call_id: str,
        content: str,
        *,
        name: str | None = None,
        is_error: bool = False,
        timestamp: str | None = None,
        original_id: str | None = None,
        **envelope: Any,
    ) -> Event:
        """The result of the call `call_id` (its action's observation)."""
        envelope = {key: value for key, value in envelope.items() if value is not None} if envelope else {}
        if timestamp is not None:
            envelope["timestamp"] = timestamp
        if original_id is not None:
            envelope["original_id"] = original_id
        if is_error:
            envelope["is_error"] = True
        events = self.events
        action = self.calls.get(call_id)
        if action is None:
            self.orphans += 1
            metadata = ToolCallMetadata(function_name=name or "unknown", tool_call_id=call_id)
            return self.add(MCPObservation(id=len(events), content=content, name=name or "", source="environment", tool_call_metadata=metadata, **envelope))
        self.answered.add(call_id)
        metadata = action.tool_call_metadata
        kind = type(action)
        if kind is CmdRunAction:
            fields = {"id": len(events), "content": content, "command": action.command, "cause": action.id, "source": "environment",
                      "tool_call_metadata": metadata, **envelope}  # fmt: skip
            # An output too long for the agent is built by the constructor, which cuts it as OpenHands does.
            event: Event = CmdOutputObservation(**fields) if len(content) > MAX_CMD_OUTPUT_SIZE else _validate_command_output(fields)
        elif kind is AgentDelegateAction:
            event = _validate_delegate_result(
                {"id": len(events), "content": content, "outputs": {"content": content}, "cause": action.id, "source": "environment",
                 "tool_call_metadata": metadata, **envelope}
            )  # fmt: skip
        else:
            assert kind is MCPAction
            event = _validate_mcp_result(
                {"id": len(events), "content": content, "name": action.name, "arguments": action.arguments, "cause": action.id,
                 "source": "environment", "tool_call_metadata": metadata, **envelope}
            )  # fmt: skip
        events.append(event)
        return event

    def condensation(self, summary: str | None, **envelope: Any) -> Event:
        """A compaction the agent made: everything before it is forgotten, its summary shown first."""
        end = len(self.events) - 1
        if summary is None:
            self.notes.append("a compaction without its summary forgets what came before it and shows nothing in its place")
        return self.add(
            CondensationAction(
                id=self.next_id,
                forgotten_events_start_id=0 if end >= 0 else None,
                forgotten_events_end_id=end if end >= 0 else None,
                forgotten_event_ids=None if end >= 0 else [],
                summary=summary,
                summary_offset=0 if summary is not None else None,
                source="agent",
                **_envelope(envelope),
            )
        )

    def open_delegation(self) -> int | None:
        """The id of the last delegation (a delegate tool's call) not answered yet, if any."""
        for call_id, action in reversed(self.calls.items()):
            if isinstance(action, AgentDelegateAction) and call_id not in self.answered:
                return action.id
        return None

    def keep_hidden(
        self, kind: str, record: Any, *, known: bool, timestamp: str | None = None, original_id: str | None = None, **envelope: Any
    ) -> Event:
        """A record no model saw: kept, hidden; `known` False counts it as a kind the reader does not know."""
        (self.hidden if known else self.unknown)[kind] += 1
        events = self.events
        fields = {"id": len(events), "observation": f"{self.fmt}:{kind}", "record": record, "hidden": True, "source": "environment"}
        _add_envelope(fields, envelope, timestamp, original_id)
        event = _validate_unknown(fields)
        events.append(event)
        return event

    # -- ending --------------------------------------------------------------------------------

    def error(self, reason: str, *, line: int | None = None, index: int | None = None) -> MalformedEventError:
        """The typed error for a malformed record, naming the file and line (JSONL) or position."""
        return MalformedEventError(f"{self.fmt} log: {reason}", path=self.path, line=line, index=index)

    def finish(self) -> list[Event]:
        """The events; one warning says what was kept hidden, unknown, unanswered or noted."""
        parts = list(self.notes)
        if self.unknown:
            parts.append("record kinds not known, kept hidden: " + _counts(self.unknown))
        if self.hidden:
            parts.append("records no model saw, kept hidden: " + _counts(self.hidden))
        if self.kept_on:
            parts.append("records kept on the event they report or copy: " + _counts(self.kept_on))
        unanswered = len(set(self.calls) - self.answered)
        if unanswered:
            parts.append(f"{unanswered} tool call(s) without a result (left out of the chat)")
        if self.orphans:
            parts.append(f"{self.orphans} tool result(s) whose call is not in the log (left out of the chat)")
        if self.events:
            # Where the log came from, for `bench`'s per-format rows (`log_format`); kept by `convert`.
            self.events[0].imported_from = self.fmt  # type: ignore[attr-defined]
        if parts:
            logger.warning("%s: read as a %s log; %s", os.fspath(self.path) if self.path is not None else "log", self.fmt, "; ".join(parts))
        return self.events


def read_chat(log: ImportedLog, messages: list[Any], *, command_of: Any, usage_of: Any = None, where: Any = None) -> None:
    """Read a chat-format history (SWE-agent's `history`, mini-swe-agent's `messages`) into `log`.

    `system` -> the system prompt; `assistant` with `tool_calls` -> a response with those calls, else
    a text-format turn (`command_of(message)` the command it ran, None for a reply that ran nothing);
    `tool` -> the result of its `tool_call_id` (`tool_call_ids`); `user` -> the output of the text
    turn waiting for one, else a user message. `usage_of(message)` gives `(usage, response id,
    model, timestamp)` for an assistant message; `where(index)` the place for an error.
    """
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise log.error(f"message {index} is a {type(message).__name__}, not an object", index=index)
        role = message.get("role")
        text = text_of(message.get("content"))
        usage, response_id, model, timestamp = usage_of(message) if usage_of is not None else (None, None, None, None)
        envelope = {"timestamp": timestamp}
        if role == "system":
            log.system(text, **envelope)
        elif role == "assistant":
            raw_calls = message.get("tool_calls")
            if isinstance(raw_calls, list) and raw_calls:
                calls = []
                for raw in raw_calls:
                    function = raw.get("function") if isinstance(raw, dict) else None
                    if not isinstance(function, dict):
                        raise log.error(f"message {index} has a tool call without a function", index=index)
                    calls.append(ToolCall(str(raw.get("id")), str(function.get("name")), function.get("arguments") or {}))
                log.response(text=text, calls=calls, response_id=response_id, model=model, usage=usage, **envelope)
                continue
            command = command_of(message)
            if command is None:
                log.response(text=text, response_id=response_id, model=model, usage=usage, **envelope)
            else:
                step = log.text_step(text, command, **envelope)
                if usage:
                    step.llm_metrics = _metrics(usage, model or log.model, response_id)
                if model or log.model:
                    step.model = model or log.model  # type: ignore[attr-defined]
        elif role == "tool":
            ids = message.get("tool_call_ids")
            call_id = ids[0] if isinstance(ids, list) and ids else message.get("tool_call_id")
            name = message.get("name")
            log.result(str(call_id), text, name=name if isinstance(name, str) else None, **envelope)
        elif role == "user" and log.pending_text is not None:
            log.text_output(text, **envelope)
        elif role == "user":
            log.user(text, **envelope)
        else:
            log.keep_hidden(f"message with role {role!r}", message, known=False, **envelope)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{kind} x{count}" for kind, count in counter.most_common())


def _envelope(fields: dict[str, Any]) -> dict[str, Any]:
    """The envelope fields a reader passed, without the ones it had no value for."""
    return {key: value for key, value in fields.items() if value is not None}


def _add_envelope(
    fields: dict[str, Any], envelope: dict[str, Any], timestamp: str | None = None, original_id: str | None = None
) -> None:
    """Add to an event's `fields` the envelope fields a reader passed (but the ones it had no value for), and
    the source record's `timestamp` and `original_id` when it has them."""
    for key, value in envelope.items():
        if value is not None:
            fields[key] = value
    if timestamp is not None:
        fields["timestamp"] = timestamp
    if original_id is not None:
        fields["original_id"] = original_id


# The hot builders validate a dict of fields with the class's validator: what `Cls(**fields)` does,
# without a call of `BaseModel.__init__` for each event (a big log has a hundred thousand of them).
_validate_message = MessageAction.__pydantic_validator__.validate_python
_validate_command = CmdRunAction.__pydantic_validator__.validate_python
_validate_mcp = MCPAction.__pydantic_validator__.validate_python
_validate_delegate = AgentDelegateAction.__pydantic_validator__.validate_python
_validate_mcp_result = MCPObservation.__pydantic_validator__.validate_python
_validate_command_output = CmdOutputObservation.__pydantic_validator__.validate_python
_validate_delegate_result = AgentDelegateObservation.__pydantic_validator__.validate_python
_validate_unknown = UnknownObservation.__pydantic_validator__.validate_python
_validate_metadata = ToolCallMetadata.__pydantic_validator__.validate_python


def _metrics(usage: dict[str, Any], model: str | None, response_id: str | None) -> dict[str, Any]:
    """`llm_metrics` holding one request's usage in OpenHands' names (see the module docstring)."""
    record = {
        "model": model or "",
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "cache_read_tokens": int(usage.get("cache_read_tokens") or 0),
        "cache_write_tokens": int(usage.get("cache_write_tokens") or 0),
        "response_id": response_id or "",
    }
    return {"token_usages": [record]}
