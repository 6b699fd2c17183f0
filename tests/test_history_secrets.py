"""Secrets given to a `History` never reach a model or the disk, and a resumed session sends what a live one sent."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from openhands_memory.condenser import Condenser, LLMSummarizingCondenser, NoOpCondenser
from openhands_memory.errors import InvalidSecretError
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    EventSource,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
)
from openhands_memory.history import History
from openhands_memory.stream import EventStream
from openhands_memory.testing.fake_llm import FakeLLM

SECRET = "sk-live-7f3a9c2e51"
SECRETS = {"DEPLOY_TOKEN": SECRET}


def _turn(history: History, number: int) -> None:
    """One tool call and its output, the secret in the command, the output and a dict key of the metadata."""
    metadata = ToolCallMetadata(
        function_name="execute_bash",
        tool_call_id=f"call-{number}",
        model_response={"id": f"r{number}", "headers": {SECRET: "x", "seen": f"token {SECRET}"}},
    )
    run = CmdRunAction(command=f"deploy --token {SECRET} --step {number}", tool_call_metadata=metadata)
    history.add_event(run, EventSource.AGENT)
    output = CmdOutputObservation(
        content=f"step {number}: authenticated with {SECRET}\n" * 5, command=run.command, tool_call_metadata=metadata, cause=run.id
    )
    history.add_event(output, EventSource.ENVIRONMENT)


def _begin(history: History) -> None:
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content=f"Deploy the app; the token is {SECRET}"), EventSource.USER)


def _open(path: Path, summarizer: FakeLLM) -> History:
    condenser = LLMSummarizingCondenser(summarizer.llm(), max_size=10, keep_first=2)
    return History.open(path, secrets=SECRETS, condenser=condenser)


def _prompts(fake: FakeLLM) -> list[Any]:
    return [call.messages for call in fake.calls]


def _run(path: Path, *, resume: bool) -> tuple[list[Any], list[Any]]:
    """The prompts a session sends the summarizer and the agent's model; with `resume`, reopened from its file at every step."""
    summarizer, agent = FakeLLM(default="USER_CONTEXT: deploying"), FakeLLM(default="done")
    history = _open(path, summarizer)
    _begin(history)
    for step in range(3):
        for number in range(step * 4, step * 4 + 4):
            _turn(history, number)
        if resume:
            history.close()
            history = _open(path, summarizer)
        history.completion(agent.llm())
    history.close()
    return _prompts(summarizer), _prompts(agent)


def _count(text: str | bytes) -> int:
    return text.count(SECRET.encode() if isinstance(text, bytes) else SECRET)


def test_a_live_and_a_resumed_session_send_the_same_redacted_prompts_to_the_agent_and_the_summarizer(tmp_path: Path) -> None:
    live_summaries, live_agent = _run(tmp_path / "live.jsonl", resume=False)
    resumed_summaries, resumed_agent = _run(tmp_path / "resumed.jsonl", resume=True)

    assert len(live_summaries) >= 2 and len(live_agent) == 3  # the summarizer really ran
    assert live_summaries == resumed_summaries
    assert live_agent == resumed_agent
    prompts = json.dumps([live_summaries, live_agent, resumed_summaries, resumed_agent])
    found = _count(prompts) + _count((tmp_path / "live.jsonl").read_bytes()) + _count((tmp_path / "resumed.jsonl").read_bytes())
    assert found == 0
    assert "<secret_hidden>" in json.dumps(live_agent) and "<secret_hidden>" in json.dumps(live_summaries)


def test_history_open_takes_secrets_and_hides_them_in_the_view_and_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with History.open(path, secrets=SECRETS, condenser=NoOpCondenser()) as history:
        _begin(history)
        _turn(history, 0)
        assert history.initial_user_action is not None
        assert history.initial_user_action.content == "Deploy the app; the token is <secret_hidden>"
        assert _count(json.dumps([message.model_dump(mode="json") for message in history.next_messages()])) == 0
    assert _count(path.read_bytes()) == 0


def test_history_takes_secrets_for_its_own_stream_and_for_a_given_one() -> None:
    own = History(secrets=SECRETS, condenser=NoOpCondenser())
    _begin(own)
    given = History(EventStream(), secrets=SECRETS, condenser=NoOpCondenser())
    _begin(given)
    for history in (own, given):
        assert history.stream.hides_secrets
        assert [_count(repr(event)) for event in history.view] == [0, 0]


@pytest.mark.parametrize("secrets", [["abc123secret"], "abc123secret", ("abc123secret",)])
def test_secrets_that_are_no_mapping_are_a_typed_error_before_touching_the_file(tmp_path: Path, secrets: Any) -> None:
    path = tmp_path / "events.jsonl"
    message = (
        "secrets are a mapping of name to value, e.g. {'GITHUB_TOKEN': token}, "
        f"not a {type(secrets).__name__}"
    )
    with pytest.raises(InvalidSecretError, match=re.escape(message)) as raised:
        History.open(path, secrets=secrets)
    assert raised.value.name is None and str(raised.value) == message
    assert not path.exists()
    with pytest.raises(InvalidSecretError, match=re.escape(message)):
        EventStream().set_secrets(secrets)


def test_history_open_refuses_a_short_secret_before_touching_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with pytest.raises(InvalidSecretError, match=re.escape("secret 'PIN': its value is 4 characters long; a secret must be at least 6")):
        History.open(path, secrets={"PIN": "1234"})
    assert not path.exists()
    with pytest.raises(InvalidSecretError, match="secret 'E'"):
        History(secrets={"E": "e"})


# -- secrets in the projections: whatever the log held when it was written (issue 27, item 2) ------


def _call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _sidecar_bytes(log: Path) -> bytes:
    files = [Path(f"{log}.search.sqlite{suffix}") for suffix in ("", "-wal", "-shm")]
    return b"".join(path.read_bytes() for path in files if path.exists())


def test_a_log_written_before_the_secrets_were_set_is_resumed_with_them_hidden_everywhere(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    with History.open(log, condenser=NoOpCondenser()) as history:  # no secret known yet
        _begin(history)
        _turn(history, 0)
        history.memory_tools()  # indexed with the secret in it
    assert _count(log.read_bytes()) > 0 and _count(_sidecar_bytes(log)) > 0

    with History.open(log, secrets=SECRETS, condenser=NoOpCondenser()) as history:
        messages = history.next_messages()
        history.memory_tools()
        found = history.run_memory_tool(_call("search_history", {"query": "authenticated deploy"}))
        reloaded = history.run_memory_tool(_call("context_reload", {"event_id": 3}, "call_2"))
        stored = [history.stream.get_event(found.id), history.stream.get_event(reloaded.id)]  # type: ignore[arg-type]
        after = history.next_messages()
    assert "<secret_hidden>" in json.dumps([m.model_dump(mode="json") for m in messages])
    assert found.content.startswith("1 event matches") and "<secret_hidden>" in found.content
    assert reloaded.content.endswith("step 0: authenticated with <secret_hidden>\n" * 5)
    sent = json.dumps([m.model_dump(mode="json") for m in [*messages, *after]])
    assert _count(sent) + _count(found.content + reloaded.content) + _count(repr(stored)) == 0
    assert _count(_sidecar_bytes(log)) == 0  # rebuilt for the secrets in force
    log_tail = log.read_bytes().splitlines()[4:]  # what this session appended
    assert log_tail and _count(b"\n".join(log_tail)) == 0


def test_a_secret_scrubbed_from_the_log_after_indexing_leaves_the_sidecar_and_the_answers(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    with History.open(log, condenser=NoOpCondenser()) as history:
        _begin(history)
        for number in range(3):
            _turn(history, number)
        history.memory_tools()
    assert _count(_sidecar_bytes(log)) > 0
    log.write_bytes(log.read_bytes().replace(SECRET.encode(), b"[scrubbed]"))  # the user scrubs the log in place
    with History.open(log, condenser=NoOpCondenser()) as history:
        history.memory_tools()
        found = history.run_memory_tool(_call("search_history", {"query": "authenticated", "limit": 10}))
        by_secret = history.run_memory_tool(_call("search_history", {"query": SECRET}, "call_2"))
    assert found.content.startswith("3 events match") and "[scrubbed]" in found.content
    assert by_secret.content.startswith("No event matches")
    assert _count(found.content) == 0 and _count(_sidecar_bytes(log)) == 0


def test_an_offloaded_preview_of_a_log_written_before_the_secrets_were_set_hides_them(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    with History.open(log, condenser=NoOpCondenser()) as history:
        _begin(history)
        metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id="big")
        run = CmdRunAction(command="env", tool_call_metadata=metadata)
        history.add_event(run, EventSource.AGENT)
        output = f"DEPLOY_TOKEN={SECRET}\n" + "x" * 10_000
        history.add_event(CmdOutputObservation(content=output, command="env", cause=run.id, tool_call_metadata=metadata), EventSource.ENVIRONMENT)
    offload = Condenser.from_config({"type": "large_output_offload", "large_payload_threshold": 1000, "last_keep": 0})
    with History.open(log, secrets=SECRETS, condenser=offload) as history:
        messages = history.next_messages()
    preview = str(messages[-1].content)
    assert "call context_reload with event_id=3" in preview and "DEPLOY_TOKEN=<secret_hidden>" in preview
    assert _count(json.dumps([m.model_dump(mode="json") for m in messages])) == 0
