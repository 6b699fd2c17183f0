"""Kept for imports: a pipeline file is read by `openhands_memory.pipeline` (see there)."""

from openhands_memory.pipeline import (
    HISTORY_POLICY_TABLE,
    PipelineConfig,
    load_pipeline_config,
    parse_history_policy,
    strategy_history_policy,
)

__all__ = ["HISTORY_POLICY_TABLE", "PipelineConfig", "load_pipeline_config", "parse_history_policy", "strategy_history_policy"]
