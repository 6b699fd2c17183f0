"""Condenser configs: OpenHands' names and defaults, clear errors, the registry, TOML and JSON files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, get_args

import pytest
from pydantic import BaseModel, ConfigDict

from openhands_memory.condenser import (
    AmortizedForgettingCondenser,
    BrowserOutputCondenser,
    Condensation,
    Condenser,
    CondenserContext,
    ConversationWindowCondenser,
    NoOpCondenser,
    ObservationMaskingCondenser,
    PipelineCondenser,
    RecentEventsCondenser,
    RecentEventsCondenserConfig,
    load_condenser_config,
    parse_condenser_config,
    register_condenser,
    registered_condenser_types,
)
from openhands_memory.condenser.config import CondenserConfigAdapter
from openhands_memory.condenser import config as config_module
from openhands_memory.condenser._config_base import CONFIG, SYNONYMS
from openhands_memory.condenser._model_backed import ModelBacked
from openhands_memory.condenser._model_config import ModelConfig, SummaryConfig, TokenTriggeredConfig
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
from openhands_memory.condenser.tokens import ApproximateTokenCounter, TokenCounter
from openhands_memory.errors import CondenserConfigError, OpenHandsMemoryError
from openhands_memory.llm.config import LLMConfig
from openhands_memory.view import View

# OpenHands 0.62, openhands/core/config/condenser_config.py: every field and its default.
OPENHANDS_DEFAULTS: dict[str, dict[str, Any]] = {
    "noop": {},
    "observation_masking": {"attention_window": 100},
    "browser_output_masking": {"attention_window": 1},
    "recent": {"keep_first": 1, "max_events": 100},
    "amortized": {"max_size": 100, "keep_first": 1},
    "llm": {"keep_first": 1, "max_size": 100, "max_event_length": 10_000},
    "llm_attention": {"max_size": 100, "keep_first": 1},
    "structured": {"keep_first": 1, "max_size": 100, "max_event_length": 10_000},
    "conversation_window": {},
    "pipeline": {"condensers": []},
}
OUR_ADDITIONS = {
    "max_tokens", "max_events", "summary_prompt", "llm_config", "on_model_error", "max_event_length", "max_summary_share",
    "strict_response",
}  # fmt: skip


@pytest.mark.parametrize("type_name", sorted(OPENHANDS_DEFAULTS))
def test_every_openhands_type_has_openhands_fields_and_defaults(type_name: str) -> None:
    data: dict[str, Any] = {"type": type_name}
    if type_name in ("llm", "llm_attention", "structured"):
        data["llm_config"] = "condenser"
    config = parse_condenser_config(data)
    dumped = config.model_dump()
    assert dumped.pop("type") == type_name
    for name, default in OPENHANDS_DEFAULTS[type_name].items():
        assert dumped.pop(name) == default, name
    assert set(dumped) <= OUR_ADDITIONS
    assert config.model_config.get("extra") == "forbid"


def test_the_union_is_discriminated_by_type_and_holds_every_openhands_type() -> None:
    config = CondenserConfigAdapter.validate_python({"type": "recent", "max_events": 7})
    assert isinstance(config, RecentEventsCondenserConfig) and config.max_events == 7
    assert set(OPENHANDS_DEFAULTS) <= set(registered_condenser_types())


def test_the_types_the_union_and_the_builders_all_come_from_the_list_of_strategies() -> None:
    assert registered_condenser_types() == sorted(strategy.config_type for strategy in BUILTIN_CONDENSERS)  # type: ignore[type-var]
    union = get_args(get_args(config_module.CondenserConfig)[0])
    assert union == tuple(strategy.config_cls for strategy in BUILTIN_CONDENSERS)
    for strategy in BUILTIN_CONDENSERS:
        config_cls = strategy.config_cls
        assert config_cls is not None and config_cls.__module__ == strategy.__module__  # declared next to it
        assert config_cls.model_fields["type"].default == strategy.config_type
        assert config_module._REGISTRY[strategy.config_type].factory == strategy.build  # type: ignore[index]


@pytest.mark.parametrize("strategy", [s for s in BUILTIN_CONDENSERS if issubclass(s, ModelBacked)], ids=lambda s: s.config_type)
def test_a_model_backed_strategy_gets_every_field_of_its_config(strategy: type[ModelBacked]) -> None:
    assert strategy.config_cls is not None
    fields = {"keep_first": 3, "max_size": 40, "max_event_length": 777, "max_tokens": 5000, "on_model_error": "skip"}
    fields.update({"summary_prompt": "Be brief.", "max_summary_share": 0.25} if "summary_prompt" in strategy.config_cls.model_fields else {})
    fields.update({"strict_response": True} if "strict_response" in strategy.config_cls.model_fields else {})
    fields = {name: value for name, value in fields.items() if name in strategy.config_cls.model_fields}  # token-triggered ones have no max_size
    counter = ApproximateTokenCounter()
    built = Condenser.from_config({"type": strategy.config_type, "llm_config": "fast", **fields},
                                  token_counter=counter, llm_configs={"fast": {"model": "gpt-4o-mini"}})  # fmt: skip
    assert type(built) is strategy and built.token_counter is counter
    assert {name: getattr(built, name) for name in fields} == fields
    assert built.llm.config.model == "gpt-4o-mini" and built.llm.config.usage_id == "condenser"  # type: ignore[attr-defined]


class KeepNewestConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["keep_newest"] = "keep_newest"
    count: int = 3


class KeepNewest(Condenser):
    config_cls = KeepNewestConfig

    def __init__(self, count: int = 3, *, token_counter: TokenCounter | None = None) -> None:
        super().__init__(token_counter=token_counter)
        self.count = count

    def condense(self, view: View) -> View | Condensation:
        return View(view.events[-self.count :])


def test_a_strategy_that_declares_its_config_needs_no_factory_nor_a_second_type_name() -> None:
    assert KeepNewest.config_type == "keep_newest"
    register_condenser(KeepNewestConfig, KeepNewest.build)
    try:
        counter = ApproximateTokenCounter()
        built = Condenser.from_config({"type": "pipeline", "condensers": [{"type": "keep_newest", "count": 2}]}, token_counter=counter)
        assert isinstance(built, PipelineCondenser)
        (member,) = built.condensers
        assert isinstance(member, KeepNewest) and member.count == 2 and member.token_counter is counter
        assert member.name == "keep_newest"
    finally:
        del config_module._REGISTRY["keep_newest"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"type": "recent", "max_events": 5, "keep_first": 2}, RecentEventsCondenser),
        ({"type": "noop"}, NoOpCondenser),
        ({"type": "observation_masking", "attention_window": 3}, ObservationMaskingCondenser),
        ({"type": "browser_output_masking"}, BrowserOutputCondenser),
        ({"type": "amortized", "max_size": 20, "keep_first": 2, "max_tokens": 9000}, AmortizedForgettingCondenser),
        ({"type": "conversation_window"}, ConversationWindowCondenser),
        ({"type": "pipeline", "condensers": [{"type": "noop"}, {"type": "recent"}]}, PipelineCondenser),
    ],
)
def test_from_config_builds_each_offline_type(data: dict[str, Any], expected: type) -> None:
    condenser = Condenser.from_config(data)
    assert type(condenser) is expected
    assert type(Condenser.from_config(parse_condenser_config(data))) is expected


def test_fields_reach_the_condenser_and_a_pipeline_shares_one_token_counter() -> None:
    pipeline = Condenser.from_config(
        {"type": "pipeline", "condensers": [{"type": "recent", "keep_first": 3, "max_events": 9, "max_tokens": 500},
                                            {"type": "amortized", "max_size": 30, "keep_first": 2}]}
    )  # fmt: skip
    assert isinstance(pipeline, PipelineCondenser)
    recent, amortized = pipeline.condensers
    assert isinstance(recent, RecentEventsCondenser) and (recent.keep_first, recent.max_events, recent.max_tokens) == (3, 9, 500)
    assert isinstance(amortized, AmortizedForgettingCondenser) and (amortized.max_size, amortized.keep_first) == (30, 2)
    assert recent.token_counter is amortized.token_counter
    counter = ApproximateTokenCounter()
    built = Condenser.from_config({"type": "recent"}, token_counter=counter)
    assert built.token_counter is counter


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "recnt"}, "Unknown condenser type 'recnt'. Did you mean 'recent'?"),
        # The known types as the registry lists them: a new strategy file adds itself here too.
        ({"type": "xyz"}, f"Unknown condenser type 'xyz'. Known types: {', '.join(registered_condenser_types())}."),
        ({}, "A condenser config needs a 'type': one of agent_reset, amortized, auto_context, browser_output_masking, "),
        ({"type": 3}, "A condenser 'type' must be a string, got 3."),
        ({"type": "recent", "max_events": 0}, "condenser 'recent': max_events: Input should be greater than or equal to 1"),
        ({"type": "recent", "keep_frist": 2}, "condenser 'recent': keep_frist: unknown field. Did you mean 'keep_first'?"),
        ({"type": "amortized", "max_size": 10, "keep_first": 5},
         "condenser 'amortized': keep_first (5) must be less than half of max_size (10)"),
        ({"type": "pipeline", "condensers": [{"type": "noop"}, {"type": "recent", "max_events": -1}]},
         "condenser 'pipeline': condensers.1.max_events: Input should be greater than or equal to 1"),
        ({"type": "pipeline", "condensers": [{"type": "amortised"}]},
         "condenser 'pipeline': condensers.0: Unknown condenser type 'amortised'. Did you mean 'amortized'?"),
        ({"type": "pipeline", "condensers": [{"type": "recent", "max_event": 3}]},
         "condenser 'pipeline': condensers.0.max_event: unknown field. Did you mean 'max_events'?"),
        ({"type": "auto_context", "last_keep": 3, "keep_last": 4},
         "condenser 'auto_context': keep_last: the same field as 'last_keep' (another spelling of it), which is given too: give one of them"),
        ({"type": "token_budget_summary", "last_keep": 0},
         "condenser 'token_budget_summary': last_keep: Input should be greater than or equal to 1"),
        ({"type": "inkeep", "keep_lst": 3}, "condenser 'inkeep': keep_lst: unknown field. Did you mean 'keep_last'?"),
    ],
)  # fmt: skip
def test_bad_configs_raise_a_clear_error_and_never_fall_back_to_noop(data: dict[str, Any], message: str) -> None:
    with pytest.raises(CondenserConfigError, match=re.escape(message)) as info:
        Condenser.from_config(data)
    assert isinstance(info.value, ValueError) and isinstance(info.value, OpenHandsMemoryError)
    assert info.value.exit_code == 2


def test_from_config_on_a_strategy_builds_only_that_strategy() -> None:
    assert isinstance(RecentEventsCondenser.from_config({"type": "recent"}), RecentEventsCondenser)
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'noop': this config builds a NoOpCondenser, not a RecentEventsCondenser")):
        RecentEventsCondenser.from_config({"type": "noop"})


def test_the_error_keeps_its_facts() -> None:
    with pytest.raises(CondenserConfigError) as info:
        parse_condenser_config({"type": "recent", "max_events": 0})
    assert (info.value.condenser_type, info.value.field) == ("recent", "max_events")


class KeepLastConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str = "keep_last"
    count: int = 3


class KeepLast(Condenser):
    config_type = "keep_last"

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def condense(self, view: View) -> View | Condensation:
        return View(view.events[-self.count :])


@pytest.fixture
def keep_last_registered():  # type: ignore[no-untyped-def]
    register_condenser(KeepLastConfig, lambda config, context: KeepLast(config.count))
    yield
    del config_module._REGISTRY["keep_last"]


@pytest.mark.usefixtures("keep_last_registered")
def test_users_can_register_their_own_types_and_use_them_in_pipelines() -> None:
    built = Condenser.from_config({"type": "keep_last", "count": 2})
    assert isinstance(built, KeepLast) and built.count == 2
    pipeline = Condenser.from_config({"type": "pipeline", "condensers": [{"type": "keep_last", "count": 4}, {"type": "noop"}]})
    assert isinstance(pipeline, PipelineCondenser) and isinstance(pipeline.condensers[0], KeepLast)
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'keep_last': count: Input should be a valid integer")):
        Condenser.from_config({"type": "keep_last", "count": "many"})
    with pytest.raises(CondenserConfigError, match=re.escape("condenser type 'keep_last' is already registered (pass replace=True to replace it)")):
        register_condenser(KeepLastConfig, lambda config, context: KeepLast(1))
    register_condenser(KeepLastConfig, lambda config, context: KeepLast(99), replace=True)
    assert Condenser.from_config({"type": "keep_last"}).count == 99  # type: ignore[attr-defined]


def test_a_model_without_a_type_cannot_be_registered() -> None:
    class Untyped(BaseModel):
        size: int = 1

    with pytest.raises(TypeError, match="needs a `type: Literal"):
        register_condenser(Untyped, lambda config, context: NoOpCondenser())
    with pytest.raises(CondenserConfigError, match="Untyped is not a registered condenser config"):
        parse_condenser_config(Untyped())


def test_llm_config_is_an_llm_config_or_a_name() -> None:
    table = parse_condenser_config({"type": "llm", "llm_config": {"model": "gpt-4o-mini", "temperature": 0.5}})
    assert isinstance(table.llm_config, LLMConfig) and table.llm_config.temperature == 0.5  # type: ignore[attr-defined]
    named = parse_condenser_config({"type": "structured", "llm_config": "fast", "summary_prompt": "Be brief."})
    assert named.llm_config == "fast" and named.summary_prompt == "Be brief."  # type: ignore[attr-defined]
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm': llm_config: temprature: unknown field. Did you mean 'temperature'?")):
        parse_condenser_config({"type": "llm", "llm_config": {"model": "m", "temprature": 1}})
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm_attention': llm_config: model: required field is missing")):
        parse_condenser_config({"type": "llm_attention", "llm_config": {}})


def test_a_named_llm_config_is_resolved_from_the_context() -> None:
    context = CondenserContext(llm_configs={"fast": {"model": "gpt-4o-mini"}, "ready": LLMConfig(model="m")})
    assert context.resolve_llm_config("fast", condenser_type="llm") == LLMConfig(model="gpt-4o-mini")
    assert context.resolve_llm_config("ready", condenser_type="llm") == LLMConfig(model="m")
    config = LLMConfig(model="x")
    assert context.resolve_llm_config(config, condenser_type="llm") is config
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm': llm_config: unknown LLM config name 'fats'. Did you mean 'fast'?")):
        context.resolve_llm_config("fats", condenser_type="llm")
    with pytest.raises(CondenserConfigError, match=re.escape("unknown LLM config name 'x'. No named LLM configs were given.")):
        CondenserContext().resolve_llm_config("x", condenser_type="llm")
    bad = CondenserContext(llm_configs={"bad": {"model": "m", "top_p": 3}})
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm': llm_config: LLM config 'bad': top_p: Input should be less than or equal to 1")):
        bad.resolve_llm_config("bad", condenser_type="llm")


def test_load_a_toml_condenser_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[llm]\nmodel = "gpt-4o"\n\n[llm.condenser]\ntemperature = 0.0\n\n'
        '[condenser]\ntype = "pipeline"\ncondensers = [\n'
        '  { type = "browser_output_masking", attention_window = 2 },\n'
        '  { type = "amortized", max_size = 50, keep_first = 4, max_tokens = 20000 },\n'
        '  { type = "llm", llm_config = "condenser", keep_first = 4 },\n]\n'
    )
    config = load_condenser_config(path)
    llm = config.condensers[2]  # type: ignore[attr-defined]
    assert llm.llm_config == LLMConfig(model="gpt-4o", temperature=0.0)
    config.condensers.pop()  # type: ignore[attr-defined]  # its strategy is built elsewhere
    condenser = Condenser.from_config(config)
    assert isinstance(condenser, PipelineCondenser)
    assert [type(c) for c in condenser.condensers] == [BrowserOutputCondenser, AmortizedForgettingCondenser]


def test_llm_config_names_are_replaced_by_their_toml_table() -> None:
    tables = {"condenser": {"model": "gpt-4o", "temperature": 0.0}}
    data = {"type": "pipeline", "condensers": [{"type": "llm", "llm_config": "condenser"}, {"type": "llm", "llm_config": "other"}]}
    resolved = config_module._resolve_llm_names(data, tables)
    assert resolved["condensers"][0]["llm_config"] == {"model": "gpt-4o", "temperature": 0.0}
    assert resolved["condensers"][1]["llm_config"] == "other"
    assert data["condensers"][0]["llm_config"] == "condenser"  # the input is not changed
    # A config nested under any field (a wrapper's strategy) is resolved too.
    wrapped = config_module._resolve_llm_names({"type": "wrapper", "condenser": {"type": "llm", "llm_config": "condenser"}}, tables)
    assert wrapped["condenser"]["llm_config"] == {"model": "gpt-4o", "temperature": 0.0}


def test_load_a_json_config_bare_or_under_a_condenser_key(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text('{"type": "recent", "max_events": 12}')
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text('{"condenser": {"type": "noop"}}')
    assert load_condenser_config(bare).max_events == 12  # type: ignore[attr-defined]
    assert load_condenser_config(wrapped).type == "noop"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.toml", "[condenser\n", "bad.toml: invalid TOML: "),
        ("none.toml", '[llm]\nmodel = "x"\n', "none.toml: no [condenser] table"),
        ("bad.json", "{", "bad.json: invalid JSON: "),
        ("typo.toml", '[condenser]\ntype = "amortized"\nmax_sise = 10\n',
         "typo.toml: condenser 'amortized': max_sise: unknown field. Did you mean 'max_size'?"),
    ],
)  # fmt: skip
def test_bad_files_name_the_file(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(CondenserConfigError, match=re.escape(str(tmp_path / message))):
        load_condenser_config(path)
    with pytest.raises(CondenserConfigError, match=re.escape(f"{tmp_path / 'missing.toml'}: no such file")):
        load_condenser_config(tmp_path / "missing.toml")


def test_every_strategy_found_is_registered_and_exported_by_the_package() -> None:
    import openhands_memory.condenser as condenser
    import openhands_memory.condenser.impl as impl

    names = [strategy.__name__ for strategy in BUILTIN_CONDENSERS]  # each importable from impl and the package
    for name in names:
        assert getattr(condenser, name) is getattr(impl, name), name
    assert {getattr(impl, name).config_type for name in names} == set(registered_condenser_types())
    # Found in module-name order (the union's order), never in the order a folder happens to list them.
    modules = [strategy.__module__ for strategy in BUILTIN_CONDENSERS]
    assert modules == sorted(modules)


SPELLINGS = [
    (strategy.config_type, name)
    for strategy in BUILTIN_CONDENSERS
    if strategy.config_cls is not None
    for name in strategy.config_cls.model_fields
    if name in SYNONYMS
]
"""Every field of the vocabulary (`max_tokens`/`max_token`, `keep_last`/`last_keep`) in every built-in config."""


@pytest.mark.parametrize(("type_name", "name"), SPELLINGS, ids=[f"{t}.{n}" for t, n in SPELLINGS])
def test_a_size_field_is_read_under_either_spelling(type_name: str, name: str) -> None:
    own = parse_condenser_config({"type": type_name, name: 7})
    other = parse_condenser_config({"type": type_name, SYNONYMS[name]: 7})
    assert other == own and getattr(other, name) == 7
    assert own.model_dump()[name] == 7 and SYNONYMS[name] not in own.model_dump()  # written back under its own name


def test_each_upstream_spelling_loads_from_toml_and_reaches_the_condenser(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(
        '[condenser]\ntype = "pipeline"\ncondensers = [\n'
        '  { type = "large_output_offload", keep_last = 2 },\n'  # QitOS' spelling for AgentScope's field
        '  { type = "auto_context", keep_last = 3, max_tokens = 9000 },\n'
        '  { type = "token_budget_summary", last_keep = 4, max_token = 5000 },\n'  # AgentScope's for QitOS'
        '  { type = "recent", max_token = 700 },\n]\n'
    )
    pipeline = Condenser.from_config(load_condenser_config(path))
    offload, auto, budget, recent = pipeline.condensers  # type: ignore[attr-defined]
    assert (offload.last_keep, auto.last_keep, auto.max_token, budget.keep_last, budget.max_tokens, recent.max_tokens) == (
        2, 3, 9000, 4, 5000, 700,
    )  # fmt: skip


def test_a_config_cannot_declare_both_spellings_of_one_field() -> None:
    class BothSpellings(BaseModel):
        model_config = CONFIG
        type: Literal["both_spellings"] = "both_spellings"
        keep_last: int = 1
        last_keep: int = 2

    with pytest.raises(TypeError, match=re.escape("BothSpellings declares both keep_last and last_keep, two spellings of one field")):
        register_condenser(BothSpellings, lambda config, context: NoOpCondenser())
    assert "both_spellings" not in registered_condenser_types()


def _declared_by(config_cls: type[BaseModel], name: str) -> type:
    """The class of `config_cls`'s MRO whose own body declares field `name`."""
    return next(cls for cls in config_cls.__mro__ if name in vars(cls).get("__annotations__", {}))


def test_the_summary_fields_are_declared_once_for_every_summarizer() -> None:
    summarizers = [s.config_cls for s in BUILTIN_CONDENSERS if s.config_cls is not None and "summary_prompt" in s.config_cls.model_fields]
    assert len(summarizers) >= 4  # llm, structured, token_budget_summary, compact_history
    for config_cls in summarizers:
        for name in SummaryConfig.model_fields:
            assert _declared_by(config_cls, name) is SummaryConfig, (config_cls.__name__, name)
        for name in ("llm_config", "on_model_error"):
            assert _declared_by(config_cls, name) is ModelConfig, (config_cls.__name__, name)


@pytest.mark.parametrize("type_name", ["token_budget_summary", "compact_history"])
def test_token_triggered_summarizers_share_one_config_base_without_max_size(type_name: str) -> None:
    config_cls = parse_condenser_config({"type": type_name}).__class__
    assert issubclass(config_cls, TokenTriggeredConfig) and "max_size" not in config_cls.model_fields
    assert _declared_by(config_cls, "max_tokens") is TokenTriggeredConfig
    assert parse_condenser_config({"type": type_name, "max_tokens": {"preset": "conversation", "context_window": 1000}}).max_tokens.preset == "conversation"  # type: ignore[attr-defined]
