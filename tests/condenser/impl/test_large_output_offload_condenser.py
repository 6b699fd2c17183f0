"""`large_output_offload`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import real_log_params, require_real_log
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    Condenser,
    LargeOutputOffloadCondenser,
    LargeOutputOffloadCondenserConfig,
    load_condenser_config,
    parse_condenser_config,
)
from openhands_memory.condenser.impl.large_output_offload_condenser import offload_notice
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import (
    AgentCondensationObservation,
    BrowserOutputObservation,
    CmdOutputObservation,
    ErrorObservation,
    Event,
    EventSource,
    Observation,
    RecallObservation,
    event_to_dict,
)
from openhands_memory.testing.condenser_replay import check_derived_view, replay_with_condenser
from openhands_memory.testing.strategies import event_streams
from openhands_memory.view import View

from .._helpers import Session, history_of

BIG = "0123456789" * 12  # 120 characters: over a threshold of 100
ERR = "condenser 'large_output_offload': "


def _notice(size: int, event_id: int) -> str:
    return f"[... {size} characters offloaded; call context_reload with event_id={event_id} to see all of it]"


def _session(*contents: str) -> Session:
    s = Session()
    s.header()  # 0-3
    for i, content in enumerate(contents):
        s.turn(f"cmd{i}", content=content)  # 4-5, 6-7, ...
    return s


def _outputs(view: View) -> list[str]:
    return [e.content for e in view if isinstance(e, CmdOutputObservation)]


def _chat(view: View) -> list[object]:
    return ConversationMemory(system_prompt="").process_events(view, None)


# -- what an offloaded observation shows ---------------------------------------------------------


def test_a_large_output_shows_its_first_characters_then_its_size_and_how_to_reload_it() -> None:
    view = _session(BIG, "small").view
    shown = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=10, last_keep=0).condense(view)
    offloaded = shown[5]
    assert offloaded.content == "0123456789\n" + _notice(120, 5)  # type: ignore[attr-defined]
    assert offload_notice(120, 5) == _notice(120, 5)
    original = view[5]
    assert type(offloaded) is type(original)
    assert offloaded.model_dump(exclude={"content"}) == original.model_dump(exclude={"content"})
    assert original.content == BIG  # type: ignore[attr-defined]
    assert shown[7] is view[7]
    check_derived_view(view, shown)


def test_a_preview_of_no_characters_is_the_reload_line_alone() -> None:
    view = _session(BIG).view
    shown = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=0, last_keep=0).condense(view)
    assert _outputs(shown) == [_notice(120, 5)]


@pytest.mark.parametrize(("size", "offloaded"), [(99, False), (100, False), (101, True)])
def test_only_outputs_over_the_threshold_are_offloaded(size: int, offloaded: bool) -> None:
    view = _session("x" * size).view
    shown = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=3, last_keep=0).condense(view)
    assert _outputs(shown) == (["xxx\n" + _notice(size, 5)] if offloaded else ["x" * size])


def test_bulky_payloads_of_an_offloaded_page_are_emptied() -> None:
    s = _session()
    (action,) = s.calls("browse")
    s.add(BrowserOutputObservation(content=BIG, url="u", screenshot="data:image/png;base64,AAAA",
                                   cause=action.id, tool_call_metadata=action.tool_call_metadata))  # fmt: skip
    s.turn()
    page = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=4, last_keep=2).condense(s.view)[5]
    assert isinstance(page, BrowserOutputObservation)
    assert (page.content, page.screenshot, page.url) == ("0123\n" + _notice(120, 5), "", "u")


def test_summaries_recalls_and_unshown_observations_are_never_offloaded() -> None:
    s = _session(BIG, BIG)
    s.condense(forgotten_event_ids=[4, 5], summary="S" * 500, summary_offset=4)
    s.add(RecallObservation(recall_type="knowledge", content="R" * 500, cause=2), EventSource.ENVIRONMENT)
    hidden = s.add(ErrorObservation(content="H" * 500, hidden=True))
    s.turn()
    view = s.view
    shown = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=3, last_keep=0).condense(view)
    summary = next(e for e in shown if isinstance(e, AgentCondensationObservation))
    assert summary.content == "S" * 500
    assert [e.content for e in shown if isinstance(e, RecallObservation)][-1] == "R" * 500
    assert next(e for e in shown if e.id == hidden.id) is hidden
    assert _outputs(shown) == ["012\n" + _notice(120, 7), "output"]


def test_an_observation_without_id_has_no_handle_and_stays() -> None:
    event = CmdOutputObservation(content=BIG, command="ls")
    view = View([event])
    assert LargeOutputOffloadCondenser(large_payload_threshold=100, last_keep=0, preview_chars=3).condense(view)[0] is event


# -- what is protected ---------------------------------------------------------------------------


def test_with_protect_last_keep_the_newest_events_stay_whole() -> None:
    view = _session(BIG, BIG, BIG).view  # outputs at 5, 7, 9
    condenser = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=1, last_keep=2)
    assert _outputs(condenser.condense(view)) == ["0\n" + _notice(120, 5), "0\n" + _notice(120, 7), BIG]
    everything = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=1, last_keep=0)
    assert _outputs(everything.condense(view)) == ["0\n" + _notice(120, i) for i in (5, 7, 9)]
    nothing = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=1, last_keep=10)
    assert nothing.condense(view) is view


def test_without_protect_last_keep_only_the_latest_response_and_its_results_stay_whole() -> None:
    s = _session(BIG)  # 4-5
    first, second = s.calls("a", "b")  # parallel calls of one response: 6, 7
    s.result(first, BIG)  # 8
    s.result(second, BIG)  # 9
    view = s.view
    condenser = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=1, protect_last_keep=False)
    assert _outputs(condenser.condense(view)) == ["0\n" + _notice(120, 5), BIG, BIG]
    # Output that does not answer the latest response (here after it) is not protected.
    s.add(ErrorObservation(content=BIG))  # 10
    shown = condenser.condense(s.view)
    assert _outputs(shown) == ["0\n" + _notice(120, 5), BIG, BIG]
    assert shown[10].content == "0\n" + _notice(120, 10)  # type: ignore[attr-defined]
    # A newer response moves the protection: the earlier one's results are offloaded.
    s.turn("c", BIG)  # 11-12
    assert _outputs(condenser.condense(s.view)) == ["0\n" + _notice(120, i) for i in (5, 8, 9)] + [BIG]


def test_without_protect_last_keep_an_agent_message_protects_nothing_before_it() -> None:
    s = _session(BIG)
    s.agent("done?")
    condenser = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=1, protect_last_keep=False)
    assert _outputs(condenser.condense(s.view)) == ["0\n" + _notice(120, 5)]
    no_agent = View([e for e in s.events if e.source != EventSource.AGENT])
    assert _outputs(condenser.condense(no_agent)) == ["0\n" + _notice(120, 5)]


# -- determinism and valid chats -----------------------------------------------------------------


def test_the_same_view_gives_an_equal_view_and_an_equal_prompt() -> None:
    view = _session(BIG, "small", BIG, BIG).view
    make = lambda: LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=5, last_keep=2)  # noqa: E731
    one, two = make().condense(view), make().condense(view)
    assert one == two and one is not view
    assert _chat(one) == _chat(two)


def test_step_after_step_the_offloaded_messages_stay_identical() -> None:
    s = _session(BIG, BIG)
    condenser = LargeOutputOffloadCondenser(large_payload_threshold=100, preview_chars=5, last_keep=1)
    before = condenser.condense(s.view)
    chat_before = _chat(before)
    s.turn("next", BIG)
    after = condenser.condense(s.view)
    assert before[5] is after[5]  # the copy is made once
    assert before[7] is s.events[7]  # the newest event was protected, and now is not
    assert after[7].content == "01234\n" + _notice(120, 7)  # type: ignore[attr-defined]
    assert after[9] is s.events[9]
    assert _chat(after)[: len(chat_before) - 1] == chat_before[:-1]  # only the newest result changed
    counts = [sum("offloaded" in m.text for m in chat) for chat in (chat_before, _chat(after))]  # type: ignore[attr-defined]
    assert counts == [1, 2]


def test_offloaded_views_render_to_a_valid_chat_with_every_call_answered() -> None:
    s = _session(BIG, BIG)
    first, second = s.calls("a", "b")
    s.result(first, BIG)
    s.result(second, BIG)
    for protect in (True, False):
        condenser = LargeOutputOffloadCondenser(
            large_payload_threshold=100, preview_chars=9, protect_last_keep=protect, last_keep=1
        )
        shown = condenser.condense(s.view)
        messages = _chat(shown)
        calls = [c.id for m in messages if m.tool_calls for c in m.tool_calls]  # type: ignore[attr-defined]
        results = [m.tool_call_id for m in messages if m.role == "tool"]  # type: ignore[attr-defined]
        assert calls == results and len(calls) == 4
        assert sum("context_reload" in m.text for m in messages) == (3 if protect else 2)  # type: ignore[attr-defined]


@given(event_streams(max_size=30), st.integers(1, 30), st.booleans(), st.integers(0, 6))
def test_any_view_changes_only_the_content_of_its_large_observations(
    stream: list[Event], threshold: int, protect: bool, last_keep: int
) -> None:
    view = View.from_events(stream)
    make = lambda: LargeOutputOffloadCondenser(  # noqa: E731
        large_payload_threshold=threshold, preview_chars=threshold // 2, protect_last_keep=protect, last_keep=last_keep
    )
    shown = make().condense(view)
    check_derived_view(view, shown)
    assert shown == make().condense(view)
    for before, after in zip(view, shown, strict=True):
        if after is before:
            continue
        assert isinstance(before, Observation) and before.id is not None
        assert len(before.content) > threshold
        assert after.content == (  # type: ignore[attr-defined]
            before.content[: threshold // 2] + "\n" if threshold // 2 else ""
        ) + _notice(len(before.content), before.id)
        assert event_to_dict(after)["extras"].keys() == event_to_dict(before)["extras"].keys()


# -- config --------------------------------------------------------------------------------------


def test_defaults_are_agentscopes() -> None:
    config = parse_condenser_config({"type": "large_output_offload"})
    assert isinstance(config, LargeOutputOffloadCondenserConfig)
    assert config.model_dump() == {
        "type": "large_output_offload", "large_payload_threshold": 5120, "preview_chars": 200,
        "protect_last_keep": True, "last_keep": 50,
    }  # fmt: skip
    condenser = Condenser.from_config(config)
    assert isinstance(condenser, LargeOutputOffloadCondenser)
    assert (condenser.large_payload_threshold, condenser.preview_chars, condenser.protect_last_keep, condenser.last_keep) == (
        5120, 200, True, 50,
    )  # fmt: skip


def test_a_toml_pipeline_builds_the_condenser_and_its_config_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "offload.toml"
    path.write_text(
        '[condenser]\ntype = "pipeline"\ncondensers = [\n'
        '  { type = "large_output_offload", large_payload_threshold = 1000, preview_chars = 50,'
        " protect_last_keep = false, last_keep = 7 },\n]\n"
    )
    config = load_condenser_config(path)
    (member,) = config.condensers  # type: ignore[attr-defined]
    assert parse_condenser_config(member.model_dump()) == member
    pipeline = Condenser.from_config(config)
    (offload,) = pipeline.condensers  # type: ignore[attr-defined]
    assert isinstance(offload, LargeOutputOffloadCondenser)
    assert (offload.large_payload_threshold, offload.preview_chars, offload.protect_last_keep, offload.last_keep) == (
        1000, 50, False, 7,
    )  # fmt: skip


def test_the_benchmark_pipeline_is_the_default_offload() -> None:
    path = Path(__file__).resolve().parents[3] / "openhands_memory" / "pipelines" / "large_output_offload.toml"
    assert load_condenser_config(path) == LargeOutputOffloadCondenserConfig()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"preview_chars": 100, "large_payload_threshold": 100},
         ERR + "preview_chars (100) must be less than large_payload_threshold (100)"),
        ({"large_payload_threshold": 0}, ERR + "large_payload_threshold: Input should be greater than or equal to 1"),
        ({"last_keep": -1}, ERR + "last_keep: Input should be greater than or equal to 0"),
        ({"last_kep": 3}, ERR + "last_kep: unknown field. Did you mean 'last_keep'?"),
    ],
)  # fmt: skip
def test_bad_settings_are_config_errors_naming_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        parse_condenser_config({"type": "large_output_offload", **data})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"preview_chars": 100, "large_payload_threshold": 100},
         ERR + "preview_chars (100) must be less than large_payload_threshold (100)"),
        ({"large_payload_threshold": 0}, ERR + "large_payload_threshold: must be at least 1, got 0"),
        ({"preview_chars": -1}, ERR + "preview_chars: must be at least 0, got -1"),
        ({"last_keep": -2}, ERR + "last_keep: must be at least 0, got -2"),
    ],
)  # fmt: skip
def test_the_constructor_rejects_bad_settings_with_a_config_error(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        LargeOutputOffloadCondenser(**kwargs)  # type: ignore[arg-type]


# -- real OpenHands logs -------------------------------------------------------------------------


def _named_log(name: str) -> list[object]:
    params = [p for p in real_log_params("v0_") if name in str(p.id)]  # type: ignore[attr-defined]
    return params or [pytest.param(None, id=f"{name}-missing")]


@pytest.mark.parametrize("protect", [True, False])
@pytest.mark.parametrize("log", _named_log("enyst-playground"))
def test_a_real_log_replays_with_its_large_outputs_offloaded_and_the_log_unchanged(log: Path | None, protect: bool) -> None:
    path = require_real_log(log)
    history = history_of(path)
    recorded = [event_to_dict(e) for e in history]
    condenser = LargeOutputOffloadCondenser(protect_last_keep=protect)
    replay = replay_with_condenser(history, condenser)
    assert replay.condensations == []
    view = View.from_events(replay.history)
    shown = condenser.condense(view)
    originals = {e.id: e for e in history}
    offloaded = [e for e, o in zip(shown, view, strict=True) if e is not o]
    assert offloaded, "the log has outputs over 5,120 characters: some must be offloaded"
    for event in offloaded:
        assert isinstance(event, Observation) and event.id is not None
        original = originals[event.id].content  # type: ignore[attr-defined]
        assert len(original) > 5120
        assert event.content == f"{original[:200]}\n{_notice(len(original), event.id)}"
    assert [event_to_dict(e) for e in history] == recorded  # the log's events were never edited
    if protect:
        assert all(s is v for s, v in zip(shown[-50:], view[-50:], strict=True))


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_with_every_tool_call_still_answered(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    replay = replay_with_condenser(history, LargeOutputOffloadCondenser(large_payload_threshold=1000, last_keep=5))
    assert replay.condensations == []
