"""Hide secret values in an event's JSON before it is stored (as OpenHands' `EventStream` does), and on every read."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from openhands_memory.errors import InvalidSecretError
from openhands_memory.events import Event, event_from_dict, event_to_dict
from openhands_memory.events._codec import event_to_compact_dict
from openhands_memory.events.base import RawJson

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


class Redactor:
    """The secret values in force: hides them in text and in events, and fingerprints them without revealing them.

    Falsy when there is no secret to hide (then every method returns its input unchanged).
    """

    __slots__ = ("_patterns", "values")

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        """The values of `secrets` (name: value); an empty value is an unset secret.

        Raises:
            InvalidSecretError: a value is not a string, or is shorter than `MIN_SECRET_LENGTH`.
        """
        self.values: tuple[str, ...] = secret_values(secrets or {})
        """The values to hide, longest first."""
        # How a value appears in JSON bytes: as orjson writes it (what `event_to_json` gives), and
        # as Python's json writes it by default (non-ASCII as \u escapes), which model responses
        # read from OpenHands' files may keep as written.
        patterns: set[bytes] = set()
        for value in self.values:
            patterns.add(orjson.dumps(value)[1:-1])
            patterns.add(json.dumps(value)[1:-1].encode("ascii"))
        self._patterns = tuple(patterns)

    def __bool__(self) -> bool:
        return bool(self.values)

    def redact_text(self, text: str) -> str:
        """`text` with every secret value replaced by `SECRET_PLACEHOLDER` (the same object when it holds none)."""
        return _redact_value(text, self.values) if self.values else text

    def holds_secret(self, event: Event) -> bool:
        """Whether any value of `event` (or any key below its envelope) holds a secret, as it would be written."""
        if not self.values:
            return False
        written = orjson.dumps(event_to_compact_dict(event))
        if any(pattern in written for pattern in self._patterns):
            return True
        # A model response kept as the bytes it was read from may escape characters another way
        # (`\/`, `\u0041`): read those again as the dict they are.
        metadata = event.tool_call_metadata
        response = metadata.model_response if metadata is not None else None
        if type(response) is RawJson and response.pristine and (b"\\u" in response.data or b"\\/" in response.data):
            plain = orjson.dumps(orjson.loads(response.data))
            return any(pattern in plain for pattern in self._patterns)
        return False

    def redact_event(self, event: Event) -> Event:
        """A parsed copy of `event` with every secret hidden, or `event` itself when it holds none."""
        if not self.holds_secret(event):
            return event
        data = redact(event_to_dict(event), self.values)
        return event if data is None else event_from_dict(data)

    def fingerprint(self, salt: bytes) -> str:
        """A salted hash that tells whether two sets of secrets are the same, and never what they are ("" for none)."""
        if not self.values:
            return ""
        digest = hashlib.blake2b(key=salt[:64], digest_size=16, person=b"ohm-secrets")
        for value in sorted(self.values):
            digest.update(value.encode("utf-8", "surrogatepass") + b"\x00")
        return digest.hexdigest()

    def __repr__(self) -> str:
        # Never the values.
        return f"Redactor({len(self.values)} secret{'s' if len(self.values) != 1 else ''})"
