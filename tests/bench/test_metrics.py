"""Per-step accumulation (`PromptMeter`, `RunMetrics`) and per-pipeline totals (`summarize_runs`), worked out by hand."""

from __future__ import annotations

import pytest

from openhands_memory.bench.metrics import PromptMeter, RunMetrics, common_prefix_length, summarize_runs
from openhands_memory.condenser import CondensationMetadata, TokenCounter
from openhands_memory.errors import MalformedEventError
from openhands_memory.events import MessageAction, SystemMessageAction
from openhands_memory.llm import Message, TextContent

from ._helpers import WordTokenizer


def text(role: str, words: str) -> Message:
    return Message(role=role, content=(TextContent(text=words),))  # type: ignore[arg-type]


SYSTEM = text("system", "a b")  # <|system|> a b: 3 tokens
TASK = text("user", "c d e")  # <|user|> c d e: 4 tokens
REPLY = text("assistant", "f g")  # <|assistant|> f g: 3 tokens


def test_common_prefix_length_counts_leading_equal_tokens() -> None:
    assert common_prefix_length([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix_length([1, 2], [1, 2, 3]) == 2
    assert common_prefix_length([], [1]) == 0
    assert common_prefix_length(["x"], ["y"]) == 0


def test_first_step_has_no_cached_prefix_and_a_grown_prompt_caches_all_of_the_old_one() -> None:
    meter = PromptMeter(WordTokenizer())
    assert meter.measure([SYSTEM, TASK]) == (7, 0)
    assert meter.measure([SYSTEM, TASK, REPLY]) == (10, 7)


def test_a_changed_message_caches_only_up_to_its_first_changed_token() -> None:
    meter = PromptMeter(WordTokenizer())
    meter.measure([SYSTEM, TASK, REPLY])
    masked = text("user", "c X e")
    # system (3) + `<|user|> c` (2) are the same; `X` differs.
    assert meter.measure([SYSTEM, masked, REPLY]) == (10, 5)


def test_a_forgotten_message_ends_the_cached_prefix_at_the_message_boundary() -> None:
    meter = PromptMeter(WordTokenizer())
    meter.measure([SYSTEM, TASK, REPLY])
    # `<|assistant|>` differs from `<|user|>` at once: only the system message is cached.
    assert meter.measure([SYSTEM, REPLY]) == (6, 3)


def test_the_prefix_is_compared_across_message_boundaries_once_a_message_differs() -> None:
    meter = PromptMeter(WordTokenizer())
    meter.measure([text("user", "x"), text("user", "y")])  # <|user|> x <|user|> y
    # Another message whose tokens start with the old two messages' tokens.
    assert meter.measure([text("user", "x <|user|> y z")]) == (5, 4)


def test_tools_come_first_and_count() -> None:
    meter = PromptMeter(WordTokenizer())
    tools = [{"type": "function", "function": {"name": "run"}}]
    # '[{"function":{"name":"run"},"type":"function"}]' has no spaces: one word.
    assert meter.measure([SYSTEM], tools=tools) == (4, 0)
    assert meter.measure([SYSTEM, TASK], tools=tools) == (8, 4)
    other = [{"type": "function", "function": {"name": "edit"}}]
    assert meter.measure([SYSTEM, TASK], tools=other) == (8, 0)


def test_each_message_is_tokenized_once_however_many_steps_show_it() -> None:
    tokenizer = WordTokenizer()
    meter = PromptMeter(tokenizer)
    meter.measure([SYSTEM, TASK])
    meter.measure([SYSTEM, TASK, REPLY])
    meter.measure([SYSTEM, TASK, REPLY])
    assert tokenizer.encoded == ["<|system|>\na b", "<|user|>\nc d e", "<|assistant|>\nf g"]


def test_with_a_renderer_the_meter_is_a_token_counter_of_the_rendered_prompt() -> None:
    tools = [{"type": "function", "function": {"name": "run"}}]
    system = SystemMessageAction(content="a b", tools=tools)
    task = MessageAction(content="c d e")
    rendered = {id(system): SYSTEM, id(task): TASK}
    meter = PromptMeter(WordTokenizer(), render=lambda events: [rendered[id(e)] for e in events])
    assert isinstance(meter, TokenCounter)
    assert meter([system]) == 4 and meter.last_cached == 0
    assert meter([system, task]) == 8 and meter.last_cached == 4
    with pytest.raises(ValueError, match="nothing to render events with: pass render="):
        PromptMeter(WordTokenizer())([system])


def usage(calls: int, prompt: int, completion: int, cost: float, priced: int | None = None) -> dict:
    return {
        "accumulated_cost": cost,
        "accumulated_token_usage": {"prompt_tokens": prompt, "completion_tokens": completion},
        "costs": [{"model": "m", "cost": cost / calls}] * (calls if priced is None else priced),
        "response_latencies": [],
        "token_usages": [{}] * calls,
    }


def record(condenser: str, llm_usage: dict | None = None) -> CondensationMetadata:
    return CondensationMetadata(condenser, "size", 10, 5, None, None, 5, 0.0, llm_usage=llm_usage)


def test_run_metrics_add_up_steps_and_condensations() -> None:
    metrics = RunMetrics(context_limit=100)
    for tokens, cached in [(50, 0), (120, 50), (130, 120), (80, 10)]:
        metrics.add_step(tokens, cached)
    metrics.add_condensation(record("amortized"))
    metrics.add_condensation(record("llm", usage(1, 300, 20, 0.5)))
    metrics.add_condensation({"condenser": "llm", "llm_usage": usage(2, 700, 40, 1.0)})
    metrics.add_condensation(None)
    data = metrics.to_dict()
    assert data["steps"] == 4
    assert data["total_prompt_tokens"] == 380
    assert data["peak_context_tokens"] == 130
    assert data["peak_step"] == 3
    assert data["mean_context_tokens"] == 95.0
    assert data["final_context_tokens"] == 80
    assert data["steps_over_limit"] == 2
    assert data["cached_prefix_tokens"] == 180
    assert data["cache_share"] == pytest.approx(180 / 380)
    assert data["condensations"] == 4
    assert data["condensed_by"] == {"amortized": 1, "llm": 2, "unknown": 1}
    assert data["summarizer_calls"] == 3
    assert data["summarizer_prompt_tokens"] == 1000
    assert data["summarizer_completion_tokens"] == 60
    assert data["summarizer_cost"] == pytest.approx(1.5)
    assert data["summarizer_cost_known"] is True
    assert data["per_step"] == {"tokens": [50, 120, 130, 80], "cached": [0, 50, 120, 10]}


def test_a_call_without_a_price_makes_the_cost_unknown() -> None:
    metrics = RunMetrics(context_limit=100)
    metrics.add_condensation(record("llm", usage(2, 10, 1, 0.1, priced=1)))
    assert metrics.to_dict()["summarizer_cost_known"] is False


def test_a_run_without_steps_has_no_peak_and_no_share() -> None:
    data = RunMetrics(context_limit=100).to_dict()
    assert (data["steps"], data["peak_step"], data["mean_context_tokens"], data["cache_share"]) == (0, None, 0.0, None)


def run(**values: object) -> dict:
    base = {
        "steps": 0, "total_prompt_tokens": 0, "peak_context_tokens": 0, "cached_prefix_tokens": 0,
        "facts_forgotten": 0, "facts_retained": 0,
    }  # fmt: skip
    return {**base, **values}


def test_summarize_runs_sums_counts_takes_the_largest_peak_and_ratios_of_sums() -> None:
    totals = summarize_runs(
        [
            run(steps=2, total_prompt_tokens=100, peak_context_tokens=60, cached_prefix_tokens=40,
                condensations=1, facts_forgotten=4, facts_retained=1, summarizer_cost=0.25, condenser_seconds=0.5),
            run(steps=3, total_prompt_tokens=200, peak_context_tokens=90, cached_prefix_tokens=110,
                condensations=2, facts_forgotten=0, summarizer_cost=0.5, summarizer_cost_known=False),
            {"log": "bad.json", "pipeline": "p", "error": "MalformedEventError: ..."},
        ]
    )  # fmt: skip
    assert totals["logs"] == 2
    assert totals["errors"] == 1
    assert totals["steps"] == 5
    assert totals["total_prompt_tokens"] == 300
    assert totals["peak_context_tokens"] == 90
    assert totals["mean_context_tokens"] == 60.0
    assert totals["cache_share"] == pytest.approx(150 / 300)
    assert totals["condensations"] == 3
    assert totals["retention"] == 0.25
    assert totals["summarizer_cost"] == 0.75
    assert totals["summarizer_cost_known"] is False
    assert totals["condenser_seconds"] == 0.5


def test_summarize_runs_of_nothing_forgotten_has_no_retention() -> None:
    totals = summarize_runs([run(steps=1, total_prompt_tokens=10, peak_context_tokens=10)])
    assert totals["retention"] is None
    assert summarize_runs([])["cache_share"] is None


def test_summarize_runs_counts_recoverable_facts_and_the_cost_of_the_search() -> None:
    totals = summarize_runs(
        [
            run(facts_forgotten=4, facts_retained=1, facts_recoverable=3, recall_index_seconds=0.5, recall_searches=4),
            run(facts_forgotten=2, facts_recoverable=0, recall_index_seconds=0.25, recall_searches=2),
        ]
    )
    assert (totals["facts_recoverable"], totals["recoverability"]) == (3, 0.5)
    assert (totals["recall_index_seconds"], totals["recall_searches"]) == (0.75, 6)


def test_summarize_runs_with_a_run_that_did_not_search_has_no_recoverable_count() -> None:
    totals = summarize_runs([run(facts_forgotten=4, facts_recoverable=3), run(facts_forgotten=2)])
    assert (totals["facts_recoverable"], totals["recoverability"]) == (None, None)


def compressed(kind: str, **fields: object) -> dict:
    record = {"event_type": kind, "compressed_message_count": 2, "previous_message_id": 1, "next_message_id": 4,
              "over_threshold_after": False, "exhausted": False, **fields}  # fmt: skip
    return {"condenser": "auto_context", "extra": {"compression": record}}


def test_run_metrics_count_compressions_by_type_lightest_first() -> None:
    metrics = RunMetrics(context_limit=100)
    metrics.add_condensation(compressed("PREVIOUS_ROUND_CONVERSATION_SUMMARY"))
    metrics.add_condensation(compressed("TOOL_INVOCATION_COMPRESS"))
    metrics.add_condensation(compressed("PREVIOUS_ROUND_CONVERSATION_SUMMARY"))
    metrics.add_condensation(record("amortized"))  # no compression record
    metrics.add_condensation(None)
    data = metrics.to_dict()
    assert data["compressions"] == {"TOOL_INVOCATION_COMPRESS": 1, "PREVIOUS_ROUND_CONVERSATION_SUMMARY": 2}
    assert data["condensed_by"] == {"auto_context": 3, "amortized": 1, "unknown": 1}
    assert RunMetrics(context_limit=100).to_dict()["compressions"] == {}


def test_a_malformed_compression_record_names_the_condensation() -> None:
    with pytest.raises(MalformedEventError, match=r"^id 12: invalid compression record: compressed_message_count:"):
        RunMetrics(context_limit=100).add_condensation(compressed("LARGE_MESSAGE_OFFLOAD", compressed_message_count="2"), event_id=12)


def test_summarize_runs_sums_compressions_type_by_type() -> None:
    totals = summarize_runs(
        [
            run(compressions={"LARGE_MESSAGE_OFFLOAD": 2, "CURRENT_ROUND_MESSAGE_COMPRESS": 1}),
            run(compressions={"TOOL_INVOCATION_COMPRESS": 3, "LARGE_MESSAGE_OFFLOAD": 1}),
            run(),  # a pipeline without a progressive strategy
            {"log": "bad.json", "pipeline": "p", "error": "MalformedEventError: ...", "compressions": {"LARGE_MESSAGE_OFFLOAD": 9}},
        ]
    )
    assert totals["compressions"] == {"TOOL_INVOCATION_COMPRESS": 3, "LARGE_MESSAGE_OFFLOAD": 3, "CURRENT_ROUND_MESSAGE_COMPRESS": 1}
    assert list(totals["compressions"]) == ["TOOL_INVOCATION_COMPRESS", "LARGE_MESSAGE_OFFLOAD", "CURRENT_ROUND_MESSAGE_COMPRESS"]
    assert summarize_runs([run()])["compressions"] == {}
