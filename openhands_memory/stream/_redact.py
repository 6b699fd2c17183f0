"""Hide secret values in an event's JSON before it is stored, as OpenHands' `EventStream` does."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from openhands_memory.errors import InvalidSecretError

logger = logging.getLogger(__name__)

SECRET_PLACEHOLDER = "<secret_hidden>"
"""What every occurrence of a secret value becomes."""

MIN_SECRET_LENGTH = 6
"""The shortest secret value accepted: a shorter one (`e`, `ab`) would hide ordinary text all over the log."""

# Envelope keys whose values are ours (ids, times, kinds), never user text. OpenHands protects
# `message` too, but `message` repeats the content of messages and observations, so a secret in
# the content would reach the disk through it: we redact it.
_PROTECTED_TOP_KEYS = frozenset({"id", "timestamp", "source", "cause", "action", "observation"})


def secret_values(secrets: Mapping[str, str]) -> tuple[str, ...]:
    """The values to hide, longest first, so a secret that contains another is hidden whole.

    An empty value is an unset secret: there is nothing to hide.

    Raises:
        InvalidSecretError: `secrets` is not a mapping, or a value is not a string, or is shorter
            than `MIN_SECRET_LENGTH`.
    """
    if not isinstance(secrets, Mapping):
        # A list of values would do, but its items have no names for the messages (and a string
        # would be taken letter by letter): ask for what OpenHands takes.
        raise InvalidSecretError(
            None,
            f"secrets are a mapping of name to value, e.g. {{'GITHUB_TOKEN': token}}, not a {type(secrets).__name__}",
        )
    for name, value in secrets.items():
        if not isinstance(value, str):
            raise InvalidSecretError(name, f"its value is not a string but {type(value).__name__}")
        if value and len(value) < MIN_SECRET_LENGTH:
            raise InvalidSecretError(
                name,
                f"its value is {len(value)} character{'s' if len(value) != 1 else ''} long; a secret must be at "
                f"least {MIN_SECRET_LENGTH}, or hiding it would rewrite ordinary text all over the log",
                length=len(value),
            )
    return tuple(sorted({value for value in secrets.values() if value}, key=len, reverse=True))


def redact(data: dict[str, Any], values: Sequence[str]) -> dict[str, Any] | None:
    """A copy of an event dict with every secret value replaced, in values and keys, or None when nothing changed.

    The envelope's own keys (`id`, `args`, ...) are ours and kept; every key below them is user
    data (a dict of environment variables, say) and is redacted like a value.

    Copies only what changes: `data` shares its nested values with the event, so it is never
    modified in place.
    """
    changed: dict[str, Any] | None = None
    for key, value in data.items():
        if key in _PROTECTED_TOP_KEYS:
            continue
        new = _redact_value(value, values)
        if new is not value:
            if changed is None:
                changed = dict(data)
            changed[key] = new
    return changed


def _redact_value(value: Any, values: Sequence[str]) -> Any:
    """`value` with secrets replaced; the same object when it holds none."""
    if isinstance(value, str):
        new = value
        for secret in values:
            if secret in new:
                new = new.replace(secret, SECRET_PLACEHOLDER)
        return new if new != value else value
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        renamed = False
        for key, item in value.items():
            new_item = _redact_value(item, values)
            new_key = _redact_value(key, values) if isinstance(key, str) else key
            if new_key is not key:
                renamed = True
            if new_item is not item:
                if out is None:
                    out = dict(value)
                out[key] = new_item
        if renamed:
            return _redact_keys(value if out is None else out, values)
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new_item = _redact_value(item, values)
            if new_item is not item:
                if items is None:
                    items = list(value)
                items[index] = new_item
        return value if items is None else items
    return value


def _redact_keys(value: dict[Any, Any], values: Sequence[str]) -> dict[Any, Any]:
    """`value` (values already redacted) with its keys redacted too, in the same order.

    Two keys that differ only by a secret become one: the later one's value is kept, and the
    loss is logged (never the keys themselves: they held a secret).
    """
    out: dict[Any, Any] = {}
    for key, item in value.items():
        new_key = _redact_value(key, values) if isinstance(key, str) else key
        if new_key in out:
            logger.warning("two keys become %r once secrets are hidden: the stored event keeps the later value", new_key)
        out[new_key] = item
    return out
