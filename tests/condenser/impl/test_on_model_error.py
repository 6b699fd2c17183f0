"""`on_model_error = "fallback"` or `"skip"` is for transient model failures: a missing key or a rejected request is raised."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT

from openhands_memory.cli import main
from openhands_memory.condenser import Condensation, LLMAttentionCondenser, LLMSummarizingCondenser, StructuredSummaryCondenser
from openhands_memory.condenser._model_backed import ModelBacked
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME, OFFLINE_SUMMARY_HEADER
from openhands_memory.errors import LLMAuthenticationError, LLMBadRequestError, LLMError, LLMUnclassifiedError
from openhands_memory.events import CondensationAction
from openhands_memory.history import History
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.fake_llm import litellm_error

from ._history_helpers import add_turn, started_history
from ._model_helpers import fake_llm, session

MISSING_KEY = (  # how litellm 1.110 reports a missing OpenAI key: an InternalServerError (500)
    "OpenAIException - Missing credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, "
    "or set the `OPENAI_API_KEY` or `OPENAI_ADMIN_KEY` environment variable."
)

NOT_TRANSIENT: dict[str, tuple[Any, type[LLMError]]] = {
    "missing key": (litellm_error("InternalServerError", MISSING_KEY), LLMAuthenticationError),
    "refused key": (litellm_error("AuthenticationError", "Incorrect API key provided"), LLMAuthenticationError),
    "unknown model": (litellm_error("NotFoundError", "The model `gpt-5-turbo-max` does not exist"), LLMBadRequestError),
}


def _condenser(kind: str, llm: LLM, on_model_error: str) -> ModelBacked:
    if kind == "llm":
        return LLMSummarizingCondenser(llm, max_size=20, keep_first=4, on_model_error=on_model_error)  # type: ignore[arg-type]
    if kind == "structured":
        return StructuredSummaryCondenser(llm, max_size=20, keep_first=4, on_model_error=on_model_error)  # type: ignore[arg-type]
    return LLMAttentionCondenser(llm, max_size=20, keep_first=4, on_model_error=on_model_error)  # type: ignore[arg-type]


@pytest.mark.parametrize("failure", sorted(NOT_TRANSIENT))
@pytest.mark.parametrize("on_model_error", ["fallback", "skip"])
@pytest.mark.parametrize("kind", ["llm", "structured", "llm_attention"])
def test_fallback_and_skip_raise_a_key_or_request_problem_after_one_call(kind: str, on_model_error: str, failure: str) -> None:
    reply, error = NOT_TRANSIENT[failure]
    fake, llm = fake_llm(reply, reply, num_retries=3)
    s = session(10)
    before = [e.model_copy() for e in s.events]
    condenser = _condenser(kind, llm, on_model_error)
    with pytest.raises(error):
        condenser.condense(s.view)
    assert len(fake.calls) == 1  # not retried
    assert s.events == before and condenser.last_condensation is None  # no placeholder, nothing forgotten
    assert isinstance(condenser.last_error, error)


def test_a_prompt_too_long_even_shrunk_still_falls_back() -> None:
    _, llm = fake_llm(default=litellm_error("ContextWindowExceededError", "prompt is too long"))
    result = LLMSummarizingCondenser(llm, max_size=20, keep_first=4, on_model_error="fallback").condense(session(10).view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.extra["outcome"] == "fallback"
    assert result.action.summary is not None and result.action.summary.startswith(OFFLINE_SUMMARY_HEADER)
    assert result.metadata.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME


def test_the_view_command_with_a_fallback_summarizer_and_no_key_exits_1_at_once(
    tmp_path: Path, real_requests: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "pipeline.toml"
    config.write_text(
        '[llm.summarizer]\nmodel = "gpt-4o-mini"\n\n'
        '[condenser]\ntype = "pipeline"\ncondensers = [\n'
        '  { type = "observation_masking", attention_window = 50 },\n'
        '  { type = "llm", llm_config = "summarizer", keep_first = 4, max_size = 12, on_model_error = "fallback" },\n]\n'
    )
    code = main(
        ["view", str(REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"), "--at", "10", "--pipeline", str(config),
         "--summarizer-model", "gpt-4o-mini"]  # without it: offline, no key needed
    )  # fmt: skip
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == "error: gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config)\n"
    assert real_requests == []  # found before the first request: no request, so no retry and no wait


UNCLASSIFIED: dict[str, Exception] = {
    "malformed answer": KeyError("choices"),
    "transport failure": RuntimeError("the transport closed the stream"),
}


def _overflowing_history(condenser: ModelBacked) -> History:
    """A history over a JSONL-free stream whose view (24 events) is over the condenser's 20."""
    history = started_history(condenser)
    for number in range(11):
        add_turn(history, number, f"output {number}")
    return history


@pytest.mark.parametrize("failure", sorted(UNCLASSIFIED))
@pytest.mark.parametrize("kind", ["llm", "structured", "llm_attention"])
def test_an_unclassified_failure_falls_back_in_history_completion(kind: str, failure: str) -> None:
    raised = UNCLASSIFIED[failure]
    summarizer, summarizer_llm = fake_llm(raised, num_retries=3)
    history = _overflowing_history(_condenser(kind, summarizer_llm, "fallback"))
    agent, agent_llm = fake_llm("Done.")
    reply = history.completion(agent_llm)
    assert reply.text == "Done." and len(summarizer.calls) == 1  # not retried, then condensed without it
    condensation = history.stream.get_event(history.stream.get_latest_event_id())
    assert isinstance(condensation, CondensationAction)
    extra = condensation.condenser_metadata["extra"]  # type: ignore[index]
    assert extra["outcome"] == "fallback"
    assert extra["error"].startswith(f"LLMUnclassifiedError: fake-model: the model call failed with {type(raised).__name__}")
    assert isinstance(history.condenser.last_error, LLMUnclassifiedError)  # type: ignore[attr-defined]
    assert history.condenser.last_error.__cause__ is raised  # type: ignore[attr-defined]
    assert len(agent.calls) == 1


@pytest.mark.parametrize("failure", sorted(UNCLASSIFIED))
def test_an_unclassified_failure_skips_condensing_in_history_completion(failure: str) -> None:
    raised = UNCLASSIFIED[failure]
    summarizer, summarizer_llm = fake_llm(raised)
    history = _overflowing_history(_condenser("llm", summarizer_llm, "skip"))
    before = len(history.stream)
    _, agent_llm = fake_llm("Done.")
    assert history.completion(agent_llm).text == "Done."
    assert len(history.stream) == before  # nothing condensed, nothing appended
    assert len(summarizer.calls) == 1


@pytest.mark.parametrize("failure", sorted(UNCLASSIFIED))
def test_an_unclassified_failure_is_raised_as_a_model_error_with_its_cause(failure: str) -> None:
    raised = UNCLASSIFIED[failure]
    _, summarizer_llm = fake_llm(raised)
    history = _overflowing_history(_condenser("llm", summarizer_llm, "raise"))
    before = len(history.stream)
    agent, agent_llm = fake_llm("Done.")
    with pytest.raises(LLMUnclassifiedError, match=re.escape(f"the model call failed with {type(raised).__name__}")) as caught:
        history.completion(agent_llm)
    assert caught.value.__cause__ is raised
    assert len(history.stream) == before and agent.calls == []
