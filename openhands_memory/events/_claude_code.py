"""Read a Claude Code session log (`~/.claude/projects/<project>/<session id>.jsonl`) as events.

Each line is a record `{type, uuid, parentUuid, isSidechain, sessionId, timestamp, message, ...}`;
`message` is an Anthropic message whose `content` is a string or blocks (`text`, `thinking`,
`redacted_thinking`, `tool_use`, `tool_result`, `image`). What each record becomes (built by
`_foreign.ImportedLog`):

| record | events |
|---|---|
| `assistant` (consecutive records with one `message.id` are one response: Claude Code writes a block a record) | one action per `tool_use` (`Bash` -> `CmdRunAction`, others -> `MCPAction`), all sharing one model response with the text and the thinking; else an agent `MessageAction`; `message.usage` (input, cache creation, cache read, output tokens) -> the recorded usage, `message.model` -> `model` |
| `user` with `tool_result` blocks | the observation of the `tool_use` with that id |
| `user` with text (a string, or `text` blocks) | a user `MessageAction` |
| `system` `compact_boundary`, then the `user` record with `isCompactSummary` | a `CondensationAction` forgetting everything before it, with the summary shown first (`replay --recorded` replays Claude Code's own compactions) |
| `summary` (a session title), `file-history-snapshot`, other `system` records | hidden (kept, never shown) |
| a `Task` (or `Agent`) tool call and its result | an `AgentDelegateAction` (`agent` = `subagent_type`, `inputs` = the call's input) and an `AgentDelegateObservation` (`find_delegations` lists them) |
| `isSidechain` records (a sub-agent's conversation in the same file) | hidden, tagged with the `delegation_id` of the `Task` call open then: the main agent saw only that call's result |
| any other `type` | hidden, and counted as a kind not known |

**The branch.** `parentUuid` makes the records a tree: a rewind (editing an earlier prompt) starts a
new branch from an earlier record. The session is replayed along the branch it ended on: from the
last record of the main conversation back through each parent (`logicalParentUuid` across a
compaction boundary) to the root; records of other branches are left out, and the warning says how
many. A record whose parent is null or not in the file, other than the first, is read as following
the record before it in the file (Claude Code's older logs, and hand-written ones, leave it null).

**Sub-agents' files.** Claude Code 2.x writes each sub-agent's conversation beside the session, in
`<session id>/subagents/agent-<agent id>.jsonl` (`_claude_code_subagents`). Reading the session reads
them too: each goes, as in-file sidechains do, into the delegation of the `Task` call it ran for (the
call whose result names its `agentId` in `toolUseResult`, else whose `prompt` is its first message),
its records hidden and tagged with the delegation, just before that call's result;
`events_in_scope(events, Scope.of_delegation(id))` lists them. A file no call names is kept hidden at
the end, and the warning says so. Read on its own, a sub-agent's file (every record a sidechain) is
its own conversation.

Not read: `toolUseResult` (Claude Code's structured copy of a tool result; the `tool_result` block,
what the model saw, is read; its `agentId` only names a sub-agent's file); images (shown as `[image]`).
"""

from __future__ import annotations

import os
from typing import Any

from openhands_memory.events._claude_code_subagents import SubagentFiles
from openhands_memory.events._foreign import ImportedLog, ToolCall, text_of
from openhands_memory.events.actions import AgentDelegateAction
from openhands_memory.events.base import Event

__all__ = ["import_claude_code", "is_claude_code_record"]

_CONVERSATION = frozenset({"user", "assistant", "system"})
DELEGATE_TOOLS = frozenset({"Task", "Agent"})
"""Claude Code's tools that run a sub-agent (`Task`; `Agent` in later versions)."""
_KNOWN_HIDDEN = frozenset({"summary", "file-history-snapshot"})


def is_claude_code_record(record: Any) -> bool:
    """A Claude Code session record: a conversation record with a `uuid`, or a `summary` with a `leafUuid`."""
    if not isinstance(record, dict):
        return False
    kind = _text(record.get("type"))
    if kind in _CONVERSATION:
        return isinstance(record.get("uuid"), str) and ("sessionId" in record or "parentUuid" in record)
    return kind in _KNOWN_HIDDEN and ("leafUuid" in record or "messageId" in record)


def import_claude_code(records: list[Any], lines: list[int] | None, *, path: str | os.PathLike[str] | None) -> list[Event]:
    """The events of a Claude Code session log's records (see the module docstring).

    A record that is not a JSON object (a string, a number, a list) is kept hidden and counted as
    a kind not known; a line that is not JSON was refused before (`MalformedEventError` with the
    file and line, by the JSONL reader).
    """
    log = ImportedLog("claude-code", path, delegate_tools=DELEGATE_TOOLS)
    if not any(_is_main(record) for record in records) and any(_is_main(record, sidechain=True) for record in records):
        # A sub-agent's own file (`subagents/agent-*.jsonl`): every record is a sidechain, read as its conversation.
        records = [{**record, "isSidechain": False} if isinstance(record, dict) else record for record in records]
        log.notes.append("a sub-agent's log (every record a sidechain): read as its own conversation")
        subagents = SubagentFiles(None)
    else:
        subagents = SubagentFiles(path)
    off_branch = _off_branch(records, log)
    _Reader(log, off_branch, subagents).read(records)
    return log.finish()


def _is_main(record: Any, *, sidechain: bool = False) -> bool:
    """A record of the main conversation (with `sidechain`, of a sub-agent's too)."""
    return (
        isinstance(record, dict)
        and _text(record.get("type")) in _CONVERSATION
        and isinstance(record.get("uuid"), str)
        and (sidechain or not record.get("isSidechain"))
    )


def _off_branch(records: list[Any], log: ImportedLog) -> set[int]:
    """The positions of the main conversation's records not on the branch the session ended on."""
    main: list[int] = []
    uuids: list[str] = []
    chain = True  # so far each record's parent is the record before it (or, across a compaction, its logical parent)
    before: str | None = None
    for index, record in enumerate(records):
        if type(record) is not dict or record.get("isSidechain"):
            continue
        kind = record.get("type")
        uuid = record.get("uuid")
        if type(kind) is not str or kind not in _CONVERSATION or type(uuid) is not str:
            continue
        if chain and main:
            parent = record.get("parentUuid")
            chain = parent == before or (parent is None and record.get("logicalParentUuid") == before)
        main.append(index)
        uuids.append(uuid)
        before = uuid
    if not main:
        return set()
    if chain and main and records[main[0]].get("parentUuid") is None and len(set(uuids)) == len(uuids):
        return set()  # one branch, every record on it (what the walk below finds, at a tenth of its cost)
    by_uuid = dict(zip(uuids, main))
    previous = {index: before for before, index in zip(main, main[1:])}
    on: set[int] = set()
    guessed = 0
    at: int | None = main[-1]
    while at is not None and at not in on:
        on.add(at)
        record = records[at]
        parent = by_uuid.get(_text(record.get("parentUuid")))
        if parent is None:
            parent = by_uuid.get(_text(record.get("logicalParentUuid")))
        if parent is None or parent >= at:
            parent = previous.get(at)
            if parent is not None:
                guessed += 1
        at = parent
    left = len(main) - len(on)
    if left:
        leaf = records[main[-1]]["uuid"]
        log.notes.append(
            f"the session has branches (a rewind starts one): replayed the branch it ended on (to {leaf}); "
            f"{left} record(s) of other branches left out"
        )
    if guessed:
        log.notes.append(f"{guessed} record(s) without a parent in the file read as following the record before them")
    return set(main) - on if left else set()


class _Reader:
    def __init__(self, log: ImportedLog, off_branch: set[int], subagents: SubagentFiles) -> None:
        self.log = log
        self.off_branch = off_branch
        self.subagents = subagents
        """The sub-agents' files beside the session, merged into their delegations."""
        self.merged = 0
        self.response: list[dict[str, Any]] = []
        """The records of the assistant response being read (one `message.id`)."""
        self.response_key: Any = None
        """That response's `message.id` (`_message_id`)."""
        self.boundary: dict[str, Any] | None = None
        """A `compact_boundary` whose summary has not come yet."""

    def read(self, records: list[Any]) -> None:
        # This loop runs once a record of sessions of hundreds of thousands: the common kinds come first.
        log = self.log
        off_branch = self.off_branch
        for index, record in enumerate(records):
            if type(record) is not dict:
                self._flush_response()
                log.keep_hidden(f"{type(record).__name__} record (not an object)", record, known=False)
                continue
            if off_branch and index in off_branch:
                continue
            kind = record.get("type")
            sidechain = record.get("isSidechain")
            if kind == "assistant" and not sidechain:
                message = record.get("message")
                if type(message) is dict:
                    key = message.get("id")
                    if key is None:
                        key = record.get("uuid")
                    if self.response and self.response_key != key:
                        self._flush_response()
                    self.response.append(record)
                    self.response_key = key
                    continue
            if self.response:
                self._flush_response()
            if type(kind) is not str:
                kind = None  # a damaged record may hold anything there
            timestamp, uuid = record.get("timestamp"), record.get("uuid")
            timestamp = timestamp if type(timestamp) is str else None
            uuid = uuid if type(uuid) is str else None
            if sidechain:
                # The sub-agent's conversation: the main agent saw only its call's result. Tagged with the
                # delegation open at that point (the `Task` call it runs for), as parallel delegates' events are.
                delegation = log.open_delegation()
                tag = {"delegation_id": delegation} if delegation is not None else {}
                log.keep_hidden("sidechain", record, known=True, **tag, timestamp=timestamp, original_id=uuid)
            elif kind == "user":
                self._user(record, timestamp, uuid)
            elif kind == "system" and record.get("subtype") == "compact_boundary":
                self._flush_boundary()
                self.boundary = record
            elif kind == "system":
                log.keep_hidden(f"system:{record.get('subtype') or 'message'}", record, known=True, timestamp=timestamp, original_id=uuid)
            elif kind in _KNOWN_HIDDEN:
                log.keep_hidden(str(kind), record, known=True, timestamp=timestamp, original_id=uuid)
            else:
                name = kind if kind is not None else "record without a 'type'"
                log.keep_hidden(name, record, known=False, timestamp=timestamp, original_id=uuid)
        self._flush_response()
        self._flush_boundary()
        self._end_subagents()

    def _merge_subagent(self, record: dict[str, Any], call_id: str) -> None:
        """Before the result of a delegate's call, the sub-agent's own file (if one is beside the session): its
        records hidden, as sidechains are, and tagged with the delegation (`delegation_id`, see `events.scopes`)."""
        action = self.log.calls.get(call_id)
        if not isinstance(action, AgentDelegateAction):
            return
        result = record.get("toolUseResult")
        prompt = action.inputs.get("prompt")
        file = self.subagents.take(result.get("agentId") if isinstance(result, dict) else None, prompt if isinstance(prompt, str) else None)
        if file is None:
            return
        self.merged += 1
        for inner in file.records:
            self._keep_sidechain(inner, {"delegation_id": action.id})

    def _end_subagents(self) -> None:
        log = self.log
        if self.merged:
            log.notes.append(f"{self.merged} sub-agent log(s) beside the session (subagents/agent-*.jsonl) read into their Task calls' delegations")
        left = self.subagents.files
        if left:
            names = ", ".join(file.path.name for file in left)
            log.notes.append(f"{len(left)} sub-agent log(s) beside the session that no Task call names ({names}): kept hidden at the end")
            for file in left:
                for inner in file.records:
                    self._keep_sidechain(inner, {})
            left.clear()

    def _keep_sidechain(self, record: Any, tag: dict[str, Any]) -> None:
        if not isinstance(record, dict):
            self.log.keep_hidden(f"{type(record).__name__} record (not an object)", record, known=False, **tag)
            return
        timestamp, uuid = record.get("timestamp"), record.get("uuid")
        self.log.keep_hidden(
            "sidechain",
            record,
            known=True,
            **tag,
            timestamp=timestamp if type(timestamp) is str else None,
            original_id=uuid if type(uuid) is str else None,
        )

    def _flush_boundary(self) -> None:
        if self.boundary is not None:
            boundary, self.boundary = self.boundary, None
            self.log.condensation(None, compact_metadata=boundary.get("compactMetadata"), **_envelope(boundary))

    def _user(self, record: dict[str, Any], timestamp: str | None, uuid: str | None) -> None:
        log = self.log
        message = record.get("message")
        content = message.get("content") if type(message) is dict else None
        if content is None:
            self._flush_boundary()
            log.keep_hidden("user record without message content", record, known=False, timestamp=timestamp, original_id=uuid)
            return
        if record.get("isCompactSummary"):
            boundary, self.boundary = self.boundary, None
            extra: dict[str, Any] = {"summary_record": record.get("uuid")}
            if boundary is not None:
                extra["compact_metadata"] = boundary.get("compactMetadata")
            log.condensation(text_of(content), **extra, **_envelope(boundary or record))
            return
        if self.boundary is not None:
            self._flush_boundary()
        if type(content) is str:
            log.user(content, timestamp=timestamp, original_id=uuid)
            return
        texts = []
        for block in content if type(content) is list else [content]:
            if type(block) is dict and block.get("type") == "tool_result":
                if self.subagents.files:
                    self._merge_subagent(record, str(block.get("tool_use_id")))
                log.result(
                    str(block.get("tool_use_id")),
                    text_of(block.get("content")),
                    is_error=bool(block.get("is_error")),
                    timestamp=timestamp,
                    original_id=uuid,
                )
            else:
                texts.append(block)
        if texts:
            log.user(text_of(texts), timestamp=timestamp, original_id=uuid)

    def _flush_response(self) -> None:
        if not self.response:
            return
        records, self.response = self.response, []
        self.response_key = None
        texts: list[str] = []
        thinking: list[str] = []
        thinking_blocks: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        others: list[Any] = []
        for record in records:
            content = record["message"].get("content")
            for block in [content] if isinstance(content, str) else content if isinstance(content, list) else []:
                kind = block.get("type") if isinstance(block, dict) else None
                if isinstance(block, str):
                    texts.append(block)
                elif kind == "text":
                    texts.append(str(block.get("text", "")))
                elif kind == "thinking":
                    thinking.append(str(block.get("thinking", "")))
                    thinking_blocks.append(block)
                elif kind == "redacted_thinking":
                    thinking_blocks.append(block)
                elif kind == "tool_use":
                    calls.append(ToolCall(str(block.get("id")), str(block.get("name")), block.get("input") or {}))
                else:
                    others.append(block)
                    self.log.unknown[f"assistant content block {kind}"] += 1
        last = records[-1]["message"]
        usage = last.get("usage") if isinstance(last.get("usage"), dict) else None
        if last.get("model") == "<synthetic>":
            usage = None  # Claude Code's own message (an API error, an interruption): no request was made
        extra: dict[str, Any] = {"other_blocks": others} if others else {}
        if len(records) > 1:
            extra["record_uuids"] = [record.get("uuid") for record in records]
        self.log.response(
            text="\n".join(texts),
            calls=calls,
            response_id=_message_id(records[-1]),
            model=last.get("model") if isinstance(last.get("model"), str) else None,
            reasoning="\n".join(thinking) or None,
            thinking_blocks=thinking_blocks or None,
            usage=_usage(usage) if usage else None,
            **extra,
            **_envelope(records[0]),
        )


def _message_id(record: dict[str, Any]) -> Any:
    message = record.get("message")
    return message.get("id") if isinstance(message, dict) and message.get("id") is not None else record.get("uuid")


def _usage(usage: dict[str, Any]) -> dict[str, int]:
    """Anthropic's usage in OpenHands' names; the prompt counts every input token (cached, written or neither)."""
    read = _int(usage.get("cache_read_input_tokens"))
    written = _int(usage.get("cache_creation_input_tokens"))
    return {
        "prompt_tokens": _int(usage.get("input_tokens")) + read + written,
        "completion_tokens": _int(usage.get("output_tokens")),
        "cache_read_tokens": read,
        "cache_write_tokens": written,
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _envelope(record: dict[str, Any] | None) -> dict[str, Any]:
    if record is None:
        return {}
    timestamp = record.get("timestamp")
    uuid = record.get("uuid")
    return {"timestamp": timestamp if isinstance(timestamp, str) else None, "original_id": uuid if isinstance(uuid, str) else None}
