"""The event base classes: `Event`, `Action`, `Observation`, `EventSource`, `ToolCallMetadata`.

An event is a pydantic model whose fields are OpenHands' event fields flattened: the envelope
(`id`, `timestamp`, `source`, `cause`, ...) and the kind's own arguments (`command`, `path`, ...)
sit side by side, as they do on OpenHands' dataclasses. Which fields go into the JSON `args` (or
`extras`) and which stay at the top level is derived once per class, from where a field is
declared: fields declared on a concrete kind are its payload.
"""

from __future__ import annotations

from copy import deepcopy
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Self

import orjson
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    PlainValidator,
    StrictInt,
)
from pydantic_core import PydanticUndefined

from openhands_memory.events._text import dataclass_text
from openhands_memory.events._wire import Wire, wire_of

EventId = int
"""An event's position-independent id: assigned by the stream, strictly increasing, never reused."""


def _require_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


JsonObject = Annotated[dict[str, Any], PlainValidator(_require_object)]
"""A JSON object passed through as is: checked to be a dict, its contents not copied or validated.
(Model responses and metrics are large and opaque to us; validating them would dominate load time.)"""


class RawJson:
    """A JSON object kept as the compact bytes a reader parsed it from, decoded when asked for.

    A tool call's `model_response` is the biggest part of a log and the engine only passes it
    through: kept as bytes, a loaded log holds less and builds fewer objects, and writing it back
    compact (`event_to_json`) copies the bytes. `id` is the response's id, read without decoding.
    Events that share one `RawJson` share the dict it decodes to, as they shared one dict before.
    """

    __slots__ = ("_value", "data", "id")

    def __init__(self, data: bytes, id: Any) -> None:
        self.data = data
        self.id = id
        self._value: dict[str, Any] | None = None

    def decode(self) -> dict[str, Any]:
        """The object, decoded on the first call; every call gives that same dict."""
        if self._value is None:
            self._value = orjson.loads(self.data)
        return self._value

    @property
    def pristine(self) -> bool:
        """Not decoded yet: `data` is exactly the object (a decoded dict may have been changed)."""
        return self._value is None

    def __eq__(self, other: object) -> bool:
        if type(other) is RawJson:
            if self._value is None and other._value is None and self.data == other.data:
                return True
            return self.decode() == other.decode()
        if isinstance(other, dict):
            return self.decode() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.decode())

    def __copy__(self) -> RawJson:
        return self  # a shallow copy shares the response, as it shared the dict

    def __deepcopy__(self, memo: Any) -> Any:
        return self if self._value is None else deepcopy(self._value, memo)

    def __reduce__(self) -> Any:
        return (RawJson, (self.data, self.id)) if self._value is None else (dict, (self._value,))


def _require_response(value: Any) -> Any:
    return value if type(value) is RawJson else _require_object(value)


def _plain_response(value: Any) -> Any:
    return value.decode() if type(value) is RawJson else value


ModelResponse = Annotated[dict[str, Any], PlainValidator(_require_response), PlainSerializer(_plain_response)]
"""A model response: a JSON object as `JsonObject`, or the `RawJson` a reader left it as (a field
read gives the dict either way)."""


class EventSource(StrEnum):
    """Who produced an event."""

    AGENT = "agent"
    USER = "user"
    ENVIRONMENT = "environment"


def _require_source_name(value: Any) -> Any:
    # The enum's own error puts the value's repr in its message: a list nested thousands deep
    # would make that a RecursionError instead of a validation error.
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"expected one of {', '.join(repr(s.value) for s in EventSource)} or null, got {type(value).__name__}")


class SharedFieldsSet(set[str]):
    """The names of the fields a loaded model was given (pydantic's `model_fields_set`), one set shared
    by every loaded model with the same names: a set per event was a sixth of a loaded log's memory.

    It cannot be changed in place: setting a field gives the model a set of its own first.
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("this fields set is shared by loaded events: copy it (set(...)) to change it")

    add = update = discard = remove = pop = clear = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse  # type: ignore[assignment]

    # A copy (pydantic's model_copy, copy.copy, pickle) is a plain set the copy may change.
    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def __reduce__(self) -> Any:
        return (set, (list(self),))


_id_writes = [0]
"""How many times an event's id, class or hidden flag was assigned in this process (see `events._loaded`)."""

_RECORDED_FIELDS = frozenset({"id", "__class__", "hidden"})
"""What a loaded list records of each event (`events._loaded`): assigning one makes it distrust its record."""


def id_writes() -> int:
    """How many times an event's id, class or hidden flag was assigned in this process, a count that only grows."""
    return _id_writes[0]


class _OwnFieldsSetOnWrite(BaseModel):
    """Setting a field of a model whose fields set is shared gives it its own set first."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _RECORDED_FIELDS:
            _id_writes[0] += 1  # a list that recorded them as loaded no longer trusts its record
        if type(self.__pydantic_fields_set__) is SharedFieldsSet:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in _RECORDED_FIELDS:
            _id_writes[0] += 1
        super().__delattr__(name)


class ToolCallMetadata(_OwnFieldsSetOnWrite):
    """Which model response and which of its tool calls an action (and its observation) came from."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    function_name: str
    """The name of the tool the model called."""
    tool_call_id: str
    """The id the model gave this call; the tool result must carry it back."""
    model_response: ModelResponse | None = None
    """The full completion (litellm's JSON) the call came from; shared by parallel calls."""
    total_calls_in_response: int = 1
    """How many tool calls that response made, this one included."""

    @property
    def response_id(self) -> str | None:
        """The id of the model response, which parallel calls share."""
        response = self.__dict__["model_response"]
        if type(response) is RawJson:
            if response.pristine:
                return response.id  # type: ignore[no-any-return]
            response = response.decode()
        return response.get("id") if response else None


class _DecodedOnRead:
    """Reads a field whose value may be a `RawJson` a reader left it as: decoded on the first read, and
    the decoded dict kept in its place (once for all the events that share the response).

    A data descriptor on the class, so reading the field runs it while reading any other attribute of
    the model stays a plain lookup. The value lives in the instance `__dict__`, where pydantic keeps
    every field: validation, `__setattr__`, copies, dumps and pickles work on that dict as before.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            # As for any pydantic field, the class has no such attribute.
            raise AttributeError(self.name)
        fields = instance.__dict__
        try:
            value = fields[self.name]
        except KeyError:
            raise AttributeError(self.name) from None
        if type(value) is RawJson:
            value = fields[self.name] = value.decode()
        return value

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.name] = value  # only `object.__setattr__` comes here: pydantic writes `__dict__`


# Set after pydantic built the class: a class attribute named like a field would be taken for its default.
ToolCallMetadata.model_response = _DecodedOnRead("model_response")  # type: ignore[assignment]


class Event(_OwnFieldsSetOnWrite):
    """One entry of the append-only history.

    Unknown fields are kept (`extra="allow"`) and written back unchanged: a recorded log may carry
    fields we do not model. Equality ignores how the event was laid out in the file it came from.
    """

    model_config = ConfigDict(
        extra="allow",
        use_attribute_docstrings=True,
        revalidate_instances="never",
    )

    # Strict: a JSON `true` or "3" is not an id (pydantic would coerce them to 1 and 3).
    id: StrictInt | None = None
    """Assigned by the stream when the event is appended; None for a new event."""
    timestamp: str | None = None
    """ISO 8601 time the stream stored the event (OpenHands writes it without a zone)."""
    source: Annotated[EventSource | None, BeforeValidator(_require_source_name)] = None
    """Who produced the event."""
    cause: StrictInt | None = None
    """The id of the action this observation answers (or that triggered this event)."""
    tool_call_metadata: ToolCallMetadata | None = None
    """The tool call this event belongs to, copied onto both the action and its observation."""
    llm_metrics: JsonObject | None = None
    """Model usage and cost accumulated up to this event, as OpenHands records it."""
    timeout: int | float | None = None
    """Hard timeout in seconds for running this action, if one was set."""
    hidden: bool = False
    """Hidden events are kept in the log but never shown to the agent."""
    original_id: str | None = None
    """The event's id in the log it was imported from (an OpenHands SDK UUID), if any."""

    _is_base: ClassVar[bool] = True
    # Filled per class by __pydantic_init_subclass__.
    kind_key: ClassVar[str] = ""
    """`action` or `observation`: the JSON key that names the kind."""
    payload_key: ClassVar[str] = ""
    """`args` or `extras`: the JSON object that holds the kind's own fields."""
    payload_fields: ClassVar[tuple[str, ...]] = ()
    """The kind's own fields, in OpenHands' order; they go into `args` / `extras`."""
    envelope_fields: ClassVar[frozenset[str]] = frozenset()
    """Every other field; they go at the top level of the JSON."""
    omit_if_none: ClassVar[frozenset[str]] = frozenset()
    """Payload fields OpenHands leaves out of the JSON when they are None."""
    payload_defaults: ClassVar[dict[str, Any]] = {}
    """Default of each payload field (absent for required ones)."""
    top_level_extras: ClassVar[tuple[str, ...]] = ()
    """Fields of a kind that OpenHands does not have and that go at the top level, written only when
    set: OpenHands' loader ignores unknown top-level keys but rejects unknown `args`."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        payload: list[str] = []
        for klass in reversed(cls.__mro__):
            if not (isinstance(klass, type) and issubclass(klass, Event)) or klass.__dict__.get("_is_base", False):
                continue
            for name in klass.__dict__.get("__annotations__", {}):
                if name in cls.model_fields and name != cls.kind_key and name not in payload and name not in cls.top_level_extras:
                    payload.append(name)
        cls.payload_fields = tuple(payload)
        cls.envelope_fields = frozenset(cls.model_fields) - set(payload)
        defaults = {}
        for name in payload:
            default = cls.model_fields[name].get_default(call_default_factory=True)
            if default is not PydanticUndefined:
                defaults[name] = default
        cls.payload_defaults = defaults

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Event)
        return self.__dict__ == other.__dict__ and self.__pydantic_extra__ == other.__pydantic_extra__

    __hash__ = None  # type: ignore[assignment]

    # pydantic copies `__pydantic_private__` into a plain dict; a loaded event's is its `Wire`, kept.
    def __copy__(self) -> Self:
        copied = super().__copy__()
        if type(self.__pydantic_private__) is Wire:
            object.__setattr__(copied, "__pydantic_private__", self.__pydantic_private__)
        return copied

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        copied = super().__deepcopy__(memo)
        if type(self.__pydantic_private__) is Wire:
            object.__setattr__(copied, "__pydantic_private__", deepcopy(self.__pydantic_private__, memo))
        return copied

    @property
    def kind(self) -> str:
        """The OpenHands kind string: `run`, `message`, `condensation`, ..."""
        return getattr(self, self.kind_key)

    @property
    def message(self) -> str:
        """The one-line description OpenHands shows; the recorded one for a loaded event."""
        wire = wire_of(self)
        if wire is not None and "message" in wire.data:
            return wire.data["message"]
        return self.default_message()

    def default_message(self) -> str:
        """The description OpenHands would write for this event."""
        return ""

    def __str__(self) -> str:
        """The event as OpenHands 0.62 prints it (its summarizers' prompts use this text): a kind's own
        form (`**CmdRunAction ...**`), or else OpenHands' dataclass repr (`AgentThinkAction(thought=...)`)."""
        return dataclass_text(self)

    @property
    def response_id(self) -> str | None:
        """The model response this event's tool call came from, if any."""
        metadata = self.tool_call_metadata
        return metadata.response_id if metadata is not None else None


class Action(Event):
    """Something the agent (or the user) asked for."""

    _is_base: ClassVar[bool] = True
    kind_key: ClassVar[str] = "action"
    payload_key: ClassVar[str] = "args"
    action: str
    """The OpenHands action kind."""

    runnable: ClassVar[bool] = False
    """The runtime executes this kind and answers with an observation (OpenHands' `Action.runnable`:
    commands, IPython cells, file reads, writes and edits, browsing and MCP calls)."""


class Observation(Event):
    """What the environment reported back."""

    _is_base: ClassVar[bool] = True
    kind_key: ClassVar[str] = "observation"
    payload_key: ClassVar[str] = "extras"
    observation: str
    """The OpenHands observation kind."""
    content: str = ""
    """The observation's main text (command output, file contents, page text, ...)."""

    has_success: ClassVar[bool] = False
    """OpenHands writes a top-level `success` for this kind."""

    @property
    def success(self) -> bool | None:
        """Whether the work succeeded, for kinds that report it; the recorded value if loaded."""
        wire = wire_of(self)
        if wire is not None and "success" in wire.data:
            return wire.data["success"]
        return self.compute_success()

    def compute_success(self) -> bool | None:
        """The `success` OpenHands would write for this event, or None when it writes none."""
        return None

    def default_message(self) -> str:
        return self.content
