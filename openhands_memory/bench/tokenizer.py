"""Tokenizers for the benchmark: a prompt becomes a sequence of tokens, so a cached prefix can be measured.

- `ApproximateTokenizer` (the default): the text cut into pieces of four characters, offline,
  deterministic, no litellm. Its counts follow the library's four-characters-a-token estimate, and
  two prompts share exactly as many leading tokens as their texts share leading four-character pieces.
- `LiteLLMTokenizer(model)`: litellm's tokenizer for the model (`LLM.encode`), offline: litellm
  ships its tokenizer files and nothing is downloaded (common OpenAI models are read with tiktoken
  directly, the same token ids, without importing litellm).

`tokenizer_for("approximate")` or `tokenizer_for("gpt-4o")` picks one by name.

How a prompt is tokenized (`prompt_text`): the tool definitions first (their JSON, keys sorted),
then each message in order, written as `<|role|>` (with the tool call it answers) on one line,
then its text parts, one line for each image, and one line for each tool call it makes. Every
part is tokenized on its own and the sequences are concatenated, as chat templates put special
tokens between messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from openhands_memory.llm.estimate import CHARS_PER_TOKEN

__all__ = [
    "APPROXIMATE",
    "ApproximateTokenizer",
    "LiteLLMTokenizer",
    "Token",
    "Tokenizer",
    "prompt_text",
    "tokenizer_for",
]

APPROXIMATE = "approximate"
"""The name that picks `ApproximateTokenizer` in `tokenizer_for` (and on the command line)."""

Token = int | str
"""One token: an id (a model's tokenizer) or a piece of text (`ApproximateTokenizer`)."""


@runtime_checkable
class Tokenizer(Protocol):
    """Turns text into tokens; `name` says which tokenizer it is, for reports."""

    @property
    def name(self) -> str:
        """What the report calls this tokenizer."""
        ...

    def encode(self, text: str, /) -> Sequence[Token]:
        """The tokens of `text`, in order; the same text always gives the same tokens."""
        ...


class ApproximateTokenizer:
    """Cuts text into pieces of `chars_per_token` characters; each piece is a token.

    Offline and deterministic. It is no model's tokenizer: counts are within some tens of percent
    of one on English and code, and a shared prefix is measured to within a token.
    """

    __slots__ = ("chars_per_token",)

    def __init__(self, chars_per_token: int = CHARS_PER_TOKEN) -> None:
        if chars_per_token < 1:
            raise ValueError(f"chars_per_token must be at least 1, got {chars_per_token}")
        self.chars_per_token = chars_per_token
        """Characters per token."""

    @property
    def name(self) -> str:
        return f"approximate ({self.chars_per_token} characters a token, no model tokenizer)"

    def encode(self, text: str, /) -> list[Token]:
        step = self.chars_per_token
        return [text[start : start + step] for start in range(0, len(text), step)]


class LiteLLMTokenizer:
    """litellm's tokenizer for `model`, offline (see `openhands_memory.llm.LLM.encode`).

    The tokenizer loads on the first `encode` (importing litellm takes seconds, where it is needed), not when this is built.
    """

    __slots__ = ("_llm", "model")

    def __init__(self, model: str) -> None:
        self.model = model
        """The model whose tokenizer is used."""
        self._llm: Any = None

    @property
    def name(self) -> str:
        return f"{self.model} (litellm's tokenizer)"

    def encode(self, text: str, /) -> list[Token]:
        llm = self._llm
        if llm is None:
            from openhands_memory.llm import LLM, LLMConfig

            llm = self._llm = LLM(LLMConfig(model=self.model))
        return llm.encode(text)  # type: ignore[no-any-return]


def tokenizer_for(name: str | None) -> Tokenizer:
    """`ApproximateTokenizer()` for `approximate` (or None), else `LiteLLMTokenizer(name)`."""
    if name is None or name == APPROXIMATE:
        return ApproximateTokenizer()
    return LiteLLMTokenizer(name)


def prompt_text(message: Mapping[str, Any]) -> str:
    """The text a litellm message dict is tokenized as (see the module docstring)."""
    head = f"<|{message.get('role', '')}|>"
    tool_call_id = message.get("tool_call_id")
    if tool_call_id:
        head += f" {message.get('name') or ''} {tool_call_id}".rstrip()
    lines = [head]
    content = message.get("content")
    if isinstance(content, str):
        if content:
            lines.append(content)
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "text":
                lines.append(str(part.get("text", "")))
            elif part.get("type") == "image_url":
                image = part.get("image_url")
                url = image.get("url", "") if isinstance(image, Mapping) else str(image)
                lines.append(f"<image {len(url)} chars>")
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        lines.append(f"<tool_call {call.get('id', '')}> {function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(lines)
