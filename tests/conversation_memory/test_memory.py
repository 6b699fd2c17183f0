"""`ConversationMemory.fresh`: the same rendering, with nothing cached and repairs not logged."""

from __future__ import annotations

import logging

import pytest

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.testing.sessions import SessionBuilder


def test_a_fresh_memory_renders_the_same_chat_and_does_not_log_its_repairs(caplog: pytest.LogCaptureFixture) -> None:
    builder = SessionBuilder()
    builder.header()
    builder.calls("ls")  # a call without its result: the chat leaves it out
    memory = ConversationMemory("be brief", function_calling=True, tool_result_format="inkeep_handoff")
    fresh = memory.fresh()
    assert (fresh.system_prompt, fresh.tool_result_format) == ("be brief", "inkeep_handoff")
    with caplog.at_level(logging.WARNING, logger="openhands_memory.conversation_memory"):
        counted = fresh.process_events(builder.events)
        assert fresh.last_repairs.count == 1 and caplog.records == []
        assert memory.process_events(builder.events) == counted
        assert len(caplog.records) == 1  # the memory that renders the sent chat says so
