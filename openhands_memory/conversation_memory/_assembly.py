"""Tool-call matching: rendered events in, a valid chat out, with the state to carry on from the end.

The rules are OpenHands V0's: a tool action's assistant message (which lists every call of its
model response) is held until each of those calls has its result; then the assistant message goes
out, followed by one `tool` message per call, in call order. Everything else goes out where its
event is. A final pass over what was added drops any tool result without its call and trims any
call without its result, and a user message that follows a user message is set apart by a blank
line.

What is left out to keep the chat valid (a call whose result is not in view, with its assistant
message; a result whose call is not; whatever the final pass drops) is a repair, and
`Assembly.repairs` says which: a view a condenser produced should need none.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from openhands_memory.conversation_memory._messages import marked_text_part, tool_result, with_content
from openhands_memory.conversation_memory._recall import microagent_name
from openhands_memory.conversation_memory._render import (
    CALL,
    PLAIN,
    RESULT,
    EventRenderer,
    Recall,
    Unit,
    knowledge_message,
)
from openhands_memory.events import Event
from openhands_memory.llm.message import Message, TextContent, ToolCall

logger = logging.getLogger("openhands_memory.conversation_memory")


@dataclass(frozen=True, slots=True)
class ToolCallRepairs:
    """What a chat left out so that every tool call is answered: the message layer's repairs.

    A view with every action next to its observation needs none; a condenser that split them makes
    some, and `ConversationMemory` logs them at WARNING.
    """

    unanswered_calls: tuple[str, ...] = ()
    """Tool calls whose result is not in view: the assistant message making them was left out (with
    any other calls it makes, and their results)."""
    orphan_results: tuple[str, ...] = ()
    """Tool results (by call id) whose call is not in view: left out."""
    dropped: tuple[str, ...] = ()
    """Call ids whose call or result the final check dropped (`drop_unmatched_tool_calls`)."""

    @property
    def count(self) -> int:
        """Repairs in all: one per tool call id above."""
        return len(self.unanswered_calls) + len(self.orphan_results) + len(self.dropped)

    @property
    def call_ids(self) -> tuple[str, ...]:
        """Every call id above, in that order."""
        return (*self.unanswered_calls, *self.orphan_results, *self.dropped)


NO_REPAIRS = ToolCallRepairs()
"""A chat that needed no repair."""


class Assembly:
    """The chat for a list of events, and the matching state at its end, so it can be extended."""

    __slots__ = (
        "events",
        "units",
        "messages",
        "_pending",
        "_waiting",
        "_results",
        "_dropped",
        "_shown_agents",
        "_last_role",
    )

    def __init__(self) -> None:
        self.events: list[Event] = []
        """The events assembled so far, in order."""
        self.units: list[Unit | None] = []
        """What each of them rendered to (same positions)."""
        self.messages: list[Message] = []
        """The chat for them."""
        self._pending: dict[str, tuple[Message, tuple[str, ...]]] = {}
        self._waiting: dict[str, list[str]] = {}  # call id -> keys of the pending responses that list it
        self._results: dict[str, Message] = {}
        self._dropped: list[str] = []  # call ids the final check dropped
        self._shown_agents: set[str] = set()
        self._last_role: str | None = None

    def repairs(self) -> ToolCallRepairs:
        """What the chat leaves out so every tool call is answered: calls and results still waiting for their match."""
        if not (self._pending or self._results or self._dropped):
            return NO_REPAIRS
        held = dict.fromkeys(call_id for _, call_ids in self._pending.values() for call_id in call_ids)
        results = self._results
        return ToolCallRepairs(
            unanswered_calls=tuple(call_id for call_id in held if call_id not in results),
            orphan_results=tuple(call_id for call_id in results if call_id not in held),
            dropped=tuple(self._dropped),
        )

    def rendered(self) -> dict[int, tuple[Event, Unit | None]]:
        """id(event) -> (event, what it rendered to), for every event here (to reuse in a new assembly)."""
        return dict(zip(map(id, self.events), zip(self.events, self.units, strict=True), strict=True))

    def extend(
        self,
        events: list[Event],
        renderer: EventRenderer,
        rendered: dict[int, tuple[Event, Unit | None]] | None = None,
    ) -> None:
        """Assemble the events after the ones already here (`self.events` must be a prefix of `events`).

        The assembly keeps `events` as its own from here on: the caller must not change the list.
        An event found (as the same object) in `rendered` is not rendered again.
        """
        added: list[Message] = []
        emit = added.append
        units = self.units
        keep = units.append
        pending = self._pending
        waiting = self._waiting
        results = self._results
        release = self._release
        render = renderer.render
        handlers = renderer.handlers
        lookup = rendered.get if rendered else None
        plain, result, call = PLAIN, RESULT, CALL
        for event in islice(events, len(self.events), None):
            # The common cases are written out here rather than in methods: this loop runs for
            # every event of a view that was not seen before.
            if lookup is not None and (entry := lookup(id(event))) is not None and entry[0] is event:
                unit = entry[1]
            elif event.hidden:
                unit = None
            else:
                handler = handlers.get(type(event))
                unit = handler(renderer, event) if handler is not None else render(event)
            keep(unit)
            if unit is None:
                continue
            tag = unit[0]
            if tag is plain:
                emit(unit[1])
            elif tag is result:
                call_id = unit[1]
                keys = waiting.get(call_id)
                if keys is None:
                    results[call_id] = unit[2]  # its call may come later (or never)
                elif len(keys) == 1 and len((held := pending[keys[0]])[1]) == 1:
                    # The usual case: the one call of a response, answered.
                    del pending[keys[0]], waiting[call_id]
                    if results:
                        results.pop(call_id, None)
                    emit(held[0])
                    emit(unit[2])
                else:
                    results[call_id] = unit[2]
                    for key in keys if len(keys) == 1 else list(keys):
                        waiting_on = pending.get(key)
                        if waiting_on is not None and all(c in results for c in waiting_on[1]):
                            release(key, added)
            elif tag is call:
                key, call_ids = unit[1], unit[3]
                found = pending.get(key)
                if found is None:
                    held = pending[key] = (unit[2], call_ids)
                    for call_id in call_ids:
                        keys = waiting.get(call_id)
                        if keys is None:
                            waiting[call_id] = [key]
                        else:
                            keys.append(key)
                elif found[1] != call_ids:
                    held = self._merge(key, unit[2])
                else:
                    held = found
                if results and all(c in results for c in held[1]):
                    release(key, added)
            else:
                self._recall(unit[1], added)
        self.events = events
        self._append(added)

    # -- matching -------------------------------------------------------------------------------

    def _merge(self, key: str, message: Message) -> tuple[Message, tuple[str, ...]]:
        """Sibling actions that disagree on their response's calls (an odd log): wait for all of them."""
        held_message, held_ids = self._pending[key]
        extra = [c for c in message.tool_calls or () if c.id not in held_ids]
        merged = held_message.model_copy(update={"tool_calls": (*(held_message.tool_calls or ()), *extra)})
        held = self._pending[key] = (merged, (*held_ids, *(c.id for c in extra)))
        for c in extra:
            self._waiting.setdefault(c.id, []).append(key)
        return held

    def _answer(self, call_id: str, message: Message, added: list[Message]) -> None:
        self._results[call_id] = message
        for key in list(self._waiting.get(call_id, ())):
            held = self._pending.get(key)
            if held is not None and all(c in self._results for c in held[1]):
                self._release(key, added)

    def _release(self, key: str, added: list[Message]) -> None:
        message, call_ids = self._pending.pop(key)
        added.append(message)
        results, waiting = self._results, self._waiting
        for call_id in call_ids:
            added.append(results.pop(call_id))
            keys = waiting[call_id]
            if len(keys) == 1:
                del waiting[call_id]
            else:
                keys.remove(key)

    def _recall(self, recall: Recall, added: list[Message]) -> None:
        message = recall.message
        if recall.knowledge:
            shown = self._shown_agents
            fresh = [item for item in recall.knowledge if microagent_name(item) not in shown]
            message = knowledge_message(fresh) if fresh else None
        self._shown_agents.update(recall.names)
        if message is None:
            return
        if recall.tool_call is None:
            added.append(message)
            return
        call_id, name = recall.tool_call
        self._answer(call_id, tool_result(message.content, call_id, name), added)

    # -- output ---------------------------------------------------------------------------------

    def _append(self, added: list[Message]) -> None:
        """Add messages to the chat after the final checks, setting consecutive user messages apart.

        The matching above only ever emits an assistant message with calls directly followed by
        their results, so the checks pass; if they ever failed, the messages are repaired with
        `drop_unmatched_tool_calls` before they go out, as OpenHands' final filter would.
        """
        out = self.messages
        start = len(out)
        last_role = self._last_role
        calls: tuple[ToolCall, ...] = ()
        answered = 0
        for message in added:
            role = message.role
            if role == "tool":
                if answered < len(calls) and message.tool_call_id == calls[answered].id:
                    answered += 1
                    out.append(message)
                    last_role = role
                    continue
                break  # a result out of place
            if answered != len(calls):
                break  # a call without its result
            if role == "assistant":
                calls = message.tool_calls or ()
                answered = 0
                if len(calls) > 1 and len({c.id for c in calls}) != len(calls):
                    break  # a call listed twice
            elif role == "user" and last_role == "user":
                message = _set_apart(message)
            out.append(message)
            last_role = role
        else:
            if answered == len(calls):
                self._last_role = last_role
                return
        del out[start:]
        last_role = self._last_role
        for message in _drop_unmatched(added, self._dropped):
            role = message.role
            if role == "user" and last_role == "user":
                message = _set_apart(message)
            out.append(message)
            last_role = role
        self._last_role = last_role


def _set_apart(message: Message) -> Message:
    """The message with a blank line before its first text (so consecutive user messages stay apart)."""
    content = message.content
    for index, part in enumerate(content):
        if isinstance(part, TextContent):
            changed = marked_text_part("\n\n" + part.text, part.cache_prompt)
            return with_content(message, (*content[:index], changed, *content[index + 1 :]))
    return message


def drop_unmatched_tool_calls(messages: Sequence[Message]) -> list[Message]:
    """The messages with every tool call answered right after the assistant message that makes it.

    A `tool` message is kept only when it answers a not-yet-answered call of the assistant message
    before it (with nothing but tool messages in between); an assistant message keeps only the
    calls that are answered that way, and loses its `tool_calls` (or, with no text either, goes)
    when none is. The input is not changed; unchanged messages are the same objects. What is
    dropped is logged at WARNING, naming the call ids: a valid chat never needs this.
    """
    dropped: list[str] = []
    out = _drop_unmatched(messages, dropped)
    if dropped:
        logger.warning(
            "dropped %d unmatched tool call(s) or result(s) to keep the chat valid: %s", len(dropped), ", ".join(dropped)
        )
    return out


def _drop_unmatched(messages: Sequence[Message], dropped: list[str]) -> list[Message]:
    """`drop_unmatched_tool_calls` without the log; the call ids of what it drops are added to `dropped`."""
    out: list[Message] = []
    open_calls: dict[str, None] = {}
    answered: set[str] = set()
    head = -1  # index in `out` of the assistant message whose calls are open

    def close() -> None:
        nonlocal head
        if head < 0:
            return
        if open_calls:
            dropped.extend(open_calls)
            assistant = out[head]
            kept = tuple(c for c in assistant.tool_calls or () if c.id in answered)
            if kept:
                out[head] = assistant.model_copy(update={"tool_calls": kept})
            elif assistant.content:
                out[head] = assistant.model_copy(update={"tool_calls": None})
            else:
                del out[head]  # nothing followed it, so it is the last message
            open_calls.clear()
        answered.clear()
        head = -1

    for message in messages:
        if message.role == "tool":
            call_id = message.tool_call_id
            if head >= 0 and call_id in open_calls:
                del open_calls[call_id]
                answered.add(call_id)
                out.append(message)
            else:
                dropped.append(str(call_id))
            continue
        close()
        if message.role == "assistant" and message.tool_calls:
            calls = message.tool_calls
            ids = dict.fromkeys(c.id for c in calls)
            if len(ids) != len(calls):
                seen: set[str] = set()
                for c in calls:
                    if c.id in seen:
                        dropped.append(c.id)  # a repeat, which goes
                    seen.add(c.id)
                firsts = {c.id: c for c in reversed(calls)}  # the first call with each id wins
                message = message.model_copy(update={"tool_calls": tuple(firsts[i] for i in ids)})
            open_calls.update(ids)
            head = len(out)
        out.append(message)
    close()
    return out
