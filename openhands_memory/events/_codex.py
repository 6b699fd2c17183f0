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
| `event_msg` `token_count` (`info.last_token_usage`: `input_tokens`, `cached_input_tokens`, `output_tokens`) | the recorded usage of the response before it |
| other `event_msg` (`user_message`, `agent_message`, ...: copies of the response items, and telemetry) | hidden |
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
    reader = _Reader(log)
    read = reader.read
    for record in records:
        payload = record.get("payload") if type(record) is dict else None
        if type(payload) is dict and "record_type" not in record:
            read(record, payload)  # a `RolloutLine`: nearly every record
            continue
        record = _enveloped(record)
        if isinstance(record, dict) and record.get("record_type") == "state":
            reader.flush()
            log.keep_hidden("state", record, known=True)
            continue
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            reader.flush()
            log.keep_hidden("record without an object payload", record, known=False)
            continue
        read(record, record["payload"])
    reader.flush()
    return log.finish()


class _Reader:
    def __init__(self, log: ImportedLog) -> None:
        self.log = log
        self.items: list[tuple[dict[str, Any], str | None]] = []
        """The assistant-side items of the response being read, with their timestamps."""
        self.last_response: Event | None = None
        """The first event of the last response, until its usage comes."""

    def read(self, record: dict[str, Any], payload: dict[str, Any]) -> None:
        """Read a record and its `payload` (an object)."""
        kind = record.get("type")
        item = payload.get("type")
        if type(item) is not str:
            item = None  # a damaged record may hold anything there
        timestamp = record.get("timestamp")
        if type(timestamp) is not str:
            timestamp = None
        if kind == "response_item" and (item in _RESPONSE_KINDS or (item == "message" and payload.get("role") == "assistant")):
            self.items.append((payload, timestamp))
            return
        if self.items:
            self.flush()
        original = payload.get("id")
        if type(original) is not str:
            original = None
        log = self.log
        if kind == "event_msg":
            if item == "token_count":
                self._usage(payload)
            log.keep_hidden(f"event_msg:{item}", record, known=True, timestamp=timestamp, original_id=original)
        elif kind == "response_item":
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
        if not self.items:
            return
        items, self.items = self.items, []
        texts, reasoning, calls = [], [], []
        for payload, _ in items:
            item = payload.get("type")
            if item == "message":
                texts.append(text_of(payload.get("content")))
            elif item == "reasoning":
                parts = [*_list(payload.get("summary")), *_list(payload.get("content"))]
                reasoning.append(text_of(parts))
            elif item == "function_call":
                calls.append(ToolCall(str(payload.get("call_id")), str(payload.get("name")), payload.get("arguments") or "{}"))
            elif item == "custom_tool_call":
                calls.append(ToolCall(str(payload.get("call_id")), str(payload.get("name")), {"input": payload.get("input")}))
            elif item == "local_shell_call":
                action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
                call_id = payload.get("call_id") or payload.get("id")
                calls.append(ToolCall(str(call_id), "local_shell", {"command": action.get("command")}))
        first, timestamp = items[0]
        original = first.get("id") if isinstance(first.get("id"), str) else None
        events = self.log.response(
            text="\n".join(t for t in texts if t),
            calls=calls,
            response_id=original,
            reasoning="\n".join(r for r in reasoning if r) or None,
            timestamp=timestamp,
            original_id=original,
        )
        self.last_response = events[0]

    def _usage(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        event = self.last_response
        if not isinstance(last, dict) or event is None or event.llm_metrics is not None:
            return
        usage = {
            "prompt_tokens": _int(last.get("input_tokens")),
            "completion_tokens": _int(last.get("output_tokens")),
            "cache_read_tokens": _int(last.get("cached_input_tokens")),
            "cache_write_tokens": 0,
        }
        response_id = event.response_id or (event.original_id or f"codex:{event.id}")
        event.llm_metrics = {"token_usages": [{"model": self.log.model or "", **usage, "response_id": response_id}]}
        self.last_response = None


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


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
