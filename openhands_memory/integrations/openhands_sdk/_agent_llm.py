"""The SDK agent's model, as our strategies use it: an `LLMConfig` to summarize with, and a tokenizer to count with."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.events import EventSource, MessageAction
from openhands_memory.llm import LLMConfig
from openhands_memory.prompt_tokens import APPROXIMATE, PromptMeter, tokenizer_for

__all__ = ["AGENT_TOKENIZER", "agent_llm_config", "token_counter_for"]

AGENT_TOKENIZER = "agent"
"""The `tokenizer` setting that counts with the agent's model (`agent_llm.model`)."""


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
    """The tokenizer a `tokenizer` setting names: `agent` is the agent's model (approximate without one)."""
    if setting != AGENT_TOKENIZER:
        return setting
    model = getattr(agent_llm, "model", None)
    return model if isinstance(model, str) and model else APPROXIMATE


def token_counter_for(name: str) -> TokenCounter:
    """A counter of a view's prompt tokens as `name`'s tokenizer counts them (the view rendered as our chat)."""
    memory = ConversationMemory(system_prompt="")

    def render(events: Any) -> Any:
        first_user = next(
            (e for e in events if isinstance(e, MessageAction) and e.source == EventSource.USER), None
        )
        return memory.process_events(events, first_user)

    return PromptMeter(tokenizer_for(name), render=render)


