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
| `event_msg` `user_message`, `agent_message`, `agent_reasoning`, `agent_reasoning_raw_content` (the UI's copies) | kept on the event whose text they copy (`copy_records`): a user's message copied by the record after it, a response by copies written among, after or (Codex 0.46) before its items, which do not end it; a copy of nothing, hidden |
| other `event_msg` (telemetry, `task_complete`, `turn_aborted`, ...) | hidden; written among a response's items, kept after it |
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
from collections.abc import Sequence
from typing import Any, NamedTuple

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


_COPIES = {"user_message": "message", "agent_message": "message", "agent_reasoning": "text", "agent_reasoning_raw_content": "text"}
"""`event_msg` kinds that copy, for Codex's UI, a user's message or a response's message or reasoning: the
payload key that holds the text copied."""


class _Held(NamedTuple):
    """An `event_msg` record held until the response it was written among or before is built."""

    record: dict[str, Any]
    kind: str
    """`event_msg:<its type>`."""
    timestamp: str | None
    original: str | None
    copied: str | None
    """The text it copies, for a copy (`_COPIES`)."""

    def copies(self, text: str, reasoning: str) -> bool:
        """Whether it copies a response with this text and reasoning: an `agent_message` its text, the
        others (`agent_reasoning`, ...) a part of its reasoning."""
        if self.copied is None:
            return False
        return self.copied == text if self.kind == "event_msg:agent_message" else self.copied in reasoning


class _Reader:
    """Reads a rollout's records in order; a response's items wait in `items` until something ends it."""

    def __init__(self, log: ImportedLog) -> None:
        self.log = log
        self.items: list[dict[str, Any]] = []
        """The assistant-side items of the response being read (`payload`s)."""
        self.first_timestamp: str | None = None
        """The time of the response's first item."""
        self.held: list[_Held] = []
        """`event_msg` records written among a response's items, or from a copy written before them on: each
        copy of the response is kept on it, the others hidden after it."""
        self.usage: dict[str, int] | None = None
        """The usage the first `token_count` written among or after the response's items reports."""
        self.usage_record: dict[str, Any] | None = None
        """That `token_count` record."""
        self.last_response: Event | None = None
        """The first event of the last response, while it has no usage."""
        self.next_record: Any = None
        """The record after the one being read: a user's message is copied by the next (`user_message`)."""
        self.skip_next = False
        """The next record is kept on the event just built."""

    def read_all(self, records: list[Any]) -> None:
        """Read every record, in order, and build what is left at the end."""
        items = self.items
        held = self.held
        log = self.log
        for index, record in enumerate(records):
            if self.skip_next:
                self.skip_next = False
                continue
            payload = record.get("payload") if type(record) is dict else None
            if type(payload) is not dict or "record_type" in record:
                # Not a `RolloutLine` with an object payload: a line of the earlier layout, or damaged.
                record = _enveloped(record)
                payload = record.get("payload") if type(record) is dict else None
                if type(payload) is not dict or record.get("record_type") == "state":
                    self.flush()
                    self.release()
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
            if kind == "event_msg":
                if item == "token_count":
                    usage = _usage(payload)
                    if usage is not None and self._take_usage(usage, record):
                        log.kept_on["event_msg:token_count"] += 1
                        continue
                key = _COPIES.get(item)  # type: ignore[arg-type]
                copied = payload.get(key) if key is not None else None
                if type(copied) is not str or not copied:
                    copied = None
                original = payload.get("id")
                if type(original) is not str:
                    original = None
                if items or held or (copied is not None and item != "user_message"):
                    # The UI's copies of a response's items (`agent_reasoning`, `agent_message`) are written among,
                    # after or (in some versions) before its items; none of them ends it.
                    held.append(_Held(record, f"event_msg:{item}", timestamp, original, copied))
                else:
                    log.keep_hidden(f"event_msg:{item}", record, known=True, timestamp=timestamp, original_id=original)
                continue
            if items:
                self.flush()
            elif held:
                self.release()
            original = payload.get("id")
            if type(original) is not str:
                original = None
            self.next_record = records[index + 1] if index + 1 < len(records) else None
            self.read(record, payload, kind, item, timestamp, original)
        self.flush()
        self.release()

    def read(self, record: dict[str, Any], payload: dict[str, Any], kind: Any, item: str | None, timestamp: str | None, original: str | None) -> None:
        """A record that is no part of a response (the response before it is built)."""
        log = self.log
        if kind == "response_item":
            if item == "message":
                role = payload.get("role")
                text = text_of(payload.get("content"))
                extra: dict[str, Any] = {} if role == "user" else {"role": role}
                if role == "user" and _copies(self.next_record, "user_message", text):
                    extra["copy_records"] = [self.next_record]
                    log.kept_on["event_msg:user_message"] += 1
                    self.skip_next = True
                log.user(text, **extra, timestamp=timestamp, original_id=original)
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
        """Build the response whose items were read, with its usage and the copies of it held, then the other
        records held, hidden."""
        items = self.items
        if not items:
            return
        texts, reasoning, calls = [], [], []
        for payload in items:
            item = payload.get("type")
            if item == "function_call":
                calls.append(ToolCall(str(payload.get("call_id")), str(payload.get("name")), payload.get("arguments") or "{}"))
            elif item == "reasoning":
                reasoning.append(text_of([*_list(payload.get("summary")), *_list(payload.get("content"))]))
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
        text = "\n".join(filter(None, texts))
        thought = "\n".join(filter(None, reasoning))
        kept: dict[str, Any] = {}
        usage = self.usage
        if usage is not None:
            kept["usage_record"] = self.usage_record
            self.usage = self.usage_record = None
        copies = [held for held in self.held if held.copies(text, thought)]
        if copies:
            kept["copy_records"] = [held.record for held in copies]
            for held in copies:
                log.kept_on[held.kind] += 1
        events = log.response(
            text=text,
            calls=calls,
            # A response without calls is named, in its usage, by its first item's id, else by its own.
            response_id=original or (None if calls else f"codex:{log.next_id}"),
            reasoning=thought or None,
            usage=usage,
            kept=kept,
            timestamp=self.first_timestamp,
            original_id=original,
        )
        self.last_response = None if usage is not None else events[0]
        self.release(copies)

    def release(self, kept: Sequence[_Held] = ()) -> None:
        """Keep the records held, but those in `kept`, hidden (in file order)."""
        for held in self.held:
            if not any(held is other for other in kept):
                self.log.keep_hidden(held.kind, held.record, known=True, timestamp=held.timestamp, original_id=held.original)
        self.held.clear()  # (cleared in place, as `items`: `read_all` holds both)

    def _take_usage(self, usage: dict[str, int], record: dict[str, Any]) -> bool:
        """Whether a `token_count` reporting `usage` is kept on a response: the response being read, if it
        has no report yet, else (none being read) the last response, if it has no usage."""
        if self.items:
            if self.usage is not None:
                return False
            self.usage, self.usage_record = usage, record
            return True
        event = self.last_response
        if event is None or event.llm_metrics is not None:
            return False
        response_id = event.response_id or (event.original_id or f"codex:{event.id}")
        event.llm_metrics = {"token_usages": [{"model": self.log.model or "", **usage, "response_id": response_id}]}
        event.usage_record = record  # type: ignore[attr-defined]
        self.last_response = None
        return True


def _copies(record: Any, kind: str, text: str) -> bool:
    """Whether `record` is an `event_msg` of `kind` (one of `_COPIES`) copying `text`."""
    if type(record) is not dict or record.get("type") != "event_msg":
        return False
    payload = record.get("payload")
    return type(payload) is dict and payload.get("type") == kind and payload.get(_COPIES[kind]) == text


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
