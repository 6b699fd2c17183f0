"""SDK conversations for the bridge's tests: tools named as OpenHands' own (terminal, browser), events, and a hypothesis strategy.

The SDK finds a tool's action and observation classes by class name among those loaded, and refuses
two classes of one name: every test module imports these from here (one definition per process),
never defines its own `TerminalAction`.

`conversation(...)` builds a list of SDK events as an SDK conversation stores them: the system
prompt, the task, then turns of one to three parallel tool calls (one model response each) with
their results (an observation, or an agent error), user messages, condensation requests and the
SDK's own condensations. `View.from_events(events)` is the view the SDK would condense.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import count
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from hypothesis import strategies as st  # noqa: E402
from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.event import (  # noqa: E402
    ActionEvent,
    AgentErrorEvent,
    Condensation,
    CondensationRequest,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
)
from openhands.sdk.llm import Message, MessageToolCall, TextContent  # noqa: E402
from openhands.sdk.tool import Action, Observation  # noqa: E402
from pydantic import Field  # noqa: E402


class TerminalAction(Action):
    """A shell command (named as OpenHands' terminal tool's, so the V1 import reads it as a `CmdRunAction`)."""

    command: str = Field(description="The command.")


class TerminalObservation(Observation):
    """What the shell printed."""

    command: str = ""
    exit_code: int = 0


class BrowserNavigateAction(Action):
    """Open a URL (named as OpenHands' browser tool's)."""

    url: str = Field(description="Where to go.")


class BrowserObservation(Observation):
    """A page's text (named as OpenHands' browser tool's: imported as a `BrowserOutputObservation`)."""


_ids = count()


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids):06d}"


def system_prompt() -> SystemPromptEvent:
    return SystemPromptEvent(id=_id("system"), system_prompt=TextContent(text="You are a careful coding agent."), tools=[])


def user_message(text: str) -> MessageEvent:
    return MessageEvent(id=_id("user"), source="user", llm_message=Message(role="user", content=[TextContent(text=text)]))


def tool_batch(outputs: Sequence[tuple[str, str]], *, errors: Sequence[bool] = ()) -> list[Any]:
    """One model response calling `len(outputs)` tools in parallel, then their results.

    `outputs`: (tool, text) per call, tool `terminal` or `browser`; `errors[i]`: the i-th call
    fails with an `AgentErrorEvent` instead of an observation.
    """
    response = _id("response")
    actions: list[ActionEvent] = []
    results: list[Any] = []
    for index, (tool, text) in enumerate(outputs):
        call_id = _id("call")
        if tool == "browser":
            action: Action = BrowserNavigateAction(url=f"https://example.com/{index}")
            observation: Observation = BrowserObservation(content=[TextContent(text=text)])
            name = "browser_navigate"
        else:
            action = TerminalAction(command=f"cat file{index}.txt")
            observation = TerminalObservation(content=[TextContent(text=text)], command=f"cat file{index}.txt")
            name = "terminal"
        arguments = json.dumps(action.model_dump(exclude={"kind"}))
        event = ActionEvent(
            id=_id("action"),
            thought=[TextContent(text=f"step {index}")] if index == 0 else [],
            action=action,
            tool_name=name,
            tool_call_id=call_id,
            tool_call=MessageToolCall(id=call_id, name=name, arguments=arguments, origin="completion"),
            llm_response_id=response,
        )
        actions.append(event)
        if index < len(errors) and errors[index]:
            results.append(AgentErrorEvent(id=_id("error"), tool_name=name, tool_call_id=call_id, error=f"failed: {text[:40]}"))
        else:
            results.append(
                ObservationEvent(id=_id("obs"), observation=observation, action_id=event.id, tool_name=name, tool_call_id=call_id)
            )
    return [*actions, *results]


def condensation_of(view: View, *, forget: int, summary: str | None = "earlier work") -> Condensation:
    """The SDK's own kind of condensation: forget the `forget` events after the first two, whole batches only."""
    indices = view.manipulation_indices
    start = indices.find_next(min(2, len(view)))
    end = indices.find_next(min(len(view), start + forget))
    forgotten = {event.id for event in view.events[start:end]}
    return Condensation(
        id=_id("condensation"),
        forgotten_event_ids=forgotten,
        summary=summary,
        summary_offset=start if summary is not None else None,
        llm_response_id=_id("summary-response"),
    )


def conversation(turns: Sequence[tuple[str, Any]]) -> list[Any]:
    """The events of a conversation from `turns`: ("tools", [(tool, text, error), ...]), ("user", text),
    ("request", None), ("condense", how many to forget)."""
    events: list[Any] = [system_prompt(), user_message("Fix the failing test in tests/test_app.py.")]
    for kind, value in turns:
        if kind == "tools":
            events += tool_batch([(tool, text) for tool, text, _ in value], errors=[error for _, _, error in value])
        elif kind == "user":
            events.append(user_message(value))
        elif kind == "request":
            events.append(CondensationRequest(id=_id("request")))
        elif kind == "condense":
            view = View.from_events(events)
            if len(view) > 3:
                events.append(condensation_of(view, forget=value))
    return events


_text = st.one_of(
    st.text(alphabet="abcdefgh \n", min_size=0, max_size=30),
    st.integers(min_value=200, max_value=3_000).map(lambda n: "line of output\n" * (n // 15)),
)
_call = st.tuples(st.sampled_from(["terminal", "terminal", "browser"]), _text, st.just(False))
_call_or_error = st.tuples(st.sampled_from(["terminal", "browser"]), _text, st.sampled_from([False, False, False, True]))
_turn = st.one_of(
    st.tuples(st.just("tools"), st.lists(_call_or_error, min_size=1, max_size=3)),
    st.tuples(st.just("tools"), st.lists(_call, min_size=1, max_size=1)),
    st.tuples(st.just("user"), st.text(alphabet="abc xyz", min_size=1, max_size=20)),
    st.tuples(st.just("request"), st.none()),
    st.tuples(st.just("condense"), st.integers(min_value=1, max_value=8)),
)

conversations = st.lists(_turn, min_size=0, max_size=30).map(conversation)
"""SDK conversations (lists of events): tool batches, errors, user messages, requests, condensations."""


def long_conversation(steps: int, *, output_lines: int = 40) -> list[Any]:
    """A conversation of `steps` tool calls, each printing `output_lines` lines (for the strategies to condense)."""
    turns: list[tuple[str, Any]] = []
    for step in range(steps):
        tool = "browser" if step % 5 == 4 else "terminal"
        turns.append(("tools", [(tool, f"output {step}\n" + "some text of the tool\n" * output_lines, False)]))
    return conversation(turns)
