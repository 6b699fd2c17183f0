"""Count OpenAI models' tokens with tiktoken directly, as litellm's `token_counter` does, without importing litellm.

For an OpenAI chat model litellm counts with tiktoken (the encoding tiktoken names for the model,
`o200k_base` for any `gpt-4o`), from the tokenizer files it ships, and adds its own per-message
overhead. `OpenAITokens.for_model` gives the same counts in a fraction of a second where litellm's
import alone takes seconds of CPU: the tests compare them with litellm's on real logs' messages.

What is mirrored (litellm 1.110, `litellm_core_utils/token_counter.py`), for one message: 3 tokens,
plus every string field (`role`, `content`, `tool_call_id`, ...; `name` one more), the arguments of
its tool calls, and of a content list its text parts and 250 tokens an image (litellm's default
image size; images are never fetched). Text is counted 1,024 characters at a time, as litellm does.
Tool definitions (`count_tools`, OpenAI's function format) are written out as the TypeScript-like
namespace litellm counts (`namespace functions { type name = (_: {...}) => any; }`), plus 9 tokens,
4 fewer next to a system message. Anything else (other content parts or tool shapes, a text of
millions of characters, litellm's settings changed through its environment variables) is left to
litellm: the methods say None.

Which models: bare (or `openai/`) names that the model map gives to OpenAI as chat models and that
tiktoken knows, except `gpt-3.5-turbo-0301` (counted with other constants). Their capabilities
(vision, prompt caching, function calling) and context window come from the same map entry.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from openhands_memory.llm._model_map import bundled_file, model_entry

if TYPE_CHECKING:
    import tiktoken

__all__ = ["OpenAITokens", "encode_as_litellm"]

TOKENS_PER_MESSAGE: Final = 3
"""What litellm adds for each message (and, once, for the reply's priming)."""

_TOKENS_PER_NAME = 1
_IMAGE_TOKENS = 250  # litellm's DEFAULT_IMAGE_TOKEN_COUNT
_CHUNK_CHARS = 1024  # litellm's TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS
_MAX_EXACT_CHARS = 4_000_000  # litellm's TOKEN_COUNTER_MAX_EXACT_CHARS: longer texts it extrapolates
_TEXT_PARTS = {"text": "text", "thinking": "thinking", "redacted_thinking": "thinking", "compaction": "content"}
_LITELLM_SETTINGS = ("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "TOKEN_COUNTER_MAX_EXACT_CHARS", "DEFAULT_IMAGE_TOKEN_COUNT")
_ENCODINGS_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_ENCODE_ENCODING = "cl100k_base"  # litellm.encode's for every model on the tiktoken path
_TOOLS_TOKENS = 9
_SYSTEM_TOOLS_DISCOUNT = 4


class OpenAITokens:
    """litellm's token arithmetic for one OpenAI model, on tiktoken (see the module docstring)."""

    __slots__ = ("_counting", "encoding_name", "entry", "model")

    def __init__(self, model: str, entry: Mapping[str, Any], encoding_name: str) -> None:
        self.model = model
        """The model, as configured."""
        self.entry = entry
        """Its entry in litellm's model map."""
        self.encoding_name = encoding_name
        """The tiktoken encoding litellm counts it with."""
        self._counting: tiktoken.Encoding | None = None

    @classmethod
    def for_model(cls, model: str, custom_llm_provider: str | None) -> OpenAITokens | None:
        """The counter for `model`, or None when litellm must count (see the module docstring)."""
        if custom_llm_provider not in (None, "openai") or any(name in os.environ for name in _LITELLM_SETTINGS):
            return None
        name = model.removeprefix("openai/")
        if "/" in name or name == "gpt-3.5-turbo-0301":
            return None
        entry = model_entry(name)
        if entry is None or entry.get("litellm_provider") != "openai" or entry.get("mode") != "chat":
            return None
        encoding = _encoding_name(name)
        if encoding is None or _tokenizer_file(encoding) is None or _tokenizer_file(_ENCODE_ENCODING) is None:
            return None
        return cls(model, entry, encoding)

    def supports(self, feature: str) -> bool:
        """What litellm's `supports_<feature>` says: the map entry's flag is True."""
        return self.entry.get(f"supports_{feature}") is True

    @property
    def context_window(self) -> int | None:
        """The entry's `max_input_tokens` (else `max_tokens`), as litellm's model info has it."""
        for key in ("max_input_tokens", "max_tokens"):
            value = self.entry.get(key)
            if isinstance(value, int) and value > 0:
                return value
        return None

    def count_message(self, message: Mapping[str, Any]) -> int | None:
        """The tokens litellm counts for one message dict (without the reply's priming); None: ask litellm."""
        total = TOKENS_PER_MESSAGE
        for key, value in message.items():
            if value is None:
                continue
            if key in ("tool_calls", "function_call"):
                counted = self._calls(key, value)
            elif isinstance(value, str):
                counted = self._count(value)
                if counted is not None and key == "name":
                    counted += _TOKENS_PER_NAME
            elif key == "content" and isinstance(value, list):
                counted = self._parts(value)
            elif key in ("provider_specific_fields", "search_results"):
                return None
            else:
                continue  # litellm skips the other keys
            if counted is None:
                return None
            total += counted
        return total

    def count_tools(self, tools: Sequence[Any], *, has_system: bool) -> int | None:
        """The tokens litellm counts for tool definitions in a request; None: ask litellm."""
        lines = ["namespace functions {", ""]
        for tool in tools:
            function = tool.get("function") if isinstance(tool, Mapping) else None
            if not isinstance(function, Mapping):
                return None  # another shape (Anthropic's, Gemini's declarations): litellm maps those
            lines.extend(_function_lines(function))
        lines.append("} // namespace functions")
        counted = self._count("\n".join(lines))
        return None if counted is None else counted + _TOOLS_TOKENS - (_SYSTEM_TOOLS_DISCOUNT if has_system else 0)

    def encode(self, text: str) -> list[int]:
        """The token ids `litellm.encode` gives for `text` (its default encoding, whatever the model)."""
        return _encoding(_ENCODE_ENCODING).encode(text, disallowed_special=())

    def _count(self, text: str) -> int | None:
        if len(text) > _MAX_EXACT_CHARS:
            return None
        encoding = self._counting
        if encoding is None:
            encoding = self._counting = _encoding(self.encoding_name)
        encode = encoding.encode_ordinary
        return sum(len(encode(text[start : start + _CHUNK_CHARS])) for start in range(0, len(text), _CHUNK_CHARS))

    def _calls(self, key: str, value: Any) -> int | None:
        calls = value if key == "tool_calls" else [{"function": value}]
        if not isinstance(calls, list):
            return None
        total = 0
        for call in calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                return None
            counted = self._count(str(function.get("arguments", "")))
            if counted is None:
                return None
            total += counted
        return total

    def _parts(self, parts: list[Any]) -> int | None:
        total = 0
        for part in parts:
            if isinstance(part, str):
                counted = self._count(part)
            elif isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS:
                text = str(part.get(_TEXT_PARTS[part["type"]]) or "")
                counted = self._count(text) if text else 0
            elif isinstance(part, Mapping) and part.get("type") == "image_url":
                counted = _IMAGE_TOKENS
            else:
                return None
            if counted is None:
                return None
            total += counted
        return total


def encode_as_litellm(text: str) -> list[int] | None:
    """The token ids `litellm.encode(model=M, text=text)` gives for any model M, without importing litellm; None: ask it.

    litellm encodes with tiktoken's `cl100k_base` for every model unless it loads a Hugging Face
    tokenizer (Claude 4, Llama, ...), which it never does with `disable_hf_tokenizer_download` set,
    as `openhands_memory.llm._litellm` sets it (unless you set it to False first: then litellm encodes).
    """
    litellm = sys.modules.get("litellm")
    if litellm is not None and getattr(litellm, "disable_hf_tokenizer_download", None) is False:
        return None
    if _tokenizer_file(_ENCODE_ENCODING) is None:
        return None
    return _encoding(_ENCODE_ENCODING).encode(text, disallowed_special=())


def _function_lines(function: Mapping[str, Any]) -> list[str]:
    """One function as litellm writes it to count it: its description as a comment, then its type."""
    name = function.get("name")
    if not name:
        return []
    described = [f"// {function['description']}"] if function.get("description") else []
    parameters = function.get("parameters") or {}
    parameters = parameters if isinstance(parameters, Mapping) else {}
    properties = parameters.get("properties")
    if isinstance(properties, Mapping) and properties:
        return [*described, f"type {name} = (_: {{", _object_lines(parameters, 0), "}) => any;", ""]
    return [*described, f"type {name} = () => any;", ""]


def _object_lines(parameters: Mapping[str, Any], indent: int) -> str:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return ""
    required = parameters.get("required")
    required = tuple(required) if isinstance(required, list) else ()
    lines = []
    for key, props in properties.items():
        description = props.get("description") if isinstance(props, Mapping) else None
        if description:
            lines.append(f"// {description}")
        optional = "" if required and key in required else "?"
        lines.append(f"{key}{optional}: {_type_text(props, indent)},")
    return "\n".join(" " * max(0, indent) + line for line in lines)


def _type_text(props: Any, indent: int) -> str:
    if not isinstance(props, Mapping):
        return "any"
    kind, enum = props.get("type"), props.get("enum")
    if kind in ("string", "integer", "number") and isinstance(enum, list):
        return " | ".join(f'"{item}"' for item in enum)
    if kind == "string":
        return "string"
    if kind == "array":
        return f"{_type_text(props.get('items'), indent)}[]"
    if kind == "object":
        return f"{{\n{_object_lines(props, indent + 2)}\n}}"
    if kind in ("integer", "number"):
        return "number"
    if kind in ("boolean", "null"):
        return str(kind)
    return "any"


def _encoding_name(name: str) -> str | None:
    """The encoding litellm counts `name` with: `o200k_base` for a `gpt-4o`, else tiktoken's for the name."""
    if "gpt-4o" in name:
        return "o200k_base"
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return encoding_name_for_model(name)
    except KeyError:  # litellm guesses for names tiktoken does not know; we let it
        return None


def _tiktoken_folder() -> str | None:
    """Where litellm points tiktoken: `CUSTOM_TIKTOKEN_CACHE_DIR`, else the tokenizer files it ships."""
    custom = os.environ.get("CUSTOM_TIKTOKEN_CACHE_DIR")
    if custom:
        return custom
    init = bundled_file("litellm_core_utils", "tokenizers", "__init__.py")
    return str(init.parent) if init is not None else None


def _tokenizer_file(encoding: str) -> str | None:
    """The file tiktoken reads `encoding` from in litellm's folder (named by the hash of its URL), if it is there."""
    folder = _tiktoken_folder()
    if folder is None:
        return None
    path = os.path.join(folder, hashlib.sha1(_ENCODINGS_URL.format(encoding).encode()).hexdigest())
    return path if os.path.isfile(path) else None


@functools.cache
def _encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding, loaded from litellm's folder (never downloaded: `for_model` checked the file is there)."""
    import tiktoken

    folder = _tiktoken_folder()
    if folder is None or _tokenizer_file(name) is None:  # never let tiktoken download it
        raise FileNotFoundError(f"litellm's tokenizer file for {name} is missing")
    # What importing litellm does too (`litellm_core_utils/default_encoding.py`): tiktoken reads from its folder.
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    return tiktoken.get_encoding(name)
