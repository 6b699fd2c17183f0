"""Pipeline files: the [condenser] table as before, and an optional [history_policy] table with errors naming the field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory.condenser import NoOpCondenserConfig, load_condenser_config
from openhands_memory.conversation_memory import HistoryPolicy
from openhands_memory.errors import CondenserConfigError
from openhands_memory.pipeline import load_pipeline_config, parse_history_policy


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_pipeline_file_gives_its_condenser_and_its_policy(tmp_path: Path) -> None:
    path = write(tmp_path, '[condenser]\ntype = "noop"\n\n[history_policy]\nroles = ["user", "assistant", "tool"]\nmax_messages = 10\nstep_window = 3\nmax_tokens = 900\n')
    config = load_pipeline_config(path)
    assert isinstance(config.condenser, NoOpCondenserConfig)
    assert config.history_policy == HistoryPolicy(roles=("user", "assistant", "tool"), max_messages=10, step_window=3, max_tokens=900)
    assert config.path == str(path)
    # The condenser loader still reads the condenser alone.
    assert isinstance(load_condenser_config(path), NoOpCondenserConfig)


def test_a_file_without_the_table_has_no_policy_and_a_preset_fills_the_fields(tmp_path: Path) -> None:
    assert load_pipeline_config(write(tmp_path, '[condenser]\ntype = "noop"\n')).history_policy is None
    preset = load_pipeline_config(write(tmp_path, '[condenser]\ntype = "noop"\n[history_policy]\npreset = "inkeep_fixed_limit"\n'))
    assert preset.history_policy == HistoryPolicy.fixed_limit()


def test_json_files_hold_both_keys(tmp_path: Path) -> None:
    path = write(tmp_path, '{"condenser": {"type": "noop"}, "history_policy": {"max_messages": 7}}', "p.json")
    assert load_pipeline_config(path).history_policy == HistoryPolicy(max_messages=7)
    assert load_pipeline_config(write(tmp_path, '{"type": "noop"}', "bare.json")).history_policy is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("max_mesages = 3", "history_policy.max_mesages: unknown field. Did you mean 'max_messages'?"),
        ("max_messages = 0", "history_policy.max_messages: Input should be greater than or equal to 1"),
        ('step_window = "two"', "history_policy.step_window: Input should be a valid integer"),
        ('roles = ["user", "robot"]', "history_policy.roles.1: Input should be 'system', 'user', 'assistant' or 'tool'"),
        ('preset = "inkeep"', "history_policy.preset: unknown preset 'inkeep'. Known presets: inkeep_fixed_limit, inkeep_compression, qitos_default."),
    ],
)
def test_a_bad_policy_names_the_file_and_the_field(tmp_path: Path, table: str, message: str) -> None:
    path = write(tmp_path, f'[condenser]\ntype = "noop"\n[history_policy]\n{table}\n')
    with pytest.raises(CondenserConfigError, match=re.escape(f"{path}: {message}")) as info:
        load_pipeline_config(path)
    assert info.value.exit_code == 2


def test_the_condenser_table_is_still_required_and_checked_first(tmp_path: Path) -> None:
    path = write(tmp_path, "[history_policy]\nmax_messages = 3\n")
    with pytest.raises(CondenserConfigError, match=re.escape(f"{path}: no [condenser] table")):
        load_pipeline_config(path)


def test_a_policy_that_is_not_a_table_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CondenserConfigError, match=re.escape("history_policy: must be a table, got int")):
        parse_history_policy(3)  # type: ignore[arg-type]
