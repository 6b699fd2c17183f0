"""A real OpenHands SDK conversation, offline: 60+ steps through a condenser, every request a valid chat,
and the persisted folder read back here with the views the SDK showed its model.

One conversation per condenser (module-scoped, a few seconds each): the SDK's own
`LLMSummarizingCondenser` (scripted summarizer), and ours, `OpenHandsMemoryCondenser`, with our
`llm` strategy and with a pipeline of observation masking and amortized forgetting. The harness is
`openhands_memory.integrations.openhands_sdk.testing` (a scripted model at litellm's
`mock_response`, two real tools, a request recorder).

How a step here matches a step there: the SDK's agent makes one model request per step, except at
a step where its condenser returns a `Condensation` (appended to the log, no request). Our replay's
agent steps are the points before each model response's first action, so replay step k is the
SDK's k-th model request (1-based), and what our replay shows at step k, rendered, is that request.
A condenser's view transforms (masking) are not in the log: the replay runs the same pipeline on
top of the log's condensations (`--pipeline FILE --recorded`) to show them again.

What is compared, message by message: role, text parts, tool calls (id, name, arguments) and the
`tool_call_id` of results. Two differences, both deliberate: consecutive user messages (see
`comparable`), and the tools: the SDK's log holds their names and descriptions but not their
parameter schemas (the SDK builds those from its action classes), so our replay lists the same
tools by name and description only.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk.context.condenser import CondenserBase  # noqa: E402
from openhands.sdk.context.view import View as SDKView  # noqa: E402
from openhands.sdk.event import Event as SDKEvent  # noqa: E402

from openhands_memory import cli  # noqa: E402
from openhands_memory.condenser import Condenser, NoOpCondenser  # noqa: E402
from openhands_memory.events import AgentCondensationObservation, SystemMessageAction, load_events  # noqa: E402
from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402
from openhands_memory.integrations.openhands_sdk.testing import (  # noqa: E402
    ConversationRun,
    ScriptedLLM,
    check_valid_chat,
    run_scripted_conversation,
    summarizing_condenser,
)
from openhands_memory.llm.message import to_litellm_dicts  # noqa: E402
from openhands_memory.pipeline import Pipeline, load_pipeline_config  # noqa: E402
from openhands_memory.replay import AgentStep, Replayer  # noqa: E402

STEPS = 60
"""Tool-call steps the scripted agent takes before its `finish` call."""


@dataclass
class Scenario:
    """One condenser in the SDK conversation, and how our replay shows what it showed."""

    name: str
    make: Callable[[Path], tuple[CondenserBase, ScriptedLLM | None]]
    """Builds the SDK condenser (given a folder for files), and its scripted summarizer if it has one."""
    pipeline_file: str | None = None
    """Our pipeline file's text: the condenser in the SDK (ours), and the pipeline the replay runs on top of
    the log's condensations. None: the replay applies the log's condensations only."""
    transforms_views: bool = False
    """The condenser changes views beyond its condensations (masking): the log alone does not show them."""
    has_summaries: bool = True


def _sdk_summarizing(folder: Path) -> tuple[CondenserBase, ScriptedLLM | None]:
    return summarizing_condenser(max_size=24, keep_first=2)


OURS_SUMMARIZING = """\
[condenser]
type = "llm"
keep_first = 2
max_size = 30

[condenser.llm_config]
model = "gpt-4o"
mock_response = "The agent listed, read and counted the notes files of the workspace."
"""
"""Our `llm` strategy; its model answers through litellm's `mock_response` (offline)."""

OURS_MASKING_PIPELINE = """\
[condenser]
type = "pipeline"

[[condenser.condensers]]
type = "observation_masking"
attention_window = 6

[[condenser.condensers]]
type = "amortized"
keep_first = 2
max_size = 30
"""
"""Our observation masking (a view transform), then amortized forgetting (condensations)."""


def _ours(folder: Path) -> tuple[CondenserBase, ScriptedLLM | None]:
    """`OpenHandsMemoryCondenser` from the scenario's pipeline file, the file our replay reads too."""
    return OpenHandsMemoryCondenser.from_file(folder / "pipeline.toml"), None


SCENARIOS = [
    Scenario("sdk-LLMSummarizingCondenser", _sdk_summarizing),
    Scenario("ours-llm", _ours, OURS_SUMMARIZING),
    Scenario("ours-masking-amortized", _ours, OURS_MASKING_PIPELINE, transforms_views=True, has_summaries=False),
]


@dataclass
class Ran:
    """A scenario's conversation, run once for the module."""

    scenario: Scenario
    run: ConversationRun
    pipeline: Path | None
    """The pipeline file (ours), or None."""

    def replay_pipeline(self) -> Pipeline:
        """What the replay runs at each step, on top of the log's condensations."""
        if self.pipeline is None:
            return Pipeline(NoOpCondenser(), "recorded condensations")
        config = load_pipeline_config(self.pipeline)
        return Pipeline(Condenser.from_config(config.condenser), self.scenario.name, config.history_policy)

    def pipeline_args(self) -> list[str]:
        return [] if self.pipeline is None else ["--pipeline", str(self.pipeline)]


@pytest.fixture(scope="module", params=SCENARIOS, ids=lambda s: s.name)
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    scenario: Scenario = request.param
    base = tmp_path_factory.mktemp(scenario.name)
    pipeline = None
    if scenario.pipeline_file is not None:
        pipeline = base / "pipeline.toml"
        pipeline.write_text(scenario.pipeline_file)
    condenser, summarizer = scenario.make(base)
    run = run_scripted_conversation(base / "conversations", base / "workspace", condenser=condenser, steps=STEPS)
    run.summarizer = summarizer
    return Ran(scenario, run, pipeline)


# --- the conversation ran -------------------------------------------------------------------------


def test_conversation_runs_to_its_finish_through_several_condensations(ran: Ran) -> None:
    run = ran.run
    assert run.status == "finished"
    assert len(run.agent_llm.requests) == STEPS + 1  # 60 tool-call steps, then the finish call
    assert len(run.condensations) >= 5
    # Each condensation is a step of its own (no model request), so the agent took 60+ steps in all.
    assert len(run.agent_llm.requests) + len(run.condensations) >= 66
    # The conversation kept going after each condensation: the model was asked again after the last one.
    assert run.requests_before[-1] < len(run.agent_llm.requests)
    # Each row of the benchmark's table: the view shrinks by what was forgotten (and gains the summary).
    rows = run.condensation_rows()
    assert [row.step for row in rows] == [r + n for n, r in enumerate(run.requests_before, start=1)]
    for row in rows:
        assert (row.summary_offset is not None) == ran.scenario.has_summaries
        assert row.view_after == row.view_before - row.forgotten + (1 if ran.scenario.has_summaries else 0) < row.view_before
    if run.summarizer is not None:
        # The SDK's summarizer was asked once per condensation, and each condensation carries its answer.
        assert len(run.summarizer.requests) == len(run.condensations)
        assert [c.summary.split(":")[0] for c in run.condensations] == [f"Summary {n}" for n in range(1, len(rows) + 1)]  # type: ignore[union-attr]


def test_tools_really_ran_in_the_workspace(ran: Ran) -> None:
    run = ran.run
    results: dict[str, str] = {}
    for request in run.agent_llm.requests:  # each result as the model first saw it (later it may be masked)
        for call, text in _tool_results(request).items():
            results.setdefault(call, text)
    counted = [text.split()[:2] for text in results.values() if re.fullmatch(r"\d+ notes/\S+\n\n\[exit code 0\]", text)]
    assert len(counted) >= 10
    for lines, name in counted:
        assert int(lines) == len((run.workspace / name).read_text().splitlines())
    listing = next(text for text in results.values() if text.startswith("notes/part_00.txt\n"))
    assert listing.splitlines() == sorted(p.relative_to(run.workspace).as_posix() for p in (run.workspace / "notes").iterdir())


def test_every_request_the_model_got_is_a_valid_chat(ran: Ran) -> None:
    for request in ran.run.agent_llm.requests:
        check_valid_chat(request)  # raises, naming the message, if not
    assert all(names == ["list_files", "run_command", "finish"] for names in ran.run.agent_llm.tool_names)
    if ran.run.summarizer is not None:
        # The SDK summarizer's requests: its instructions as system, the events as user.
        assert all([m["role"] for m in request] == ["system", "user"] for request in ran.run.summarizer.requests)


# --- the persisted folder, read here -----------------------------------------------------------------


def test_replayed_messages_equal_what_the_sdk_sent_its_model_at_every_step(ran: Ran) -> None:
    requests = ran.run.agent_llm.requests
    steps = list(_replayed_steps(ran.run.folder, ran.replay_pipeline()))
    assert len(steps) == len(requests)
    for (step, ours), sent in zip(steps, requests, strict=True):
        assert step.condensations == 0, f"step {step.number}: the replay condensed where the SDK had not"
        assert comparable(ours) == comparable(sent), f"step {step.number}: the replayed chat differs from the request"
    # The tools the SDK offered are the ones our imported system prompt lists.
    system = steps[0][0].view[0]
    assert isinstance(system, SystemMessageAction) and system.tools is not None
    assert [tool["function"]["name"] for tool in system.tools] == ran.run.agent_llm.tool_names[0]
    if ran.scenario.has_summaries:
        assert sum(any(isinstance(e, AgentCondensationObservation) for e in step.shown) for step, _ in steps) > 10
    if ran.scenario.transforms_views:
        # The log's condensations alone do not show what the SDK showed: the transform is the pipeline's.
        recorded_only = _replayed_steps(ran.run.folder, Pipeline(NoOpCondenser(), "recorded condensations"))
        assert any(comparable(ours) != comparable(sent) for (_, ours), sent in zip(recorded_only, requests, strict=True))


def test_replayed_views_hold_the_events_of_the_sdks_own_view(ran: Ran) -> None:
    """At every step, the SDK's `View.from_events` over the persisted events before that step's action
    holds the same events, in the same order, as our view of the same prefix (by the SDK's ids)."""
    sdk_events = _sdk_events(ran.run.folder)
    index_of = {event.id: index for index, event in enumerate(sdk_events)}
    uuid_of = {event.id: event.original_id for event in load_events(ran.run.folder)}
    for step, _ in _replayed_steps(ran.run.folder, ran.replay_pipeline()):
        prefix = sdk_events[: index_of[step.event.original_id]]
        theirs = [event.id for event in SDKView.from_events(prefix).events]
        # A summary is the SDK's `<condensation id>-summary`; ours is caused by that condensation.
        ours = [f"{uuid_of[e.cause]}-summary" if isinstance(e, AgentCondensationObservation) else e.original_id for e in step.view]
        assert ours == theirs, f"step {step.number}"


def test_cli_replays_views_and_benches_the_sdk_conversation_folder(
    ran: Ran, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = str(ran.run.folder)
    condensations = len(ran.run.condensations)
    requests = len(ran.run.agent_llm.requests)
    pipeline = ran.pipeline_args()

    assert cli.main(["replay", *pipeline, "--recorded", "--tokenizer", "approximate", "--json", folder]) == 0
    report = json.loads(capsys.readouterr().out)
    # The SDK names the folder by the id's hex; `str(conversation.id)` (dashes) names it too.
    dashed = str(Path(folder).with_name(str(uuid.UUID(Path(folder).name))))
    assert not Path(dashed).exists()
    assert cli.main(["replay", *pipeline, "--recorded", "--tokenizer", "approximate", "--json", dashed]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == report["steps"]
    assert (report["steps"], report["condensations"], report["new_condensations"]) == (requests, condensations, 0)
    assert [c["summary"] for c in report["condensation_list"]] == [c.summary for c in ran.run.condensations]
    assert report["tool_call_repairs"] == 0

    # `view --at k --messages` is the k-th request: at a step in the middle, and at the last step.
    for step in (requests // 2, requests):
        argv = ["view", *pipeline, "--recorded", "--at", str(step), "--messages", "--json", "--tokenizer", "approximate", folder]
        assert cli.main(argv) == 0  # --recorded alone: the log's own condensations, as the SDK applied them
        shown = json.loads(capsys.readouterr().out)
        sent = ran.run.agent_llm.requests[step - 1]
        assert comparable(shown) == comparable(sent)
        # How they differ, exactly (README, "Use with the OpenHands SDK"): one message fewer there for each
        # user message that follows a user message here (the SDK merges them into one, a text part each).
        follows = sum(1 for before, after in zip(shown, shown[1:]) if before["role"] == after["role"] == "user")
        assert len(shown) - len(sent) == follows

    # A pipeline of ours decides afresh over the SDK's events (its condensations dropped), in replay and bench.
    afresh = tmp_path / "amortized.toml"
    afresh.write_text('[condenser]\ntype = "amortized"\nkeep_first = 2\nmax_size = 30\n')
    assert cli.main(["replay", "--pipeline", str(afresh), "--tokenizer", "approximate", "--json", folder]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["steps"] == requests and replayed["new_condensations"] >= 3 and replayed["tool_call_repairs"] == 0
    out = tmp_path / "bench"
    assert cli.main(["bench", "--pipeline", str(afresh), "--out", str(out), "--no-plot", folder]) == 0
    capsys.readouterr()
    [bench] = json.loads((out / "results.json").read_text())["runs"]
    assert (bench["steps"], bench["condensations"]) == (requests, replayed["new_condensations"])


# --- helpers -----------------------------------------------------------------------------------------


def _replayed_steps(folder: Path, pipeline: Pipeline) -> Iterator[tuple[AgentStep, list[dict[str, Any]]]]:
    """Every agent step of the folder replayed (its condensations kept, `pipeline` on top), and the chat it renders."""
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
