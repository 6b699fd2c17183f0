"""The one offline token estimate (`openhands_memory/llm/estimate.py`): every estimator counts text by it."""

from __future__ import annotations

import re
from pathlib import Path

from openhands_memory.bench.tokenizer import ApproximateTokenizer
from openhands_memory.condenser import ApproximateTokenCounter
from openhands_memory.conversation_memory import approximate_message_tokens
from openhands_memory.events import MessageAction
from openhands_memory.llm import Message, TextContent
from openhands_memory.llm.estimate import CHARS_PER_TOKEN, estimate_tokens

PACKAGE = Path(__file__).resolve().parents[2] / "openhands_memory"


def test_the_characters_a_token_are_defined_in_one_place() -> None:
    defined = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in path.read_text().splitlines()
        if re.match(r"\s*_?CHARS_PER_TOKEN\b\s*(:[^=]*)?=", line)
    ]
    assert defined == ["llm/estimate.py"]  # once, in that file (any line)


def test_every_offline_estimator_counts_the_same_text_alike() -> None:
    text = "x" * 4_001
    tokens = estimate_tokens(len(text))
    assert tokens == 1_001 == -(-len(text) // CHARS_PER_TOKEN)
    # Each adds only its own framing (per event, per message) to the same text count.
    assert ApproximateTokenCounter()([MessageAction(content=text)]) == tokens + 4
    assert approximate_message_tokens(Message(role="user", content=(TextContent(text=text),))) == tokens + 4
    assert len(ApproximateTokenizer().encode(text)) == tokens
