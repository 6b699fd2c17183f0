"""The fenced code blocks of README.md and docs/*.md, and the table that says which test runs each.

`BLOCKS` lists every block of every file, in order, by its language and the start of its first
line, with the test that runs it: `tests/test_docs_blocks.py`, or for the blocks that need the
OpenHands SDK `tests/integrations/openhands_sdk/test_docs_blocks.py`. `match_blocks()` checks the
table against the files: a block added, removed or reordered, or a first line changed, is an error
that names the file and line, so no block goes untested.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
"""The repository's root folder."""

SDK = "integrations/openhands_sdk/test_docs_blocks.py::"
"""The prefix of the tests that run in the SDK's environment."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#* *$")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a Markdown file."""

    file: str
    """The file, relative to the repository (`README.md`, `docs/strategies.md`)."""
    line: int
    """The line of its opening fence (1-based); its text starts on the next line."""
    language: str
    """The first word of the fence's info string (`python`, `toml`, `console`, ...); empty when untagged."""
    text: str
    """Its content, each line ending with a newline."""
    heading: str
    """The nearest heading above it (empty before the first)."""

    @property
    def first_line(self) -> str:
        """Its first line that is not blank, stripped."""
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")

    @property
    def path(self) -> Path:
        """The file's path."""
        return REPO / self.file

    def where(self) -> str:
        """`README.md:45`: the file and the line of its opening fence."""
        return f"{self.file}:{self.line}"

    def code(self) -> str:
        """Its text after blank lines, so that line N of the compiled code is line N of the file."""
        return "\n" * self.line + self.text


def doc_files() -> list[Path]:
    """README.md and every docs/*.md, in that order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def read_blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order (a fence closes on the same character, at least as many)."""
    file = path.relative_to(REPO).as_posix()
    blocks: list[Block] = []
    heading = ""
    opened: tuple[int, str, str] | None = None  # (line, fence, language)
    body: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if opened is None:
            if fence := _FENCE.match(line):
                opened, body = (number, fence.group(1), fence.group(2)), []
            elif title := _HEADING.match(line):
                heading = title.group(1)
            continue
        start, fence_text, language = opened
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if indent <= 3 and len(stripped) >= len(fence_text) and set(stripped) == {fence_text[0]}:
            blocks.append(Block(file, start, language, "".join(f"{text}\n" for text in body), heading))
            opened = None
        else:
            body.append(line)
    if opened is not None:
        raise ValueError(f"{file}:{opened[0]}: a fenced block that is never closed")
    return blocks


# -- which test runs each block ------------------------------------------------------------------

_REPLAY = "test_quick_start_replay_prints_the_readme_s_output"
_POSTGRES = "test_postgresql_blocks_run_against_the_local_server"
_COMPRESSION = "test_auto_context_example_and_its_compression_records"
_HISTORY_POLICY = "test_history_policy_pipeline_file_and_history"

BLOCKS: dict[str, list[tuple[str, str, str]]] = {
    # file: [(language, the start of its first line, the test that runs it), ...], in the file's order
    "README.md": [
        ("bash", "git clone https://github.com/openhands-memory/openhands-memory", "test_install_from_a_clone"),
        ("bash", "pip install . && openhands-memory replay", _REPLAY),
        ("", "log                   fixtures/synthetic_session_300.jsonl", _REPLAY),
        ("bash", "pip install -e '.[test]' && pytest", "test_install_and_test_commands"),
        ("bash", "pip install -e '.[test,sdk]' && pytest", "test_install_and_test_commands"),
        ("python", "import json, subprocess", "test_quick_start_agent_loop"),
        ("bash", "pip install '.[sdk]'", "test_install_and_test_commands"),
        ("python", "import os", SDK + "test_readme_sdk_example_builds_an_agent_and_a_conversation"),
    ],
    "docs/architecture.md": [],
    "docs/condensers.md": [],
    "docs/openhands_sdk.md": [
        ("python", "import openhands_memory.integrations.openhands_sdk", SDK + "test_sdk_doc_example_builds_an_agent"),
    ],
    "docs/other_agents.md": [
        ("bash", "openhands-memory replay fixtures/other-agents/claude_code_session.jsonl --recorded", "test_other_agents_commands"),
    ],
    "docs/prompt_cache.md": [
        ("bash", "openhands-memory bench LOG... --pipeline cache_aware", "test_pricing_commands"),
        ("toml", "[llm.condenser]", "test_pipeline_files"),
        ("", "now(after) + h * read * after", "test_the_scheduler_s_rule_is_the_formula"),
        ("", "102  forgot 10 events (ids 86-98)", "test_the_inspect_excerpt_of_the_enyst_log"),
    ],
    "docs/steering.md": [
        ("bash", "python benchmarks/bench_steering.py --out steering.json", "test_the_steering_benchmark"),
        ("", "| pipeline | requests | prompt tokens | largest prompt", "test_the_steering_benchmark"),
    ],
    "docs/strategies.md": [
        ("toml", "[llm.condenser]", "test_pipeline_files"),
        ("json", '{"event_type": "LARGE_MESSAGE_OFFLOAD"', _COMPRESSION),
        ("python", "from openhands_memory.condenser import Condenser", _COMPRESSION),
        ("json", '{"id": 8, "action": "condensation"', "test_a_persisting_summary_and_its_compression_table"),
        ("python", "from openhands_memory.condenser import compression_events", _COMPRESSION),
        ("", "compression events", "test_a_persisting_summary_and_its_compression_table"),
        ("toml", "[llm.condenser]", "test_pipeline_files"),
        ("python", "from openhands_memory.conversation_memory import HistoryPolicy", _HISTORY_POLICY),
        ("toml", "# pipeline.toml", _HISTORY_POLICY),
        ("python", "from openhands_memory.condenser import Condenser", _HISTORY_POLICY),
        ("python", "from openhands_memory.condenser import Condenser, offline_summary", "test_offline_summary"),
        ("python", "from openhands_memory.memory import MemoryRecord", "test_memory_adapters"),
        ("", "## Step 1 · observation", "test_markdown_file_memory_writes_qitos_sections"),
        ("python", "from openhands_memory import CmdOutputObservation, CmdRunAction", "test_memory_adapters_follow_a_stream"),
        ("toml", "[llm.summarizer]", "test_pipeline_files"),
        ("python", "from openhands_memory.condenser import Condenser", "test_inkeep_with_and_without_a_summarizer"),
        ("python", "from openhands_memory.condenser.thresholds import", "test_model_aware_thresholds"),
        ("toml", "[condenser]", "test_pipeline_files"),
        ("bash", "openhands-memory bench fixtures/synthetic_session_300.jsonl", "test_fixed_limit_bench"),
        ("", "## Tool: execute_bash", "test_inkeep_handoff"),
        ("python", "from openhands_memory import View, load_events", "test_inkeep_handoff"),
        ("python", "from openhands_memory import EventStream, View", "test_delegation_scopes"),
    ],
    "docs/api.md": [],
    "docs/benchmarks.md": [],
    "docs/calibration.md": [
        ("console", "$ openhands-memory calibrate v0_oas_gpt-4o_traj_safety-command-bot.json", "test_calibrate_the_shared_logs"),
    ],
    "docs/compatibility.md": [],
    "docs/history.md": [
        ("python", "from openhands_memory import Condensation, Condenser, EventSource, History", "test_plug_into_a_controller"),
    ],
    "docs/index.md": [],
    "docs/layout.md": [],
    "docs/logs.md": [
        ("python", "from openhands_memory import View, load_events", "test_load_a_log_and_look_at_its_view"),
        ("python", "from openhands_memory import CmdRunAction, iter_events", "test_iter_events"),
        ("bash", "openhands-memory inspect trajectory.json", "test_shell_commands"),
    ],
    "docs/pipelines.md": [
        ("toml", "[condenser]", "test_pipeline_files"),
        ("toml", "# pipeline.toml", "test_pipeline_files"),
        ("python", "from openhands_memory import Condensation, Condenser, ConversationMemory", "test_condensers_and_messages"),
    ],
    "docs/postgres.md": [
        ("console", "$ pip install '.[postgres]'", "test_install_and_test_commands"),
        ("python", "from openhands_memory import EventStream, History, MessageAction", _POSTGRES),
        ("console", "$ openhands-memory convert trajectory.json 'postgresql://", "test_postgresql_commands"),
        ("python", "with EventStream.open(url) as stream:", _POSTGRES),
    ],
    "docs/promises.md": [],
    "docs/recall.md": [
        ("python", "tools = [*TOOLS, *history.memory_tools()]", "test_recall_what_was_forgotten"),
        ("", '1 event matches "AssertionError test_calc"', "test_the_search_answer_is_the_offline_example_s"),
        ("python", "from openhands_memory.integrations.openhands_sdk import memory_tools", SDK + "test_readme_memory_tools_in_an_sdk_conversation"),
    ],
    "docs/replay.md": [
        ("bash", "openhands-memory report fixtures/synthetic_session_300.jsonl", "test_the_html_report_commands"),
    ],
    "docs/strategies_overview.md": [
        ("toml", "[llm.condenser]", "test_pipeline_files"),
        ("toml", "[condenser]", "test_pipeline_files"),
    ],
    "docs/streams.md": [
        ("python", "from openhands_memory import CmdOutputObservation, CmdRunAction", "test_append_to_a_stream"),
        ("console", "$ openhands-memory inspect conversation.jsonl", "test_repair_a_damaged_log"),
        ("console", "$ openhands-memory validate conversation.jsonl slice.jsonl", "test_validate_a_log"),
    ],
    "docs/testing.md": [],
}
"""Every block of README.md and docs/*.md, by file, in order: (language, the start of its first line, its test).
A test name with the `SDK` prefix is in the SDK's test module."""


@cache
def match_blocks() -> tuple[tuple[Block, str], ...]:
    """Every block with the test that runs it; ValueError naming the first block the table does not describe."""
    matched: list[tuple[Block, str]] = []
    files = {path.relative_to(REPO).as_posix(): path for path in doc_files()}
    if set(files) != set(BLOCKS):
        raise ValueError(f"BLOCKS lists {sorted(BLOCKS)}, the docs are {sorted(files)}: add or remove a file's entry")
    for file, path in files.items():
        found, listed = read_blocks(path), BLOCKS[file]
        for index, block in enumerate(found):
            if index >= len(listed):
                raise ValueError(f"{block.where()}: a ```{block.language} block ({block.first_line!r}) that no test runs: add it to BLOCKS")
            language, start, test = listed[index]
            if block.language != language or not block.first_line.startswith(start):
                raise ValueError(
                    f"{block.where()}: a ```{block.language} block ({block.first_line!r}) where BLOCKS has "
                    f"a ```{language} block starting {start!r}: a block was added, removed or changed; update BLOCKS"
                )
            matched.append((block, test))
        if len(listed) > len(found):
            raise ValueError(f"{file}: BLOCKS lists {len(listed)} blocks, the file has {len(found)}: remove the ones that are gone")
    return tuple(matched)


def blocks_for(test: str) -> list[Block]:
    """The blocks `test` runs (its name, with the `SDK` prefix for the SDK's module), in the docs' order."""
    blocks = [block for block, name in match_blocks() if name == test]
    assert blocks, f"BLOCKS gives {test} no block"
    return blocks


# -- running a block --------------------------------------------------------------------------------


def run_python(block: Block, namespace: dict[str, Any] | None = None) -> str:
    """Execute a Python block unchanged in `namespace` (the names the prose defines); returns what it printed.

    Compiled with the doc's path and line numbers, so a traceback names the doc's line. Each
    `# → value` comment is a line the block must print (what follows the value in parentheses is prose).
    """
    assert block.language == "python", block.where()
    namespace = {"__name__": "__doc_block__"} if namespace is None else namespace
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.code(), str(block.path), "exec"), namespace)
    check_printed(block, printed.getvalue())
    return printed.getvalue()


def check_printed(block: Block, printed: str) -> None:
    """Each `# → value` comment of the block is the start of a line it printed."""
    lines = printed.splitlines()
    for match in re.finditer(r"# → (.+?)(?:\s+\(.*\))?$", block.text, flags=re.MULTILINE):
        assert any(line.startswith(match.group(1)) for line in lines), (block.where(), match.group(1), lines)
