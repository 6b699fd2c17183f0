"""The features every store must serve the same: subclass `LogFeaturesContract` and implement `log_location`.

`store_contract.EventStoreContract` checks a store's own methods; this suite checks what users do
with a stored log, through its location (a path or a URL, as the command line takes it): read it
back byte for byte, resume a stream and a `History`, build views, replay, benchmark, validate,
search, inspect, view, and convert in and out. Each test compares with the same events in memory,
so a store passes only if nothing it does shows. Usage, in a backend's test module::

    class TestJsonlLogFeatures(LogFeaturesContract):
        def log_location(self, tmp_path, name):
            return str(tmp_path / f"{name}.jsonl")

    del LogFeaturesContract
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from openhands_memory.bench.runner import PipelineSpec, run_benchmark, run_events
from openhands_memory.cli import main
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME
from openhands_memory.events import Event, EventSource, MessageAction, event_to_json
from openhands_memory.history import History
from openhands_memory.llm import to_litellm_dicts
from openhands_memory.recall import event_text
from openhands_memory.replay import replay_events, snapshot_at
from openhands_memory.stream import EventFilter, EventStream
from openhands_memory.stream.locations import load_log, shown_location
from openhands_memory.testing.synthetic import synthetic_session
from openhands_memory.view import View

_EVENTS = 120


def contract_events() -> list[Event]:
    """The log every test stores: a synthetic coding session with tool calls and a condensation."""
    return synthetic_session(_EVENTS, condense_every=60, seed=11)


def _measured(report: dict[str, Any]) -> dict[str, Any]:
    """What a replay or a bench run found, without timings (a condensation's record included) or where the log came from."""
    return {k: _untimed(v) for k, v in report.items() if "seconds" not in k and k not in ("source", "log")}


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_untimed(item) for item in value]
    return value


class LogFeaturesContract:
    """What users do with a stored log works on this store exactly as on the events in memory."""

    def log_location(self, tmp_path: Path, name: str) -> str:
        """Where a new, empty log called `name` goes: a path or a URL every reader and `EventStream.open` take."""
        raise NotImplementedError

    def _stored(self, tmp_path: Path, name: str = "log") -> tuple[str, list[Event]]:
        events = contract_events()
        location = self.log_location(tmp_path, name)
        with EventStream.from_events(events, location):
            pass
        return location, events

    def _cli(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    def test_events_read_back_byte_for_byte(self, tmp_path: Path) -> None:
        location, events = self._stored(tmp_path)
        assert [event_to_json(e) for e in load_log(location)] == [event_to_json(e) for e in events]

    def test_stream_resumes_reads_filters_and_appends(self, tmp_path: Path) -> None:
        location, events = self._stored(tmp_path)
        with EventStream.open(location) as stream:
            assert len(stream) == len(events)
            assert stream.get_event(events[40].id).model_dump() == events[40].model_dump()
            last_three = [e.id for e in stream.get_events(reverse=True, limit=3)]
            assert last_three == [e.id for e in reversed(events)][:3]
            agents = EventFilter(source=EventSource.AGENT, query="pytest")
            assert [e.id for e in stream.get_events(filter=agents)] == [e.id for e in events if agents.include(e)]
            new_id = stream.add_event(MessageAction(content="one more"), EventSource.USER)
            assert new_id == events[-1].id + 1
        with EventStream.open(location) as stream:
            assert [e.id for e in stream.get_events(new_id - 1)] == [new_id - 1, new_id]

    def test_view_is_the_view_of_the_events(self, tmp_path: Path) -> None:
        location, events = self._stored(tmp_path)
        expected = View.from_events(events)
        with EventStream.open(location) as stream:
            view = View.from_events(stream.snapshot())
        assert [e.id for e in view] == [e.id for e in expected]
        assert view.forgotten_event_ids == expected.forgotten_event_ids

    def test_history_resumes_with_the_same_messages(self, tmp_path: Path) -> None:
        location, events = self._stored(tmp_path)
        expected = to_litellm_dicts(History(EventStream.from_events(contract_events())).next_messages())
        with History.open(location) as history:
            assert to_litellm_dicts(history.next_messages()) == expected
            history.add_event(MessageAction(content="and the docs too"), EventSource.USER)
        with History.open(location) as history:
            assert history.stream.get_event(events[-1].id + 1).content == "and the docs too"
            assert "and the docs too" in orjson.dumps(to_litellm_dicts(history.next_messages())[-1]).decode()

    def test_history_search_tool_finds_a_forgotten_event(self, tmp_path: Path) -> None:
        location, events = self._stored(tmp_path)
        target = next(e for e in events[5:] if "FAILED" in event_text(e))
        assert target.id in View.from_events(events).forgotten_event_ids
        word = next(w for w in event_text(target).split() if "::" in w)
        with History.open(location) as history:
            history.memory_tools()  # opens the store's search index
            call = {"id": "c1", "type": "function", "function": {"name": "search_history", "arguments": orjson.dumps({"query": word}).decode()}}
            answer = history.run_memory_tool(call)
        assert f"- event {target.id} (" in answer.content  # found, though a condensation forgot it

    def test_replay_command_replays_it_as_the_events(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        location, events = self._stored(tmp_path)
        code, out, _ = self._cli(capsys, "replay", location, "--json")
        assert code == 0
        expected = replay_events(contract_events()).to_dict()
        # The command names what the default's summary member calls: no model, the offline summarizer.
        expected["summarizer"] = OFFLINE_SUMMARIZER_NAME
        assert _measured(orjson.loads(out)) == _measured(expected)
        assert orjson.loads(out)["source"] == shown_location(location)

    def test_bench_measures_it_as_the_events(self, tmp_path: Path) -> None:
        location, _ = self._stored(tmp_path)
        spec = PipelineSpec.from_config("window", {"type": "conversation_window"})
        results = run_benchmark([location], [spec], jobs=1)
        assert not results.errors
        (run,) = results.runs
        expected = run_events(contract_events(), spec)
        assert _measured(run) == _measured(expected)
        assert run["log"] == shown_location(location)

    def test_validate_command_reports_it_loads(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        location, events = self._stored(tmp_path)
        code, out, _ = self._cli(capsys, "validate", location)
        assert code == 0
        assert out.splitlines()[-1] == f"{shown_location(location)}: {len(events):,} events, 0 errors, 0 warnings: loads"

    def test_search_command_finds_the_event_with_a_rare_word(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        location, events = self._stored(tmp_path)
        target = next(e for e in events[5:] if "FAILED" in event_text(e))
        word = next(w for w in event_text(target).split() if "::" in w)
        code, out, _ = self._cli(capsys, "search", location, word, "--json")
        assert code == 0
        hits = orjson.loads(out)
        assert target.id in [hit["id"] for hit in hits]
        assert all(word.lower() in event_text(next(e for e in events if e.id == hit["id"])).lower() for hit in hits)

    def test_inspect_and_view_commands_show_the_events(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        location, events = self._stored(tmp_path)
        code, out, _ = self._cli(capsys, "inspect", location, "--json")
        assert code == 0 and orjson.loads(out)["events"] == len(events)
        code, out, _ = self._cli(capsys, "view", location, "--recorded", "--json")
        assert code == 0
        shown = [(e.get("id"), e.get("action", e.get("observation"))) for e in orjson.loads(out)]
        expected = snapshot_at(contract_events(), None, condenser=None, recorded=True).shown
        assert shown == [(e.id, e.kind) for e in expected]

    def test_convert_out_gives_each_event_byte_for_byte(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        location, events = self._stored(tmp_path)
        out = tmp_path / "out.jsonl"
        code, _, _ = self._cli(capsys, "convert", location, str(out))
        assert code == 0
        assert out.read_bytes().splitlines() == [event_to_json(e) for e in events]

    def test_convert_in_stores_each_event_byte_for_byte(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        events = contract_events()
        source = tmp_path / "source.json"
        source.write_bytes(orjson.dumps([orjson.loads(event_to_json(e)) for e in events]))
        location = self.log_location(tmp_path, "converted")
        code, _, err = self._cli(capsys, "convert", str(source), location)
        assert code == 0, err
        assert [event_to_json(e) for e in load_log(location)] == [event_to_json(e) for e in events]
        code, _, err = self._cli(capsys, "convert", str(source), location)
        assert code == 1 and "use --force to replace it" in err
