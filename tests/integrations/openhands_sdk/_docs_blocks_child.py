"""Runs the docs' SDK blocks for `test_docs_blocks.py`, in a process of its own: `python _docs_blocks_child.py FOLDER`.

Each check runs one block as written, in a folder of its own under FOLDER, and writes
`FOLDER/results.json`: `{test name: "ok" or the traceback}`. A process of its own, because the
blocks import openhands-tools (`openhands.tools.terminal`), and that package's task-tracker classes
would clash, by name, with the stand-ins `test_sdk_summarizing_matches_sdk.py` defines for the
recorded logs' tools: the SDK finds an action's class by its name among all those loaded.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm, imported by the SDK, reaches for no network
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for _doc_blocks

from _doc_blocks import SDK, Block, blocks_for, run_python  # noqa: E402
from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.tools.terminal import TerminalTool  # noqa: E402

import openhands_memory.llm.llm as _llm  # noqa: E402
from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402

_llm.ALLOW_MODEL_REQUESTS = False  # as under the tests' conftest: no model is called here


def _block(test: str) -> Block:
    (block,) = blocks_for(SDK + test)
    return block


def _readme_pipeline_file() -> None:
    """The README's `pipeline.toml` (the file the examples read), in the current folder."""
    (pipeline,) = [block for block in blocks_for("test_pipeline_files") if block.first_line.startswith("# pipeline.toml")]
    Path("pipeline.toml").write_text(pipeline.text, encoding="utf-8")


def _llm_of_the_prose() -> LLM:
    """The agent's model, which the prose leaves to the reader; never called here."""
    return LLM(model="gpt-4o", usage_id="agent")


def _conversation_runs(agent: Agent, **options: Any) -> None:
    """A `Conversation` is built on the agent (the SDK resolves every tool the agent names), then closed."""
    Conversation(agent=agent, workspace=".", **options).close()


def readme_sdk_example(test: str) -> None:
    # It defines what it uses: the agent's LLM (its key from the environment), the README's pipeline.toml.
    _readme_pipeline_file()
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test-not-a-key"
    namespace: dict[str, Any] = {}
    run_python(_block(test), namespace)
    assert namespace["llm"].model == "claude-sonnet-4-5"
    agent = namespace["agent"]
    assert isinstance(agent, Agent)
    assert isinstance(agent.condenser, OpenHandsMemoryCondenser)
    assert agent.condenser.condenser.type == "pipeline"  # the README's pipeline.toml
    assert [tool.name for tool in agent.tools] == [TerminalTool.name, "MemoryToolSet"]
    assert Agent.model_validate_json(agent.model_dump_json()).condenser == agent.condenser
    _conversation_runs(agent, persistence_dir="conversations")


def readme_memory_tools(test: str) -> None:
    # `condenser`: the one the section above builds (its inline form).
    condenser = OpenHandsMemoryCondenser(condenser={"type": "observation_masking", "attention_window": 20})
    namespace: dict[str, Any] = {"llm": _llm_of_the_prose(), "condenser": condenser}
    run_python(_block(test), namespace)
    conversation = namespace["conversation"]
    try:
        assert [tool.name for tool in namespace["agent"].tools] == [TerminalTool.name, "MemoryToolSet"]
        assert [folder.name for folder in Path("conversations").iterdir()] == [conversation.id.hex]
    finally:
        conversation.close()


def sdk_doc_example(test: str) -> None:
    _readme_pipeline_file()
    namespace: dict[str, Any] = {"llm": _llm_of_the_prose(), "tools": [Tool(name=TerminalTool.name)]}
    run_python(_block(test), namespace)
    agent = namespace["agent"]
    assert agent.condenser == OpenHandsMemoryCondenser(condenser={"type": "observation_masking", "attention_window": 20})
    assert isinstance(OpenHandsMemoryCondenser.from_file("pipeline.toml"), OpenHandsMemoryCondenser)
    _conversation_runs(agent)


CHECKS: dict[str, Callable[[str], None]] = {
    "test_readme_sdk_example_builds_an_agent_and_a_conversation": readme_sdk_example,
    "test_readme_memory_tools_in_an_sdk_conversation": readme_memory_tools,
    "test_sdk_doc_example_builds_an_agent": sdk_doc_example,
}
"""Each test of `test_docs_blocks.py` and the check that runs its block."""


def main(folder: Path) -> None:
    results: dict[str, str] = {}
    for test, check in CHECKS.items():
        (folder / test).mkdir()
        os.chdir(folder / test)
        try:
            check(test)
            results[test] = "ok"
        except Exception:
            results[test] = traceback.format_exc()
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
