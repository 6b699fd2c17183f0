"""`OpenHandsMemoryCondenser`: configured like SDK condensers, serialized with the SDK's `Agent`, and honouring the SDK's contract."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands.sdk import LLM, Agent  # noqa: E402
from openhands.sdk.agent.utils import aprepare_llm_messages, prepare_llm_messages  # noqa: E402
from openhands.sdk.context.condenser.base import CondensationRequirement, NoCondensationAvailableException  # noqa: E402
from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.context.view.properties import ALL_PROPERTIES  # noqa: E402
from openhands.sdk.event import CondensationRequest, ObservationEvent, SystemPromptEvent  # noqa: E402
from openhands.sdk.event.condenser import Condensation  # noqa: E402
from openhands.sdk.utils.cipher import Cipher  # noqa: E402
from pydantic import SecretStr, ValidationError  # noqa: E402

import openhands_memory.integrations.openhands_sdk as bridge  # noqa: E402
from openhands_memory.errors import CondenserConfigError  # noqa: E402
from openhands_memory.integrations.openhands_sdk import MemoryViewObservation, OpenHandsMemoryCondenser  # noqa: E402

from .sdk_events import long_conversation  # noqa: E402

MASKING = {"type": "observation_masking", "attention_window": 4}
PIPELINE = {
    "type": "pipeline",
    "condensers": [
        {"type": "observation_masking", "attention_window": 6},
        {"type": "amortized", "max_size": 30, "keep_first": 2},
    ],
}


def agent_llm(**fields: Any) -> LLM:
    return LLM(model="gpt-4o", api_key=SecretStr("sk-test-not-a-key"), usage_id="agent", **fields)


def run(condenser: OpenHandsMemoryCondenser, events: list[Any], *, steps: int = 20) -> tuple[list[Any], View]:
    """Ask the condenser as the SDK agent does: append each condensation, ask again, until it shows a view."""
    for _ in range(steps):
        outcome = condenser.condense(View.from_events(events), agent_llm=agent_llm())
        if not isinstance(outcome, Condensation):
            return events, outcome
        events = [*events, outcome]
    raise AssertionError("still condensing")


# -- configuration ------------------------------------------------------------------------------------


def test_the_condensers_public_names_are_exported() -> None:
    assert "OpenHandsMemoryCondenser" in bridge.__all__  # the door (issue 34 item 5); the record types stay importable
    assert all(hasattr(bridge, name) for name in [*bridge.__all__, "CondensationRecord", "MemoryViewObservation"])


def test_a_config_dict_is_validated_by_our_own_rules() -> None:
    condenser = OpenHandsMemoryCondenser(condenser={"type": "recent", "max_events": 10})
    assert condenser.condenser.type == "recent"
    with pytest.raises(ValidationError, match=re.escape("Unknown condenser type 'recnt'. Did you mean 'recent'?")):
        OpenHandsMemoryCondenser(condenser={"type": "recnt"})


def test_given_no_strategy_it_is_the_default_pipeline_priced_for_the_agents_llm() -> None:
    from openhands_memory.condenser import CacheAwareCondenser
    from openhands_memory.pipeline import DEFAULT_CONDENSER_CONFIG

    condenser = OpenHandsMemoryCondenser()
    assert condenser.condenser.model_dump() == OpenHandsMemoryCondenser(condenser=dict(DEFAULT_CONDENSER_CONFIG)).condenser.model_dump()
    for model in ("gpt-5", "claude-sonnet-4-5"):
        strategy = OpenHandsMemoryCondenser().strategy(LLM(model=model, api_key=SecretStr("sk-test-not-a-key"), usage_id="agent"))
        assert isinstance(strategy, CacheAwareCondenser)
        assert strategy.pricing.name == model and strategy.pricing_note == f"priced as {model} (the agent's model)"
    # Offline: no model is called (the summary is the offline structured one), and it round-trips with the agent.
    agent = Agent(llm=agent_llm(), tools=[], condenser=condenser)
    assert Agent.model_validate_json(agent.model_dump_json()).condenser == condenser
    events, view = run(condenser, list(long_conversation(30)))
    assert view.events


def test_from_file_reads_a_pipeline_file_with_the_clis_loader(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(
        '[condenser]\ntype = "llm"\nllm_config = "summarizer"\nmax_size = 40\n\n'
        '[llm.summarizer]\nmodel = "gpt-4o-mini"\nmock_response = "a summary"\n\n'
        '[history_policy]\nmax_messages = 30\n'
    )
    condenser = OpenHandsMemoryCondenser.from_file(path, tokenizer="approximate")
    assert condenser.condenser.type == "llm"
    assert condenser.condenser.llm_config.model == "gpt-4o-mini"  # the [llm.summarizer] table, resolved
    assert condenser.history_policy is not None and condenser.history_policy.max_messages == 30
    assert condenser.tokenizer == "approximate"
    # The strategy summarizes with the file's own model (litellm's mock_response: offline).
    made = condenser.condense(View.from_events(long_conversation(30)), agent_llm=agent_llm())
    assert isinstance(made, Condensation) and made.summary == "a summary"


def test_from_file_takes_a_shipped_pipeline_by_name_as_the_cli_does() -> None:
    from openhands_memory.pipelines import shipped_pipelines

    condenser = OpenHandsMemoryCondenser.from_file("cache_aware", tokenizer="approximate")
    assert condenser == OpenHandsMemoryCondenser.from_file(shipped_pipelines()["cache_aware"], tokenizer="approximate")
    assert condenser.condenser.type == "cache_aware"
    with pytest.raises(CondenserConfigError, match=re.escape("Did you mean 'cache_aware'")):
        OpenHandsMemoryCondenser.from_file("cache_awre")


def test_from_file_reports_a_bad_file_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text('[condenser]\ntype = "recent"\nmax_event = 3\n')
    with pytest.raises(CondenserConfigError, match=re.escape("pipeline.toml")):
        OpenHandsMemoryCondenser.from_file(path)


# -- the SDK's serialization ----------------------------------------------------------------------------


@pytest.mark.parametrize("config", [MASKING, PIPELINE, {"type": "llm", "llm_config": "agent", "max_size": 20}])
def test_an_agent_dumped_and_loaded_has_an_equal_condenser(config: dict[str, Any]) -> None:
    condenser = OpenHandsMemoryCondenser(condenser=config, history_policy={"max_messages": 50})
    agent = Agent(llm=agent_llm(), tools=[], condenser=condenser)
    dumped = agent.model_dump()
    assert dumped["condenser"]["kind"] == "OpenHandsMemoryCondenser"
    for loaded in (Agent.model_validate(dumped), Agent.model_validate_json(agent.model_dump_json())):
        assert type(loaded.condenser) is OpenHandsMemoryCondenser
        assert loaded.condenser == condenser
        assert loaded.condenser.model_dump() == condenser.model_dump()


def test_a_loaded_condenser_behaves_as_the_original() -> None:
    original = OpenHandsMemoryCondenser(condenser=PIPELINE, tokenizer="approximate")
    loaded = Agent.model_validate_json(Agent(llm=agent_llm(), tools=[], condenser=original).model_dump_json()).condenser
    assert isinstance(loaded, OpenHandsMemoryCondenser)
    events = long_conversation(30)
    first_events, first_view = run(original, list(events))
    second_events, second_view = run(loaded, list(events))
    # The condensations name the same events, with the same summaries, and the views show the same events.
    assert [sorted(e.forgotten_event_ids) for e in first_events[len(events) :]] == [
        sorted(e.forgotten_event_ids) for e in second_events[len(events) :]
    ]
    assert len(first_events) > len(events)  # it did condense
    fresh = {"id", "timestamp", "llm_response_id"}  # new for every event made
    assert [e.model_dump(exclude=fresh) if isinstance(e, Condensation) else e.id for e in first_events] == [
        e.model_dump(exclude=fresh) if isinstance(e, Condensation) else e.id for e in second_events
    ]
    assert first_view.model_dump() == second_view.model_dump()


def test_state_built_up_is_not_part_of_equality_or_the_dump() -> None:
    used = OpenHandsMemoryCondenser(condenser=PIPELINE, tokenizer="approximate")
    run(used, long_conversation(30))
    assert used == OpenHandsMemoryCondenser(condenser=PIPELINE, tokenizer="approximate")
    assert used.condensation_records  # it condensed, and kept our record of it
    assert "condensation_records" not in used.model_dump()


# -- a view transform ----------------------------------------------------------------------------------


def test_masking_hands_back_a_new_view_with_the_same_ids_and_never_changes_the_input() -> None:
    events = long_conversation(12)
    view = View.from_events(events)
    before = view.model_dump()
    shown = OpenHandsMemoryCondenser(condenser=MASKING, tokenizer="approximate").condense(view)
    assert isinstance(shown, View) and shown is not view
    assert view.model_dump() == before
    assert [e.id for e in shown.events] == [e.id for e in view.events]
    masked = [e for e in shown.events if isinstance(e, ObservationEvent) and isinstance(e.observation, MemoryViewObservation)]
    assert len(masked) == 12 - 2  # observations older than the attention window of 4 events
    for event in masked:
        original = next(e for e in view.events if e.id == event.id)
        assert (event.tool_call_id, event.action_id) == (original.tool_call_id, original.action_id)
        assert event.observation.original_kind == "TerminalObservation" or event.observation.original_kind == "BrowserObservation"
        assert event.observation.transformed_by == "observation_masking"
        assert len(event.observation.text) < len(original.observation.text)
    untouched = [e for e in shown.events if not isinstance(getattr(e, "observation", None), MemoryViewObservation)]
    assert all(any(e is original for original in view.events) for e in untouched)  # the SDK's own objects


# -- the SDK's contract ---------------------------------------------------------------------------------


def test_requests_are_honoured_by_a_strategy_that_answers_them() -> None:
    assert OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 100}).handles_condensation_requests()
    assert not OpenHandsMemoryCondenser(condenser=MASKING).handles_condensation_requests()
    condenser = OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 100, "keep_first": 2}, tokenizer="approximate")
    view = View.from_events([*long_conversation(10), CondensationRequest()])
    assert view.unhandled_condensation_request
    assert condenser.condensation_requirement(view) is CondensationRequirement.HARD
    condensation = condenser.condense(view)
    assert isinstance(condensation, Condensation) and condensation.forgotten_event_ids
    assert condenser.condensation_records[-1].metadata["reason"] == "request"


def test_a_condensation_on_request_takes_the_focus_set_for_it_and_records_it() -> None:
    condenser = OpenHandsMemoryCondenser(condenser={"type": "llm", "max_size": 100, "keep_first": 2}, tokenizer="approximate")
    condenser.focus_next_condensation("the port 8431")
    condensation = condenser.condense(View.from_events([*long_conversation(10), CondensationRequest()]))
    assert isinstance(condensation, Condensation) and condensation.summary is not None
    assert condensation.summary.splitlines()[1] == "FOCUS (what this summary was asked to keep): the port 8431"
    assert condenser.condensation_records[-1].metadata["extra"]["focus"] == "the port 8431"
    again = condenser.condense(View.from_events([*long_conversation(12), CondensationRequest()]))
    assert isinstance(again, Condensation) and "FOCUS" not in (again.summary or "")  # used once
    with pytest.raises(ValueError, match="over the bound of 2000"):
        condenser.focus_next_condensation("x" * 2_001)


def test_a_size_heuristic_is_a_soft_requirement() -> None:
    condenser = OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 10, "keep_first": 2}, tokenizer="approximate")
    view = View.from_events(long_conversation(10))
    assert condenser.condensation_requirement(view) is CondensationRequirement.SOFT
    assert condenser.condensation_requirement(View.from_events(long_conversation(2))) is None


def test_a_token_budget_is_a_hard_requirement() -> None:
    condenser = OpenHandsMemoryCondenser(
        condenser={"type": "amortized", "max_size": 1000, "max_tokens": 2000, "keep_first": 2}, tokenizer="approximate"
    )
    assert condenser.condensation_requirement(View.from_events(long_conversation(20))) is CondensationRequirement.HARD


def test_a_request_nothing_can_answer_ends_in_a_hard_context_reset_after_the_system_prompt() -> None:
    # keep_first covers the whole view: the strategy can forget nothing, so the SDK's hard reset runs.
    condenser = OpenHandsMemoryCondenser(
        condenser={"type": "amortized", "max_size": 130, "keep_first": 60}, tokenizer="approximate", hard_reset_summary_tokens=300
    )
    events = [*long_conversation(6), CondensationRequest()]
    view = View.from_events(events)
    with pytest.raises(NoCondensationAvailableException):
        condenser.get_condensation(view)
    reset = condenser.condense(view)
    assert isinstance(reset, Condensation)
    assert isinstance(view.events[0], SystemPromptEvent)
    assert reset.forgotten_event_ids == {e.id for e in view.events[1:]}
    assert reset.summary_offset == 1 and reset.summary
    after = View.from_events([*events, reset])
    assert [type(e).__name__ for e in after.events] == ["SystemPromptEvent", "CondensationSummaryEvent"]
    assert len(reset.summary) <= 300 * 4 + 100  # bounded by hard_reset_summary_tokens (about four characters a token)


def test_the_input_view_of_a_condensation_is_never_changed() -> None:
    condenser = OpenHandsMemoryCondenser(condenser=PIPELINE, tokenizer="approximate")
    view = View.from_events(long_conversation(40))
    before = view.model_dump()
    assert isinstance(condenser.condense(view), Condensation)
    assert view.model_dump() == before


def test_the_sdks_cached_view_grown_in_place_gets_a_fresh_answer() -> None:
    # ConversationState hands the agent one View object, appending new events to it in place.
    condenser = OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 10, "keep_first": 2}, tokenizer="approximate")
    events = long_conversation(3)
    view = View.from_events(events)
    assert isinstance(condenser.condense(view), View)
    for event in long_conversation(6)[2:]:
        view.append_event(event)
    assert isinstance(condenser.condense(view), Condensation)


def test_a_history_policy_leaves_out_the_oldest_events_until_the_messages_fit() -> None:
    condenser = OpenHandsMemoryCondenser(condenser={"type": "noop"}, history_policy={"max_messages": 6}, tokenizer="approximate")
    events = long_conversation(10)
    view = View.from_events(events)
    shown = condenser.condense(view)
    assert isinstance(shown, View)
    # The system prompt and the task, then the newest three calls with their results (six messages).
    assert [e.id for e in shown.events] == [e.id for e in view.events[:2]] + [e.id for e in view.events[-6:]]
    for prop in ALL_PROPERTIES:
        assert prop.enforce(list(shown.events), events) == set()
    unlimited = OpenHandsMemoryCondenser(condenser={"type": "noop"}, tokenizer="approximate").condense(view)
    assert [e.id for e in unlimited.events] == [e.id for e in view.events]


def test_inkeep_without_a_summarizer_brings_its_fixed_limits_from_a_pipeline_file(tmp_path: Path) -> None:
    path = tmp_path / "inkeep.toml"
    path.write_text('[condenser]\ntype = "inkeep"\n')
    condenser = OpenHandsMemoryCondenser.from_file(path, tokenizer="approximate")
    assert condenser.history_policy is None  # the file has no table: the pipeline trims with inkeep's own limits
    view = View.from_events(long_conversation(40))
    shown = condenser.condense(view)
    assert isinstance(shown, View) and 2 < len(shown.events) <= 2 + 50
    assert len(shown.events) < len(view.events)


def test_a_view_over_the_agents_input_limit_is_a_hard_requirement_met_by_a_hard_reset() -> None:
    # noop forgets nothing: a view over the agent's limit can only be reset.
    condenser = OpenHandsMemoryCondenser(condenser={"type": "noop"}, tokenizer="approximate", hard_reset_summary_tokens=200)
    view = View.from_events(long_conversation(20, output_lines=200))  # about 22,000 tokens
    small = agent_llm(max_input_tokens=16_384)
    assert condenser.condensation_requirement(view, agent_llm=small) is CondensationRequirement.HARD
    reset = condenser.condense(view, agent_llm=small)
    assert isinstance(reset, Condensation) and reset.forgotten_event_ids == {e.id for e in view.events[1:]}
    assert condenser.condensation_requirement(view, agent_llm=agent_llm(max_input_tokens=100_000)) is None


def test_large_output_previews_reach_the_sdk_in_copies_of_its_observation_events() -> None:
    events = long_conversation(6, output_lines=400)
    view = View.from_events(events)
    offload = OpenHandsMemoryCondenser(
        condenser={"type": "large_output_offload", "large_payload_threshold": 2_000, "preview_chars": 300, "last_keep": 4},
        tokenizer="approximate",
    )
    shown = offload.condense(view)
    previews = [e for e in shown.events if isinstance(getattr(e, "observation", None), MemoryViewObservation)]
    assert previews and all(e.observation.transformed_by == "large_output_offload" for e in previews)
    original = next(e for e in view.events if e.id == previews[0].id)
    assert previews[0].observation.text.startswith(original.observation.text[:300])
    assert len(previews[0].observation.text) < len(original.observation.text)


def test_the_sdks_own_step_helpers_take_its_answers() -> None:
    # What Agent.step does with a condenser: prepare_llm_messages (and its async twin, which calls acondense).
    condenser = OpenHandsMemoryCondenser(condenser=MASKING, tokenizer="approximate")
    view = View.from_events(long_conversation(10))
    messages = prepare_llm_messages(view, condenser=condenser, llm=agent_llm())
    assert isinstance(messages, list) and messages[0].role == "system"
    tool_texts = [m.content[0].text for m in messages if m.role == "tool"]
    assert len(tool_texts) == 10 and tool_texts[0] == "<MASKED>" and tool_texts[-1].startswith("output 9")
    again = asyncio.run(aprepare_llm_messages(view, condenser=condenser, llm=agent_llm()))
    assert [m.model_dump() for m in again] == [m.model_dump() for m in messages]
    forgetting = OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 12, "keep_first": 2}, tokenizer="approximate")
    assert isinstance(prepare_llm_messages(view, condenser=forgetting, llm=agent_llm()), Condensation)


def test_conversations_sharing_one_condenser_keep_their_own_state() -> None:
    # The SDK hands an agent's condenser to its sub-agents: each conversation (its own system prompt)
    # gets its own strategy and loop guard, so one's condensations do not count against the other's.
    condenser = OpenHandsMemoryCondenser(
        condenser={"type": "amortized", "max_size": 10, "keep_first": 2}, tokenizer="approximate", max_condensations_per_step=1
    )
    parent, child = long_conversation(10), long_conversation(10)
    assert isinstance(condenser.condense(View.from_events(parent)), Condensation)
    assert isinstance(condenser.condense(View.from_events(child)), Condensation)
    assert len(condenser._conversations) == 2


def _a_cipher_the_sdk_can_use() -> Cipher:
    """A `Cipher` over a key made as cryptography documents (`Fernet.generate_key()`'s form), that encrypts.

    The SDK derives its Fernet key as standard base64 of the key's SHA-256 (`Cipher._derive_fernet`). Since
    cryptography 51, `Fernet` refuses a key with `+` or `/` (not URL-safe): about three keys in four, a generated one
    as often as a hand-typed one, then fail to encrypt (`ValueError: Fernet key must be 32 url-safe base64-encoded
    bytes`). That is the SDK's bug, not ours; this test is about our fields, so it takes the first of a fixed series
    of keys that the installed SDK and cryptography can use, the same key on every run.
    """
    for index in range(256):
        key = base64.urlsafe_b64encode(hashlib.sha256(f"openhands-memory test key {index}".encode()).digest()).decode()
        cipher = Cipher(secret_key=key)
        try:
            cipher.encrypt(SecretStr("probe"))
        except ValueError:
            continue
        return cipher
    raise AssertionError("none of 256 keys gives a Fernet key the installed cryptography accepts")


def test_api_keys_in_our_configs_are_written_as_the_sdk_writes_its_own() -> None:
    condenser = OpenHandsMemoryCondenser(
        condenser={"type": "llm", "llm_config": {"model": "gpt-4o-mini", "api_key": "sk-inline-secret"}},
        llm_configs={"other": {"model": "gpt-4o", "api_key": "sk-named-secret"}},
    )
    agent = Agent(llm=agent_llm(), tools=[], condenser=condenser)
    redacted = agent.model_dump_json()
    assert "sk-inline-secret" not in redacted and "sk-named-secret" not in redacted
    reloaded = Agent.model_validate_json(redacted).condenser
    assert reloaded.condenser.llm_config.api_key is None  # a redacted key reads as none, never as '****'
    cipher = _a_cipher_the_sdk_can_use()
    stored = agent.model_dump_json(context={"cipher": cipher})
    assert "sk-inline-secret" not in stored and "sk-named-secret" not in stored
    restored = Agent.model_validate_json(stored, context={"cipher": cipher}).condenser
    assert restored == condenser
    assert restored.condenser.llm_config.api_key.get_secret_value() == "sk-inline-secret"
    assert restored.llm_configs["other"].api_key.get_secret_value() == "sk-named-secret"
    exposed = Agent.model_validate_json(agent.model_dump_json(context={"expose_secrets": True})).condenser
    assert exposed == condenser


def test_a_summarizer_model_without_its_key_fails_when_first_asked_not_at_its_first_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    # A conversation far from condensing: the key was missed only at the first summary, 15 steps in.
    from openhands_memory.errors import LLMAuthenticationError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    summarizing = {"type": "llm", "max_size": 200, "keep_first": 2, "llm_config": {"model": "gpt-4o-mini"}}
    condenser = OpenHandsMemoryCondenser(condenser={"type": "pipeline", "condensers": [MASKING, summarizing]})
    with pytest.raises(LLMAuthenticationError, match="OPENAI_API_KEY"):
        condenser.condense(View.from_events(long_conversation(3)), agent_llm=agent_llm())
    # A summarizer with its key (here the agent's own, which has one) is asked as before.
    mine = OpenHandsMemoryCondenser(condenser={**summarizing, "llm_config": "agent"})
    assert not isinstance(mine.condense(View.from_events(long_conversation(3)), agent_llm=agent_llm()), Condensation)
