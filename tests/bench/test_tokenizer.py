"""Tokenizers and the text a message is tokenized as."""

from __future__ import annotations

import pytest

from openhands_memory.bench.tokenizer import (
    ApproximateTokenizer,
    LiteLLMTokenizer,
    Tokenizer,
    prompt_text,
    tokenizer_for,
)


def test_the_approximate_tokenizer_cuts_four_character_pieces() -> None:
    tokenizer = ApproximateTokenizer()
    assert tokenizer.encode("hello world") == ["hell", "o wo", "rld"]
    assert tokenizer.encode("") == []
    assert "approximate" in tokenizer.name and "no model tokenizer" in tokenizer.name
    assert isinstance(tokenizer, Tokenizer)


def test_the_approximate_tokenizer_rejects_a_silly_size() -> None:
    with pytest.raises(ValueError, match="chars_per_token must be at least 1"):
        ApproximateTokenizer(0)


def test_tokenizer_for_picks_by_name_without_loading_litellm() -> None:
    assert isinstance(tokenizer_for(None), ApproximateTokenizer)
    assert isinstance(tokenizer_for("approximate"), ApproximateTokenizer)
    tokenizer = tokenizer_for("gpt-4o")
    assert isinstance(tokenizer, LiteLLMTokenizer)
    assert tokenizer.name == "gpt-4o (litellm's tokenizer)"


def test_the_litellm_tokenizer_encodes_offline_with_litellms_tokenizer() -> None:
    from openhands_memory.llm._litellm import import_litellm

    tokens = LiteLLMTokenizer("gpt-4o").encode("hello world")
    assert len(tokens) == 2 and all(isinstance(t, int) for t in tokens)
    assert tokens == list(import_litellm().encode(model="gpt-4o", text="hello world"))


def test_prompt_text_writes_role_text_images_and_tool_calls() -> None:
    assert prompt_text({"role": "user", "content": "Fix it"}) == "<|user|>\nFix it"
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Let me look."}, {"type": "image_url", "image_url": {"url": "data:xyz"}}],
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}],
    }
    assert prompt_text(message) == (
        '<|assistant|>\nLet me look.\n<image 8 chars>\n<tool_call c1> execute_bash {"command": "ls"}'
    )
    tool = {"role": "tool", "content": [{"type": "text", "text": "a.py"}], "tool_call_id": "c1", "name": "execute_bash"}
    assert prompt_text(tool) == "<|tool|> execute_bash c1\na.py"
