"""QitOS' four memory factories, with QitOS' defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from openhands_memory.memory import (
    MarkdownFileMemory,
    SummaryMemory,
    VectorMemory,
    WindowMemory,
    markdown_file_memory,
    summary_memory,
    vector_memory,
    window_memory,
)


def test_the_factories_build_each_adapter_with_qitos_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    window, summary, vector, markdown = window_memory(), summary_memory(), vector_memory(), markdown_file_memory()

    assert type(window) is WindowMemory and window.window_size == 20
    assert type(summary) is SummaryMemory and summary.keep_last == 10
    assert type(vector) is VectorMemory and vector.top_k == 5 and vector.similarity == "dot"
    assert type(markdown) is MarkdownFileMemory and markdown.path == Path("memory.md") and markdown.max_in_memory == 200
    assert (tmp_path / "memory.md").is_file()


def test_the_factories_take_qitos_arguments(tmp_path: Path) -> None:
    assert window_memory(window_size=3).window_size == 3
    assert summary_memory(keep_last=2).keep_last == 2
    assert vector_memory(top_k=1).top_k == 1
    memory = markdown_file_memory(path=str(tmp_path / "m.md"), max_in_memory=4)
    assert (memory.path, memory.max_in_memory) == (tmp_path / "m.md", 4)
