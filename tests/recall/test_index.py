"""The search index: a projection of the log, ranked by BM25, kept in a sidecar that is rebuilt, never trusted."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import stat
from collections import Counter
from pathlib import Path

import pytest

from openhands_memory.events import (
    AgentThinkAction,
    BrowserOutputObservation,
    ContextReloadAction,
    Event,
    FileEditAction,
    FileReadAction,
    MCPAction,
    SearchHistoryAction,
    event_from_dict,
    load_events,
)
from openhands_memory.errors import SearchIndexError, StoreClosedError
from openhands_memory.recall import SearchHit, SearchIndex, event_text, sidecar_path
from openhands_memory.recall import index as index_module
from openhands_memory.stream import Redactor
from openhands_memory.testing.sessions import SessionBuilder
from openhands_memory.view import View


def session(extra_turns: int = 0) -> list[Event]:
    """A small session whose middle turns a condensation forgets; every turn's output is distinct."""
    s = SessionBuilder()
    s.header()
    s.turn("pytest tests/test_parser.py", "FAILED tests/test_parser.py::test_decode_header - KeyError: 'zanzibar'")
    s.turn("cat src/app/config.py", "import os\nDEFAULT_TIMEOUT = 30\n")
    s.turn("ls src", "app\nutil\n")
    s.condense(
        forgotten_events_start_id=4, forgotten_events_end_id=7, summary="ran the tests, read the config",
        summary_offset=4,
    )
    for i in range(extra_turns):
        s.turn(f"echo step{i}", f"output of step {i}")
    return s.events


def rows_in(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("")  # the index never reads the log file: the events are passed in
    return path


# -- ranking and queries ----------------------------------------------------------------------------


def test_a_token_unique_to_one_event_ranks_it_first() -> None:
    events = session()
    with SearchIndex.in_memory() as index:
        index.sync(events)
        hits = index.search("decode header zanzibar")
    assert hits[0].event_id == 5
    assert hits[0].kind == "run"
    assert "zanzibar" in hits[0].snippet
    assert hits[0].score > 0
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_a_forgotten_event_is_still_found() -> None:
    events = session()
    assert 7 in View.from_events(events).forgotten_event_ids
    with SearchIndex.in_memory() as index:
        index.sync(events)
        assert [hit.event_id for hit in index.search("DEFAULT_TIMEOUT")] == [7]


@pytest.mark.parametrize(
    "query",
    ['"zanzibar', "zanzibar AND", "zanzibar*", "body:zanzibar", "(zanzibar", "zanzibar)", "-zanzibar", "NOT zanzibar",
     "zanzibar OR", "NEAR(zanzibar", "^zanzibar", "zanzibar + {x}", "'zanzibar'", "zanzibar\x00"],
)  # fmt: skip
def test_fts5_syntax_in_a_query_is_searched_as_text_never_an_error(query: str) -> None:
    with SearchIndex.in_memory() as index:
        index.sync(session())
        hits = index.search(query)
    assert hits and hits[0].event_id == 5


@pytest.mark.parametrize("query", ["", "   ", "*", "AND ( ) -", '""', "nothingmatchesthis"])
def test_a_query_without_a_match_is_an_empty_list(query: str) -> None:
    with SearchIndex.in_memory() as index:
        index.sync(session())
        assert index.search(query) == []


def test_events_holding_every_word_are_the_answer_else_any_word_ranks() -> None:
    with SearchIndex.in_memory() as index:
        index.sync(session())
        assert [hit.event_id for hit in index.search("decode zanzibar")] == [5]  # the one event holding both
        assert [hit.event_id for hit in index.search("test_decode_header zanzibar")] == [5]
        # No event holds both: every event holding either comes, the one with more of the words first.
        assert {hit.event_id for hit in index.search("zanzibar DEFAULT_TIMEOUT")} == {5, 7}
        assert [hit.event_id for hit in index.search("decode zanzibar kookaburra")][0] == 5


def test_limit_bounds_the_hits() -> None:
    with SearchIndex.in_memory() as index:
        index.sync(session(extra_turns=8))
        assert len(index.search("output step", limit=3)) == 3
        assert index.search("output step", limit=0) == []


def test_a_snippet_is_one_short_line_even_for_a_huge_output() -> None:
    s = SessionBuilder()
    s.header()
    big = "\n".join(f"line {i} of the build log" for i in range(50_000)) + "\nneedle_at_the_very_end\n"
    s.turn("make", big)
    with SearchIndex.in_memory() as index:
        index.sync(s.events)
        hit = index.search("needle_at_the_very_end")[0]
    assert hit.event_id == 5  # indexed whole: the match is 1 MB into the output
    assert "\n" not in hit.snippet and len(hit.snippet) <= 200
    assert "needle" in hit.snippet


def test_search_hit_is_a_frozen_value() -> None:
    hit = SearchHit(event_id=1, kind="run", snippet="x", score=1.0)
    with pytest.raises(AttributeError):
        hit.score = 2.0  # type: ignore[misc]


# -- what is indexed --------------------------------------------------------------------------------


def test_event_text_holds_the_fields_an_agent_would_search_for() -> None:
    edit = FileEditAction(path="src/x.py", command="str_replace", old_str="alpha", new_str="beta", thought="fix it")
    assert event_text(edit).split("\n") == ["src/x.py", "str_replace", "alpha", "beta", "fix it"]
    mcp = MCPAction(name="fetch", arguments={"url": "https://example.com", "opts": {"deep": ["nested"]}})
    assert event_text(mcp).split("\n") == ["fetch", "https://example.com", "nested"]
    unknown = event_from_dict({"id": 1, "action": "chat", "args": {"text": "hello bob", "n": 3}})
    assert event_text(unknown) == "hello bob"
    assert event_text(FileReadAction(path="a.py", confirmation_state="confirmed")) == "a.py"  # settings left out


def test_images_and_page_internals_are_not_indexed() -> None:
    page = BrowserOutputObservation(
        content="Welcome page", url="https://x.test", screenshot="data:image/png;base64,iVBORw0KGgo",
        axtree_object={"node": "secret tree"}, set_of_marks="data:image/png;base64,AAAA",
    )  # fmt: skip
    assert event_text(page) == "Welcome page\nhttps://x.test"


def test_deeply_nested_arguments_are_no_recursion_error() -> None:
    value: object = "bottom"
    for _ in range(10_000):
        value = [value]
    assert event_text(MCPAction(name="x", arguments={"a": value})) == "x\nbottom"


def test_hidden_events_and_copies_of_other_events_are_not_found() -> None:
    s = SessionBuilder()
    s.header()
    s.add(AgentThinkAction(thought="hidden thought quokka", hidden=True))
    reload = event_from_dict({"observation": "context_reload", "content": "quokka again", "extras": {}})
    s.add(reload)
    s.add(AgentThinkAction(thought="a visible quokka"))
    with SearchIndex.in_memory() as index:
        index.sync(s.events)
        assert [hit.event_id for hit in index.search("quokka")] == [6]
        assert index.last_indexed_id == 6


def test_the_agents_own_queries_are_never_indexed() -> None:
    s = SessionBuilder()
    s.header()
    s.add(AgentThinkAction(thought="apple pie recipe"))
    s.add(SearchHistoryAction(query="apple banana"))
    s.add(ContextReloadAction(event_id=4))
    s.add(AgentThinkAction(thought="banana split recipe"))
    with SearchIndex.in_memory() as index:
        index.sync(s.events)
        # No event holds both words: the query itself does not count as one, so the any-word ranking runs.
        assert sorted(hit.event_id for hit in index.search("apple banana")) == [4, 7]


# -- keeping up with the log ------------------------------------------------------------------------


def test_sync_indexes_only_the_new_events() -> None:
    events = session(extra_turns=3)
    with SearchIndex.in_memory() as index:
        assert index.sync(events[:10]) == 10
        assert index.last_indexed_id == 9
        assert index.sync(events) == len(events) - 10
        assert index.sync(events) == 0
        assert index.last_indexed_id == events[-1].id
        assert index.rebuilds == 0
        assert {hit.event_id for hit in index.search("step2")} == {events[-1].id - 1, events[-1].id}


def test_add_indexes_one_event_and_ignores_old_ids() -> None:
    events = session()
    with SearchIndex.in_memory() as index:
        index.sync(events)
        count = len(index)
        index.add(events[5])  # an id already indexed
        index.add(AgentThinkAction(thought="no id yet, so not indexed: wombat"))
        assert len(index) == count and index.search("wombat") == []
        new = AgentThinkAction(id=events[-1].id + 1, thought="a late wombat")
        index.add(new)
        assert index.last_indexed_id == new.id
        assert [hit.event_id for hit in index.search("wombat")] == [new.id]
        assert index.sync([*events, new]) == 0  # add and sync agree on where the index is


def test_the_index_survives_reopening_without_reindexing(log: Path) -> None:
    events = session(extra_turns=5)
    with SearchIndex.for_log(log) as index:
        assert index.path == sidecar_path(log)
        index.sync(events)
        count = len(index)
    assert rows_in(sidecar_path(log)) == count
    with SearchIndex.for_log(log) as index:
        assert index.last_indexed_id == events[-1].id
        assert len(index) == count
        assert index.sync(events) == 0
        assert [hit.event_id for hit in index.search("zanzibar")] == [5]
        assert index.rebuilds == 0
    assert rows_in(sidecar_path(log)) == count


def test_the_sidecar_is_owner_only_and_leaves_no_other_file(log: Path) -> None:
    with SearchIndex.for_log(log) as index:
        index.sync(session())
        assert stat.S_IMODE(os.stat(sidecar_path(log)).st_mode) == 0o600
        for extra in log.parent.glob("*.search.sqlite-*"):  # the write-ahead log while open
            assert stat.S_IMODE(extra.stat().st_mode) == 0o600, extra
    assert sorted(p.name for p in log.parent.iterdir()) == ["events.jsonl", "events.jsonl.search.sqlite"]


def test_an_existing_sidecar_with_loose_permissions_is_made_owner_only(log: Path) -> None:
    SearchIndex.for_log(log).close()
    os.chmod(sidecar_path(log), 0o644)
    SearchIndex.for_log(log).close()
    assert stat.S_IMODE(os.stat(sidecar_path(log)).st_mode) == 0o600


def test_a_deleted_sidecar_is_rebuilt_from_the_log(log: Path) -> None:
    events = session()
    with SearchIndex.for_log(log) as index:
        index.sync(events)
    sidecar_path(log).unlink()
    with SearchIndex.for_log(log) as index:
        assert index.last_indexed_id is None
        assert index.sync(events) == len(events)
        assert [hit.event_id for hit in index.search("zanzibar")] == [5]


def test_a_corrupt_sidecar_is_rebuilt_with_a_warning(log: Path, caplog: pytest.LogCaptureFixture) -> None:
    events = session()
    with SearchIndex.for_log(log) as index:
        index.sync(events)
    sidecar = sidecar_path(log)
    damaged = sidecar.read_bytes()
    sidecar.write_bytes(damaged[:100] + os.urandom(len(damaged) - 100))  # its header (ours) kept, the rest noise
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            assert index.path == sidecar_path(log)
            assert index.sync(events) == len(events)
            assert [hit.event_id for hit in index.search("zanzibar")] == [5]
            assert index.rebuilds == 1 and "corrupt" in (index.last_rebuild_reason or "")
    assert any("is corrupt" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    assert rows_in(sidecar_path(log)) > 0  # the new sidecar is a database again


def test_a_sidecar_of_an_earlier_version_is_rebuilt(log: Path, caplog: pytest.LogCaptureFixture) -> None:
    with sqlite3.connect(sidecar_path(log)) as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema', '999')")
        conn.execute("CREATE TABLE events (x)")
    conn.close()
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            index.sync(session())
            assert [hit.event_id for hit in index.search("zanzibar")] == [5]
            assert index.rebuilds == 1
    assert any("recreating it" in r.getMessage() for r in caplog.records)


def test_a_log_replaced_by_another_is_reindexed(log: Path, caplog: pytest.LogCaptureFixture) -> None:
    with SearchIndex.for_log(log) as index:
        index.sync(session(extra_turns=2))
    other = SessionBuilder()
    other.header()
    other.turn("echo platypus", "platypus")
    for _ in range(4):
        other.turn()
    other.agent("done")  # as long as the first log, same first event: only the last one's text differs
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            assert index.sync(other.events) == len(other.events)
            assert index.rebuilds == 1
            assert index.search("zanzibar") == []
            assert [hit.event_id for hit in index.search("platypus")][0] in (4, 5)
    assert any("does not match the log" in r.getMessage() for r in caplog.records)


def test_an_older_snapshot_of_the_log_never_moves_the_index_backwards(log: Path) -> None:
    events = session(extra_turns=4)
    with SearchIndex.for_log(log) as live:
        live.sync(events[:11])
        live.add(events[11])
        live.add(events[12])
        # What `openhands-memory search` does beside a live session: it read the log a moment ago.
        with SearchIndex.for_log(log) as other:
            assert other.sync(events[:9]) == 0
            assert other.rebuilds == 0
            assert {hit.event_id for hit in other.search("step0")} == {11, 12}
        for event in events[13:]:
            live.add(event)
        assert live.last_indexed_id == events[-1].id
        assert {hit.event_id for hit in live.search("step1")} == {13, 14}
    with SearchIndex.for_log(log) as next_session:
        assert next_session.sync(events) == 0
        assert {hit.event_id for hit in next_session.search("step0")} == {11, 12}


def test_a_cut_log_that_grows_again_replaces_what_the_index_held_for_its_ids() -> None:
    events = session(extra_turns=2)
    with SearchIndex.in_memory() as index:
        index.sync(events)
        regrown = AgentThinkAction(id=events[-1].id, thought="a wombat where the output was")
        index.sync([*events[:-1], regrown])
        assert index.rebuilds == 1  # the last event both hold differs: re-indexed
        assert [hit.event_id for hit in index.search("wombat")] == [regrown.id]
        assert [hit.event_id for hit in index.search("step1")] == [events[-2].id]
        index.add(AgentThinkAction(id=events[-2].id, thought="a numbat"))  # an id the index holds, another text
        assert [hit.event_id for hit in index.search("numbat")] == [events[-2].id]
        assert index.search("step1") == []


def test_a_log_with_a_different_first_event_is_reindexed() -> None:
    events = session()
    with SearchIndex.in_memory() as index:
        index.sync(events[3:])  # indexed from the middle: it is no index of the whole log
        assert index.sync(events) == len(events)
        assert index.rebuilds == 1
        assert "starts with event 0" in (index.last_rebuild_reason or "")


def test_an_unwritable_sidecar_falls_back_to_memory(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "events.jsonl"
    log.write_text("")
    sidecar_path(log).mkdir()  # a folder where the sidecar should be: no database can be opened there
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            assert index.path is None and index.fallback_reason
            index.sync(session())
            assert [hit.event_id for hit in index.search("zanzibar")] == [5]
    assert sidecar_path(log).is_dir()  # left alone
    assert any("indexing in memory" in r.getMessage() for r in caplog.records)


def test_a_sidecar_that_is_the_log_itself_is_never_written(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b'{"id": 0}\n')
    os.link(log, sidecar_path(log))  # another name for the log
    with SearchIndex.for_log(log) as index:
        assert index.path is None and "input" in (index.fallback_reason or "")
        index.sync(session())
    assert log.read_bytes() == b'{"id": 0}\n'


def test_a_sidecar_corrupted_while_open_is_recreated(log: Path, caplog: pytest.LogCaptureFixture) -> None:
    events = session()
    index = SearchIndex.for_log(log)
    index.sync(events)
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        index._recover(sqlite3.DatabaseError("database disk image is malformed"))  # what a failed statement calls
        assert index.search("zanzibar") == []  # empty until the next sync
        assert index.sync(events) == len(events)
        assert [hit.event_id for hit in index.search("zanzibar")] == [5]
    index.close()
    assert caplog.records


# -- a sidecar the library did not create ------------------------------------------------------------


def test_a_text_file_at_the_sidecar_path_is_refused_and_left_untouched(log: Path, caplog: pytest.LogCaptureFixture) -> None:
    notes = b"my notes, not an index\n" * 10
    sidecar_path(log).write_bytes(notes)
    os.chmod(sidecar_path(log), 0o644)
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            assert index.path is None
            assert "is not a search index this library created" in (index.fallback_reason or "")
            index.sync(session())
            assert [hit.event_id for hit in index.search("zanzibar")] == [5]  # in memory
    assert sidecar_path(log).read_bytes() == notes
    assert stat.S_IMODE(sidecar_path(log).stat().st_mode) == 0o644
    assert sorted(p.name for p in log.parent.iterdir()) == ["events.jsonl", "events.jsonl.search.sqlite"]
    assert any("indexing in memory" in r.getMessage() for r in caplog.records)


def test_another_programs_database_is_refused_with_its_tables_kept(log: Path) -> None:
    with sqlite3.connect(sidecar_path(log)) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a table name shared with ours is no proof
    conn.close()
    with SearchIndex.for_log(log) as index:
        assert index.path is None and "did not create" in (index.fallback_reason or "")
        index.sync(session())
    with sqlite3.connect(sidecar_path(log)) as conn:
        assert conn.execute("SELECT * FROM invoices").fetchall() == [(1, 9.5)]
        assert {row[0] for row in conn.execute("SELECT name FROM sqlite_master")} == {"invoices", "meta"}
    conn.close()


def test_a_database_with_another_application_id_is_refused(log: Path) -> None:
    with sqlite3.connect(sidecar_path(log)) as conn:
        conn.execute("PRAGMA application_id = 1234")
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("CREATE TABLE events (x)")
    conn.close()
    before = sidecar_path(log).read_bytes()
    with SearchIndex.for_log(log) as index:
        assert index.path is None and "another program's SQLite database" in (index.fallback_reason or "")
    assert sidecar_path(log).read_bytes() == before


@pytest.mark.parametrize("target_kind", ["text", "index"])
def test_a_symlink_at_the_sidecar_path_is_never_followed(log: Path, target_kind: str) -> None:
    target = log.parent / "elsewhere.db"
    if target_kind == "index":  # even a link to an index of ours
        with SearchIndex.for_log(log.parent / "other.jsonl") as other:
            other.sync(session())
        (log.parent / "other.jsonl.search.sqlite").rename(target)
    else:
        target.write_bytes(b"precious\n")
    os.chmod(target, 0o644)
    before = target.read_bytes()
    sidecar_path(log).symlink_to(target)
    with SearchIndex.for_log(log) as index:
        assert index.path is None and "symbolic link" in (index.fallback_reason or "")
        index.sync(session(extra_turns=3))
    assert target.read_bytes() == before and stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sidecar_path(log).is_symlink()


def test_a_link_beside_the_sidecar_is_never_followed(log: Path) -> None:
    SearchIndex.for_log(log).close()
    target = log.parent / "precious.txt"
    target.write_bytes(b"precious\n")
    Path(f"{sidecar_path(log)}-wal").symlink_to(target)
    with SearchIndex.for_log(log) as index:
        assert index.path is None and "-wal is not a regular file" in (index.fallback_reason or "")
        index.sync(session())
    assert target.read_bytes() == b"precious\n"


def test_an_index_failing_with_corrupt_vtab_is_recreated_logged_and_counted(
    log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = session()
    with SearchIndex.for_log(log) as index:
        index.sync(events)
    with sqlite3.connect(sidecar_path(log)) as conn:
        conn.execute("DELETE FROM events_data WHERE id = 10")  # FTS5's structure record: SQLITE_CORRUPT_VTAB
    conn.close()
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with SearchIndex.for_log(log) as index:
            assert index.sync(events) == len(events)
            assert [hit.event_id for hit in index.search("zanzibar")] == [5]
            assert index.path == sidecar_path(log) and index.fallback_reason is None  # a file again, not memory
            assert index.rebuilds == 1 and "SQLITE_CORRUPT_VTAB" in (index.last_rebuild_reason or "")
    assert any("SQLITE_CORRUPT_VTAB" in r.getMessage() and "recreating" in r.getMessage() for r in caplog.records)
    with SearchIndex.for_log(log) as index:  # and the next session finds it whole, without a rebuild
        assert index.sync(events) == 0 and index.rebuilds == 0
        assert [hit.event_id for hit in index.search("zanzibar")] == [5]


def test_storage_errors_are_the_librarys_typed_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fts5(target: str) -> sqlite3.Connection:
        raise sqlite3.OperationalError("no such module: fts5")

    monkeypatch.setattr(index_module, "_connect", no_fts5)
    with pytest.raises(SearchIndexError, match=re.escape("search index (in memory): cannot create an index in memory: no such module: fts5")):
        SearchIndex.in_memory()


# -- staleness and secrets --------------------------------------------------------------------------


def test_an_event_edited_in_the_middle_of_the_log_is_not_current() -> None:
    events = session(extra_turns=3)
    with SearchIndex.in_memory() as index:
        index.sync(events)
        edited = AgentThinkAction(id=7, thought="nothing of interest")
        assert index.is_current(events[7]) and not index.is_current(edited)
        assert not index.is_current(AgentThinkAction(id=999, thought="never indexed"))
        log = [*events[:7], edited, *events[8:]]
        assert index.sync(log) == 0  # the ends agree: sync alone cannot see it
        assert index.rebuild(log, reason="test") == len(log)
        assert index.search("DEFAULT_TIMEOUT") == [] and index.is_current(edited)


def test_secrets_in_force_are_hidden_in_the_sidecar_and_a_change_rebuilds_it(log: Path) -> None:
    secret = "sk-live-7f3a9c2e51"
    s = SessionBuilder()
    s.header()
    s.turn(f"deploy --token {secret}", f"authenticated with {secret} as zanzibar")
    with SearchIndex.for_log(log) as index:  # built before the secret was known
        index.sync(s.events)
    assert secret.encode() in _sidecar_bytes(log)
    redactor = Redactor({"TOKEN": secret})
    with SearchIndex.for_log(log, redactor=redactor) as index:
        assert index.sync(s.events) == len(s.events)
        assert index.rebuilds == 1 and index.last_rebuild_reason == "the secrets to hide changed"
        (hit,) = index.search("zanzibar")
        assert secret not in hit.snippet and "<secret_hidden>" in hit.snippet
        assert index.search(secret) == []
    sidecar = _sidecar_bytes(log)
    assert secret.encode() not in sidecar and b"TOKEN" not in sidecar
    # A caller that knows no secret never rewrites it (it would undo the hiding): it searches in memory.
    with SearchIndex.for_log(log) as index:
        assert index.sync(s.events) == len(s.events)
        assert index.path is None and "hides secrets" in (index.fallback_reason or "")
    assert secret.encode() not in _sidecar_bytes(log)
    with SearchIndex.for_log(log, redactor=Redactor({"TOKEN": secret})) as index:  # the same secrets: no rebuild
        assert index.sync(s.events) == 0 and index.rebuilds == 0


def _sidecar_bytes(log: Path) -> bytes:
    return b"".join(Path(f"{sidecar_path(log)}{suffix}").read_bytes() for suffix in ("", "-wal") if Path(f"{sidecar_path(log)}{suffix}").exists())


def test_a_closed_index_says_so() -> None:
    index = SearchIndex.in_memory()
    index.close()
    index.close()
    with pytest.raises(StoreClosedError):
        index.search("x")
    with pytest.raises(StoreClosedError):
        index.sync([])


# -- real logs --------------------------------------------------------------------------------------


def test_a_forgotten_event_of_a_real_openhands_log_ranks_first_for_its_unique_word(real_logs_dir: Path) -> None:
    events = load_events(real_logs_dir / "v0_enyst-playground_issue10730_trajectory_297ev.json")
    forgotten = View.from_events(events).forgotten_event_ids
    # Words as the tokenizer splits them (letters and digits; everything else separates), then the long alphabetic ones.
    words_of = {
        e.id: {w for w in re.findall(r"[^\W_]+", event_text(e).lower()) if len(w) > 8 and w.isascii() and w.isalpha()}
        for e in events
        if not e.hidden
    }
    counts = Counter(word for words in words_of.values() for word in words)
    unique = sorted(
        (ident, word) for ident, words in words_of.items() if ident in forgotten for word in words if counts[word] == 1
    )
    assert len(unique) >= 5
    with SearchIndex.in_memory() as index:
        index.sync(events)
        for ident, word in unique[:: max(1, len(unique) // 20)]:
            assert index.search(word)[0].event_id == ident, word


def test_a_real_log_indexes_every_event_with_text(real_logs_dir: Path, tmp_path: Path) -> None:
    events = load_events(real_logs_dir / "v0_oas_claude-sonnet_traj_safety-signatories.json")  # 3.3 MB of screenshots
    log = tmp_path / "log.json"
    log.write_text("[]")
    with SearchIndex.for_log(log) as index:
        index.sync(events)
        assert len(index) == sum(1 for e in events if event_text(e) and not e.hidden)
    assert sidecar_path(log).stat().st_size < 3_000_000  # the base64 images stayed out
