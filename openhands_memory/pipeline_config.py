"""A pipeline file: the condenser (`[condenser]`) and the history policy (`[history_policy]`) the model's prompt goes through.

    [condenser]
    type = "noop"

    [history_policy]           # optional: a final trim of the messages (see `HistoryPolicy`)
    preset = "inkeep_fixed_limit"
    # roles = ["user", "assistant", "tool"]
    # max_messages = 50
    # step_window = 10
    # max_tokens = 8000

A JSON file holds `{"condenser": {...}, "history_policy": {...}}` (or the condenser config alone).
`load_pipeline_config(path)` reads both; `load_condenser_config` still reads the condenser alone
and ignores the policy. A file without `[history_policy]` gets the policy its condenser comes with:
`type = "inkeep"` brings Inkeep's (`inkeep_compression` with a summarizer, `inkeep_fixed_limit` without). The condenser decides which events the model sees; the policy then trims
the messages they render to, so it bounds what any pipeline sends.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from openhands_memory.condenser.config import load_condenser_config, read_config_file
from openhands_memory.condenser.impl.inkeep_condenser import WITH_SUMMARIZER, WITHOUT_SUMMARIZER
from openhands_memory.conversation_memory.history_policy import HISTORY_POLICY_PRESETS, HistoryPolicy
from openhands_memory.errors import CondenserConfigError

__all__ = ["HISTORY_POLICY_TABLE", "PipelineConfig", "load_pipeline_config", "parse_history_policy"]

HISTORY_POLICY_TABLE = "history_policy"
"""The table (TOML) or key (JSON) of a pipeline file that holds its history policy."""


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """What a pipeline file describes: its condenser config and, if it has one, its history policy."""

    condenser: BaseModel
    """The validated condenser config (build it with `Condenser.from_config`)."""
    history_policy: HistoryPolicy | None = None
    """The final trim of the messages; None when the file has no `[history_policy]` table."""
    path: str | None = None
    """The file it was read from."""


def parse_history_policy(data: HistoryPolicy | Mapping[str, Any], *, path: str | os.PathLike[str] | None = None) -> HistoryPolicy:
    """Validate a `[history_policy]` table (a `HistoryPolicy` is returned as is).

    Raises:
        CondenserConfigError: a field is unknown (with the closest name), out of range, or of the
            wrong type, or the preset is unknown; the error names `history_policy.<field>`.
    """
    if isinstance(data, HistoryPolicy):
        return data
    if not isinstance(data, Mapping):
        raise CondenserConfigError(f"must be a table, got {type(data).__name__}", field=HISTORY_POLICY_TABLE, path=path)
    try:
        return HistoryPolicy.model_validate(dict(data))
    except ValidationError as exc:
        raise _describe(exc, path) from None


def _describe(exc: ValidationError, path: str | os.PathLike[str] | None) -> CondenserConfigError:
    """One error for the first problem pydantic found, naming `history_policy.<field>`."""
    errors = exc.errors(include_url=False)
    error = errors[0]
    loc = [str(part) for part in error["loc"]]
    name = loc[0] if loc else ""
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        known = [field for field in HistoryPolicy.model_fields]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        message = "unknown field." + (f" Did you mean {close[0]!r}?" if close else f" Known fields: {', '.join(known)}.")
    elif name == "preset" and error["type"] == "literal_error":
        message = f"unknown preset {error.get('input')!r}. Known presets: {', '.join(HISTORY_POLICY_PRESETS)}."
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    field = ".".join([HISTORY_POLICY_TABLE, *loc]) if loc else HISTORY_POLICY_TABLE
    return CondenserConfigError(message, field=field, path=path)


def load_pipeline_config(path: str | os.PathLike[str]) -> PipelineConfig:
    """Read a pipeline file: its `[condenser]` table (as `load_condenser_config` does) and its `[history_policy]` table, if any.

    Raises:
        CondenserConfigError: the file is missing or unreadable, has no valid condenser config,
            or its history policy is not valid (the message starts with the file name and names
            the field).
    """
    condenser = load_condenser_config(path)
    document = read_config_file(path)
    table = document.get(HISTORY_POLICY_TABLE)
    policy = parse_history_policy(table, path=path) if table is not None else strategy_history_policy(condenser)
    return PipelineConfig(condenser, policy, str(Path(path)))


def strategy_history_policy(condenser: BaseModel) -> HistoryPolicy | None:
    """The history policy a condenser config comes with, for a file without a `[history_policy]` table.

    `inkeep`: Inkeep's retrieval with a summarizer (`inkeep_compression`, 10,000 messages), its
    fixed limits without one (`inkeep_fixed_limit`, 50 messages and 8,000 tokens). Others: None.
    """
    if getattr(condenser, "type", None) != "inkeep":
        return None
    return HistoryPolicy(preset=WITH_SUMMARIZER if getattr(condenser, "llm_config", None) is not None else WITHOUT_SUMMARIZER)
