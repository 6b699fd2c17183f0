"""The public surface, pinned: what each package exports, and that every exported name is there.

A change to this list is a change to the library's API: make it on purpose, and say so in the
change's note. Plumbing lives in modules of its own (importable by path, never listed here).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import openhands_memory.errors as errors
import openhands_memory.events as events
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
from openhands_memory.events.actions import ACTION_CLASSES
from openhands_memory.events.observations import OBSERVATION_CLASSES

ERROR_NAMES = sorted(
    name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, errors.OpenHandsMemoryError)
)
"""Every error class of the library: all of them are public, at the root too."""

ROOT_EVENT_NAMES = [
    "Action", "AgentCondensationObservation", "AgentFinishAction", "AgentThinkAction", "BrowseURLAction",
    "BrowserOutputObservation", "CmdOutputObservation", "CmdRunAction", "CondensationAction",
    "CondensationRequestAction", "ErrorObservation", "Event", "EventSource", "FileEditAction", "FileEditObservation",
    "FileReadAction", "FileReadObservation", "FileWriteAction", "FileWriteObservation", "IPythonRunCellAction",
    "IPythonRunCellObservation", "MessageAction", "Observation", "SystemMessageAction", "ToolCallMetadata",
]  # fmt: skip

EVENT_KIND_NAMES = sorted(cls.__name__ for cls in [*ACTION_CLASSES.values(), *OBSERVATION_CLASSES.values()])
"""Every event kind OpenHands writes has its class exported by `openhands_memory.events`."""

STRATEGY_NAMES = [
    name
    for strategy in BUILTIN_CONDENSERS
    for name in (strategy.__name__, f"{strategy.__name__}Config", *strategy.exports)
]
"""Every built-in strategy the registry holds: its condenser class, its config class (`<name>Config`)
and the names it `exports` are exported by `openhands_memory.condenser`."""

SURFACE: dict[str, list[str]] = {
    "openhands_memory": [
        "__version__",
        "History", "EventStream", "View", "ViewBuilder", "Condenser", "Condensation", "ConversationMemory",
        "LLM", "LLMConfig", "Message",
        "load_events", "iter_events", "dump_events", "event_from_dict", "event_to_dict", "event_to_trajectory",
        "HistoryPolicy", "load_pipeline_config",
        *ROOT_EVENT_NAMES,
        *ERROR_NAMES,
    ],
    "openhands_memory.events": [
        *EVENT_KIND_NAMES,
        "Action", "Observation", "Event", "EventId", "EventSource", "ToolCallMetadata", "UnknownAction", "UnknownObservation",
        "ActionConfirmationStatus", "AgentState", "RecallType",
        "agent_history", "is_agent_history",
        "Scope", "TOP_LEVEL", "Delegation", "DelegationTracker", "events_in_scope", "find_delegations",
        "load_events", "iter_events", "dump_events", "event_from_dict", "event_to_dict", "event_from_json", "event_to_json",
        "event_to_trajectory",
        "load_session_folder", "dump_session_folder",
        "FORMATS", "log_format",
        "validate_log", "validate_events", "ValidationReport", "ValidationFinding",
    ],
    "openhands_memory.stream": [
        "EventStream", "EventStore", "InMemoryEventStore", "JsonlEventStore", "EventFilter", "EventPredicate",
        "Subscriber", "RecoveryReport", "RecoveryWarning", "export_session_folder", "import_session_folder",
        "repair_log", "RepairReport", "UnreadableLine", "Redactor", "SECRET_PLACEHOLDER", "PostgresEventStore",
    ],
    "openhands_memory.view": ["View", "ViewBuilder"],
    "openhands_memory.history": [
        "History", "DEFAULT_CONDENSER_CONFIG", "default_condenser", "MAX_CONDENSATIONS_PER_STEP", "CondensationGuard",
    ],
    "openhands_memory.llm": [
        "LLM", "LLMConfig", "LLMResponse", "InvalidToolCall", "CompletionFn", "LLMMetrics", "TokenUsage", "Cost", "ResponseLatency",
        "ModelRequestsDisallowedError", "import_litellm",
        "LiteLLMEmbedder", "EmbeddingFn",
        "Message", "Content", "TextContent", "ImageContent", "Role", "ToolCall", "ToolCallFunction", "to_litellm_dicts",
        "TextToolCallConverter", "TextToolCallReply", "parse_text_tool_calls",
        "CACHE_RULES", "CacheRules", "PromptBlock", "PromptCache", "PromptPricing", "RequestCost", "resolve_pricing",
    ],
    "openhands_memory.condenser": [
        "Condenser", "RollingCondenser", "ForgettingCondenser", "SummarizingCondenser", "Condensation",
        "CondensationMetadata", "CondensationReason", "walk_condensers",
        *STRATEGY_NAMES,
        "CondenserConfig", "CondenserContext", "CondenserFactory", "OnModelError", "ContextWindowShare",
        "load_condenser_config", "parse_condenser_config", "register_condenser", "registered_condenser_types",
        "TokenCounter", "ApproximateTokenCounter", "LLMTokenCounter",
        "REQUEST_CONDENSATION_TOOL_NAME", "condensation_request_tool", "condensation_request_from_tool_call",
        "is_condensation_request_call",
        "OFFLINE_SUMMARIZER_NAME", "offline_summary",
        "CompressionEvent", "CompressionEventType", "CompressionRecord", "COMPRESSION_METADATA_KEY",
        "compression_event", "compression_events", "compression_record", "compressions_by_type",
    ],
    "openhands_memory.conversation_memory": [
        "HISTORY_POLICY_PRESETS",
        "ConversationMemory",
        "HistoryPolicy",
        "HistoryTrim",
        "MessageTokenCounter",
        "ToolResultFormat",
        "apply_prompt_caching",
        "approximate_message_tokens",
    ],
    "openhands_memory.memory": [
        "Memory", "MemoryRecord", "MemoryQuery", "WindowMemory", "SummaryMemory", "VectorMemory", "MarkdownFileMemory",
        "Embedder", "HashedBagOfWords", "Similarity", "QITOS_ROLES",
        "window_memory", "summary_memory", "vector_memory", "markdown_file_memory",
    ],
    "openhands_memory.replay": [
        "replay_log", "replay_events", "ReplayReport", "ReplayStep", "ReplayCondensation", "Pipeline", "load_pipeline",
        "write_log", "snapshot_at", "StepSnapshot", "inspect_log", "inspect_events", "LogInspection",
        "Replayer", "AgentStep",
        "calibrate_log", "calibrate_events", "LogCalibration", "CalibratedRequest", "RecordedUsage", "summarize_calibrations",
    ],
    "openhands_memory.bench": [
        "run_benchmark", "BenchOptions", "BenchResults", "PipelineSpec", "RunMetrics", "format_table", "write_results",
        "STAND_IN_NAME",
    ],
    "openhands_memory.report": [
        "DEFAULT_CONTEXT_LIMIT", "RunCapture", "build_report", "capture_run", "check_report_output", "embed_json",
        "pack_runs", "prompt_refs", "render_bench_index", "render_page", "write_page",
    ],
}  # fmt: skip


@pytest.mark.parametrize("module_name", sorted(SURFACE))
def test_the_exports_are_the_pinned_ones_and_each_is_present(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), "a name is listed twice"
    assert sorted(exported) == sorted(set(SURFACE[module_name]))
    for name in exported:
        assert getattr(module, name) is not None, name


def test_each_strategy_is_exported_as_itself_with_its_config() -> None:
    import openhands_memory.condenser as condenser

    for strategy in BUILTIN_CONDENSERS:
        assert getattr(condenser, strategy.__name__) is strategy
        assert getattr(condenser, f"{strategy.__name__}Config") is strategy.config_cls
        for name in strategy.exports:
            assert getattr(condenser, name) is getattr(importlib.import_module(strategy.__module__), name)


def test_the_root_names_are_the_objects_of_their_packages() -> None:
    import openhands_memory

    assert openhands_memory.History is importlib.import_module("openhands_memory.history").History
    assert openhands_memory.MessageAction is events.MessageAction
    assert openhands_memory.OpenHandsMemoryError is errors.OpenHandsMemoryError
    with pytest.raises(AttributeError, match="no attribute 'plan_keeping'"):
        openhands_memory.plan_keeping  # noqa: B018  (plumbing is not at the door)


def test_importing_the_root_or_events_loads_no_condenser_and_no_litellm() -> None:
    code = (
        "import sys, openhands_memory, openhands_memory.events\n"
        "print(any(m.startswith('openhands_memory.condenser') for m in sys.modules), 'litellm' in sys.modules)\n"
        "openhands_memory.History\n"
        "print('openhands_memory.history' in sys.modules, 'litellm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False", "True", "False"]


def test_version_comes_from_the_installed_metadata() -> None:
    import openhands_memory

    assert openhands_memory.__version__ not in ("", None)
