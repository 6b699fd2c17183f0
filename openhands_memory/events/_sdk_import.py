"""Import an OpenHands SDK (V1) log into V0 events, so that one view and one condenser serve both.

An SDK event names its class in `kind` and has a UUID `id`. `import_sdk_events` gives the events
ids 0, 1, 2, ... in file order and keeps each UUID in `original_id`; timestamps and sources are
kept. What each kind becomes:

| SDK event | V0 event |
|---|---|
| `SystemPromptEvent` | `SystemMessageAction` (prompt text, plus `dynamic_context` after a blank line; tools as OpenAI function JSON: today's SDK writes no parameter schema, so name and description) |
| `MessageEvent` | `MessageAction` (text blocks and `extended_content` joined by newlines; image URLs) |
| `ActionEvent` | the matching action, below, with `thought` = the event's thought text and a `ToolCallMetadata` |
| `ObservationEvent` | the matching observation, below; `content` = the text the tool returned |
| `AgentErrorEvent` | `ErrorObservation` (its `error`), the answer to the action with its `tool_call_id` |
| `UserRejectObservation` | `UserRejectObservation`, content `Action rejected: <reason>` as the SDK shows it |
| `Condensation` | `CondensationAction(forgotten_event_ids=[...], summary, summary_offset, summary_persists=True)` |
| `CondensationRequest` | `CondensationRequestAction` |
| `CondensationSummaryEvent` (if stored) | `AgentCondensationObservation` |
| anything else (`ConversationStateUpdateEvent`, `PauseEvent`, `TokenEvent`, ...) | `UnknownObservation(observation=<kind>, hidden=True)`, fields kept in `extras` |

Actions, by `action.kind`: `ExecuteBashAction` / `TerminalAction` -> `CmdRunAction` (its `timeout`
becomes the event's); editor (`StrReplaceEditorAction`, `FileEditorAction`,
`PlanningFileEditorAction`) `view` -> `FileReadAction`, other commands -> `FileEditAction`
(`impl_source="oh_aci"`); `ThinkAction` -> `AgentThinkAction` (thought text, newline, the tool's
thought, as V0 combines them); `FinishAction` -> `AgentFinishAction(final_thought=message)`, with
`result_recorded=True` when its `FinishObservation` is in the file (the chat then shows the finish
call and that result, as the SDK does, instead of V0's call-less finish);
`TaskTrackerAction` -> `TaskTrackingAction`; `MCPToolAction` -> `MCPAction(name=tool_name,
arguments=data)`; `BrowserNavigateAction` -> `BrowseURLAction`, other `Browser*Action` ->
`BrowseInteractiveAction` (`browser_actions` = `tool_name(json arguments)`); this library's own
SDK memory tools (`openhands_memory.integrations.openhands_sdk`): `SearchHistoryAction` ->
`SearchHistoryAction`, `ContextReloadAction` -> `ContextReloadAction` when its `event_id` is a number
(a UUID or a value of the wrong type is kept as written, like an unlisted kind); any other kind ->
`UnknownAction(action=<kind>)` with the SDK action's fields as its args; an event whose `action`
is null (a tool call the SDK could not parse) -> `UnknownAction(action="NonExecutableAction")`.
`security_risk` LOW/MEDIUM/HIGH/UNKNOWN becomes 0/1/2/-1 where the V0 class has the field.

Every action gets `ToolCallMetadata(function_name=tool_name, tool_call_id, model_response,
total_calls_in_response)`. `model_response` is a minimal litellm-style completion,
`{"id": llm_response_id, "choices": [{"message": {"role": "assistant", "content": <thought of the
batch's first action, or None>, "tool_calls": [...]}}]}`, whose `tool_calls` are every call of that
response (the actions sharing its `llm_response_id`, in file order); parallel calls share one dict.
`reasoning_content` and `thinking_blocks` (as the SDK recorded them on the batch's first action) are
added to the message when the SDK recorded them.

Observations, by `observation.kind`: bash/terminal -> `CmdOutputObservation` (`metadata` kept, with
`exit_code` and `working_dir`); editor -> `FileReadObservation` for `view`, `FileEditObservation`
otherwise, `ErrorObservation` when the editor reported an error; `ThinkObservation` ->
`AgentThinkObservation`; `TaskTrackerObservation` -> `TaskTrackingObservation`; `MCPToolObservation`
-> `MCPObservation`; `BrowserObservation` -> `BrowserOutputObservation`; the memory tools'
`SearchHistoryObservation` / `ContextReloadObservation` -> theirs (copies of other events, which the
search index leaves out); any other kind (the SDK's
`FinishObservation`, say) -> `UnknownObservation(observation=<kind>)` with the text as `content`.
An observation's `cause` is the int id of the action whose UUID is its `action_id`, and it carries
a copy of that action's `tool_call_metadata`; when the action is not in the file (a trimmed log),
`cause` is None and the metadata is built from the observation's own `tool_name` and
`tool_call_id`. Such an orphan result is kept: the SDK's view drops it (tool-call matching), and
so must whatever renders our view for a model.

Condensations follow the SDK: each is applied, in order, to the view at that moment; it removes
the forgotten events and inserts its summary at `summary_offset`, and the summary stays until a
later condensation forgets it. `summary_persists=True` says exactly that to `View` (it is written at
the top level of the event's JSON, where OpenHands V0 ignores it, so an imported log written back
still loads in OpenHands), and forgetting a summary is written as forgetting the id of the
condensation that made it. Forgotten UUIDs map to
int ids; a `"<uuid>-summary"` id (today's SDK) maps to the condensation `<uuid>`. Earlier SDK
versions gave each summary a random id that is never written to the log, so a later condensation
forgets a UUID found nowhere in the file: such an id is matched to the standing summary at its place
in the view (forgotten ids are listed in view order, so it sits between its known neighbours), the
way the SDK that recorded the log saw it. Other UUIDs that are not in the file, or that name an
event at or after the condensation (the SDK view cannot hold it yet), are dropped. A summary
without an offset (or an offset without a summary) is never shown by the SDK and is dropped.

Events no model sees in the SDK (state updates, pauses, token logs, ...) become hidden
`UnknownObservation`s: kept in the log, left out by `agent_history`. Build views from
`agent_history(events)`, as OpenHands' controller does: summary offsets count only the events a
model sees, so a hidden event left in the view would shift every summary after it.

What is not carried over: SDK fields with no V0 place (`critic_result`, `summary` of an action,
`activated_microagents`, the observation's `full_output_save_dir`, images in tool
results, `reset` of a terminal action, ...). The import is for replaying and condensing, not for
writing SDK logs back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._brief import brief, describe_validation_error, event_id_of
from openhands_memory.events.actions import (
    AgentFinishAction,
    AgentThinkAction,
    BrowseInteractiveAction,
    BrowseURLAction,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    CompactContextAction,
    ContextNotesAction,
    ContextReloadAction,
    FileEditAction,
    FileReadAction,
    MCPAction,
    MessageAction,
    NewContextAction,
    SearchHistoryAction,
    SystemMessageAction,
    TaskTrackingAction,
    UnknownAction,
)
from openhands_memory.events.base import Action, Event, EventSource, Observation, ToolCallMetadata
from openhands_memory.events.observations import (
    AgentCondensationObservation,
    AgentThinkObservation,
    BrowserOutputObservation,
    CmdOutputObservation,
    ContextNotesObservation,
    ContextReloadObservation,
    ErrorObservation,
    FileEditObservation,
    FileReadObservation,
    MCPObservation,
    SearchHistoryObservation,
    SuccessObservation,
    TaskTrackingObservation,
    UnknownObservation,
    UserRejectObservation,
)

__all__ = ["import_sdk_events", "is_sdk_event", "is_sdk_log"]

_SECURITY_RISK = {"UNKNOWN": -1, "LOW": 0, "MEDIUM": 1, "HIGH": 2}
"""The SDK's `SecurityRisk` names -> V0's `ActionSecurityRisk` values."""

_SOURCES = frozenset(source.value for source in EventSource)

# Keys every SDK event has; the rest of an unknown event goes into `extras`.
_ENVELOPE = ("kind", "id", "timestamp", "source")

_SUMMARY_SUFFIX = "-summary"

_TOOL_RESULTS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})
"""SDK kinds that answer a tool call (by its `tool_call_id`)."""


def is_sdk_event(record: Any) -> bool:
    """True for an OpenHands SDK (V1) event dict: it names its class in `kind`.

    An SDK `ActionEvent` / `ObservationEvent` has an `action` / `observation` too, but an object
    (or null) there; in a V0 event that key holds the kind's name, a string, and there is no `kind`.
    """
    return (
        isinstance(record, dict)
        and "kind" in record
        and not isinstance(record.get("action"), str)
        and not isinstance(record.get("observation"), str)
    )


def is_sdk_log(records: list[Any]) -> bool:
    """True when most events of a log are SDK (V1) events, rather than V0 ones (`action` / `observation` kinds).

    Every record counts, not just the first: a slice of an SDK log may start anywhere, and one damaged
    record should be reported as what it is, in a log of the other generation.
    """
    sdk = v0 = 0
    for record in records:
        if is_sdk_event(record):
            sdk += 1
        elif isinstance(record, dict) and ("action" in record or "observation" in record):
            v0 += 1
    return sdk > v0


def import_sdk_events(records: list[Any], *, path: str | os.PathLike[str] | None = None) -> list[Event]:
    """V0 events for the events of one OpenHands SDK log, in order (see the module docstring).

    Raises:
        MalformedEventError: a record is not an SDK event, repeats an id, or lacks a field its kind
            needs; the error names `path` and the position of the record (`event #i`) and its id.
    """
    return _Importer(records, path).run()


class _Importer:
    """One pass to index the log (ids, batches), one to convert it."""

    def __init__(self, records: list[Any], path: str | os.PathLike[str] | None) -> None:
        self.records = records
        self.path = path
        self.index_of: dict[str, int] = {}
        """SDK UUID -> position in the file (= our int id)."""
        self.batches: dict[str, list[int]] = {}
        """`llm_response_id` -> positions of its ActionEvents, in file order."""
        self.responses: dict[str, dict[str, Any]] = {}
        """`llm_response_id` -> the model_response dict its actions share (built on first use)."""
        self.answered_calls: set[str] = set()
        """The `tool_call_id`s some tool result (observation, error, rejection) answers."""
        self.events: list[Event] = []
        self.view: list[tuple[str, int]] = []
        """The SDK's view so far, to place forgotten summaries: ("event", position) or ("summary", condensation position)."""

    def fail(self, index: int, reason: str) -> MalformedEventError:
        event_id = event_id_of(self.records[index])
        return MalformedEventError(f"OpenHands SDK event: {reason}", path=self.path, index=index, event_id=event_id)

    def _required_str(self, index: int, record: dict[str, Any], key: str) -> str:
        value = record.get(key)
        if not isinstance(value, str):
            raise self.fail(index, f"{record.get('kind')}: {key!r} must be a string, got {brief(value)}")
        return value

    def _optional_str(self, index: int, record: dict[str, Any], key: str) -> str | None:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(index, f"{record.get('kind')}: {key!r} must be a string, got {brief(value)}")
        return value

    def _text_of(self, index: int, record: dict[str, Any], key: str) -> str:
        """The text of a field that holds one text block (or a bare string)."""
        value = record.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return value["text"]
        raise self.fail(index, f"{record.get('kind')}: {key!r} must be a text block, got {brief(value)}")

    def run(self) -> list[Event]:
        for index, record in enumerate(self.records):
            self._index(index, record)
        for index, record in enumerate(self.records):
            try:
                event = self._convert(index, record)
            except ValidationError as exc:  # a field of the right type but an unusable value
                raise self.fail(index, f"{record['kind']}: {describe_validation_error(exc)}") from exc
            except orjson.JSONEncodeError as exc:  # tool-call arguments nested deeper than orjson writes
                raise self.fail(index, f"{record['kind']}: cannot be written as JSON: {exc}") from exc
            event.id = index
            event.original_id = record["id"]
            event.timestamp = self._optional_str(index, record, "timestamp")
            event.source = self._source(index, record, event)
            self.events.append(event)
            if not event.hidden and not isinstance(event, (CondensationAction, CondensationRequestAction)):
                self.view.append(("event", index))
        return self.events

    # -- pass 1 ---------------------------------------------------------------------------------

    def _index(self, index: int, record: Any) -> None:
        if not isinstance(record, dict):
            raise MalformedEventError(
                f"expected a JSON object, got {type(record).__name__}", path=self.path, index=index
            )
        kind = record.get("kind")
        if not isinstance(kind, str):
            if "action" in record or "observation" in record:
                raise self.fail(index, "a V0 event in an SDK log; a log must be all V0 or all SDK events")
            raise self.fail(index, f"'kind' must be a string, got {brief(kind)}")
        uuid = record.get("id")
        if not isinstance(uuid, str) or not uuid:
            raise self.fail(index, f"{kind}: 'id' must be a non-empty string, got {brief(uuid)}")
        if uuid in self.index_of:
            raise self.fail(index, f"{kind}: id {uuid!r} already used by event #{self.index_of[uuid]}")
        self.index_of[uuid] = index
        if kind == "ActionEvent":
            response_id = self._required_str(index, record, "llm_response_id")
            self.batches.setdefault(response_id, []).append(index)
        elif kind in _TOOL_RESULTS and isinstance(record.get("tool_call_id"), str):
            self.answered_calls.add(record["tool_call_id"])

    # -- pass 2 ---------------------------------------------------------------------------------

    def _source(self, index: int, record: dict[str, Any], event: Event) -> EventSource | None:
        source = record.get("source")
        if source is None:
            return event.source
        if not isinstance(source, str) or source not in _SOURCES:
            raise self.fail(
                index, f"{record['kind']}: unknown source {brief(source)} (expected one of {sorted(_SOURCES)})"
            )
        return EventSource(source)

    def _convert(self, index: int, record: dict[str, Any]) -> Event:
        kind = record["kind"]
        match kind:
            case "SystemPromptEvent":
                return self._system_prompt(index, record)
            case "MessageEvent":
                return self._message(index, record)
            case "ActionEvent":
                return self._action(index, record)
            case "ObservationEvent":
                return self._observation(index, record)
            case "AgentErrorEvent":
                error = self._required_str(index, record, "error")
                cause, metadata = self._answered_action(index, record, action_id=None)
                return ErrorObservation(content=error, cause=cause, tool_call_metadata=metadata)
            case "UserRejectObservation":
                reason = record.get("rejection_reason") or "User rejected the action"
                cause, metadata = self._answered_action(index, record, action_id=self._required_str(index, record, "action_id"))
                return UserRejectObservation(content=f"Action rejected: {reason}", cause=cause, tool_call_metadata=metadata)
            case "Condensation":
                return self._condensation(index, record)
            case "CondensationRequest":
                return CondensationRequestAction()
            case "CondensationSummaryEvent":
                return AgentCondensationObservation(content=self._required_str(index, record, "summary"))
            case _:
                return _hidden_unknown(kind, record)

    def _system_prompt(self, index: int, record: dict[str, Any]) -> SystemMessageAction:
        prompt = self._text_of(index, record, "system_prompt")
        context = record.get("dynamic_context")
        if context is not None:
            prompt = f"{prompt}\n\n{self._text_of(index, record, 'dynamic_context')}"
        tools = record.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise self.fail(index, f"SystemPromptEvent: 'tools' must be a list, got {type(tools).__name__}")
        return SystemMessageAction(content=prompt, tools=[_tool_json(t) for t in tools] if tools is not None else None)

    def _message(self, index: int, record: dict[str, Any]) -> MessageAction:
        message = record.get("llm_message")
        if not isinstance(message, dict):
            raise self.fail(index, "MessageEvent: 'llm_message' must be an object")
        blocks = message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if not isinstance(blocks, list):
            raise self.fail(index, "MessageEvent: 'llm_message.content' must be a list of content blocks")
        extended = record.get("extended_content") or []
        if not isinstance(extended, list):
            raise self.fail(index, "MessageEvent: 'extended_content' must be a list")
        texts = _texts(blocks) + _texts(extended)
        images = [url for block in blocks if isinstance(block, dict) for url in block.get("image_urls") or ()]
        return MessageAction(content="\n".join(texts), image_urls=images or None)

    # -- actions ----------------------------------------------------------------------------------

    def _action(self, index: int, record: dict[str, Any]) -> Action:
        tool_name = self._required_str(index, record, "tool_name")
        tool_call_id = self._required_str(index, record, "tool_call_id")
        action = record.get("action")
        if action is not None and not isinstance(action, dict):
            raise self.fail(index, f"ActionEvent: 'action' must be an object or null, got {type(action).__name__}")
        thought = self._thought(index, record)
        event = _v0_action(action, tool_name, thought, record)
        event.tool_call_metadata = ToolCallMetadata(
            function_name=tool_name,
            tool_call_id=tool_call_id,
            model_response=self._model_response(record["llm_response_id"]),
            total_calls_in_response=len(self.batches[record["llm_response_id"]]),
        )
        if isinstance(event, AgentFinishAction) and tool_call_id in self.answered_calls:
            event.result_recorded = True  # the SDK shows the finish call with its FinishObservation
        return event

    def _thought(self, index: int, record: dict[str, Any]) -> str:
        thought = record.get("thought") or []
        if isinstance(thought, str):
            return thought
        if not isinstance(thought, list):
            raise self.fail(index, f"ActionEvent: 'thought' must be a list of text blocks, got {type(thought).__name__}")
        return "\n".join(_texts(thought))

    def _model_response(self, response_id: str) -> dict[str, Any]:
        response = self.responses.get(response_id)
        if response is not None:
            return response
        batch = [self.records[i] for i in self.batches[response_id]]
        # The SDK gives the response's text to the batch's first action only.
        content = self._thought(self.batches[response_id][0], batch[0]) or None
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "tool_calls": [_tool_call_json(r) for r in batch],
        }
        reasoning = batch[0].get("reasoning_content")
        if reasoning:
            message["reasoning_content"] = reasoning
        thinking = batch[0].get("thinking_blocks")
        if thinking:  # the SDK's tool-loop atomicity starts at such a response (`sdk_summarizing` reads it)
            message["thinking_blocks"] = thinking
        response = {"id": response_id, "choices": [{"index": 0, "message": message}]}
        self.responses[response_id] = response
        return response

    # -- observations -----------------------------------------------------------------------------

    def _answered_action(
        self, index: int, record: dict[str, Any], *, action_id: str | None
    ) -> tuple[int | None, ToolCallMetadata]:
        """The cause and tool-call metadata of a tool result: its action's, when the file has it."""
        kind = record["kind"]
        tool_call_id = self._required_str(index, record, "tool_call_id")
        tool_name = self._required_str(index, record, "tool_name")
        if action_id is None:  # AgentErrorEvent: found by its tool call id, the latest before it
            position = next(
                (
                    i
                    for i in range(index - 1, -1, -1)
                    if self.records[i]["kind"] == "ActionEvent" and self.records[i].get("tool_call_id") == tool_call_id
                ),
                None,
            )
        else:
            position = self.index_of.get(action_id)
        if position is None:
            return None, ToolCallMetadata(function_name=tool_name, tool_call_id=tool_call_id)
        action = self.events[position] if position < index else None
        if not isinstance(action, Action) or self.records[position]["kind"] != "ActionEvent":
            raise self.fail(
                index, f"{kind}: action_id {action_id!r} names event #{position}, which is not an earlier ActionEvent"
            )
        metadata = action.tool_call_metadata
        assert metadata is not None
        if metadata.tool_call_id != tool_call_id:
            raise self.fail(
                index,
                f"{kind}: tool_call_id {tool_call_id!r} does not match {metadata.tool_call_id!r} "
                f"of its action (event #{position})",
            )
        return position, metadata.model_copy()

    def _observation(self, index: int, record: dict[str, Any]) -> Observation:
        observation = record.get("observation")
        if not isinstance(observation, dict):
            raise self.fail(index, "ObservationEvent: 'observation' must be an object")
        obs_kind = observation.get("kind")
        if not isinstance(obs_kind, str):
            raise self.fail(index, f"ObservationEvent: 'observation.kind' must be a string, got {brief(obs_kind)}")
        cause, metadata = self._answered_action(index, record, action_id=self._required_str(index, record, "action_id"))
        action = self.events[cause] if cause is not None else None
        text = _observation_text(observation)
        event = _v0_observation(obs_kind, observation, text, record, action)
        event.cause = cause
        event.tool_call_metadata = metadata
        return event

    # -- condensation ------------------------------------------------------------------------------

    def _condensation(self, index: int, record: dict[str, Any]) -> CondensationAction:
        forgotten = record.get("forgotten_event_ids", [])
        if not isinstance(forgotten, list) or not all(isinstance(f, str) for f in forgotten):
            raise self.fail(index, "Condensation: 'forgotten_event_ids' must be a list of event ids")
        known: list[int | None] = []  # per forgotten UUID: its position, or None when not in the file
        for uuid in forgotten:
            position = self.index_of.get(uuid)
            if position is None and uuid.endswith(_SUMMARY_SUFFIX):
                made_by = self.index_of.get(uuid[: -len(_SUMMARY_SUFFIX)])
                if made_by is not None and self.records[made_by]["kind"] == "Condensation":
                    position = made_by
            # Not yet in the SDK's view when this condensation was applied: the SDK ignores it.
            known.append(position if position is None or position < index else -1)
        ids = self._match_unrecorded_summaries(known)
        summary = record.get("summary")
        offset = record.get("summary_offset")
        if summary is not None and not isinstance(summary, str):
            raise self.fail(index, f"Condensation: 'summary' must be a string or null, got {type(summary).__name__}")
        if offset is not None and (not isinstance(offset, int) or isinstance(offset, bool) or offset < 0):
            raise self.fail(index, f"Condensation: 'summary_offset' must be an integer >= 0 or null, got {brief(offset)}")
        if summary is None or offset is None:  # the SDK inserts no summary then
            summary = offset = None
        self._apply_to_view(index, set(ids), offset if summary is not None else None)
        return CondensationAction(forgotten_event_ids=ids, summary=summary, summary_offset=offset, summary_persists=True)

    def _match_unrecorded_summaries(self, known: list[int | None]) -> list[int]:
        """The int ids to forget: known positions, plus the condensation of each summary that an
        unrecorded UUID names, found between that UUID's known neighbours in the view."""
        where = {item: place for place, item in enumerate(self.view)}
        ids: list[int] = []
        claimed: set[int] = set()
        for slot, position in enumerate(known):
            if position is not None:
                if position >= 0 and position not in ids:
                    ids.append(position)
                continue
            before = next((p for p in reversed(known[:slot]) if p is not None and p >= 0), None)
            after = next((p for p in known[slot + 1 :] if p is not None and p >= 0), None)
            low = _place_of(where, before, default=-1)
            high = _place_of(where, after, default=len(self.view))
            for kind, made_by in self.view[low + 1 : high]:
                if kind == "summary" and made_by not in claimed:
                    claimed.add(made_by)
                    ids.append(made_by)
                    break
        return ids

    def _apply_to_view(self, index: int, forgotten: set[int], summary_offset: int | None) -> None:
        self.view = [item for item in self.view if item[1] not in forgotten]
        if summary_offset is not None:
            self.view.insert(summary_offset, ("summary", index))


# -- helpers --------------------------------------------------------------------------------------


def _place_of(where: dict[tuple[str, int], int], position: int | None, *, default: int) -> int:
    """Where in the view the event (or the condensation's summary) at `position` stands."""
    if position is None:
        return default
    place = where.get(("event", position))
    if place is None:
        place = where.get(("summary", position))
    return default if place is None else place


def _texts(blocks: list[Any]) -> list[str]:
    """The text of each text block (`{"type": "text", "text": ...}`), in order."""
    return [block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str)]


def _tool_json(tool: Any) -> dict[str, Any]:
    """A tool definition as OpenAI function JSON (kept as is when it already is, or cannot be).

    Today's SDK persists its own `ToolDefinition` (`kind`, `title` = the tool's name, `description`,
    `action_type` = a class name): that becomes name and description; its parameter schema is not
    in the log (the SDK builds it from the action class), so there are no `parameters`.
    """
    if isinstance(tool, dict) and "function" not in tool and "name" not in tool and isinstance(tool.get("kind"), str):
        if isinstance(tool.get("title"), str):
            return {"type": "function", "function": {"name": tool["title"], "description": tool.get("description", "")}}
    if not isinstance(tool, dict) or "function" in tool or not isinstance(tool.get("name"), str):
        return tool if isinstance(tool, dict) else {"value": tool}
    function: dict[str, Any] = {"name": tool["name"], "description": tool.get("description", "")}
    for key in ("parameters", "input_schema"):
        if isinstance(tool.get(key), dict):
            function["parameters"] = tool[key]
            break
    return {"type": "function", "function": function}


def _tool_call_json(record: Mapping[str, Any]) -> dict[str, Any]:
    """One litellm tool call (`{id, type, function: {name, arguments}}`) for an ActionEvent."""
    call = record.get("tool_call")
    name = record["tool_name"]
    arguments: Any = None
    if isinstance(call, dict):
        function = call.get("function")
        if isinstance(function, dict):  # litellm's own shape (early SDK logs)
            name = function.get("name", name)
            arguments = function.get("arguments")
        else:  # the SDK's MessageToolCall
            name = call.get("name", name)
            arguments = call.get("arguments")
    if not isinstance(arguments, str):
        action = record.get("action") or {}
        arguments = orjson.dumps({k: v for k, v in action.items() if k != "kind"}).decode()
    return {"id": record["tool_call_id"], "type": "function", "function": {"name": name, "arguments": arguments}}


def _risk(record: Mapping[str, Any]) -> int:
    risk = record.get("security_risk")
    return _SECURITY_RISK.get(risk, -1) if isinstance(risk, str) else -1


def _v0_action(action: dict[str, Any] | None, tool_name: str, thought: str, record: Mapping[str, Any]) -> Action:
    """The V0 action for the SDK action of one ActionEvent (metadata set by the caller)."""
    if action is None:
        return UnknownAction(action="NonExecutableAction", thought=thought)
    # A kind that is not a string (a number, a list, an object) is an unlisted kind, like any other.
    kind = action.get("kind")
    make = _ACTION_MAKERS.get(kind, _other_action) if isinstance(kind, str) else _other_action
    return make(action, tool_name, thought, _risk(record))


_ActionMaker = Callable[[dict[str, Any], str, str, int], Action]
"""Makes the V0 action for one SDK action: (the SDK action, its tool name, the event's thought, V0 security risk)."""


def _cmd_run(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`CmdRunAction` for a bash / terminal action; its `timeout` becomes the event's."""
    command = action.get("command")
    if not isinstance(command, str):
        return _other_action(action, tool_name, thought, risk)
    event = CmdRunAction(
        command=command, is_input=bool(action.get("is_input", False)), thought=thought, security_risk=risk
    )
    timeout = action.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        event.timeout = timeout
    return event


def _file_action(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`FileReadAction` for an editor's `view`, `FileEditAction` for its other commands."""
    path = action.get("path")
    if not isinstance(path, str):
        return _other_action(action, tool_name, thought, risk)
    if action.get("command") == "view":
        return FileReadAction(
            path=path, thought=thought, security_risk=risk, impl_source="oh_aci", view_range=action.get("view_range")
        )
    return FileEditAction(
        path=path,
        command=action.get("command") or "",
        file_text=action.get("file_text"),
        old_str=action.get("old_str"),
        new_str=action.get("new_str"),
        insert_line=action.get("insert_line"),
        thought=thought,
        security_risk=risk,
        impl_source="oh_aci",
    )


def _think(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`AgentThinkAction`: the event's thought, a newline, the tool's thought (as V0 combines them)."""
    think = action.get("thought") or ""
    return AgentThinkAction(thought=f"{thought}\n{think}" if thought and think else thought or think)


def _finish(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`AgentFinishAction` whose final thought is the finish message."""
    return AgentFinishAction(final_thought=action.get("message") or "", thought=thought)


def _task_tracking(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`TaskTrackingAction` with the tracker's command (default `view`) and task list."""
    return TaskTrackingAction(
        command=action.get("command") or "view", task_list=action.get("task_list") or [], thought=thought
    )


def _mcp(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`MCPAction` named after the tool, with the action's `data` as its arguments."""
    data = action.get("data")
    return MCPAction(name=tool_name, arguments=data if isinstance(data, dict) else {}, thought=thought, security_risk=risk)


def _browse_url(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`BrowseURLAction` for a navigation with a URL (without one it is any other browser action)."""
    url = action.get("url")
    if not isinstance(url, str):
        return _other_action(action, tool_name, thought, risk)
    return BrowseURLAction(url=url, thought=thought, security_risk=risk)


def _context_reload(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`ContextReloadAction` for this library's `context_reload` SDK tool, when it names an event by its number."""
    event_id = action.get("event_id")
    if not isinstance(event_id, int) or isinstance(event_id, bool) or not -(2**63) <= event_id < 2**63:
        return _other_action(action, tool_name, thought, risk)  # a UUID, or what the model wrote: kept as written
    page = {name: action.get(name) for name in ("offset", "limit")}
    if not all(value is None or _is_int64(value) for value in page.values()):
        return _other_action(action, tool_name, thought, risk)
    # No `thought` field, as when `History` records the call: the text is in the model response it carries.
    return ContextReloadAction(event_id=event_id, **page)


def _search_history(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`SearchHistoryAction` for this library's `search_history` SDK tool, when its query is text and its limit a number."""
    query, limit = action.get("query"), action.get("limit")
    if limit is None:
        limit = SearchHistoryAction.model_fields["limit"].default
    before = action.get("before_event_id")
    if not isinstance(query, str) or not _is_int64(limit) or not (before is None or _is_int64(before)):
        return _other_action(action, tool_name, thought, risk)  # a UUID cursor, or what the model wrote: kept as written
    return SearchHistoryAction(query=query, limit=limit, before_event_id=before)


def _is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _new_context(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`NewContextAction` for this library's `new_context` SDK tool, when its handoff is text."""
    handoff = action.get("handoff")
    if not isinstance(handoff, str):
        return _other_action(action, tool_name, thought, risk)
    return NewContextAction(handoff=handoff)


def _context_notes(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`ContextNotesAction` for this library's `context_notes` SDK tool, when its operation is one it knows and its text is text."""
    operation, text = action.get("operation"), action.get("text")
    if operation not in ("read", "write", "append") or not (text is None or isinstance(text, str)):
        return _other_action(action, tool_name, thought, risk)  # refused by the tool: kept as written, never notes
    return ContextNotesAction(operation=operation, text=text or "")


def _compact_context(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`CompactContextAction` for this library's `compact_context` SDK tool, when its focus is text (or left out)."""
    focus = action.get("focus")
    if not (focus is None or isinstance(focus, str)):
        return _other_action(action, tool_name, thought, risk)
    return CompactContextAction(focus=focus or "")


def _other_action(action: dict[str, Any], tool_name: str, thought: str, risk: int) -> Action:
    """`BrowseInteractiveAction` for a `Browser*Action`, else `UnknownAction` with the action's fields as args."""
    kind = action.get("kind")
    fields = {k: v for k, v in action.items() if k != "kind"}
    if isinstance(kind, str) and kind.startswith("Browser") and kind.endswith("Action"):
        code = f"{tool_name}({orjson.dumps(fields).decode()})"
        return BrowseInteractiveAction(browser_actions=code, thought=thought, security_risk=risk)
    if thought and "thought" not in fields:
        fields["thought"] = thought
    return UnknownAction(action=kind if isinstance(kind, str) else "UnknownSDKAction", **_as_extras(UnknownAction, fields))


_ACTION_MAKERS: dict[str, _ActionMaker] = {
    "ExecuteBashAction": _cmd_run,
    "TerminalAction": _cmd_run,
    "StrReplaceEditorAction": _file_action,
    "FileEditorAction": _file_action,
    "PlanningFileEditorAction": _file_action,
    "ThinkAction": _think,
    "FinishAction": _finish,
    "TaskTrackerAction": _task_tracking,
    "MCPToolAction": _mcp,
    "BrowserNavigateAction": _browse_url,
    "ContextReloadAction": _context_reload,
    "SearchHistoryAction": _search_history,
    "NewContextAction": _new_context,
    "ContextNotesAction": _context_notes,
    "CompactContextAction": _compact_context,
}
"""SDK `action.kind` -> its maker; any other kind is `_other_action`'s."""


def _observation_text(observation: Mapping[str, Any]) -> str:
    """What the tool returned, as text: `content` blocks (newer SDK) or `output` / `content` / `message`."""
    content = observation.get("content")
    if isinstance(content, list):
        return "\n".join(_texts(content))
    for key in ("output", "content", "message"):
        value = observation.get(key)
        if isinstance(value, str):
            return value
    return ""


def _v0_observation(
    kind: str, observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """The V0 observation for the SDK observation of one ObservationEvent (cause and metadata set by the caller)."""
    make = _OBSERVATION_MAKERS.get(kind)
    if make is None:
        return _other_observation(kind, observation, text)
    return make(observation, text, record, action)


_ObservationMaker = Callable[[dict[str, Any], str, Mapping[str, Any], Event | None], Observation]
"""Makes the V0 observation for one SDK observation: (the SDK observation, its text, its event, the action it answers)."""


def _error_message(observation: Mapping[str, Any]) -> str | None:
    """The observation's `error` when it is a non-empty string."""
    error = observation.get("error")
    return error if isinstance(error, str) and error else None


def _cmd_output(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`CmdOutputObservation`, its `metadata` kept with `exit_code`; the command is the action's if not recorded."""
    metadata = observation.get("metadata") or {}
    if isinstance(metadata, dict):  # anything else: the observation's validation names the field
        metadata = dict(metadata)
        if metadata.get("exit_code") is None and isinstance(observation.get("exit_code"), int):
            metadata["exit_code"] = observation["exit_code"]
    command = observation.get("command")
    if not isinstance(command, str):
        command = action.command if isinstance(action, CmdRunAction) else ""
    # Validated, not constructed: an imported output is kept as written (construction would cut a long one).
    return CmdOutputObservation.model_validate({"content": text, "command": command, "metadata": metadata})


def _file_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`ErrorObservation` when the editor failed, else `FileReadObservation` for `view`, else `FileEditObservation`."""
    path = observation.get("path")
    if not isinstance(path, str):
        path = getattr(action, "path", "") or ""
    error = _error_message(observation)
    if error is not None or observation.get("is_error") is True:
        return ErrorObservation(content=error or text)
    command = observation.get("command") or getattr(action, "command", None)
    if command == "view" or isinstance(action, FileReadAction):
        return FileReadObservation(content=text, path=path, impl_source="oh_aci")
    return FileEditObservation(
        content=text,
        path=path,
        prev_exist=bool(observation.get("prev_exist", False)),
        old_content=observation.get("old_content"),
        new_content=observation.get("new_content"),
        impl_source="oh_aci",
    )


def _think_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`AgentThinkObservation` with the tool's text."""
    return AgentThinkObservation(content=text)


def _task_tracking_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`TaskTrackingObservation` with the tracker's command and task list."""
    return TaskTrackingObservation(
        content=text, command=observation.get("command") or "", task_list=observation.get("task_list") or []
    )


def _mcp_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`MCPObservation` named after the event's tool, with the arguments of the `MCPAction` it answers."""
    arguments = action.arguments if isinstance(action, MCPAction) else {}
    return MCPObservation(content=text, name=record.get("tool_name") or "", arguments=arguments)


def _browser_output(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`BrowserOutputObservation`: the error as content when there is one, the screenshot as a data URL."""
    screenshot = observation.get("screenshot_data")
    return BrowserOutputObservation(
        content=_error_message(observation) or text,
        error=bool(observation.get("error")),
        screenshot=f"data:image/png;base64,{screenshot}" if isinstance(screenshot, str) and screenshot else "",
        trigger_by_action="browse" if isinstance(action, BrowseURLAction) else "browse_interactive",
    )


def _context_reload_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`ContextReloadObservation`: a copy of another event (never indexed for search), with the number it reloaded."""
    reloaded = observation.get("reloaded_event_id")
    if not isinstance(reloaded, int) or isinstance(reloaded, bool) or not 0 <= reloaded < 2**63:
        reloaded = None
    return ContextReloadObservation(content=text, reloaded_event_id=reloaded)


def _search_history_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`SearchHistoryObservation`: snippets of other events (never indexed for search)."""
    return SearchHistoryObservation(content=text)


def _new_context_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`SuccessObservation` when the new context started, `ErrorObservation` when the handoff was refused."""
    if observation.get("is_error") is True:
        return ErrorObservation(content=text)
    return SuccessObservation(content=text)


def _context_notes_observation(
    observation: dict[str, Any], text: str, record: Mapping[str, Any], action: Event | None
) -> Observation:
    """`ContextNotesObservation` with the notes after the call, `ErrorObservation` when the call changed nothing."""
    if observation.get("is_error") is True:
        return ErrorObservation(content=text)
    return ContextNotesObservation(content=text)


_OBSERVATION_MAKERS: dict[str, _ObservationMaker] = {
    "ExecuteBashObservation": _cmd_output,
    "TerminalObservation": _cmd_output,
    "StrReplaceEditorObservation": _file_observation,
    "FileEditorObservation": _file_observation,
    "PlanningFileEditorObservation": _file_observation,
    "ThinkObservation": _think_observation,
    "TaskTrackerObservation": _task_tracking_observation,
    "MCPToolObservation": _mcp_observation,
    "BrowserObservation": _browser_output,
    "ContextReloadObservation": _context_reload_observation,
    "SearchHistoryObservation": _search_history_observation,
    "NewContextObservation": _new_context_observation,
    "ContextNotesObservation": _context_notes_observation,
    "CompactContextObservation": _new_context_observation,  # done, or refused: the same two answers
}
"""SDK `observation.kind` -> its maker; any other kind is `_other_observation`'s."""


def _other_observation(kind: str, observation: dict[str, Any], text: str) -> Observation:
    """`UnknownObservation(observation=<kind>)` with the text as `content` and the other fields as extras."""
    fields = {k: v for k, v in observation.items() if k not in ("kind", "content", "output", "message")}
    return UnknownObservation(observation=kind, content=text, **_as_extras(UnknownObservation, fields))


def _hidden_unknown(kind: str, record: dict[str, Any]) -> UnknownObservation:
    """An SDK event no model sees, kept (hidden) with its fields as `extras`."""
    fields = {k: v for k, v in record.items() if k not in _ENVELOPE}
    return UnknownObservation(observation=kind, hidden=True, **_as_extras(UnknownObservation, fields))


def _as_extras(cls: type[Event], fields: dict[str, Any]) -> dict[str, Any]:
    """Fields to keep as extra (payload) values; names our model uses are prefixed with `sdk_`."""
    return {(f"sdk_{k}" if k in cls.model_fields else k): v for k, v in fields.items()}
