"""The docs' blocks that import the OpenHands SDK run, as written (`tests/_doc_blocks.py` lists them; the others
are in `tests/test_docs_blocks.py`).

Each builds an `Agent` with our condenser and the SDK's terminal tool and memory tools, and a
`Conversation` on it (offline: the agent's LLM is never called).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from _doc_blocks import SDK, Block, blocks_for, run_python  # noqa: E402
from openhands.sdk import LLM, Agent, Conversation, Tool  # noqa: E402
from openhands.tools.terminal import TerminalTool  # noqa: E402

from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402


def _mine(request: pytest.FixtureRequest) -> Block:
    (block,) = blocks_for(SDK + request.node.originalname)
    return block


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary current folder holding the README's `pipeline.toml` (the file the examples read)."""
    (pipeline,) = [block for block in blocks_for("test_pipeline_files") if block.first_line.startswith("# pipeline.toml")]
    (tmp_path / "pipeline.toml").write_text(pipeline.text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _llm() -> LLM:
    """The agent's model, as the prose leaves it to the reader; never called here."""
    return LLM(model="gpt-4o", usage_id="agent")


def _conversation_runs(agent: Agent, **options: Any) -> None:
    """A `Conversation` is built on the agent (the SDK resolves every tool the agent names) and closed."""
    conversation = Conversation(agent=agent, workspace=".", **options)
    conversation.close()


def test_readme_sdk_example_builds_an_agent_and_a_conversation(request: pytest.FixtureRequest, workdir: Path) -> None:
    namespace: dict[str, Any] = {"llm": _llm()}
    run_python(_mine(request), namespace)
    agent = namespace["agent"]
    assert isinstance(agent, Agent)
    assert isinstance(agent.condenser, OpenHandsMemoryCondenser)
    assert agent.condenser.condenser.type == "pipeline"  # the README's pipeline.toml
    assert [tool.name for tool in agent.tools] == [TerminalTool.name, "MemoryToolSet"]
    loaded = Agent.model_validate_json(agent.model_dump_json())
    assert loaded.condenser == agent.condenser
    _conversation_runs(agent, persistence_dir="conversations")


def test_readme_memory_tools_in_an_sdk_conversation(request: pytest.FixtureRequest, workdir: Path) -> None:
    # `condenser`: the one the section above builds (its inline form).
    condenser = OpenHandsMemoryCondenser(condenser={"type": "observation_masking", "attention_window": 20})
    namespace: dict[str, Any] = {"llm": _llm(), "condenser": condenser}
    run_python(_mine(request), namespace)
    conversation = namespace["conversation"]
    try:
        assert [tool.name for tool in namespace["agent"].tools] == [TerminalTool.name, "MemoryToolSet"]
        assert [folder.name for folder in Path("conversations").iterdir()] == [conversation.id.hex]
    finally:
        conversation.close()


def test_sdk_doc_example_builds_an_agent(request: pytest.FixtureRequest, workdir: Path) -> None:
    namespace: dict[str, Any] = {"llm": _llm(), "tools": [Tool(name=TerminalTool.name)]}
    run_python(_mine(request), namespace)
    agent = namespace["agent"]
    assert agent.condenser == OpenHandsMemoryCondenser(condenser={"type": "observation_masking", "attention_window": 20})
    assert isinstance(OpenHandsMemoryCondenser.from_file("pipeline.toml"), OpenHandsMemoryCondenser)
    _conversation_runs(agent)
