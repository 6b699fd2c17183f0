"""One event to and from OpenHands' JSON dict, exactly.

`event_to_dict(event_from_dict(d)) == d` for every event OpenHands wrote: the keys a loaded event
had are written back, in their order, with values we do not model kept as they were.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel, ValidationError

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._brief import brief, describe_validation_error, event_id_of
from openhands_memory.events._legacy import is_legacy_flat, upcast_legacy_flat
from openhands_memory.events._sdk_import import is_sdk_event
from openhands_memory.events._wire import TOP_LEVEL_TAGS, Wire, set_wire, wire_of
from openhands_memory.events.actions import ACTION_CLASSES, UnknownAction
from openhands_memory.events.base import (
    Event,
    Observation,
    RawJson,
    SharedFieldsSet,
    ToolCallMetadata,
)
from openhands_memory.events.observations import OBSERVATION_CLASSES, UnknownObservation

_MISSING = object()


def event_from_dict(data: dict[str, Any], *, index: int | None = None) -> Event:
    """Build an event from one OpenHands JSON dict (V0, or the old flattened form).

    A dict without `id` or `timestamp` is a new event, not yet in a stream. A kind we do not
    know becomes an `UnknownAction` / `UnknownObservation` that writes back unchanged.

    Raises:
        MalformedEventError: the dict is not an event, or a field has the wrong type; the error
            names the position `index` (when given) and the event id.
    """
    return _build(data, index, owned=False)


def event_from_parsed(data: dict[str, Any], *, index: int | None = None) -> Event:
    """`event_from_dict` for a dict just parsed by a reader, which nobody else holds.

    The event keeps the dict itself as its layout rather than a copy, with the values the event
    holds (envelope fields, the payload object) dropped from it: a big log loads in less memory.
    """
    return _build(data, index, owned=True)


_RECORDED: dict[str, Any] = {}  # stands in for a payload object the layout no longer holds (only "not null" is used)


def _build(data: dict[str, Any], index: int | None, *, owned: bool) -> Event:
    if not isinstance(data, dict):
        raise MalformedEventError(f"expected a JSON object, got {type(data).__name__}", index=index)
    record = data  # named in errors by its id, read only when there is an error to raise
    if is_sdk_event(data):
        raise MalformedEventError(
            f"an OpenHands SDK (V1) event of kind {brief(data['kind'])}: a log is all V0 events or all "
            "SDK events, and load_events() imports a whole SDK log",
            index=index,
            event_id=event_id_of(record),
        )
    if ("args" not in data and "extras" not in data) and is_legacy_flat(data):
        data = upcast_legacy_flat(data)
    if "action" in data:
        kind_key, payload_key = "action", "args"
    elif "observation" in data:
        kind_key, payload_key = "observation", "extras"
    else:
        raise MalformedEventError("neither 'action' nor 'observation' is set", index=index, event_id=event_id_of(record))

    kind = data[kind_key]
    if not isinstance(kind, str):
        raise MalformedEventError(f"{kind_key!r} must be a string, got {brief(kind)}", index=index, event_id=event_id_of(record))
    cls: type[Event]
    if kind_key == "action":
        cls = ACTION_CLASSES.get(kind, UnknownAction)
    else:
        cls = OBSERVATION_CLASSES.get(kind, UnknownObservation)
    payload = data.get(payload_key, _MISSING)
    if payload is _MISSING or payload is None:
        payload_items: dict[str, Any] = {}
    elif isinstance(payload, dict):
        payload_items = payload
    else:
        raise MalformedEventError(
            f"{payload_key!r} must be an object, got {type(payload).__name__}", index=index, event_id=event_id_of(record)
        )

    envelope = cls.envelope_fields
    shadow: dict[str, Any] | None = None
    if envelope.isdisjoint(payload_items):
        flat = dict(payload_items)
    else:
        flat = {}
        shadow = {}
        for key, value in payload_items.items():
            if key in envelope:
                shadow[key] = value
            else:
                flat[key] = value
    if shadow and cls.top_level_extras:
        _upcast_payload_extras(cls.top_level_extras, data, shadow, flat)
    for key in data:
        if key in envelope:
            flat[key] = data[key]

    try:
        event = cls.__pydantic_validator__.validate_python(flat)
    except ValidationError as exc:
        raise MalformedEventError(
            f"invalid {kind_key} {brief(kind)}: {describe_validation_error(exc)}", index=index, event_id=event_id_of(record)
        ) from exc
    if owned:
        # Only the keys, their order and the values of keys we do not model are read from a layout:
        # the key tuples and the fields set are shared by every event of this shape, the values a
        # small dict. (A shape's fields set is the same for all its events: it is the keys given.)
        top = tuple(data)
        keys = tuple(payload_items) if payload is not _MISSING else None
        shape = _SHAPES.get((cls, top, keys))
        if shape is None:
            shape = _new_shape(cls, top, keys, event, envelope)
        if shape.fields_set is not None:
            object.__setattr__(event, "__pydantic_fields_set__", shape.fields_set)
        metadata = event.__dict__.get("tool_call_metadata")
        if metadata is not None:
            _share_fields_set(metadata)
        unmodeled = {key: data[key] for key in shape.unmodeled}
        if unmodeled.get(payload_key) is not None:
            unmodeled[payload_key] = _RECORDED
        set_wire(event, Wire(unmodeled, shape.payload, shadow or None, shape.order))
        return event
    keys = tuple(payload_items) if payload is not _MISSING else None
    set_wire(event, Wire(dict(data), keys, shadow or None))
    return event


# Top-level extras this library once wrote in the payload: `summary_persists` was in `args` (where
# OpenHands rejects it) before it moved beside `condenser_metadata`.
_FORMERLY_IN_PAYLOAD = frozenset({"summary_persists"})


def _upcast_payload_extras(extras: tuple[str, ...], data: dict[str, Any], shadow: dict[str, Any], flat: dict[str, Any]) -> None:
    """Read a top-level extra from the payload, where an older version of this library wrote it.

    It sets the field, and stays where it was found: writing back puts it in the payload again, so
    the round trip is exact in both shapes. Found in both places, the top level wins and the payload
    copy is kept as recorded (a clash, like any other).
    """
    for name in extras:
        if name in _FORMERLY_IN_PAYLOAD and name in shadow and name not in data:
            flat[name] = shadow.pop(name)


class _Shape(NamedTuple):
    """What every loaded event of one class with the same top-level and payload keys shares."""

    order: tuple[str, ...]
    payload: tuple[str, ...] | None
    fields_set: SharedFieldsSet | None
    unmodeled: tuple[str, ...]
    """The top-level keys that are no field: their values are the event's own."""


_SHAPES: dict[tuple[type[Event], tuple[str, ...], tuple[str, ...] | None], _Shape] = {}


def _new_shape(cls: type[Event], top: tuple[str, ...], keys: tuple[str, ...] | None, event: Event, envelope: frozenset[str]) -> _Shape:
    _share_fields_set(event)
    fields_set = event.__pydantic_fields_set__
    shape = _Shape(
        _shared_keys(top),
        _shared_keys(keys) if keys is not None else None,
        fields_set if type(fields_set) is SharedFieldsSet else None,
        tuple(key for key in top if key not in envelope),
    )
    if len(_SHAPES) < _MAX_SHARED_FIELDS_SETS:
        _SHAPES[(cls, top, keys)] = shape
    return shape


_SHARED_FIELDS_SETS: dict[frozenset[str], SharedFieldsSet] = {}
_MAX_SHARED_FIELDS_SETS = 4096
"""Logs have a few dozen shapes; past this many (a log of odd keys), models keep their own sets."""


def _share_fields_set(model: BaseModel) -> None:
    """Give `model` the set of field names shared by every loaded model given the same names."""
    names = model.__pydantic_fields_set__
    key = frozenset(names)
    shared = _SHARED_FIELDS_SETS.get(key)
    if shared is None:
        if len(_SHARED_FIELDS_SETS) >= _MAX_SHARED_FIELDS_SETS:
            return
        shared = _SHARED_FIELDS_SETS[key] = SharedFieldsSet(names)
    object.__setattr__(model, "__pydantic_fields_set__", shared)


_SHARED_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _shared_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple for every loaded event whose payload has these keys in this order."""
    shared = _SHARED_KEYS.get(keys)
    if shared is None:
        if len(_SHARED_KEYS) >= _MAX_SHARED_FIELDS_SETS:
            return keys
        shared = _SHARED_KEYS[keys] = keys
    return shared


def event_to_dict(event: Event) -> dict[str, Any]:
    """The OpenHands JSON dict for an event.

    A loaded event is written with the keys it was read with; a new one the way OpenHands writes
    it. The result shares nested lists and dicts with the event: copy before changing them.
    """
    return _to_dict(event, raw=False)


def event_to_compact_dict(event: Event) -> dict[str, Any]:
    """`event_to_dict` for `orjson.dumps` without indentation: a model response a reader left as
    bytes is an `orjson.Fragment` of those bytes, which writes exactly what its dict would."""
    return _to_dict(event, raw=True)


def _to_dict(event: Event, *, raw: bool) -> dict[str, Any]:
    wire = wire_of(event)
    if wire is None:
        return _fresh_dict(event, raw)
    values = event.__dict__
    envelope = event.envelope_fields
    payload_key = event.payload_key
    out: dict[str, Any] = {}
    recorded_values = wire.data
    for key in wire.order or recorded_values:
        if key in envelope:
            value = values[key]
            out[key] = _metadata_dict(value, raw) if key == "tool_call_metadata" else value
        elif key == payload_key:
            payload = _payload(event, wire)
            # `"args": null` stays null
            out[key] = payload if payload or recorded_values[key] is not None else None
        else:
            out[key] = recorded_values[key]
    # Fields set after loading (an id given by a stream, say) that the file did not have.
    for key in _TOP_ORDER:
        if key not in out and key in envelope:
            value = values[key]
            if value is not None and value is not False:
                out[key] = _metadata_dict(value, raw) if key == "tool_call_metadata" else value
    for key in event.top_level_extras:
        # An extra read from the payload (the older shape) was written back there by `_payload`.
        if key not in out and values[key] is not None and values[key] is not False and key not in (wire.payload or ()):
            out[key] = values[key]
    if wire.payload is None and payload_key not in out:
        payload = _payload(event, wire)
        if payload:
            out[payload_key] = payload
    return out


def _metadata_dict(metadata: ToolCallMetadata | None, raw: bool) -> dict[str, Any] | None:
    """The metadata's JSON dict; shares `model_response` rather than copying it deeply."""
    if metadata is None:
        return None
    out = dict(metadata.__dict__)
    response = out.get("model_response")
    if type(response) is RawJson:
        out["model_response"] = orjson.Fragment(response.data) if raw and response.pristine else response.decode()
    if metadata.__pydantic_extra__:
        out.update(metadata.__pydantic_extra__)
    return out


def _payload(event: Event, wire: Wire) -> dict[str, Any]:
    values = event.__dict__
    extra = event.__pydantic_extra__ or {}
    shadow = wire.shadow or {}
    out: dict[str, Any] = {}
    for key in wire.payload or ():
        if key in shadow:
            out[key] = shadow[key]
        elif key in values:
            out[key] = values[key]
        elif key in extra:
            out[key] = extra[key]
    if wire.shadow is not None or len(out) != len(event.payload_fields) + len(extra):
        # Fields the file did not have are written only once they differ from their default.
        defaults = event.payload_defaults
        for name in event.payload_fields:
            if name not in out:
                value = values[name]
                if name not in defaults or value != defaults[name]:
                    out[name] = value
        for key, value in extra.items():
            if key not in out:
                out[key] = value
    return out


# The order OpenHands writes top-level keys in; our own additions come last.
_TOP_ORDER = ("id", "timestamp", "source", "cause", "tool_call_metadata", "llm_metrics", "timeout", "hidden", "original_id")


def _fresh_dict(event: Event, raw: bool) -> dict[str, Any]:
    """The dict OpenHands' own `event_to_dict` would write for a new event."""
    values = event.__dict__
    envelope = event.envelope_fields
    out: dict[str, Any] = {}
    if values["id"] is not None:
        out["id"] = values["id"]
    for key in ("timestamp", "source"):
        if values[key] is not None:
            out[key] = values[key]
    out["message"] = event.message
    if values["cause"] is not None:
        out["cause"] = values["cause"]
    out[event.kind_key] = values[event.kind_key]
    if values["tool_call_metadata"] is not None:
        out["tool_call_metadata"] = _metadata_dict(values["tool_call_metadata"], raw)
    if values["llm_metrics"] is not None:
        out["llm_metrics"] = values["llm_metrics"]
    payload: dict[str, Any] = {}
    omit = event.omit_if_none
    for name in event.payload_fields:
        value = values[name]
        if value is None and name in omit:
            continue
        payload[name] = value
    extra = event.__pydantic_extra__
    if extra:
        payload.update((key, value) for key, value in extra.items() if key not in TOP_LEVEL_TAGS)
    if isinstance(event, Observation):
        out["content"] = values["content"]
        out["extras"] = payload
        if event.has_success:
            out["success"] = event.compute_success()
    else:
        out["args"] = payload
        if values["timeout"] is not None:
            out["timeout"] = values["timeout"]
    # Top-level fields OpenHands does not have: written only when set, where its loader ignores them.
    if "hidden" in envelope and values["hidden"]:
        out["hidden"] = True
    if values["original_id"] is not None:
        out["original_id"] = values["original_id"]
    for name in event.top_level_extras:
        if values[name] is not None:
            out[name] = values[name]
    if extra:
        out.update((key, value) for key, value in extra.items() if key in TOP_LEVEL_TAGS)
    return out
