"""token_budget_summary and compact_history without a model: the offline structured summarizer writes their summaries."""

from __future__ import annotations

import pytest

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME, OFFLINE_SUMMARY_HEADER

from ._model_helpers import session


@pytest.mark.parametrize(
    "config",
    [
        {"type": "token_budget_summary", "max_tokens": 300, "keep_last": 4, "keep_first": 4},
        {"type": "compact_history", "max_tokens": 300, "keep_last_rounds": 1, "keep_last_messages": 2, "keep_first": 4},
    ],
    ids=["token_budget_summary", "compact_history"],
)
def test_a_qitos_summarizer_with_no_model_writes_the_offline_summary(config: dict[str, object]) -> None:
    s = session(0)
    _, observation = s.turn("pytest tests/test_x.py", "FAILED tests/test_x.py::test_y - assert 1 == 2\n")
    observation.metadata = {"exit_code": 1}
    for i in range(30):
        s.turn(f"cmd{i}", f"output {i} " * 20)
    condenser = Condenser.from_config(config)
    assert condenser.llm is None  # type: ignore[attr-defined]
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.action.summary is not None
    assert result.action.summary.startswith(OFFLINE_SUMMARY_HEADER)
    assert "failing: tests/test_x.py::test_y" in result.action.summary
    assert result.metadata.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert result.metadata.extra["outcome"] == "offline summary"
