"""The mapping both ways: an SDK view as our events (the one V1 importer), our condensation as the SDK's, with nothing lost."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.event import CondensationSummaryEvent  # noqa: E402

from openhands_memory.condenser import Condensation  # noqa: E402
from openhands_memory.events import (  # noqa: E402
    AgentCondensationObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    ErrorObservation,
    MessageAction,
)
from openhands_memory.integrations.openhands_sdk._view_export import to_sdk_condensation, to_sdk_view  # noqa: E402
from openhands_memory.integrations.openhands_sdk._view_import import SdkViewImporter  # noqa: E402

from openhands_memory.view import View as OurView  # noqa: E402

from .sdk_events import condensation_of, conversation, long_conversation  # noqa: E402


def imported(importer: SdkViewImporter, events: list[Any]) -> Any:
    view = View.from_events(events)
    return importer.import_view(view.events, unhandled_condensation_request=view.unhandled_condensation_request)


def test_events_keep_their_sdk_ids_and_get_ids_that_stay_put_from_step_to_step() -> None:
    importer = SdkViewImporter()
    events = long_conversation(6)
    first = imported(importer, events)
    assert [e.original_id for e in first.view] == [e.id for e in View.from_events(events).events]
    assert [e.id for e in first.view] == list(range(len(first.view)))
    assert isinstance(first.view[2], CmdRunAction) and isinstance(first.view[3], CmdOutputObservation)
    assert first.view[3].cause == first.view[2].id
    # A condensation forgets some; the rest keep their ids and are the same objects (our caches hold).
    condensed = [*events, condensation_of(View.from_events(events), forget=4)]
    second = imported(importer, condensed)
    by_sdk_id = {e.original_id: e for e in first.view}
    assert all(e is by_sdk_id[e.original_id] for e in second.view if e.original_id in by_sdk_id)
    # New events get ids larger than every id given before.
    grown = imported(importer, [*condensed, *long_conversation(1)[2:]])
    assert [e.id for e in grown.view][-2:] == [len(first.view) + 1, len(first.view) + 2]


def test_an_sdk_summary_is_a_persisting_summary_and_forgetting_it_names_its_sdk_id() -> None:
    importer = SdkViewImporter()
    events = long_conversation(8)
    sdk_condensation = condensation_of(View.from_events(events), forget=4, summary="what happened")
    events = [*events, sdk_condensation]
    ours = imported(importer, events)
    summary = next(e for e in ours.view if isinstance(e, AgentCondensationObservation))
    assert summary.id is None and summary.content == "what happened"
    assert summary.original_id == f"{sdk_condensation.id}-summary"
    assert importer.sdk_id(summary.cause) == sdk_condensation.id
    # Our condensation forgetting the summary (by its cause) and the next event names both by SDK id.
    at = list(ours.view).index(summary)
    after = ours.view[at + 1]
    action = CondensationAction(forgotten_event_ids=[summary.cause, after.id], summary="newer", summary_offset=2)
    made = to_sdk_condensation(ours, Condensation(action))
    assert made.forgotten_event_ids == {f"{sdk_condensation.id}-summary", after.original_id}
    shown = View.from_events([*events, made])
    assert [e.summary for e in shown.events if isinstance(e, CondensationSummaryEvent)] == ["newer"]


def test_a_forgotten_range_names_the_sdk_ids_of_the_events_it_covers_in_the_view() -> None:
    importer = SdkViewImporter()
    ours = imported(importer, long_conversation(6))
    view = list(ours.view)
    action = CondensationAction(forgotten_events_start_id=view[2].id, forgotten_events_end_id=view[5].id + 1000)
    made = to_sdk_condensation(ours, Condensation(action))
    assert made.forgotten_event_ids == {e.original_id for e in view[2:]}
    assert made.summary is None and made.summary_offset is None


def test_a_summary_our_strategy_puts_before_the_system_prompt_goes_just_after_it() -> None:
    importer = SdkViewImporter()
    events = long_conversation(4)
    ours = imported(importer, events)
    view = list(ours.view)
    action = CondensationAction(forgotten_event_ids=[view[2].id, view[3].id], summary="s", summary_offset=0)
    made = to_sdk_condensation(ours, Condensation(action))
    assert made.summary_offset == 1
    shown = View.from_events([*events, made])
    assert [type(e).__name__ for e in shown.events[:3]] == ["SystemPromptEvent", "CondensationSummaryEvent", "MessageEvent"]


def test_changed_messages_and_errors_become_copies_of_the_sdk_events_with_the_new_text() -> None:
    importer = SdkViewImporter()
    events = conversation([("user", "a long message " * 50), ("tools", [("terminal", "boom", True)])])
    ours = imported(importer, events)
    view = list(ours.view)
    message_at = next(i for i, e in enumerate(view) if isinstance(e, MessageAction) and "long message" in e.content)
    error_at = next(i for i, e in enumerate(view) if isinstance(e, ErrorObservation))
    changed = list(view)
    changed[message_at] = view[message_at].model_copy(update={"content": "[compacted message]"})
    changed[error_at] = view[error_at].model_copy(update={"content": "[masked error]"})
    exported = to_sdk_view(ours, OurView(changed), transformed_by="compact_history")
    sdk = exported.view.events
    assert [e.id for e in sdk] == [e.id for e in ours.sdk_events]
    assert sdk[message_at].llm_message.content[0].text == "[compacted message]"
    assert sdk[error_at].error == "[masked error]" and sdk[error_at].tool_call_id == ours.sdk_events[error_at].tool_call_id
    assert all(a is b for i, (a, b) in enumerate(zip(sdk, ours.sdk_events, strict=True)) if i not in (message_at, error_at))
    assert exported.lost == []
    assert ours.sdk_events[message_at].llm_message.content[0].text.startswith("a long message")  # the input is untouched
