"""litellm's model map read without litellm: every provider it tells is the one litellm routes to."""

from __future__ import annotations

import sys

import pytest

from openhands_memory.llm._credentials import KEY_VARIABLES
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm._model_map import OTHER_PROVIDER, _bundled_map, model_entry, provider_of

PROVIDERS = frozenset(KEY_VARIABLES)


def _litellm_provider(model: str, custom_llm_provider: str | None = None) -> str:
    try:
        provider = import_litellm().get_llm_provider(model=model, custom_llm_provider=custom_llm_provider)[1]
    except Exception:  # litellm cannot route it
        return "<cannot route>"
    return provider if provider in PROVIDERS else OTHER_PROVIDER


def test_every_provider_told_without_litellm_is_the_one_litellm_routes_to(monkeypatch: pytest.MonkeyPatch) -> None:
    import_litellm()
    table = _bundled_map()
    assert table is not None and len(table) > 1000
    with monkeypatch.context() as hidden:
        hidden.delitem(sys.modules, "litellm")  # told from the file, as before litellm is imported
        told = {model: provider_of(model, None, PROVIDERS) for model in table}
    sure = {model: provider for model, provider in told.items() if provider is not None}
    assert {"openai", "anthropic", "gemini", "groq"} <= set(sure.values())  # the common providers are told
    assert {model: provider for model, provider in sure.items() if _litellm_provider(model) != provider} == {}


@pytest.mark.parametrize(
    ("model", "custom", "expected"),
    [
        ("gpt-4o-mini", None, "openai"),
        ("claude-sonnet-4-5", None, "anthropic"),
        ("openai/gpt-4.1", None, "openai"),
        ("gemini/gemini-2.0-flash", None, "gemini"),
        ("my-deployment", "openai", "openai"),
        ("gpt-4o", "azure", OTHER_PROVIDER),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", None, None),  # left to litellm
        ("no-such-model", None, None),
        ("ft:gpt-4o-mini:org::id", None, None),
    ],
)
def test_common_names_are_told_and_the_rest_left_to_litellm(model: str, custom: str | None, expected: str | None) -> None:
    assert provider_of(model, custom, PROVIDERS) == expected
    if expected is not None:
        assert _litellm_provider(model, custom) == expected


def test_an_alias_litellm_resolves_is_not_read_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _bundled_map()
    assert table is not None
    aliases = [name for name, entry in table.items() if isinstance(entry, dict) and "alias_of" in entry]
    assert aliases
    monkeypatch.delitem(sys.modules, "litellm", raising=False)  # as before litellm is imported: the file is read
    assert [name for name in aliases if model_entry(name) is not None] == []
    assert model_entry("gpt-4o") is table["gpt-4o"]
