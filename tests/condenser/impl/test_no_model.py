"""Model-backed condensers without a model, and after a model error under `fallback`: the offline structured summarizer."""

from __future__ import annotations

import pytest

from openhands_memory.condenser import (
    AmortizedForgettingCondenser,
    Condensation,
    Condenser,
    LLMAttentionCondenser,
    LLMSummarizingCondenser,
    StructuredSummaryCondenser,
)
from openhands_memory.condenser._model_backed import ModelSummarizingCondenser
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME, OFFLINE_SUMMARY_HEADER
from openhands_memory.errors import LLMAuthenticationError
from openhands_memory.testing.fake_llm import litellm_error

from ._model_helpers import fake_llm, session

FAILING_RUN = "FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2\nE       AssertionError: assert 1 == 2\n"


def _session_with_a_failing_test(turns: int = 10):  # type: ignore[no-untyped-def]
    """System prompt, task, recall (4 events), a failing pytest run (ids 4-5), then shell turns."""
    s = session(0)
    _, observation = s.turn("pytest tests/test_x.py", FAILING_RUN)
    observation.metadata = {"exit_code": 1}
    for i in range(turns):
        s.turn(f"cmd{i}", f"output {i}")
    return s


TESTS_LINE = (
    "- `pytest tests/test_x.py` exit 1; failing: tests/test_x.py::test_y; first error: E AssertionError: assert 1 == 2 (events 4-5)"
)


@pytest.mark.parametrize("strategy", [LLMSummarizingCondenser, StructuredSummaryCondenser], ids=["llm", "structured"])
def test_a_summarizer_with_no_model_writes_the_offline_summary_and_says_so(strategy: type[ModelSummarizingCondenser]) -> None:
    s = _session_with_a_failing_test()
    condenser = strategy(max_size=20, keep_first=4)
    assert condenser.llm is None
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    summary = result.action.summary
    assert summary is not None and summary.startswith(OFFLINE_SUMMARY_HEADER)
    assert TESTS_LINE in summary.splitlines()
    assert result.metadata.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert result.metadata.extra["outcome"] == "offline summary"
    assert result.metadata.llm_usage is None and result.action.llm_metrics is None  # no model, no usage
    assert result.action.forgotten == condenser.plan(s.view).forgotten_ids


def test_a_config_without_llm_config_builds_a_condenser_with_no_model() -> None:
    condenser = Condenser.from_config({"type": "llm", "max_size": 20, "keep_first": 4})
    assert isinstance(condenser, LLMSummarizingCondenser) and condenser.llm is None
    result = condenser.condense(_session_with_a_failing_test().view)
    assert isinstance(result, Condensation) and result.action.summary is not None
    assert TESTS_LINE in result.action.summary.splitlines()


def test_llm_attention_with_no_model_forgets_like_amortized() -> None:
    s = _session_with_a_failing_test()
    condenser = LLMAttentionCondenser(max_size=20, keep_first=4)
    result = condenser.condense(s.view)
    amortized = AmortizedForgettingCondenser(max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and isinstance(amortized, Condensation) and result.metadata is not None
    assert result.action.forgotten == amortized.action.forgotten and result.action.summary is None
    assert result.metadata.extra["outcome"] == "no model: forgot like amortized"


def test_the_summary_budget_holds_with_no_model() -> None:
    s = _session_with_a_failing_test(turns=0)
    for i in range(200):
        _, observation = s.turn(f"./build.sh --target {i}", "error: the build broke")
        observation.metadata = {"exit_code": 2}
    result = LLMSummarizingCondenser(max_size=100, keep_first=4, max_summary_share=0.05).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.action.summary is not None
    assert "summary_cut" not in result.metadata.extra and "summary_dropped" not in result.metadata.extra  # it fit by itself
    assert "lines left out" in result.action.summary


@pytest.mark.parametrize("strategy", [LLMSummarizingCondenser, StructuredSummaryCondenser], ids=["llm", "structured"])
def test_fallback_after_a_transient_model_error_writes_the_offline_summary(strategy: type[ModelSummarizingCondenser]) -> None:
    fake, llm = fake_llm(default=litellm_error("RateLimitError", "slow down"), num_retries=1)
    condenser = strategy(llm, max_size=20, keep_first=4, on_model_error="fallback")
    result = condenser.condense(_session_with_a_failing_test().view)
    assert len(fake.calls) == 2  # the call and its retry
    assert isinstance(result, Condensation) and result.metadata is not None and result.action.summary is not None
    assert TESTS_LINE in result.action.summary.splitlines()
    assert result.metadata.extra["outcome"] == "fallback"
    assert result.metadata.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert result.metadata.extra["error"].startswith("LLMRateLimitError")


def test_fallback_never_covers_a_credentials_error() -> None:
    fake, llm = fake_llm(default=litellm_error("AuthenticationError", "Incorrect API key provided"), num_retries=3)
    condenser = LLMSummarizingCondenser(llm, max_size=20, keep_first=4, on_model_error="fallback")
    with pytest.raises(LLMAuthenticationError):
        condenser.condense(_session_with_a_failing_test().view)
    assert len(fake.calls) == 1 and condenser.last_condensation is None
