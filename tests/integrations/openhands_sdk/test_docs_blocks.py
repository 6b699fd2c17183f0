"""The docs' blocks that import the OpenHands SDK run, as written (`tests/_doc_blocks.py` lists them; the others
are in `tests/test_docs_blocks.py`).

Each builds an `Agent` with our condenser, the SDK's terminal tool and our memory tools, and a
`Conversation` on it, offline (the agent's LLM is never called). They run in a process of their
own (`_docs_blocks_child.py`, which says why: openhands-tools' classes would clash with this
folder's stand-ins), once for the module; each test reports its block.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from conftest import HANG_GUARD_SECONDS  # noqa: E402

CHILD = Path(__file__).with_name("_docs_blocks_child.py")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each test's outcome in the child process: "ok", or the traceback."""
    folder = tmp_path_factory.mktemp("sdk-doc-blocks")
    ran = subprocess.run([sys.executable, str(CHILD), str(folder)], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert ran.returncode == 0, ran.stderr
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _passed(results: dict[str, str], request: pytest.FixtureRequest) -> None:
    outcome = results[request.node.originalname]
    if outcome != "ok":
        pytest.fail(outcome, pytrace=False)


def test_readme_sdk_example_builds_an_agent_and_a_conversation(results: dict[str, str], request: pytest.FixtureRequest) -> None:
    # The README's SDK section: the agent (the README's pipeline.toml as its condenser), saved and
    # loaded with an equal condenser, and a persisted Conversation on it.
    _passed(results, request)


def test_readme_memory_tools_in_an_sdk_conversation(results: dict[str, str], request: pytest.FixtureRequest) -> None:
    # "In an OpenHands SDK agent": the Conversation persists in conversations/<id>/.
    _passed(results, request)


def test_sdk_doc_example_builds_an_agent(results: dict[str, str], request: pytest.FixtureRequest) -> None:
    # docs/openhands_sdk.md: both ways to build the condenser, the agent, and a Conversation on it.
    _passed(results, request)
