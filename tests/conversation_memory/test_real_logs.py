"""ConversationMemory over the real OpenHands logs: a valid chat from each, every observation kind shown."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS, real_log_params, real_logs, require_real_log

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.events import (
    AgentCondensationObservation,
    Event,
    MessageAction,
    Observation,
    agent_history,
    event_to_dict,
    load_events,
)
from openhands_memory.llm import Message, to_litellm_dicts
from openhands_memory.view import View, ViewBuilder

from ._helpers import assert_valid_chat, images_of, text_of

SYSTEM = "You are a test agent."
ALL_LOGS = real_log_params("v0_") + real_log_params("v0legacy_") + real_log_params("v1_")


@cache
def _history(path: Path) -> tuple[Event, ...]:
    return tuple(agent_history(load_events(path)))


def _initial(history: tuple[Event, ...]) -> MessageAction | None:
    return next((e for e in history if isinstance(e, MessageAction) and e.source == "user"), None)


def render(name: str, **options) -> tuple[list[Message], View]:
    history = _history(require_real_log(_log(name)))
    view = View.from_events(history)
    messages = ConversationMemory(SYSTEM).process_events(view, _initial(history), **options)
    assert_valid_chat(messages)
    return messages, view


def _log(name: str) -> Path | None:
    return next(
        (p for prefix in ("v0_", "v0legacy_", "v1_") for p in real_logs(prefix) if p.name.startswith(name)), None
    )


@pytest.mark.parametrize("log", ALL_LOGS)
@pytest.mark.parametrize("vision", [False, True], ids=["text", "vision"])
def test_every_log_renders_a_valid_chat_without_changing_its_events(log: Path | None, vision: bool) -> None:
    history = _history(require_real_log(log))
    before = [event_to_dict(e) for e in history]
    view = View.from_events(history)
    memory = ConversationMemory(SYSTEM)
    messages = memory.process_events(view, _initial(history), max_message_chars=30_000, vision_is_active=vision)
    assert_valid_chat(messages)
    memory.apply_prompt_caching(messages)
    for form in (False, True):
        dicts = to_litellm_dicts(messages, vision_enabled=vision, string_content=form)
        assert len(dicts) == len(messages)
    text_mode = ConversationMemory(SYSTEM, function_calling=False).process_events(view, _initial(history))
    assert all(m.role != "tool" and not m.tool_calls for m in text_mode)
    assert [event_to_dict(e) for e in history] == before


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_every_observation_of_a_log_is_shown(log: Path | None) -> None:
    """Each observation kind the logs hold reaches the chat (as a tool result or a user message)."""
    history = _history(require_real_log(log))
    view = View.from_events(history)
    messages = ConversationMemory(SYSTEM).process_events(view, _initial(history))
    tool_results = Counter(m.tool_call_id for m in messages if m.role == "tool")
    for event in view:
        if isinstance(event, Observation) and event.tool_call_metadata is not None and event.observation != "recall":
            # A result is left out only when its model response has a call nobody answered.
            response_calls = {
                c["id"]
                for c in ((event.tool_call_metadata.model_response or {}).get("choices") or [{}])[0]
                .get("message", {})
                .get("tool_calls")
                or []
            }
            answered = {
                e.tool_call_metadata.tool_call_id for e in view if isinstance(e, Observation) and e.tool_call_metadata
            }
            if response_calls <= answered:
                assert tool_results[event.tool_call_metadata.tool_call_id] >= 1, (event.id, event.observation)


def test_parallel_tool_calls_are_sent_as_one_assistant_message() -> None:
    messages, _ = render("v0_oas_gpt-4o_traj_safety-command-bot")
    parallel = [i for i, m in enumerate(messages) if m.role == "assistant" and len(m.tool_calls or ()) == 2]
    assert parallel, "the log has parallel calls"
    for index in parallel:
        ids = [c.id for c in messages[index].tool_calls or ()]
        assert [m.tool_call_id for m in messages[index + 1 : index + 3]] == ids


def test_commands_show_exit_code_and_directory_and_errors_their_suffix() -> None:
    messages, _ = render("v0_oh-multiswebench_ponyc-4588")
    runs = [text_of(m) for m in messages if m.name == "execute_bash"]
    assert runs and all("[Command finished with exit code" in t or "[Current working directory" in t for t in runs[:5])
    errors = [m for m in messages if text_of(m).endswith("[Error occurred in processing last action]")]
    assert errors and errors[0].role == "user"  # it answers no tool call
    assert any(m.name == "think" for m in messages)
    assert any(m.name == "str_replace_editor" and "cat -n" in text_of(m) for m in messages)


def test_workspace_context_and_summary_from_a_condensed_session() -> None:
    messages, view = render("v0_enyst-playground_issue10730")
    summary = next(e for e in view if isinstance(e, AgentCondensationObservation))
    assert any(text_of(m).strip() == summary.content.strip() and m.role == "user" for m in messages)
    assert "<REPOSITORY_INFO>" in text_of(messages[2])


def test_screenshots_are_attached_and_sent_only_with_vision() -> None:
    messages, _ = render("v0_oas_claude-sonnet_traj_safety-signatories", vision_is_active=True)
    with_images = [m for m in messages if m.role == "tool" and images_of(m)]
    assert with_images
    assert "Image: Current webpage screenshot" in text_of(with_images[0])
    seeing = with_images[0].to_litellm_dict(vision_enabled=True)
    blind = with_images[0].to_litellm_dict(vision_enabled=False)
    assert any(part["type"] == "image_url" for part in seeing["content"])
    assert all(part["type"] == "text" for part in blind["content"])


def test_the_chat_kind_of_a_fork_is_a_tool_call_and_its_answer_a_tool_result() -> None:
    messages, _ = render("v0_oas_claude-sonnet_traj_safety-data-science")
    chats = [m for m in messages if m.role == "tool" and m.name == "chat"]
    assert chats and all(text_of(m) for m in chats)


def test_ipython_and_finish_from_a_session_folder() -> None:
    messages, _ = render("v0_oh-session_63b43159")
    assert any(m.name == "execute_ipython_cell" for m in messages)
    assert messages[-1].role == "assistant" and not messages[-1].tool_calls


def test_a_log_replayed_step_by_step_gives_at_each_step_what_a_fresh_memory_gives() -> None:
    history = _history(require_real_log(_log("v0_enyst-playground_issue10730")))
    initial = _initial(history)
    memory = ConversationMemory(SYSTEM)
    builder = ViewBuilder()
    for index, event in enumerate(history):
        builder.append(event)
        got = memory.process_events(builder.view, initial, max_message_chars=2_000)
        if index % 15 == 0 or index == len(history) - 1:
            assert got == ConversationMemory(SYSTEM).process_events(builder.view, initial, max_message_chars=2_000), (
                index
            )


@pytest.mark.slow
def test_rendering_does_not_import_litellm() -> None:
    log = require_real_log(_log("v0_oas_gpt-4o_traj_safety-command-bot"))
    code = (
        "import sys\n"
        "from openhands_memory.conversation_memory import ConversationMemory\n"
        "from openhands_memory.events import load_events, agent_history\n"
        "from openhands_memory.llm import to_litellm_dicts\n"
        "from openhands_memory.llm.text_tool_calls import parse_text_tool_calls\n"
        "from openhands_memory.view import View\n"
        f"events = agent_history(load_events({str(log)!r}))\n"
        "messages = ConversationMemory('s').process_events(View.from_events(events), events[1])\n"
        "to_litellm_dicts(messages)\n"
        "ConversationMemory('s', function_calling=False).process_events(events, None)\n"
        "parse_text_tool_calls('<function=f>\\n</function>')\n"
        "assert messages and 'litellm' not in sys.modules, sorted(m for m in sys.modules if 'litellm' in m)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert result.returncode == 0, result.stderr
