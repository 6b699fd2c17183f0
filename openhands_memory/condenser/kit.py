"""The authoring kit: everything a strategy module needs besides `Condenser`, public and documented.

A strategy is one module that declares its config (a pydantic model with a `type` literal, built on
`CONFIG`, its sizes declared with `sized`) and its condenser (a `Condenser`, `RollingCondenser`,
`ForgettingCondenser` or `SummarizingCondenser` from `openhands_memory.condenser`), registered with
`register_condenser`. The built-in strategies (`openhands_memory/condenser/impl/`) import only from here,
from `openhands_memory.condenser` and from each other, so a strategy written outside the package can do
all they do. A composite says what it holds with `Condenser.members()`.

**Configs**: `CONFIG` (the model config every strategy config uses: unknown fields refused), `FROM_CONFIG`
(the default of an `__init__` parameter whose default the config declares: a default is written once), `sized`
(a size field with its role: `events`, `tokens`, `first`, `newest`, `chars`), `SizeChecked`,
`OnModelError`, `LLMConfigRef` (an `llm_config` field: a name of an `[llm.NAME]` table or a table),
`ModelConfig`, `ModelBackedConfig`, `SummarizingConfig`, `TokenTriggeredConfig` (the bases of a
model-backed strategy's config), `DEFAULT_MAX_SUMMARY_SHARE`.

**Views**: `condensed_events` (the events a condensation leaves), `replace_at`, `map_events`,
`without_events`, `slice_events`, `derive_view` (a view made from another, its flags kept),
`is_summary`, `standing_summary_index`, `PrefixMapper`, `IndexCollector`, `FirstIndexFinder`.

**Boundaries** (never split a tool call from its result): `analyze` and `ViewStructure`,
`condensation_action`, `first_user_message_index`, `forget_id`; `plan_before`, `recency_cut` and
`round_starts` (where a cut by recency may fall).

**Models**: `ModelCaller` (a model, its bounded shrink-and-retry loop, usage records, the failure
rule), `ModelBacked` (with a forgetting plan), `ModelSummarizingCondenser`, `condenser_llm`,
`event_block` and `render_event` (an event as the prompt shows it), `focus_instructions` (what a
prompt says first when the condensation request carried a focus: `View.condensation_focus`), `called_tool_arguments` (a tool
call's arguments, read as untrusted input), `CITE_EVENT_IDS`.

**Masking and text**: `MaskingCondenser` and `masked_fields`, `truncate`, `one_line`;
`current_plan`, `is_task_tracking`, `plan_hint` (the agent's task list).
"""

from __future__ import annotations

from openhands_memory.condenser._boundaries import (
    ViewStructure,
    analyze,
    condensation_action,
    first_user_message_index,
    forget_id,
)
from openhands_memory.condenser._command_facts import one_line
from openhands_memory.condenser._config_base import CONFIG, LLMConfigRef, OnModelError, SizeChecked, sized
from openhands_memory.condenser._config_defaults import FROM_CONFIG
from openhands_memory.condenser._masking import MaskingCondenser, masked_fields
from openhands_memory.condenser._model_backed import (
    CITE_EVENT_IDS,
    ModelBacked,
    ModelCaller,
    ModelSummarizingCondenser,
    called_tool_arguments,
    condenser_llm,
    event_block,
    focus_instructions,
    render_event,
)
from openhands_memory.condenser._model_config import (
    DEFAULT_MAX_SUMMARY_SHARE,
    ModelBackedConfig,
    ModelConfig,
    SummarizingConfig,
    TokenTriggeredConfig,
)
from openhands_memory.condenser._plan import current_plan, is_task_tracking, plan_hint
from openhands_memory.condenser._recency import plan_before, recency_cut, round_starts
from openhands_memory.condenser._text import truncate
from openhands_memory.condenser._views import (
    FirstIndexFinder,
    IndexCollector,
    PrefixMapper,
    condensed_events,
    derive_view,
    is_summary,
    map_events,
    replace_at,
    slice_events,
    standing_summary_index,
    without_events,
)

__all__ = [
    "CITE_EVENT_IDS",
    "CONFIG",
    "DEFAULT_MAX_SUMMARY_SHARE",
    "FROM_CONFIG",
    "FirstIndexFinder",
    "IndexCollector",
    "LLMConfigRef",
    "MaskingCondenser",
    "ModelBacked",
    "ModelBackedConfig",
    "ModelCaller",
    "ModelConfig",
    "ModelSummarizingCondenser",
    "OnModelError",
    "PrefixMapper",
    "SizeChecked",
    "SummarizingConfig",
    "TokenTriggeredConfig",
    "ViewStructure",
    "analyze",
    "called_tool_arguments",
    "condensation_action",
    "condensed_events",
    "condenser_llm",
    "current_plan",
    "derive_view",
    "event_block",
    "first_user_message_index",
    "focus_instructions",
    "forget_id",
    "is_summary",
    "is_task_tracking",
    "map_events",
    "masked_fields",
    "one_line",
    "plan_before",
    "plan_hint",
    "recency_cut",
    "render_event",
    "replace_at",
    "round_starts",
    "sized",
    "slice_events",
    "standing_summary_index",
    "truncate",
    "without_events",
]
