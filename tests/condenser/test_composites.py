"""Composites declare their members one way (`Condenser.members()`), and everything that walks strategies walks it (issue 34 item 2).

Every registered strategy is built with a model where it takes one and a model-backed member where
it holds others; those that hold members (the composites) are checked: offline, none calls a model;
with `--summarizer-model M`, every model-backed member calls M.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT

from openhands_memory.bench.stand_in import model_backed_members, use_model, use_offline_summarizer
from openhands_memory.cli import main
from openhands_memory.condenser import Condenser, walk_condensers
from openhands_memory.condenser._model_backed import ModelCaller
from openhands_memory.condenser.config import parse_condenser_config, registered_condenser_types
from openhands_memory.events import load_events
from openhands_memory.replay import replay_events

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"
NO_KEY = {"model": "gpt-4o-mini", "api_key": None}  # a real call would fail: no key is set in the tests
MODEL_BACKED = {"type": "llm", "llm_config": NO_KEY, "max_size": 30, "keep_first": 1}


def _config_with_models(type_name: str) -> dict[str, Any]:
    """`type_name`'s config with a model where it takes one and a model-backed member where it holds others."""
    data: dict[str, Any] = {"type": type_name}
    try:
        fields = type(parse_condenser_config(data)).model_fields
    except Exception:  # a required field is missing: the composites' member fields are the ones we fill
        fields = {}
    if "llm_config" in fields:
        data["llm_config"] = NO_KEY
    if "condensers" in fields or type_name == "pipeline":
        data["condensers"] = [{"type": "observation_masking", "attention_window": 4}, MODEL_BACKED]
    if type_name == "cache_aware" or "condenser" in fields:
        data["condenser"] = MODEL_BACKED
    return data


def _composites() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for type_name in registered_condenser_types():
        config = _config_with_models(type_name)
        if Condenser.from_config(config, model="gpt-4o").members():
            found.append((type_name, config))
    return found


COMPOSITES = _composites()


def test_the_composites_are_found_by_their_members_not_by_name() -> None:
    assert {name for name, _ in COMPOSITES} >= {"pipeline", "cache_aware", "inkeep"}
    leaves = set(registered_condenser_types()) - {name for name, _ in COMPOSITES}
    assert "llm" in leaves and "amortized" in leaves


@pytest.mark.parametrize(("type_name", "config"), COMPOSITES, ids=[name for name, _ in COMPOSITES])
def test_every_composite_replays_offline_calling_no_model(type_name: str, config: dict[str, Any]) -> None:
    condenser = Condenser.from_config(config, model="gpt-4o")
    members = list(model_backed_members(condenser))
    assert members, f"{type_name} holds a model-backed member"
    use_offline_summarizer(condenser)
    assert all(member.llm is None for member in members if isinstance(member, ModelCaller))
    report = replay_events(load_events(BUNDLED)[:160], condenser=condenser, tokenizer="approximate")  # a real call would raise: no key
    assert report.steps


@pytest.mark.parametrize(("type_name", "config"), COMPOSITES, ids=[name for name, _ in COMPOSITES])
def test_a_summarizer_model_reaches_every_model_backed_member_of_every_composite(type_name: str, config: dict[str, Any]) -> None:
    condenser = Condenser.from_config(config, model="gpt-4o")
    use_model(condenser, "anthropic/claude-haiku-4-5")
    members = list(model_backed_members(condenser))
    assert members and all(member.llm.config.model == "anthropic/claude-haiku-4-5" for member in members)  # type: ignore[attr-defined]
    assert set(members) <= set(walk_condensers(condenser))


def test_an_inkeep_pipeline_file_with_a_summarizer_replays_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: `replay --pipeline inkeep.toml` with an `llm_config` stopped with "gpt-4o: no API key"."""
    pipeline = tmp_path / "inkeep.toml"
    pipeline.write_text('[condenser]\ntype = "inkeep"\nllm_config = "summarizer"\nmodel = "gpt-4o"\n\n[llm.summarizer]\nmodel = "gpt-4o"\n')
    assert main(["replay", str(BUNDLED), "--pipeline", str(pipeline), "--tokenizer", "approximate"]) == 0
    assert "offline structured summarizer" in capsys.readouterr().out


def test_walk_goes_depth_first_through_nested_composites() -> None:
    config = {"type": "cache_aware", "condenser": {"type": "pipeline", "condensers": [{"type": "noop"}, MODEL_BACKED]}}
    condenser = Condenser.from_config(config, model="gpt-4o")
    assert [member.name for member in walk_condensers(condenser)] == ["cache_aware(pipeline)", "pipeline", "noop", "llm"]
