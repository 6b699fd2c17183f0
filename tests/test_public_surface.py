"""The public surface, pinned: what each package exports, and that every exported name is there.

A change to this list is a change to the library's API: make it on purpose, and say so in the
change's note. Plumbing lives in modules of its own (importable by path, never listed here).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import openhands_memory
import openhands_memory.errors as errors
import openhands_memory.events as events
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
from openhands_memory.events.actions import ACTION_CLASSES
from openhands_memory.events.observations import OBSERVATION_CLASSES

EVENT_KIND_NAMES = sorted(cls.__name__ for cls in [*ACTION_CLASSES.values(), *OBSERVATION_CLASSES.values()])
"""Every event kind OpenHands writes has its class exported by `openhands_memory.events`."""

MAX_PUBLIC_NAMES = 150
"""The doors together (issue 34 item 5): a name a user needs is at one of them; plumbing is imported by its module's path."""

SURFACE: dict[str, list[str]] = {
    "openhands_memory": [
        "__version__",
        "History", "Pipeline", "load_pipeline", "EventStream", "View", "ViewBuilder", "Condenser", "Condensation",
        "ConversationMemory", "LLM", "LLMConfig",
        "load_events", "iter_events",
        "EventSource", "SystemMessageAction", "MessageAction", "CmdRunAction", "CmdOutputObservation",
        "OpenHandsMemoryError",
    ],
    "openhands_memory.events": [
        *EVENT_KIND_NAMES,
        "Action", "Observation", "Event", "EventSource", "ToolCallMetadata", "UnknownAction", "UnknownObservation",
        "load_events", "iter_events", "dump_events", "event_from_dict", "event_to_dict",
        "agent_history", "is_agent_history", "Scope", "TOP_LEVEL", "validate_log",
    ],
    "openhands_memory.stream": [
        "EventStream", "EventStore", "InMemoryEventStore", "JsonlEventStore", "PostgresEventStore", "repair_log",
    ],
    "openhands_memory.llm": [
        "LLM", "LLMConfig", "LLMResponse", "Message", "TextContent", "ImageContent", "ToolCall", "to_litellm_dicts",
        "parse_text_tool_calls",
    ],
    "openhands_memory.condenser": [
        "Condenser", "RollingCondenser", "Condensation", "CondensationMetadata", "CondenserConfig", "register_condenser",
        "load_condenser_config", "walk_condensers", "offline_summary", "compression_events", "CompressionEvent",
        "condensation_request_tool", "is_condensation_request_call", "condensation_request_from_tool_call",
    ],
    "openhands_memory.condenser.impl": ["BUILTIN_CONDENSERS"],
    "openhands_memory.conversation_memory": ["ConversationMemory", "HistoryPolicy", "HistoryTrim"],
    "openhands_memory.memory": [
        "Memory", "MemoryRecord", "window_memory", "summary_memory", "vector_memory", "markdown_file_memory",
    ],
    "openhands_memory.recall": ["SearchIndex", "search_log", "sidecar_path"],
    "openhands_memory.replay": ["replay_log", "replay_events", "ReplayReport", "inspect_log", "calibrate_log"],
    "openhands_memory.bench": ["run_benchmark", "BenchResults"],
    "openhands_memory.report": ["build_report", "write_page"],
    "openhands_memory.pipelines": ["shipped_pipelines", "resolve_pipeline"],
    "openhands_memory.testing": [],
    "openhands_memory.integrations": [],
    "openhands_memory.cli": [],  # the command: `main(argv)` and the console script `run`
}  # fmt: skip
"""Every package's `__all__` (the SDK bridge's, which needs the SDK, is pinned in its own tests)."""

MODULE_SURFACE: dict[str, list[str]] = {
    "openhands_memory.view": ["View", "ViewBuilder"],
    "openhands_memory.history": [
        "History", "DEFAULT_CONDENSER_CONFIG", "default_condenser", "MAX_CONDENSATIONS_PER_STEP", "CondensationGuard",
    ],
}  # fmt: skip
"""Modules that list their names too (modules are not doors: they are not counted)."""

SDK_BRIDGE = "openhands_memory.integrations.openhands_sdk"


def package_doors() -> dict[str, list[str]]:
    """Each package of the library (a folder with `__init__.py`) and its `__all__`.

    Read by importing it; a package whose import needs an extra that is missing (the SDK bridge)
    is read from its source, where its `__all__` is a literal list.
    """
    root = Path(openhands_memory.__file__).resolve().parent
    doors: dict[str, list[str]] = {}
    for init in sorted(root.rglob("__init__.py")):
        name = ".".join(("openhands_memory", *init.parent.relative_to(root).parts))
        try:
            doors[name] = list(getattr(importlib.import_module(name), "__all__", []))
        except ImportError:
            tree = ast.parse(init.read_text(encoding="utf-8"))
            (listed,) = [node.value for node in tree.body if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"]
            doors[name] = list(ast.literal_eval(listed))
    return doors


def test_the_doors_hold_at_most_150_names_together() -> None:
    doors = package_doors()
    assert set(doors) == {*SURFACE, SDK_BRIDGE}
    counts = {name: len(names) for name, names in doors.items()}
    assert sum(counts.values()) <= MAX_PUBLIC_NAMES, counts
    assert counts[SDK_BRIDGE] <= 5


@pytest.mark.parametrize("module_name", sorted({*SURFACE, *MODULE_SURFACE}))
def test_the_exports_are_the_pinned_ones_and_each_is_present(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(getattr(module, "__all__", []))
    assert len(exported) == len(set(exported)), "a name is listed twice"
    assert sorted(exported) == sorted(set({**SURFACE, **MODULE_SURFACE}[module_name]))
    for name in exported:
        assert getattr(module, name) is not None, name


def test_each_strategy_is_importable_from_the_condenser_package_as_itself_with_its_config() -> None:
    import openhands_memory.condenser as condenser

    for strategy in BUILTIN_CONDENSERS:
        assert strategy.__name__ not in condenser.__all__  # reached by its config's `type`: not at the door
        assert getattr(condenser, strategy.__name__) is strategy
        assert getattr(condenser, f"{strategy.__name__}Config") is strategy.config_cls
        for name in strategy.exports:
            assert getattr(condenser, name) is getattr(importlib.import_module(strategy.__module__), name)


def test_the_root_names_are_the_objects_of_their_packages() -> None:
    import openhands_memory

    assert openhands_memory.History is importlib.import_module("openhands_memory.history").History
    assert openhands_memory.Pipeline is importlib.import_module("openhands_memory.pipeline").Pipeline
    assert openhands_memory.load_pipeline is importlib.import_module("openhands_memory.pipeline").load_pipeline
    assert openhands_memory.MessageAction is events.MessageAction
    assert openhands_memory.OpenHandsMemoryError is errors.OpenHandsMemoryError
    with pytest.raises(AttributeError, match="no attribute 'CondenserConfigError'"):
        openhands_memory.CondenserConfigError  # noqa: B018  (one path a concept: `openhands_memory.errors`)
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
