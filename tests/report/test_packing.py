"""What a page embeds: each step's messages exactly as replayed, every distinct message stored once."""

from __future__ import annotations

from pathlib import Path

from openhands_memory.llm.prompt_cache import resolve_pricing
from openhands_memory.pipeline import Pipeline
from openhands_memory.pipelines import shipped_pipelines
from openhands_memory.replay import load_pipeline, replay_events
from openhands_memory.report import build_report, capture_run, pack_runs, prompt_refs
from openhands_memory.stream.locations import load_log

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "synthetic_session_300.jsonl"


def _default() -> Pipeline:
    return load_pipeline(shipped_pipelines()["default"], model=None)


def test_each_step_holds_the_messages_the_replay_sent_and_its_cost_split() -> None:
    events = load_log(FIXTURE)
    pricing = resolve_pricing("gpt-4o")
    capture = capture_run(events, _default(), name="default", tokenizer=None, pricings=[pricing])
    data = pack_runs([capture], source="s", tokenizer="approximate", context_limit=1000, pricings=[pricing])
    (run,) = data["runs"]
    steps = prompt_refs(run["prompts"])
    assert [[data["messages"][ref] for ref in refs] for refs in steps] == capture.messages
    assert len(steps) == len(capture.report.steps) == len(run["tokens"])
    # the replay's own figures, unchanged
    plain = replay_events(events, condenser=_default(), tokenizer="approximate", pricing=[pricing])
    assert run["tokens"] == [s.tokens for s in plain.steps]
    split = run["pricing"][0]
    costs = plain.costs[pricing.name]
    assert sum(split["read"]) == costs["cache_read_tokens"] and sum(split["write"]) == costs["cache_write_tokens"]
    assert sum(split["uncached"]) == costs["uncached_tokens"]
    assert abs(sum(split["dollars"]) - costs["prompt_cost"]) < 1e-6
    assert split["kind"].count("break") == costs["cache_breaks"] and split["kind"].count("expired") == costs["cold_starts"]
    assert [c["id"] for c in run["condensations"]] == [c.id for c in plain.condensations] != []


def test_a_message_shared_by_steps_and_pipelines_is_stored_once() -> None:
    events = load_log(FIXTURE)
    no_condensation = load_pipeline(shipped_pipelines()["no_condensation"], model=None)
    data = build_report(events, [("default", _default()), ("none", no_condensation)], source="s", tokenizer=None)
    sent = sum(len(refs) for run in data["runs"] for refs in prompt_refs(run["prompts"]))
    stored = sum(len(row) for run in data["runs"] for row in run["prompts"])
    assert len(data["messages"]) < sent / 20  # 300 events: each message once, not once a step
    assert stored < sent / 20  # a step stores what changed since the step before


def test_the_events_a_condensation_forgot_are_marked_from_the_step_it_applied() -> None:
    events = load_log(FIXTURE)
    data = build_report(events, [("default", _default())], source="s", tokenizer=None)
    (run,) = data["runs"]
    first = run["condensations"][0]
    forgotten = {row[0]: row[3] for row in run["history"] if row[3] is not None}
    assert set(first["forgotten"]) <= set(forgotten)
    assert {forgotten[i] for i in first["forgotten"]} == {first["step"]}
