"""The memory tools' runtime (`openhands_memory/recall/runtime.py`): the index's lifecycle and the tools' answers, without `History`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from openhands_memory.errors import SearchIndexError
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    ContextReloadAction,
    EventSource,
    MessageAction,
    SearchHistoryAction,
)
from openhands_memory.recall import SearchIndex
from openhands_memory.recall.runtime import MemoryToolRuntime
from openhands_memory.stream import EventStream


def _stream() -> EventStream:
    stream = EventStream()
    stream.add_event(MessageAction(content="find the quokka bug"), EventSource.USER)
    stream.add_event(CmdRunAction(command="grep -r quokka src"), EventSource.AGENT)
    stream.add_event(CmdOutputObservation(content="src/zoo.py: quokka = None", command="grep -r quokka src"), EventSource.ENVIRONMENT)
    return stream


def everything_in_view() -> Callable[[int], str]:
    return lambda event_id: "in view"


def test_the_index_opens_on_first_search_and_follows_later_appends() -> None:
    stream = _stream()
    runtime = MemoryToolRuntime(stream)
    assert runtime.index is None  # nothing is indexed until a search needs it
    first = runtime.search(SearchHistoryAction(query="quokka"), 6, everything_in_view)
    assert runtime.index is not None and runtime.indexed == 2
    assert "event 1" in first.content and "event 2" in first.content
    stream.add_event(MessageAction(content="the wombat too"), EventSource.USER)
    runtime.catch_up()
    assert runtime.indexed == 3
    assert "event 3" in runtime.search(SearchHistoryAction(query="wombat"), 6, everything_in_view).content
    runtime.close()
    assert runtime.index is None


def test_a_failing_index_makes_search_unavailable_and_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_: object) -> SearchIndex:
        raise SearchIndexError(Path("sidecar"), "disk I/O error")

    monkeypatch.setattr(SearchIndex, "in_memory", staticmethod(broken))
    runtime = MemoryToolRuntime(_stream())
    with caplog.at_level(logging.ERROR, logger="openhands_memory.recall.runtime"):
        answer = runtime.search(SearchHistoryAction(query="quokka"), 6, everything_in_view)
    assert answer.content.startswith("Search is unavailable: the search index failed (SearchIndexError: ")
    assert "disk I/O error" in answer.content and "search_history is unavailable" in caplog.text
    assert runtime.failure is not None


def test_reload_names_the_event_and_whether_it_is_still_seen() -> None:
    runtime = MemoryToolRuntime(_stream())
    answer = runtime.reload(ContextReloadAction(event_id=1), lambda: (lambda event_id: "forgotten"))
    assert answer.reloaded_event_id == 1
    assert answer.content.splitlines()[0].endswith(", forgotten; its content as logged follows]")
    missing = runtime.reload(ContextReloadAction(event_id=9), everything_in_view)
    assert missing.content.startswith("There is no event 9 in the history: event ids go from 0 to 2.")


def test_a_copy_of_a_log_kept_elsewhere_keeps_its_index_beside_that_log(tmp_path: Path) -> None:
    folder = tmp_path / "conversation" / "events"
    folder.mkdir(parents=True)
    runtime = MemoryToolRuntime(_stream(), index_beside=folder)
    answer = runtime.search(SearchHistoryAction(query="quokka"), 6, everything_in_view)
    assert "event 2" in answer.content
    assert runtime.index is not None and runtime.index.path == tmp_path / "conversation" / "events.search.sqlite"
    assert runtime.index.path.stat().st_mode & 0o777 == 0o600
    assert list(folder.iterdir()) == []  # beside the folder, never in it
    runtime.close()
    # Another runtime over the same log finds the index there, already filled.
    again = MemoryToolRuntime(_stream(), index_beside=folder)
    again.use_index()
    assert again.index is not None and again.index.rebuilds == 0 and again.index.last_indexed_id == 2
    again.close()
