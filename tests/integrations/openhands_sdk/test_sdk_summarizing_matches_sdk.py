"""`sdk_summarizing` decides as the OpenHands SDK's own `LLMSummarizingCondenser` does, step by step.

The same conversation goes to both: as SDK events (validated by the SDK's `Event.model_validate`)
to the real `LLMSummarizingCondenser` (its summarizer LLM answers a fixed text), and as our events
(`import_sdk_events`, the V1 import) to `SdkSummarizingCondenser`. Before each model response, as
the SDK's agent does, both are asked; a condensation each returns is appended to its own log, and
both are asked again. At every step the two views hold the same events (SDK ids, summaries by
their condensation), and the decisions agree: condense or not, hard or soft, the same forgotten
SDK ids, the same summary offset.

Token counts are the one thing the two libraries measure differently (the SDK renders its own
messages for litellm, we count ours), so both count with one stand-in: each event weighs a fixed
number of tokens derived from its SDK id, and the SDK's `get_total_token_count` is patched to sum
those weights. The rules that use the counts (the limit, halving it, the binary search for the
suffix to keep) are the strategies' own.

Where this library's promises are stricter (the hard context reset keeps the head), the step is
checked to differ exactly as documented, and the walk stops there (the views part ways).
"""

from __future__ import annotations

import copy
import json
import zlib
from collections.abc import Sequence
from itertools import count
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from openhands.sdk.context.condenser import LLMSummarizingCondenser  # noqa: E402
from openhands.sdk.context.condenser import llm_summarizing_condenser as sdk_condenser_module  # noqa: E402
from openhands.sdk.context.condenser import utils as sdk_condenser_utils  # noqa: E402
from openhands.sdk.context.view import View as SdkView  # noqa: E402
from openhands.sdk.event import Event as SdkEvent  # noqa: E402
from openhands.sdk.llm import LLM as SdkLLM  # noqa: E402
from openhands.sdk.llm import TextContent  # noqa: E402
from openhands.sdk.tool import Action, Observation  # noqa: E402
from pydantic import ConfigDict  # noqa: E402

from openhands_memory.condenser import Condensation  # noqa: E402
from openhands_memory.condenser._boundaries import forget_id  # noqa: E402
from openhands_memory.condenser._views import is_summary  # noqa: E402
from openhands_memory.condenser.impl.sdk_summarizing_condenser import SdkSummarizingCondenser  # noqa: E402
from openhands_memory.events import Event, agent_history  # noqa: E402
from openhands_memory.events._sdk_import import import_sdk_events  # noqa: E402
from openhands_memory.view import View  # noqa: E402

LOGS = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "openhands-logs"
REAL_LOGS = ["v1_oh-benchmarks_conv-3f8f233d_150ev.json", "v1_oh-benchmarks_conv-0535c419_343ev.json"]
"""The SDK logs with tool calls and no orphan results (the goal fixture's orphan is a view the SDK
repairs, not one it condenses)."""


# The tools the recorded logs (SDK of 2025-09, openhands-tools) called. The SDK finds an action's
# class by its `kind` among those loaded; these names are not the bridge's tests' (TerminalAction, ...).
class ExecuteBashAction(Action):
    model_config = ConfigDict(extra="allow")


class StrReplaceEditorAction(Action):
    model_config = ConfigDict(extra="allow")


class TaskTrackerAction(Action):
    model_config = ConfigDict(extra="allow")


class ExecuteBashObservation(Observation):
    model_config = ConfigDict(extra="allow")


class StrReplaceEditorObservation(Observation):
    model_config = ConfigDict(extra="allow")


class TaskTrackerObservation(Observation):
    model_config = ConfigDict(extra="allow")


def upcast(record: dict[str, Any]) -> dict[str, Any]:
    """A recorded (2025-09) SDK event in the shape SDK 1.58 validates; what the decision reads is unchanged.

    The tool definitions of the system prompt are dropped (their classes are not installed; tokens
    are counted by the stand-in), a litellm-shaped `tool_call` becomes the SDK's, an observation's
    text becomes a text block, `FinishObservation.message` becomes its content, and a message's
`activated_microagents` its `activated_skills`.
    """
    record = copy.deepcopy(record)
    kind = record["kind"]
    if kind == "SystemPromptEvent":
        record["tools"] = []
    elif kind == "ActionEvent":
        call = record["tool_call"]
        if "function" in call:
            record["tool_call"] = {
                "id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "origin": "completion",
            }
    elif kind == "MessageEvent" and "activated_microagents" in record:
        record["activated_skills"] = record.pop("activated_microagents")
    elif kind == "ObservationEvent":
        observation = record["observation"]
        if "message" in observation and "content" not in observation:
            observation["content"] = observation.pop("message")
        if isinstance(observation.get("content"), str):
            observation["content"] = [{"type": "text", "text": observation["content"]}]
    return record


def weight(sdk_id: str) -> int:
    """The stand-in token count of the event with this SDK id (1 to 40)."""
    return zlib.crc32(sdk_id.encode()) % 40 + 1


def sdk_token_count(events: Sequence[Any], llm: Any) -> int:  # noqa: ARG001
    return sum(weight(event.id) for event in events)


class FakeSummarizer:
    """What the SDK condenser's own LLM answers: a fixed summary."""

    calls = 0

    def generate(self, messages: Any, **kwargs: Any) -> Any:  # noqa: ARG002
        FakeSummarizer.calls += 1
        return SimpleNamespace(message=SimpleNamespace(content=[TextContent(text="the fixed summary")]), id=f"summary-{FakeSummarizer.calls}")


@pytest.fixture(autouse=True)
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_condenser_module, "get_total_token_count", sdk_token_count)
    monkeypatch.setattr(sdk_condenser_utils, "get_total_token_count", sdk_token_count)
    monkeypatch.setattr(SdkLLM, "generate", FakeSummarizer.generate)


ROUNDS = 3
"""How many times a step asks both condensers, each answering with a condensation."""


class Walk:
    """One conversation, in the SDK and here, condensed step by step by both condensers."""

    def __init__(self, records: list[dict[str, Any]], *, max_size: int, keep_first: int, max_tokens: int | None, max_input_tokens: int | None) -> None:
        records = [r for r in records if r["kind"] != "Condensation"]  # the log's own condensations: not these condensers'
        self.records = records
        self.sdk_events = [SdkEvent.model_validate(upcast(r)) for r in records]
        self.our_events = import_sdk_events(records)
        self.sdk = LLMSummarizingCondenser(
            llm=SdkLLM(model="gpt-4o", usage_id="condenser"), max_size=max_size, keep_first=keep_first, max_tokens=max_tokens
        )
        self.agent_llm = SimpleNamespace(effective_max_input_tokens=max_input_tokens)
        self.ours = SdkSummarizingCondenser(
            max_size=max_size, keep_first=keep_first, max_tokens=max_tokens, max_input_tokens=max_input_tokens, token_counter=self.count
        )
        self.sdk_log: list[Any] = []
        self.our_log: list[Event] = []
        self.new_ids = count()
        self.renumbered: dict[int, int] = {}
        self.summary_ids: dict[int, str] = {}  # our condensation's id -> the SDK id of the summary the SDK's made
        self.steps = 0
        self.condensations: list[tuple[str, str]] = []  # (requirement, reasons) of each
        self.hard_resets = 0

    # -- the two logs --------------------------------------------------------------------------------

    def sdk_id(self, event: Event) -> str:
        if is_summary(event):
            return self.summary_ids[event.cause]  # type: ignore[index]
        assert event.original_id is not None
        return event.original_id

    def count(self, events: Sequence[Event]) -> int:
        # A summary not yet in the log (cause None) is counted only by the condensation's record, after the decision.
        return sum(weight(self.sdk_id(e)) for e in events if not (is_summary(e) and e.cause is None))

    def append_ours(self, event: Event) -> None:
        """Append as a stream does: the next id, `cause` renumbered alike."""
        update: dict[str, Any] = {"id": next(self.new_ids)}
        if event.cause is not None:
            update["cause"] = self.renumbered.get(event.cause)
        copied = event.model_copy(update=update)
        if event.id is not None:
            self.renumbered[event.id] = copied.id  # type: ignore[assignment]
        self.our_log.append(copied)

    def is_step(self, index: int) -> bool:
        """Before each model response (its first action, or an agent message), as the SDK's agent asks its condenser."""
        record = self.records[index]
        if record["kind"] == "MessageEvent":
            return record["source"] == "agent"
        if record["kind"] != "ActionEvent":
            return False
        previous = self.records[index - 1]
        return not (previous["kind"] == "ActionEvent" and previous["llm_response_id"] == record["llm_response_id"])

    def run(self) -> Walk:
        for index, (sdk_event, our_event) in enumerate(zip(self.sdk_events, self.our_events, strict=True)):
            if index > 0 and self.is_step(index) and not self.step():
                return self
            self.sdk_log.append(sdk_event)
            self.append_ours(our_event)
        self.step()
        return self

    # -- one step --------------------------------------------------------------------------------------

    def step(self) -> bool:
        """Ask both until neither condenses (a few rounds at most: under a token limit the head alone
        exceeds, both condense at every step); False once they part ways (a documented difference)."""
        for _ in range(ROUNDS):
            self.steps += 1
            sdk_view = SdkView.from_events(self.sdk_log)
            our_view = View.from_events(agent_history(self.our_log))
            where = f"step {self.steps}, {len(sdk_view)} events"
            assert [self.sdk_id(e) for e in our_view] == [e.id for e in sdk_view.events], f"{where}: the views differ"
            assert our_view.unhandled_condensation_request == sdk_view.unhandled_condensation_request

            sdk_reasons = {reason.value for reason in self.sdk.get_condensation_reasons(sdk_view, self.agent_llm)}
            assert self.ours.condensation_reasons(our_view) == sdk_reasons, where
            sdk_requirement = self.sdk.condensation_requirement(sdk_view, self.agent_llm)
            our_requirement = self.ours.requirement_of(sdk_reasons)  # type: ignore[arg-type]
            assert our_requirement == (sdk_requirement.value if sdk_requirement is not None else None), where

            sdk_result = self.sdk.condense(sdk_view, agent_llm=self.agent_llm)
            our_result = self.ours.condense(our_view)
            if isinstance(sdk_result, SdkView):
                assert isinstance(our_result, View), f"{where}: we condensed, the SDK did not"
                return True
            sdk_reset = len(sdk_view) > 1 and sdk_view.events[1].id in sdk_result.forgotten_event_ids  # past any keep_first >= 2
            if not isinstance(our_result, Condensation):
                # The one case: the SDK's hard context reset would forget only what we keep for good.
                head = {e.id for e in sdk_view.events[: self.ours.kept_head(our_view)]}
                assert sdk_reset and sdk_result.forgotten_event_ids <= head, f"{where}: the SDK condensed ({sdk_reasons}), we did not"
                assert not sdk_view.unhandled_condensation_request, f"{where}: a request must be handled"
                self.hard_resets += 1
                return False
            assert our_result.metadata is not None
            action = our_result.action
            listed = action.forgotten_lookup()
            ours = {self.sdk_id(e) for e in our_view if forget_id(e) in listed}
            extra = our_result.metadata.extra
            self.condensations.append((str(extra.get("requirement")), ",".join(extra.get("sdk_reasons", []))))
            reset = extra.get("hard_context_reset")
            if reset is not None:
                # The SDK forgets every event after the system prompt and puts its summary right
                # there; we keep the head (keep_first, the first user message) and summarize after
                # it, or only mark the request handled when nothing is left after it.
                self.hard_resets += 1
                assert sdk_reset, f"{where}: the SDK condensed without a hard context reset"
                head = reset["kept_head"]
                kept_head = {e.id for e in sdk_view.events[1:head]}
                assert kept_head, f"{where}: a hard reset that keeps no more than the SDK's must match it"
                assert "sdk_deviation" in extra, where
                assert sdk_result.summary_offset == 1, where
                assert ours == sdk_result.forgotten_event_ids - kept_head, where
                assert action.summary_offset == (head if ours else None), where
                return False
            assert "sdk_deviation" not in extra, f"{where}: {extra['sdk_deviation']}"
            assert ours == sdk_result.forgotten_event_ids, f"{where}: forgotten ids differ"
            assert action.summary_offset == sdk_result.summary_offset, f"{where}: summary offsets differ"
            assert action.summary_persists is True and action.summary

            self.sdk_log.append(sdk_result)
            our_action = action.model_copy()
            self.append_ours(our_action)
            self.summary_ids[self.our_log[-1].id] = f"{sdk_result.id}-summary"  # type: ignore[index]
        return True


# -- real SDK logs ------------------------------------------------------------------------------------


def real_log(name: str) -> list[dict[str, Any]]:
    path = LOGS / name
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared real logs)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", REAL_LOGS)
@pytest.mark.parametrize(
    ("max_size", "keep_first", "max_tokens", "max_input_tokens"),
    [
        (240, 2, None, None),  # LLMSummarizingCondenser's defaults
        (80, 4, None, None),  # the SDK's default_condenser
        (240, 2, 1500, None),  # a token limit of its own
        (80, 4, 4000, 1200),  # and the agent model's input limit, the smaller one
    ],
)
def test_real_sdk_logs_are_condensed_as_the_sdk_condenses_them(
    name: str, max_size: int, keep_first: int, max_tokens: int | None, max_input_tokens: int | None
) -> None:
    records = real_log(name)
    walk = Walk(records, max_size=max_size, keep_first=keep_first, max_tokens=max_tokens, max_input_tokens=max_input_tokens).run()
    assert walk.hard_resets == 0
    model_responses = len({r["llm_response_id"] for r in records if r["kind"] == "ActionEvent"})
    assert walk.steps > model_responses
    if max_tokens is not None:
        assert ("hard", "tokens") in walk.condensations
    if max_tokens is None and len(records) > 2 * max_size:
        assert ("soft", "events") in walk.condensations


# -- generated SDK conversations ----------------------------------------------------------------------

_ids = count()


def _uid(prefix: str) -> str:
    return f"{prefix}-{next(_ids):08d}"


def _envelope(kind: str, source: str) -> dict[str, Any]:
    return {"kind": kind, "id": _uid(kind.lower()), "timestamp": "2026-01-01T00:00:00", "source": source}


def _message(text: str, source: str) -> dict[str, Any]:
    return {**_envelope("MessageEvent", source), "llm_message": {"role": "user" if source == "user" else "assistant", "content": [{"type": "text", "text": text}]}}


def _batch(calls: list[tuple[str, bool]], *, thinking: bool) -> list[dict[str, Any]]:
    """One model response with these parallel calls ((command, fails)), then their results in order."""
    response = _uid("response")
    actions, results = [], []
    for index, (command, fails) in enumerate(calls):
        call_id = _uid("call")
        action = {
            **_envelope("ActionEvent", "agent"),
            "thought": [{"type": "text", "text": f"run {command}"}] if index == 0 else [],
            "thinking_blocks": [{"type": "thinking", "thinking": "plan the calls", "signature": "sig"}] if thinking and index == 0 else [],
            "action": {"kind": "ExecuteBashAction", "command": command},
            "tool_name": "execute_bash",
            "tool_call_id": call_id,
            "tool_call": {"id": call_id, "name": "execute_bash", "arguments": json.dumps({"command": command}), "origin": "completion"},
            "llm_response_id": response,
        }
        actions.append(action)
        if fails:
            results.append({**_envelope("AgentErrorEvent", "agent"), "tool_name": "execute_bash", "tool_call_id": call_id, "error": f"{command}: failed"})
        else:
            results.append(
                {
                    **_envelope("ObservationEvent", "environment"),
                    "observation": {"kind": "ExecuteBashObservation", "content": [{"type": "text", "text": f"output of {command}"}]},
                    "action_id": action["id"],
                    "tool_name": "execute_bash",
                    "tool_call_id": call_id,
                }
            )
    return [*actions, *results]


def conversation(turns: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """SDK event records: the system prompt, the task, then the turns (tool batches, messages, requests)."""
    records = [
        {**_envelope("SystemPromptEvent", "agent"), "system_prompt": {"type": "text", "text": "You are a careful agent."}, "tools": []},
        _message("Fix the failing test.", "user"),
    ]
    for kind, value in turns:
        if kind == "tools":
            calls, thinking = value
            records += _batch(calls, thinking=thinking)
        elif kind in ("user", "agent"):
            records.append(_message(value, kind))
        elif kind == "request":
            records.append(_envelope("CondensationRequest", "environment"))
    return records


_call = st.tuples(st.sampled_from(["ls", "pytest", "git status", "cat a.py"]), st.sampled_from([False, False, False, True]))
_batch_turn = st.tuples(st.just("tools"), st.tuples(st.lists(_call, min_size=1, max_size=3), st.sampled_from([False, False, True])))
_single_call = st.tuples(st.just("tools"), st.tuples(st.lists(_call, min_size=1, max_size=1), st.just(False)))
_turn = st.one_of(
    _batch_turn,
    _single_call,
    _single_call,
    _single_call,
    st.tuples(st.sampled_from(["user", "agent"]), st.sampled_from(["go on", "done?", "next"])),
    st.tuples(st.just("request"), st.none()),
)
"""A turn: a tool batch (1 to 3 parallel calls, some failing, some with thinking blocks: a tool loop
starts), a message, or a condensation request."""


@st.composite
def settings_of_the_sdk(draw: st.DrawFn) -> dict[str, Any]:
    keep_first = draw(st.integers(2, 5))  # the SDK's views open with the system prompt and the task: both in the head
    max_size = draw(st.integers(2 * (keep_first + 2), 40))
    return {
        "max_size": max_size,
        "keep_first": keep_first,
        "max_tokens": draw(st.none() | st.integers(100, 1500)),
        "max_input_tokens": draw(st.none() | st.integers(100, 1500)),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_turn, min_size=5, max_size=45).map(conversation), settings_of_the_sdk())
def test_generated_conversations_are_condensed_as_the_sdk_condenses_them(records: list[dict[str, Any]], config: dict[str, Any]) -> None:
    Walk(records, **config).run()


def test_a_request_and_a_tool_loop_at_the_cut_are_decided_as_the_sdk_decides() -> None:
    # A thinking model's tool loop spans the naive cut: the SDK snaps the cut past the whole loop.
    turns: list[tuple[str, Any]] = [("tools", ([("ls", False)], False)) for _ in range(6)]
    turns += [("tools", ([("pytest", False), ("git status", False)], True)), ("tools", ([("cat a.py", False)], False))]
    turns += [("tools", ([("ls", False)], False)) for _ in range(4)] + [("request", None), ("agent", "condensed?")]
    walk = Walk(conversation(turns), max_size=240, keep_first=2, max_tokens=None, max_input_tokens=None).run()
    assert walk.condensations == [("hard", "request")]
    assert walk.hard_resets == 0


def test_a_request_on_a_short_view_is_the_documented_hard_reset() -> None:
    turns: list[tuple[str, Any]] = [("tools", ([("ls", False)], False)), ("request", None), ("agent", "go on")]
    walk = Walk(conversation(turns), max_size=240, keep_first=2, max_tokens=None, max_input_tokens=None).run()
    assert walk.hard_resets == 1


def test_too_little_progress_past_a_tool_loop_in_the_head_is_a_hard_reset_as_in_the_sdk() -> None:
    # keep_first 3 ends inside a thinking tool loop, so forgetting starts after it, three events
    # short of the cut: under minimum_progress (0.1 of 37), so the SDK resets the context.
    turns: list[tuple[str, Any]] = [("tools", ([("pytest", False)], True))] + [("tools", ([("ls", False)], False))] * 8
    turns += [("agent", "so far")] + [("tools", ([("ls", False)], False))] * 8 + [("request", None), ("agent", "condensed?")]
    walk = Walk(conversation(turns), max_size=240, keep_first=3, max_tokens=None, max_input_tokens=None).run()
    assert walk.condensations == [("hard", "request")]
    assert walk.hard_resets == 1
