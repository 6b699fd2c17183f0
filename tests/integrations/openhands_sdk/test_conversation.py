"""A real OpenHands SDK conversation, offline: 60+ steps through a condenser, every request a valid chat,
and the persisted folder read back here with the views the SDK showed its model.

One conversation per condenser (module-scoped, a few seconds each): the SDK's own
`LLMSummarizingCondenser` with a scripted summarizer. The harness is
`openhands_memory.integrations.openhands_sdk.testing`.

How a step here matches a step there: the SDK's agent makes one model request per step, except at
a step where its condenser returns a `Condensation` (appended, no request). Our replay's agent steps
are the points before each model response's first action, so replay step k is the SDK's k-th
model request (1-based), and the replayed view at step k, rendered, is that request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk.context.view import View as SDKView  # noqa: E402
from openhands.sdk.event import Condensation, Event as SDKEvent  # noqa: E402

from openhands_memory import cli  # noqa: E402
from openhands_memory.condenser import NoOpCondenser  # noqa: E402
from openhands_memory.events import AgentCondensationObservation, load_events  # noqa: E402
from openhands_memory.integrations.openhands_sdk.testing import (  # noqa: E402
    ConversationRun,
    check_valid_chat,
    run_scripted_conversation,
    summarizing_condenser,
)
from openhands_memory.llm.message import to_litellm_dicts  # noqa: E402
from openhands_memory.pipeline import Pipeline  # noqa: E402
from openhands_memory.replay import AgentStep, Replayer  # noqa: E402

STEPS = 60
"""Tool-call steps the scripted agent takes before its `finish` call."""


@pytest.fixture(scope="module")
def summarizing_run(tmp_path_factory: pytest.TempPathFactory) -> ConversationRun:
    """The 60-step conversation under the SDK's `LLMSummarizingCondenser` (max_size 24, keep_first 2)."""
    base = tmp_path_factory.mktemp("sdk-summarizing")
    condenser, summarizer = summarizing_condenser(max_size=24, keep_first=2)
    run = run_scripted_conversation(base / "conversations", base / "workspace", condenser=condenser, steps=STEPS)
    run.summarizer = summarizer
    return run


# --- the conversation ran -------------------------------------------------------------------------


def test_conversation_runs_to_its_finish_through_several_condensations(summarizing_run: ConversationRun) -> None:
    run = summarizing_run
    assert run.status == "finished"
    assert len(run.agent_llm.requests) == STEPS + 1  # 60 tool-call steps, then the finish call
    assert len(run.condensations) >= 5
    # Each condensation is a step of its own (no model request), so the agent took 60+ steps in all.
    assert len(run.agent_llm.requests) + len(run.condensations) >= 66
    # The summarizer was asked once per condensation, and every condensation carries its answer.
    assert run.summarizer is not None and len(run.summarizer.requests) == len(run.condensations)
    assert [c.summary for c in run.condensations] == [
        f"Summary {n}: " + c.summary.split(": ", 1)[1] for n, c in enumerate(run.condensations, start=1)  # type: ignore[union-attr]
    ]
    # The conversation kept going after each condensation: the last one came well before the end.
    positions = [run.events.index(c) for c in run.condensations]
    assert len(run.events) - positions[-1] > 10
    # Each row of the benchmark's table: the view over max_size shrinks by what was forgotten, plus its summary.
    rows = run.condensation_rows()
    assert [row.step for row in rows] == [r + n for n, r in enumerate(run.requests_before, start=1)]
    for row in rows:
        assert row.view_before > 24 and row.summary_offset == 2
        assert row.view_after == row.view_before - row.forgotten + 1 < row.view_before


def test_tools_really_ran_in_the_workspace(summarizing_run: ConversationRun) -> None:
    run = summarizing_run
    results = _tool_results(run.agent_llm.requests[-1])  # the last request holds the latest results
    counted = {text.split()[1]: int(text.split()[0]) for text in results.values() if re.fullmatch(r"\d+ notes/\S+\n\n\[exit code 0\]", text)}
    assert counted, "no `wc -l` result in the last request"
    workspace = run.workspace
    for name, lines in counted.items():
        assert lines == len((workspace / name).read_text().splitlines())
    every_result = {call: text for request in run.agent_llm.requests for call, text in _tool_results(request).items()}
    listing = next(text for text in every_result.values() if text.startswith("notes/part_00.txt\n"))
    assert listing.splitlines() == sorted(p.relative_to(workspace).as_posix() for p in (workspace / "notes").iterdir())


def test_every_request_the_model_got_is_a_valid_chat(summarizing_run: ConversationRun) -> None:
    requests = summarizing_run.agent_llm.requests
    for number, request in enumerate(requests):
        check_valid_chat(request)  # raises, naming the message, if not
    assert all(names == ["list_files", "run_command", "finish"] for names in summarizing_run.agent_llm.tool_names)
    # The summarizer's requests are chats too: its instructions as system, the events as user.
    assert summarizing_run.summarizer is not None
    assert all([m["role"] for m in request] == ["system", "user"] for request in summarizing_run.summarizer.requests)


@pytest.mark.parametrize(
    ("chat", "message"),
    [
        ([{"role": "user", "content": "hi"}], "the chat does not start with the system message: ['user']"),
        (
            [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "system", "content": "s"}],
            "message 2: a second system message",
        ),
        (
            [{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "c1", "content": "r"}],
            "message 1: tool result 'c1' answers no pending call ([])",
        ),
        (
            [{"role": "system", "content": "s"}, _call := {"role": "assistant", "tool_calls": [{"id": "c1"}, {"id": "c2"}]},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}, {"role": "assistant", "content": "next"}],
            "message 3 (assistant): tool calls ['c2'] unanswered before it",
        ),
        (
            [{"role": "system", "content": "s"}, _call, {"role": "tool", "tool_call_id": "c1", "content": "r"},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}],
            "message 3: tool result 'c1' answers no pending call (['c2'])",
        ),
        ([{"role": "system", "content": "s"}, _call], "tool calls ['c1', 'c2'] unanswered at the end"),
        (
            [{"role": "system", "content": "s"}, {"role": "assistant", "tool_calls": [{"id": "c1"}, {"id": "c1"}]}],
            "message 1: repeated tool call ids ['c1', 'c1']",
        ),
    ],
)  # fmt: skip
def test_check_valid_chat_names_what_is_wrong(chat: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_valid_chat(chat)


# --- the persisted folder, read here -----------------------------------------------------------------


def test_replayed_messages_equal_what_the_sdk_sent_its_model_at_every_step(summarizing_run: ConversationRun) -> None:
    requests = summarizing_run.agent_llm.requests
    steps = list(_replayed_steps(summarizing_run.folder))
    assert len(steps) == len(requests)
    for (step, ours), sent in zip(steps, requests, strict=True):
        assert comparable(ours) == comparable(sent), f"step {step.number}: the replayed chat differs from the request"
    # The comparison saw the summaries: several steps' chats hold one.
    assert sum("Summary " in json.dumps(request) for request in requests) > len(requests) // 2


def test_replayed_views_hold_the_events_of_the_sdks_own_view(summarizing_run: ConversationRun) -> None:
    """At every step, the SDK's `View.from_events` over the persisted events before that step's action
    holds the same events, in the same order, as our view of the same prefix (by the SDK's ids)."""
    sdk_events = _sdk_events(summarizing_run.folder)
    index_of = {event.id: index for index, event in enumerate(sdk_events)}
    uuid_of = {event.id: event.original_id for event in load_events(summarizing_run.folder)}
    summaries = 0
    for step, _ in _replayed_steps(summarizing_run.folder):
        prefix = sdk_events[: index_of[step.event.original_id]]
        theirs = [event.id for event in SDKView.from_events(prefix).events]
        # A summary is the SDK's `<condensation id>-summary`; ours is caused by that condensation.
        ours = [f"{uuid_of[e.cause]}-summary" if isinstance(e, AgentCondensationObservation) else e.original_id for e in step.shown]
        assert ours == theirs, f"step {step.number}"
        summaries += any(isinstance(event, AgentCondensationObservation) for event in step.shown)
    assert summaries > 10


def test_cli_replays_views_and_benches_the_sdk_conversation_folder(
    summarizing_run: ConversationRun, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = str(summarizing_run.folder)
    condensations = len(summarizing_run.condensations)
    requests = len(summarizing_run.agent_llm.requests)

    assert cli.main(["replay", "--recorded", "--tokenizer", "approximate", "--json", folder]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["steps"], report["condensations"], report["new_condensations"]) == (requests, condensations, 0)
    assert [c["summary"] for c in report["condensation_list"]] == [c.summary for c in summarizing_run.condensations]
    assert report["tool_call_repairs"] == 0

    # `view --at k --messages` is the k-th request: at a step after a condensation, and at the last step.
    for step in (requests // 2, requests):
        assert cli.main(["view", "--at", str(step), "--messages", "--json", "--tokenizer", "approximate", folder]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert comparable(shown) == comparable(summarizing_run.agent_llm.requests[step - 1])

    # A pipeline of ours decides afresh over the SDK's events (its condensations dropped), in replay and bench.
    pipeline = tmp_path / "amortized.toml"
    pipeline.write_text('[condenser]\ntype = "amortized"\nkeep_first = 2\nmax_size = 30\n')
    assert cli.main(["replay", "--pipeline", str(pipeline), "--tokenizer", "approximate", "--json", folder]) == 0
    afresh = json.loads(capsys.readouterr().out)
    assert afresh["steps"] == requests and afresh["new_condensations"] >= 3 and afresh["tool_call_repairs"] == 0
    out = tmp_path / "bench"
    assert cli.main(["bench", "--pipeline", str(pipeline), "--out", str(out), "--no-plot", folder]) == 0
    capsys.readouterr()
    [bench] = json.loads((out / "results.json").read_text())["runs"]
    assert (bench["steps"], bench["condensations"]) == (requests, afresh["new_condensations"])


# --- helpers -----------------------------------------------------------------------------------------


def _replayed_steps(folder: Path) -> Iterator[tuple[AgentStep, list[dict[str, Any]]]]:
    """Every agent step of the folder replayed with its own condensations, and the chat it renders."""
    pipeline = Pipeline(NoOpCondenser(), "recorded condensations")
    replayer = Replayer(pipeline, keep_recorded=True)
    for item in replayer.replay(load_events(folder)):
        if isinstance(item, AgentStep):
            yield item, to_litellm_dicts(pipeline.show(item.shown, replayer.initial_user_action).messages)


def comparable(chat: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A chat as (role, text parts, tool calls, tool_call_id), for comparing ours with the SDK's.

    The one deliberate difference: consecutive user messages. The SDK sends them as one message
    with each text as a part (`events_to_messages` merges plain user turns); we render them as
    OpenHands V0 does, separate messages, each after the first set apart by a blank line. Both
    carry the same texts in the same order; here they are merged the SDK's way.
    """
    rows: list[tuple[Any, ...]] = []
    for message in chat:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [p["text"] for p in content or () if p.get("type") == "text"]
        calls = tuple(
            (call["id"], call["function"]["name"], json.loads(call["function"]["arguments"]))
            for call in message.get("tool_calls") or ()
        )
        role = message["role"]
        if role == "user" and rows and rows[-1][0] == "user" and not calls:
            rows[-1] = ("user", rows[-1][1] + tuple(p.removeprefix("\n\n") for p in parts), (), None)
            continue
        rows.append((role, tuple(parts), calls, message.get("tool_call_id")))
    return rows


def _tool_results(chat: Sequence[dict[str, Any]]) -> dict[str, str]:
    return {
        m["tool_call_id"]: "".join(p["text"] for p in m["content"] if p.get("type") == "text")
        for m in chat
        if m["role"] == "tool"
    }


def _sdk_events(folder: Path) -> list[SDKEvent]:
    """The persisted events as the SDK reads them, in index order."""
    files = sorted((folder / "events").glob("event-*.json"), key=lambda p: int(p.name.split("-")[1]))
    return [SDKEvent.model_validate_json(file.read_text()) for file in files]
