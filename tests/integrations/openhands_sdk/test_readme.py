"""The README's "Use with the OpenHands SDK" example runs as written, and gives an agent with our condenser and tools."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk import LLM, Agent  # noqa: E402

from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402

README = Path(__file__).resolve().parents[3] / "README.md"


def _sdk_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Use with the OpenHands SDK\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section has one Python example"
    return blocks[0]


def test_the_readme_example_builds_an_agent_that_saves_and_loads_with_our_condenser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pipeline.toml").write_text('[condenser]\ntype = "observation_masking"\nattention_window = 20\n', encoding="utf-8")
    namespace: dict[str, object] = {"llm": LLM(model="gpt-4o", usage_id="agent")}
    exec(compile(_sdk_example(), str(README), "exec"), namespace)

    agent = namespace["agent"]
    assert isinstance(agent, Agent)
    assert isinstance(agent.condenser, OpenHandsMemoryCondenser)
    assert agent.condenser.condenser.type == "observation_masking"
    assert [tool.name for tool in agent.tools] == ["TerminalTool", "MemoryToolSet"]
    loaded = Agent.model_validate_json(agent.model_dump_json())
    assert loaded.condenser == agent.condenser
