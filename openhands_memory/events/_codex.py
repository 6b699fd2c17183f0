"""Read a Codex CLI rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`) as events.

Each line is `{timestamp, type, payload}` (openai/codex, `codex-rs/protocol/src/protocol.rs`,
`RolloutLine` / `RolloutItem`), `type` one of:

| type | events |
|---|---|
| `session_meta` (`id`, `cwd`, `cli_version`, `base_instructions.text` or `instructions`) | the instructions as the system prompt; the record kept hidden |
| `turn_context` (`model`, `cwd`, policies) | hidden; its `model` is the model of the responses after it |
| `response_item` `message` | `user` -> a user message, `developer` / `system` -> a user message with `role` kept (Codex sends them as input), `assistant` -> the text of a response |
| `response_item` `reasoning` (`summary[].text`, `content[].text`) | the reasoning of a response |
| `response_item` `function_call` (`name`, `arguments`, `call_id`), `custom_tool_call` (`name`, `input`), `local_shell_call` (`action.command`) | the calls of a response (`shell`, `exec_command`, `local_shell` -> `CmdRunAction`; others such as `apply_patch` -> `MCPAction`) |
| `response_item` `function_call_output` / `custom_tool_call_output` (`call_id`, `output`) | the observation of that call |
| `compacted` (`message`, `replacement_history`) | a `CondensationAction` forgetting everything before it; its summary is the replacement history's text when there is one (what the model saw from then on), else `message` |
| `event_msg` `token_count` (`info.last_token_usage`: `input_tokens`, `cached_input_tokens`, `output_tokens`) | the recorded usage of the response before it, the record kept on that response's first event (`usage_record`); one that reports no usage, or a response's second, hidden |
| other `event_msg` (`user_message`, `agent_message`, ...: copies of the response items, and telemetry) | hidden; written while a response's items are (between or after them), they do not end it and come after it |
| any other `type`, or `response_item` kind | hidden, and counted as a kind not known |

Rollouts written before `RolloutLine` (mid-2025) are read too: their first line is the session header
`{id, timestamp, instructions, git}` (read as `session_meta`), then each `ResponseItem` bare on its
line (read as a `response_item`), with `{"record_type": "state"}` markers (hidden).

A response is the assistant-side items written one after the other (reasoning, message, calls)
before anything else: the rollout names no response id, and a model response's output items are
written together.
"""

from __future__ import annotations

import os
from typing import Any

from openhands_memory.events._foreign import ImportedLog, ToolCall, text_of
from openhands_memory.events.base import Event

__all__ = ["import_codex", "is_codex_record"]

_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
_RESPONSE_KINDS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call"})


_ITEM_KINDS = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
     "local_shell_call", "web_search_call"}
)  # fmt: skip
"""`ResponseItem` kinds, which the rollouts before `RolloutLine` (mid-2025) wrote bare, one a line."""


def is_codex_record(record: Any) -> bool:
    """A Codex rollout line: `{timestamp, type, payload}` with one of `RolloutItem`'s types; or a line of
    the earlier layout: a bare `ResponseItem`, a `{"record_type": "state"}` marker, or the session header
    (`id`, `timestamp`, `instructions` or `git`, no `type`)."""
    if not isinstance(record, dict):
        return False
    kind = _text(record.get("type"))
    if "payload" in record:
        return kind in _TYPES
    if kind is None:
        return record.get("record_type") == "state" or ("id" in record and "timestamp" in record and ("instructions" in record or "git" in record))
    return kind in _ITEM_KINDS and not {"uuid", "sessionId", "action", "observation", "kind"} & record.keys()


def _enveloped(record: Any) -> Any:
    """A line of the earlier layout as the `RolloutLine` it became (a state marker stays as it is)."""
    if not isinstance(record, dict) or "payload" in record or record.get("record_type") == "state":
        return record
    if record.get("type") is None and "id" in record and "timestamp" in record:
        return {"timestamp": record.get("timestamp"), "type": "session_meta", "payload": record}
    return {"timestamp": record.get("timestamp"), "type": "response_item", "payload": record}


def import_codex(records: list[Any], lines: list[int] | None, *, path: str | os.PathLike[str] | None) -> list[Event]:
    """The events of a Codex rollout's records (see the module docstring).

    A record that is not an object with an object `payload` is kept hidden and counted as a kind not
    known; a line that is not JSON was refused before (`MalformedEventError` with the file and line).
    """
    log = ImportedLog("codex", path)
    _Reader(log).read_all(records)
    return log.finish()


class _Reader:
    """Reads a rollout's records in order; a response's items wait in `items` until something ends it."""

    def __init__(self, log: ImportedLog) -> None:
        self.log = log
        self.items: list[dict[str, Any]] = []
        """The assistant-side items of the response being read (`payload`s)."""
        self.first_timestamp: str | None = None
        """The time of the response's first item."""
        self.held: list[tuple[dict[str, Any], str, str | None, str | None]] = []
        """`event_msg` records written while a response's items were: kept hidden after the response."""
        self.usage: dict[str, int] | None = None
        """The usage the first `token_count` written among or after the response's items reports."""
        self.usage_record: dict[str, Any] | None = None
        """That `token_count` record."""
        self.last_response: Event | None = None
        """The first event of the last response, while it has no usage."""

    def read_all(self, records: list[Any]) -> None:
        items = self.items
        held = self.held
        log = self.log
        for record in records:
            payload = record.get("payload") if type(record) is dict else None
            if type(payload) is not dict or "record_type" in record:
                # Not a `RolloutLine` with an object payload: a line of the earlier layout, or damaged.
                record = _enveloped(record)
                payload = record.get("payload") if type(record) is dict else None
                if type(payload) is not dict or record.get("record_type") == "state":
                    self.flush()
                    if isinstance(record, dict) and record.get("record_type") == "state":
                        log.keep_hidden("state", record, known=True)
                    else:
                        log.keep_hidden("record without an object payload", record, known=False)
                    continue
            kind = record.get("type")
            item = payload.get("type")
            if type(item) is not str:
                item = None  # a damaged record may hold anything there
            timestamp = record.get("timestamp")
            if type(timestamp) is not str:
                timestamp = None
            if kind == "response_item" and (item in _RESPONSE_KINDS or (item == "message" and payload.get("role") == "assistant")):
                if not items:
                    self.first_timestamp = timestamp
                items.append(payload)
                continue
            original = payload.get("id")
            if type(original) is not str:
                original = None
            if kind == "event_msg":
                if item == "token_count":
                    usage = _usage(payload)
                    if items and usage is not None and self.usage is None:
                        self.usage, self.usage_record = usage, record
                        log.kept_on["event_msg:token_count"] += 1
                        continue
                    if not items and usage is not None and self._late_usage(usage, record):
                        continue
                if items:
                    # The UI's copies of a response's items (`agent_reasoning`, `agent_message`) and its usage
                    # are written among or after its items: they do not end it, and come after it.
                    held.append((record, f"event_msg:{item}", timestamp, original))
                else:
                    log.keep_hidden(f"event_msg:{item}", record, known=True, timestamp=timestamp, original_id=original)
                continue
            if items:
                self.flush()
            self.read(record, payload, kind, item, timestamp, original)
        self.flush()

    def read(self, record: dict[str, Any], payload: dict[str, Any], kind: Any, item: str | None, timestamp: str | None, original: str | None) -> None:
        """A record that is no part of a response (the response before it is built)."""
        log = self.log
        if kind == "response_item":
            if item == "message":
                extra = {} if payload.get("role") == "user" else {"role": payload.get("role")}
                log.user(text_of(payload.get("content")), **extra, timestamp=timestamp, original_id=original)
            elif item in ("function_call_output", "custom_tool_call_output"):
                log.result(str(payload.get("call_id")), _output_text(payload.get("output")), timestamp=timestamp, original_id=original)
            else:
                log.keep_hidden(f"response_item:{item}", record, known=False, timestamp=timestamp, original_id=original)
        elif kind == "compacted":
            history = payload.get("replacement_history")
            summary = (
                "\n\n".join(text_of(i.get("content")) for i in history if isinstance(i, dict) and i.get("type") == "message")
                if isinstance(history, list) and history
                else str(payload.get("message") or "")
            )
            log.condensation(summary, codex_message=payload.get("message"), timestamp=timestamp, original_id=original)
        elif kind == "session_meta":
            instructions = payload.get("base_instructions")
            text = instructions.get("text") if isinstance(instructions, dict) else payload.get("instructions")
            if isinstance(text, str) and text:
                log.system(text, timestamp=timestamp, original_id=original)
            log.keep_hidden(kind, record, known=True, timestamp=timestamp, original_id=original)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                log.model = payload["model"]
            log.keep_hidden(kind, record, known=True, timestamp=timestamp, original_id=original)
        else:
            name = kind if type(kind) is str and kind else "record without a 'type'"
            log.keep_hidden(name, record, known=False, timestamp=timestamp, original_id=original)

    def flush(self) -> None:
        """Build the response whose items were read, with its usage, then the records held after it."""
        items = self.items
        if not items:
            return
        texts, reasoning, calls = [], [], []
        for payload in items:
            item = payload.get("type")
            if item == "function_call":
                calls.append(ToolCall(str(payload.get("call_id")), str(payload.get("name")), payload.get("arguments") or "{}"))
            elif item == "reasoning":
                summary, content = payload.get("summary"), payload.get("content")
                both = summary if content is None and type(summary) is list else [*_list(summary), *_list(content)]
                reasoning.append(text_of(both))
            elif item == "message":
                texts.append(text_of(payload.get("content")))
            elif item == "custom_tool_call":
                calls.append(ToolCall(str(payload.get("call_id")), str(payload.get("name")), {"input": payload.get("input")}))
            elif item == "local_shell_call":
                action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
                call_id = payload.get("call_id") or payload.get("id")
                calls.append(ToolCall(str(call_id), "local_shell", {"command": action.get("command")}))
        original = items[0].get("id")
        if type(original) is not str:
            original = None
        items.clear()
        log = self.log
        usage, record, self.usage, self.usage_record = self.usage, self.usage_record, None, None
        events = log.response(
            text="\n".join(filter(None, texts)),
            calls=calls,
            # A response without calls is named, in its usage, by its first item's id, else by its own.
            response_id=original or (None if calls else f"codex:{log.next_id}"),
            reasoning="\n".join(filter(None, reasoning)) or None,
            usage=usage,
            usage_record=record,
            timestamp=self.first_timestamp,
            original_id=original,
        )
        self.last_response = None if usage is not None else events[0]
        held = self.held
        if held:
            for record, kind, timestamp, original in held:
                log.keep_hidden(kind, record, known=True, timestamp=timestamp, original_id=original)
            held.clear()  # (cleared in place, as `items`: `read_all` holds both)

    def _late_usage(self, usage: dict[str, int], record: dict[str, Any]) -> bool:
        """A `token_count` written after records that followed a response: that response's usage, if it has
        none (True); else False."""
        event = self.last_response
        if event is None or event.llm_metrics is not None:
            return False
        response_id = event.response_id or (event.original_id or f"codex:{event.id}")
        event.llm_metrics = {"token_usages": [{"model": self.log.model or "", **usage, "response_id": response_id}]}
        event.usage_record = record  # type: ignore[attr-defined]
        self.log.kept_on["event_msg:token_count"] += 1
        self.last_response = None
        return True


def _usage(payload: dict[str, Any]) -> dict[str, int] | None:
    """The usage a `token_count` reports for the last request (`info.last_token_usage`), in OpenHands' names."""
    info = payload.get("info")
    last = info.get("last_token_usage") if type(info) is dict else None
    if type(last) is not dict:
        return None
    prompt, completion, cached = last.get("input_tokens"), last.get("output_tokens"), last.get("cached_input_tokens")
    return {
        "prompt_tokens": prompt if type(prompt) is int else 0,  # (not a bool, nor any other JSON value)
        "completion_tokens": completion if type(completion) is int else 0,
        "cache_read_tokens": cached if type(cached) is int else 0,
        "cache_write_tokens": 0,
    }


def _output_text(output: Any) -> str:
    """A tool output: a string, `{content, success}`, or content items (`input_text`)."""
    if isinstance(output, dict) and "content" in output:
        return text_of(output.get("content"))
    return text_of(output)


def _text(value: Any) -> str | None:
    """A key the format says is a string (a record's `type`), or None: a damaged record may hold anything there."""
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value is not None else []
