"""API keys in our configs, written and read the way the SDK writes and reads its own.

The SDK serializes an `Agent` with a context: none (keys redacted), `expose_secrets` (plaintext) or
a `cipher` (encrypted; how a conversation's state is persisted). Our configs hold keys too (an
`llm_config`'s `api_key`, inline or in `llm_configs`), as pydantic `SecretStr`s that would always be
redacted; so every `SecretStr` in them goes through the SDK's own `serialize_secret`, and every
`api_key` read back through its `validate_secret` (decrypted with the context's cipher; a redacted
key reads as none, so the model call fails with our missing-key error instead of sending `****`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openhands.sdk.utils.pydantic_secrets import serialize_secret, validate_secret
from pydantic import BaseModel, SecretStr, ValidationInfo

__all__ = ["dump_secrets", "load_secrets"]

_SECRET_KEYS = frozenset({"api_key"})
"""The config keys that hold a secret."""


def dump_secrets(value: Any, info: Any) -> Any:
    """`value` (a config model, or a mapping of them) as plain data, each `SecretStr` as the SDK's context says."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    return _dumped(value, info)


def _dumped(value: Any, info: Any) -> Any:
    if isinstance(value, SecretStr):
        return serialize_secret(value, info)
    if isinstance(value, BaseModel):
        return _dumped(value.model_dump(), info)
    if isinstance(value, Mapping):
        return {key: _dumped(item, info) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_dumped(item, info) for item in value]
    return value


def load_secrets(value: Any, info: ValidationInfo) -> Any:
    """`value` with every `api_key` read as the SDK reads its secrets (decrypted with the context's cipher, if any)."""
    if isinstance(value, Mapping):
        return {
            key: validate_secret(item, info) if key in _SECRET_KEYS and isinstance(item, (str, SecretStr)) else load_secrets(item, info)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [load_secrets(item, info) for item in value]
    return value
