"""The benchmark's tokenizers: those of the pipeline's one prompt counter (`openhands_memory.prompt_tokens`).

Replay's report and the bench count a step's prompt with the same `PromptMeter` and these
tokenizers, so they print the same tokens for the same log, pipeline and tokenizer. This module
keeps the names the bench has always offered.
"""

from __future__ import annotations

from openhands_memory.prompt_tokens import (
    APPROXIMATE,
    ApproximateTokenizer,
    LiteLLMTokenizer,
    Token,
    Tokenizer,
    prompt_text,
    tokenizer_for,
)

__all__ = [
    "APPROXIMATE",
    "ApproximateTokenizer",
    "LiteLLMTokenizer",
    "Token",
    "Tokenizer",
    "prompt_text",
    "tokenizer_for",
]
