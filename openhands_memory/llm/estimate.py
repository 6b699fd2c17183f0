"""The library's one offline token estimate: text at `CHARS_PER_TOKEN` characters a token, rounded up.

Every estimate without a model's tokenizer uses it: the condensers' default counter
(`ApproximateTokenCounter`), the history policy's message estimate, `LLM.count_tokens` where
litellm cannot count, and the `approximate` tokenizer of the prompt counter replay and bench share
(`openhands_memory.prompt_tokens`). Each adds
its own framing per event or message on top (what it counts differs: events, messages, raw text).
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]

CHARS_PER_TOKEN: Final = 4
"""Characters a token, about right for English text and code with OpenAI-style tokenizers."""


def estimate_tokens(chars: int, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """About how many tokens `chars` characters of text take: `chars / chars_per_token`, rounded up."""
    return math.ceil(chars / chars_per_token)
