"""`MarkdownFileMemory`: an append-only, owner-only mirror; bounded RAM; a user's file is never touched."""

from __future__ import annotations

import os
import re
import stat

import pytest
from freezegun import freeze_time

from openhands_memory.errors import OutputRefusedError
from openhands_memory.memory import MarkdownFileMemory
from openhands_memory.memory.markdown_file import MIRROR_HEADER
from openhands_memory.memory.records import is_remembered
from openhands_memory.testing.sessions import SessionBuilder
from openhands_memory.testing.synthetic import synthetic_session


def _session() -> SessionBuilder:
    s = SessionBuilder()
    s.user("Fix the parser")  # 0
    s.turn("pytest", "1 failed\n```\nnot a fence of ours\n```")  # 1, 2
    return s


def test_the_mirror_holds_every_record_in_markdown_as_qitos_writes_it(tmp_path) -> None:
    path = tmp_path / "notes" / "memory.md"
    with freeze_time("2025-03-01 12:00:00"):  # these events have no timestamp: the time of writing
        MarkdownFileMemory.from_events(_session().events, path=path)

    text = path.read_text(encoding="utf-8")
    assert text.startswith(MIRROR_HEADER + "\n")
    # QitOS: "## Step N · role", "- time_utc: <ISO, +00:00>", "- metadata: {...}", then the fenced content.
    assert text.endswith(
        "\n## Step 0 · user\n- time_utc: 2025-03-01T12:00:00+00:00\n- event_id: 0\n"
        "- metadata: {'kind': 'message', 'source': 'user'}\n\n```text\nFix the parser\n```\n"
        "\n## Step 1 · assistant\n- time_utc: 2025-03-01T12:00:00+00:00\n- event_id: 1\n"
        "- metadata: {'kind': 'run', 'source': 'agent', 'tool': 'execute_bash'}\n\n```text\npytest\n```\n"
        "\n## Step 1 · tool\n- time_utc: 2025-03-01T12:00:00+00:00\n- event_id: 2\n"
        "- metadata: {'kind': 'run', 'source': 'environment', 'tool': 'execute_bash', 'cause': 1}\n\n"
        "````text\n1 failed\n```\nnot a fence of ours\n```\n````\n"
    )


def test_time_utc_is_the_events_time_in_utc(tmp_path) -> None:
    s = _session()
    s.events[0].timestamp = "2025-03-01T14:30:00.500000+02:00"
    MarkdownFileMemory.from_events(s.events[:1], path=tmp_path / "memory.md")

    text = (tmp_path / "memory.md").read_text(encoding="utf-8")
    assert "\n## Step 0 · user\n- time_utc: 2025-03-01T12:30:00.500000+00:00\n- event_id: 0\n" in text


def test_an_older_mirror_with_event_headings_is_still_continued(tmp_path) -> None:
    path = tmp_path / "memory.md"
    path.write_text(f"{MIRROR_HEADER}\n\n## Step 1 · tool · event 2\n\n```text\nold\n```\n", encoding="utf-8")

    memory = MarkdownFileMemory.from_events(_session().events, path=path)

    assert memory.mirrored_up_to == 2 and path.read_text(encoding="utf-8").count("## Step") == 1


def test_the_file_and_its_new_folder_are_owner_only(tmp_path) -> None:
    path = tmp_path / "new" / "memory.md"
    old = os.umask(0o022)
    try:
        MarkdownFileMemory(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_ram_is_bounded_while_the_file_keeps_everything(tmp_path) -> None:
    path = tmp_path / "memory.md"
    events = synthetic_session(2000)
    memory = MarkdownFileMemory.from_events(events, path=path, max_in_memory=25)

    assert len(memory) == 25
    assert memory._records.maxlen == 25  # the deque itself cannot grow past the bound
    assert [r.event_id for r in memory.retrieve({"max_items": 2})] == [1998, 1999]
    headings = re.findall(r"^## Step \d+ · \S+\n- time_utc: \S+\n- event_id: (\d+)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    remembered = [str(e.id) for e in events if is_remembered(e)]
    assert len(remembered) == 1980  # its 20 null observations are not records
    assert headings == remembered
    assert memory.evict() == 0


def test_a_rebuild_over_an_existing_mirror_writes_only_what_it_lacks(tmp_path) -> None:
    path = tmp_path / "memory.md"
    s = _session()
    MarkdownFileMemory.from_events(s.events, path=path)
    before = path.read_text(encoding="utf-8")
    s.agent("Fixed")  # 3

    rebuilt = MarkdownFileMemory.from_events(s.events, path=path)

    assert rebuilt.mirrored_up_to == 3
    assert [r.event_id for r in rebuilt.records] == [0, 1, 2, 3]
    after = path.read_text(encoding="utf-8")
    assert after.startswith(before)
    assert re.fullmatch(
        r"\n## Step 2 · assistant\n- time_utc: \S+\+00:00\n- event_id: 3\n- metadata: \{'kind': 'message', 'source': 'agent'\}\n\n```text\nFixed\n```\n",
        after[len(before) :],
    )


def test_a_file_that_is_not_a_mirror_is_refused_and_left_untouched(tmp_path) -> None:
    path = tmp_path / "memory.md"
    path.write_text("# My own notes\n", encoding="utf-8")

    with pytest.raises(OutputRefusedError, match="exists and is not a memory mirror"):
        MarkdownFileMemory(path)
    assert path.read_text(encoding="utf-8") == "# My own notes\n"
    with pytest.raises(OutputRefusedError, match="is not a regular file"):
        MarkdownFileMemory(tmp_path)


def test_reset_empties_ram_only(tmp_path) -> None:
    path = tmp_path / "memory.md"
    memory = MarkdownFileMemory.from_events(_session().events, path=path)
    size = path.stat().st_size
    memory.reset()

    assert memory.records == [] and path.stat().st_size == size


def test_secrets_are_hidden_in_what_the_mirror_writes_and_keeps(tmp_path) -> None:
    secret = "sk-live-7f3a9c2e51"
    s = SessionBuilder()
    s.user(f"Deploy with {secret}")
    s.turn(f"deploy --token {secret}", f"authenticated as {secret}")
    path = tmp_path / "memory.md"
    memory = MarkdownFileMemory.from_events(s.events, path=path, secrets={"TOKEN": secret})
    text = path.read_text(encoding="utf-8")
    assert secret not in text and text.count("<secret_hidden>") == 3
    assert secret not in repr(memory.records) + memory.summarize(10)
