"""The SDK bridge, the fifth entry point of the turn: it shows the model what `History` shows, at every step (issue 34 item 1).

The same conversation runs through `History` (our events, appended as a controller appends them,
`next_messages` at every agent step) and through `OpenHandsMemoryCondenser` as the SDK drives it (at
every agent step: condense, append the condensation, ask again until a view is handed back). The
view handed back, rendered by our pipeline, is the chat `History` sends, message for message, and so
its tokens, for every registered strategy (offline, small limits), with and without a history
policy. What the SDK's own shapes change is left out of the comparison, as docs/architecture.md
says: the SDK renders the view itself (our rendering of its view stands for it here, as History
renders a view), so what an observation shows beyond its text is the SDK's to write (our renderer's
exit-code line of a command is taken off both sides: a masked command output goes back to the SDK
as its text alone); and the policy's trim is made on events (`roles` is not applied, so no policy
here names roles).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk.context.view import View as SdkView  # noqa: E402
from openhands.sdk.event import ActionEvent  # noqa: E402
from openhands.sdk.event.condenser import Condensation as SdkCondensation  # noqa: E402

from openhands_memory import History  # noqa: E402
from openhands_memory.condenser import Condenser, NoOpCondenser, registered_condenser_types  # noqa: E402
from openhands_memory.conversation_memory import HistoryPolicy  # noqa: E402
from openhands_memory.events import Event, EventSource, MessageAction  # noqa: E402
from openhands_memory.events._sdk_import import import_sdk_events  # noqa: E402
from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402
from openhands_memory.integrations.openhands_sdk._view_import import SdkViewImporter  # noqa: E402
from openhands_memory.llm import to_litellm_dicts  # noqa: E402
from openhands_memory.pipeline import Pipeline  # noqa: E402
from openhands_memory.prompt_tokens import ApproximateTokenizer, prompt_text  # noqa: E402
from openhands_memory.replay.driver import is_agent_step  # noqa: E402

from .sdk_events import conversation  # noqa: E402

POLICY = {"max_messages": 24, "max_tokens": 6000}

_EXIT_CODE = re.compile(r"\n\[Command finished with exit code -?\d+\]$")


def _comparable(chat: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The chat with our renderer's exit-code line taken off tool results, and its tokens as the approximate meter counts them."""
    out = []
    for message in chat:
        if message["role"] == "tool":
            content = [{**part, "text": _EXIT_CODE.sub("", part["text"])} if part.get("type") == "text" else part for part in message["content"]]
            message = {**message, "content": content}
        out.append(message)
    return out, _tokens(out)


def _tokens(chat: list[dict[str, Any]]) -> int:
    """The chat's tokens as the approximate prompt meter counts them (no tool definitions here)."""
    tokenizer = ApproximateTokenizer()
    return sum(len(tokenizer.encode(prompt_text(message))) for message in chat)


def _session() -> list[Any]:
    """The SDK events of a task and 45 tool calls with outputs of growing size (tests/test_one_turn.py's session)."""
    turns = [("tools", [("terminal", f"line {n}\n" * (20 + 7 * (n % 9)), False)]) for n in range(45)]
    return conversation(turns)


def _config(type_name: str) -> dict[str, Any]:
    """`type_name` offline (no model), with small limits so that it condenses within the session."""
    config: dict[str, Any] = {"type": type_name}
    if type_name == "pipeline":
        config["condensers"] = [{"type": "observation_masking", "attention_window": 6}, {"type": "amortized", "max_size": 40}]
    if type_name == "cache_aware":
        config["condenser"] = {"type": "llm", "max_size": 40}
        config["hard_limit"] = 5000
    return config


def _through_history(ours: list[Event], config: dict[str, Any], policy: HistoryPolicy | None) -> list[tuple[list[Any], int]]:
    history = History(condenser=Condenser.from_config(config), history_policy=policy, tokenizer="approximate")
    steps = []
    previous: str | None = None
    new_ids: dict[int | None, int] = {}
    for event in ours:
        if is_agent_step(event, previous):
            messages = history.next_messages()
            turn = history.last_turn
            assert turn is not None and turn.tokens is not None
            chat = to_litellm_dicts(messages)
            assert _tokens(chat) == turn.tokens  # the recount is the turn's count
            steps.append(_comparable(chat))
        if event.source == EventSource.AGENT:
            previous = event.response_id
        cause = new_ids.get(event.cause) if event.cause is not None else None
        copy = event.model_copy(update={"id": None, "cause": cause})
        new_ids[event.id] = history.add_event(copy, copy.source or EventSource.AGENT)
    return steps


def _through_sdk(sdk_events: list[Any], config: dict[str, Any], policy: dict[str, Any] | None) -> list[tuple[list[Any], int]]:
    condenser = OpenHandsMemoryCondenser(condenser=config, history_policy=policy, tokenizer="approximate")
    # The SDK renders the view itself; ours, without a policy (the view handed back is fitted to it already), stands for it.
    render = Pipeline(NoOpCondenser(), history_policy=None).measured_by("approximate")
    task = import_sdk_events([sdk_events[1].model_dump(mode="json")])[0]  # the user's first message
    assert isinstance(task, MessageAction) and task.source == EventSource.USER
    log: list[Any] = []
    steps = []
    previous: str | None = None
    for event in sdk_events:
        if isinstance(event, ActionEvent) and event.llm_response_id != previous:
            while isinstance(outcome := condenser.condense(SdkView.from_events(log)), SdkCondensation):
                log.append(outcome)  # as the SDK appends it, then asks again
            # A fresh importer: the view handed back shows changed events under their SDK ids (masked, cut).
            shown = SdkViewImporter().import_view(outcome.events, unhandled_condensation_request=False).view
            # Rendered as History renders a view (OpenHands V0): the task put second when the view holds it
            # elsewhere (after a summary at offset 1); the SDK shows a view's events only, once each.
            holds_task = any(isinstance(e, MessageAction) and e.source == EventSource.USER and e.content == task.content for e in shown)
            turn = render.step(shown, task if holds_task else None)
            assert not isinstance(turn, SdkCondensation)
            steps.append(_comparable(to_litellm_dicts(turn.messages)))
        if isinstance(event, ActionEvent):
            previous = event.llm_response_id
        log.append(event)
    return steps


@pytest.mark.parametrize("with_policy", [False, True], ids=["strategy's own policy", "policy table"])
@pytest.mark.parametrize("type_name", registered_condenser_types())
def test_the_sdk_bridge_shows_what_history_shows_at_every_step(type_name: str, with_policy: bool) -> None:
    sdk_events = _session()
    ours = import_sdk_events([event.model_dump(mode="json") for event in sdk_events])
    config = _config(type_name)
    by_history = _through_history(ours, config, HistoryPolicy(**POLICY) if with_policy else None)
    by_sdk = _through_sdk(sdk_events, config, POLICY if with_policy else None)
    assert len(by_sdk) == len(by_history) == 45
    assert [tokens for _, tokens in by_sdk] == [tokens for _, tokens in by_history]
    assert [chat for chat, _ in by_sdk] == [chat for chat, _ in by_history]
