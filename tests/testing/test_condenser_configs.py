"""The config strategies of the shared property suite: made from each config model's declared sizes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import (
    AutoContextCondenser,
    CompactHistoryCondenser,
    Condenser,
    PipelineCondenser,
    RecentEventsCondenser,
    parse_condenser_config,
)
from openhands_memory.testing.condenser_configs import (
    REPLAYABLE_SIZES,
    nested_config_fields,
    promised_head,
    small_configs,
    writes_persisting_summaries,
)


@settings(max_examples=30)
@given(small_configs(RecentEventsCondenser))
def test_each_sized_field_is_drawn_small_within_its_bounds(config: dict[str, Any]) -> None:
    assert set(config) == {"type", "keep_first", "max_events", "max_tokens"}
    assert 0 <= config["keep_first"] <= 5 and 1 <= config["max_events"] <= 30
    assert config["max_tokens"] is None or 1 <= config["max_tokens"] <= 3000
    parse_condenser_config(config)


@settings(max_examples=30)
@given(small_configs(CompactHistoryCondenser, sizes=REPLAYABLE_SIZES))
def test_only_valid_combinations_are_drawn_and_unsized_fields_keep_their_defaults(config: dict[str, Any]) -> None:
    assert 4000 <= config["max_tokens"] <= 20000 and "warning_ratio" not in config and "llm_config" not in config
    built = Condenser.from_config(config)  # offline: no model configured
    assert built.preview_chars + built.preview_chars // 2 < built.compact_over_chars  # type: ignore[attr-defined]


def test_a_pipeline_draws_its_members_and_promises_the_least_head() -> None:
    assert nested_config_fields(PipelineCondenser.config_cls) == {"condensers": True}  # type: ignore[arg-type]
    assert nested_config_fields(RecentEventsCondenser.config_cls) == {}  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("pipeline.condensers holds condenser configs: give `members`")):
        small_configs(PipelineCondenser)
    pipeline = {"type": "pipeline", "condensers": [{"type": "recent", "keep_first": 3}, {"type": "noop"}, {"type": "amortized", "keep_first": 2}]}
    assert promised_head(pipeline) == 0  # `noop` declares no head: it promises none
    assert promised_head({"type": "pipeline", "condensers": [{"type": "recent", "keep_first": 3}, {"type": "amortized"}]}) == 1
    assert promised_head({"type": "recent"}) == 1 and promised_head({"type": "observation_masking"}) == 0


@settings(max_examples=10)
@given(small_configs(PipelineCondenser, members=st.just({"type": "recent", "keep_first": 3})))
def test_a_pipelines_members_are_drawn_from_members(config: dict[str, Any]) -> None:
    assert 1 <= len(config["condensers"]) <= 3 and all(m == {"type": "recent", "keep_first": 3} for m in config["condensers"])


def test_persisting_summaries_come_from_the_strategy_or_a_member() -> None:
    assert AutoContextCondenser.summaries_persist and not RecentEventsCondenser.summaries_persist
    assert writes_persisting_summaries({"type": "auto_context"})
    assert writes_persisting_summaries({"type": "pipeline", "condensers": [{"type": "noop"}, {"type": "auto_context"}]})
    assert not writes_persisting_summaries({"type": "pipeline", "condensers": [{"type": "llm"}]})
