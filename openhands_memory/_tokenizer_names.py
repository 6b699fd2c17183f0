"""The names that pick a tokenizer, and the one rule for which tokenizer counts a run's tokens.

Three names, used the same way by the command line (`--model`, `--tokenizer`,
`--summarizer-model`), `History` (`model=`, `tokenizer=`), pipeline files (a strategy's
`llm_config`: the summarizer) and the SDK bridge (the agent's LLM, `tokenizer`, `llm_configs`):
the agent's model (never called: its tokenizer, context window and prices), the tokenizer (what
counts: a model's name, or `approximate`), the summarizer model (what model-backed strategies call).
The tokenizer that counts is the one named, else the agent's model's, else a default
(`tokenizer_name`). This module imports nothing, so the command line's parser can use it.
"""

from __future__ import annotations

__all__ = ["AGENT_TOKENIZER", "APPROXIMATE", "DEFAULT_TOKENIZER", "tokenizer_name"]

APPROXIMATE = "approximate"
"""The tokenizer name that counts four characters a token (`prompt_tokens.ApproximateTokenizer`), no model's tokenizer."""

DEFAULT_TOKENIZER = "gpt-4o"
"""The tokenizer every command counts with unless `--tokenizer` or `--model` names another (and `replay_events`' default)."""

AGENT_TOKENIZER = "agent"
"""The tokenizer name that means the agent's model's (the SDK bridge's default setting)."""


def tokenizer_name(tokenizer: str | None, *, model: str | None, default: str = DEFAULT_TOKENIZER) -> str:
    """The tokenizer that counts: `tokenizer` (a model's name or `approximate`), else the agent's `model`, else `default`.

    `agent` (`AGENT_TOKENIZER`) names the agent's model too.
    """
    if tokenizer and tokenizer != AGENT_TOKENIZER:
        return tokenizer
    return model or default
