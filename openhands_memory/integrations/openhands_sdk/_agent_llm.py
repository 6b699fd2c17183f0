"""The SDK agent's model, as our strategies use it: an `LLMConfig` to summarize with, and the name of a tokenizer to count with."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from openhands_memory import _tokenizer_names
from openhands_memory._tokenizer_names import AGENT_TOKENIZER, APPROXIMATE
from openhands_memory.llm import LLMConfig

__all__ = ["AGENT_TOKENIZER", "agent_llm_config", "tokenizer_name"]


def agent_llm_config(agent_llm: Any) -> LLMConfig:
    """Our `LLMConfig` for the SDK's `agent_llm`: its model name, API key and base URL (and API version)."""
    key = agent_llm.api_key
    if isinstance(key, SecretStr):
        key = key.get_secret_value()
    return LLMConfig(
        model=agent_llm.model,
        api_key=SecretStr(key) if key else None,
        base_url=agent_llm.base_url,
        api_version=getattr(agent_llm, "api_version", None),
        usage_id="condenser",
    )


def tokenizer_name(setting: str, agent_llm: Any | None) -> str:
    """The tokenizer a `tokenizer` setting names (`_tokenizer_names.tokenizer_name`): `agent` is the agent's model (approximate without one)."""
    model = getattr(agent_llm, "model", None)
    return _tokenizer_names.tokenizer_name(setting, model=model if isinstance(model, str) else None, default=APPROXIMATE)
