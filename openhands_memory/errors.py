"""The errors openhands-memory raises.

Every error keeps its facts as attributes and builds its message from them, so a caller can
both print it and act on it::

    OpenHandsMemoryError                                   exit_code 1
    ├─ MalformedEventError(OpenHandsMemoryError, ValueError)   path, line, index, event_id, reason
    ├─ CondenserConfigError(OpenHandsMemoryError, ValueError)  reason, condenser_type, field, path (exit_code 2)
    ├─ NoCondensationAvailable(OpenHandsMemoryError)           condenser, reason
    ├─ CondensationStalledError(OpenHandsMemoryError, RuntimeError)  condenser, reason, view_events,
    │                                                       tokens, largest_events
    ├─ StepNotFoundError(OpenHandsMemoryError, IndexError)      step, steps (exit_code 2)
    ├─ InvalidSecretError(OpenHandsMemoryError, ValueError)     name, reason, length
    ├─ MemoryAdapterError(OpenHandsMemoryError, ValueError)     reason (a bad query, argument or feed)
    ├─ UnknownDelegationError(OpenHandsMemoryError, ValueError) delegation
    ├─ UnknownPriceError(OpenHandsMemoryError, ValueError)      model, reason (exit_code 2)
    ├─ UnknownModelError(OpenHandsMemoryError, ValueError)      option, model, reason (exit_code 2)
    ├─ OutputRefusedError(OpenHandsMemoryError)                path, reason
    │  ├─ OutputExistsError(OutputRefusedError, FileExistsError)   (unless asked to overwrite)
    │  ├─ OutputIsInputError(OutputRefusedError, ValueError)      input_path (always)
    │  ├─ OutputNotWritableError(OutputRefusedError, PermissionError)  folder (checked before any work)
    │  └─ OutputNameError(OutputRefusedError, ValueError)         (exit_code 2: a name no layout has)
    ├─ LLMError(OpenHandsMemoryError)                          reason, model, status_code, attempts
    │  ├─ LLMRateLimitError           (retried)
    │  ├─ LLMTimeoutError             (retried)
    │  ├─ LLMConnectionError          (retried)
    │  ├─ LLMServiceUnavailableError  (retried: 5xx, overloaded)
    │  ├─ LLMResponseError            (retried: no choices, empty or malformed reply)
    │  ├─ LLMAuthenticationError      variables (never retried, never a fallback)
    │  ├─ LLMUnclassifiedError        (not retried: a failure no provider class names)
    │  └─ LLMBadRequestError
    │     └─ LLMContextWindowExceededError
    └─ StoreError
       ├─ CorruptRecordError(StoreError, ValueError)           path, line, reason
       │  └─ OutOfOrderRecordError(CorruptRecordError, DuplicateEventError)
       │                                                       path, line, event_id, previous_id, index
       ├─ DuplicateEventError(StoreError, ValueError)          event_id, index
       │  └─ ConcurrentAppendError(DuplicateEventError)        event_id, index, conversation
       ├─ EventAlreadyAddedError(StoreError, ValueError)       event_id
       ├─ EventNotFoundError(StoreError, KeyError)             event_id
       ├─ StoreClosedError(StoreError, ValueError)             path
       ├─ StoreLockedError(StoreError)                         path
       ├─ StoreReplacedError(StoreError)                       path, reason, saved_to,
       │                                                       linked_elsewhere
       ├─ SearchIndexError(StoreError)                         path, reason
       └─ StoreDatabaseError(StoreError)                       location, reason
          └─ StoreTimeoutError(StoreDatabaseError, TimeoutError)  location, reason

The matching builtin is mixed in where one fits, so ``except ValueError`` still works.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import NamedTuple


class OpenHandsMemoryError(Exception):
    """The root of every error this library raises on purpose."""

    exit_code: int = 1
    """The process exit code the command line uses for this error."""


def _place(path: str | PathLike[str] | None, line: int | None, index: int | None, event_id: object) -> str:
    """Format where something went wrong: `file:line`, `file: event #i (id n)`, or a subset."""
    place = str(path) if path is not None else ""
    if line is not None:
        place = f"{place}:{line}" if place else f"line {line}"
    if index is not None:
        place = f"{place}: event #{index}" if place else f"event #{index}"
    if event_id is not None:
        place = f"{place} (id {event_id!r})" if place else f"id {event_id!r}"
    return place


class MalformedEventError(OpenHandsMemoryError, ValueError):
    """An event, or a file of events, does not have a shape we can read.

    Raised with the place (file, line or position, event id) and the reason; nothing is
    guessed silently and nothing already stored is changed.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        index: int | None = None,
        event_id: object = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        self.index = index
        self.event_id = event_id
        place = _place(path, line, index, event_id)
        super().__init__(f"{place}: {reason}" if place else reason)

    def at(
        self,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        index: int | None = None,
    ) -> MalformedEventError:
        """Return a copy that also names the file, line or position (kept facts win)."""
        return MalformedEventError(
            self.reason,
            path=self.path if self.path is not None else path,
            line=self.line if self.line is not None else line,
            index=self.index if self.index is not None else index,
            event_id=self.event_id,
        )


class StoreError(OpenHandsMemoryError):
    """An event store cannot do what was asked; what it had stored is unchanged."""


class CorruptRecordError(StoreError, ValueError):
    """A stored record in the middle of a store cannot be read back."""

    def __init__(self, path: str | PathLike[str], line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class DuplicateEventError(StoreError, ValueError):
    """An event id is already taken, or ids would stop increasing."""

    def __init__(self, event_id: object, index: int, reason: str = "already exists") -> None:
        self.event_id = event_id
        self.index = index
        self.reason = reason
        super().__init__(f"event {event_id!r} {reason} at index {index}")


class StoreLockedError(StoreError):
    """Another writer holds the store open."""

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = path
        super().__init__(f"{path}: is open for writing in another process (or stream)")


class StoreReplacedError(StoreError):
    """The path of an open log no longer names the file the store writes (replaced, moved or deleted).

    Raised by the next append, which writes nothing: what it wrote would be lost with the old file.
    Every event acknowledged before is in the old file; when no other name links to it any more,
    its bytes were copied to `saved_to` first, since closing the store would free them.
    """

    def __init__(
        self, path: str | PathLike[str], reason: str, *, saved_to: str | PathLike[str] | None, linked_elsewhere: bool
    ) -> None:
        self.path = path
        self.reason = reason
        """What happened to the path: `replaced by another file`, `deleted`, ..."""
        self.saved_to = saved_to
        """The copy of the file the store wrote (every event it acknowledged), or None if none was made."""
        self.linked_elsewhere = linked_elsewhere
        """The file the store wrote still has another name (it was moved or hard-linked), so nothing was copied."""
        if saved_to is not None:
            kept = f"every event it acknowledged is saved in {saved_to}"
        elif linked_elsewhere:
            kept = "the file it wrote, with every event it acknowledged, is still on disk under another name"
        else:
            kept = "the file it wrote could not be saved: its events are only in memory until the stream is closed"
        super().__init__(
            f"{path}: {reason} while a stream had it open, so nothing more was written; {kept}. "
            f"Close this stream, then reopen {path} to continue with what it names now"
        )


class OutOfOrderRecordError(CorruptRecordError, DuplicateEventError):
    """A stored record's id is not greater than the id of the record before it.

    Both a corrupt record (it names `file:line`) and a duplicate id, so either `except` catches it.
    """

    def __init__(self, path: str | PathLike[str], line: int, event_id: object, previous_id: object, index: int) -> None:
        self.path = path
        self.line = line
        self.event_id = event_id
        self.previous_id = previous_id
        self.index = index
        self.reason = f"id {event_id!r} does not follow id {previous_id!r} (ids must strictly increase)"
        # Both parents build their own message; this one names the line, so skip their __init__.
        StoreError.__init__(self, f"{path}:{line}: {self.reason}")


class EventAlreadyAddedError(StoreError, ValueError):
    """An event that already has an id was added to a stream again."""

    def __init__(self, event_id: object) -> None:
        self.event_id = event_id
        super().__init__(
            f"event already has id {event_id!r}: an event is added to a stream once "
            "(was it added again from a subscriber?)"
        )


class EventNotFoundError(StoreError, KeyError):
    """No stored event has the id asked for."""

    def __init__(self, event_id: object) -> None:
        self.event_id = event_id
        super().__init__(f"no event with id {event_id!r}")

    def __str__(self) -> str:
        # KeyError would print the repr of its argument, quotes included.
        return str(self.args[0])


class StoreClosedError(StoreError, ValueError):
    """The store (or the stream over it) was closed."""

    def __init__(self, path: str | PathLike[str] | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: the store is closed" if path is not None else "the store is closed")


class ConcurrentAppendError(DuplicateEventError):
    """Another writer stored an event of the conversation at this position first; this one was not stored.

    Raised by a store that several processes write (PostgreSQL): the event keeps no id, nothing is
    overwritten and no id is skipped. Catch up with what the other writer stored
    (`EventStream.catch_up()`), then add the event again: it gets the next free id.
    `History.add_event` does so itself; it raises this error (`attempts` > 1) only when other
    writers stored first every time.
    """

    def __init__(self, event_id: object, index: int, conversation: str, *, attempts: int = 1) -> None:
        self.event_id = event_id
        self.index = index
        self.conversation = conversation
        self.attempts = attempts
        """How many times the event was tried (`History.add_event` catches up and tries again itself)."""
        self.reason = "another writer stored an event there first"
        if attempts == 1:
            advice = "catch up with EventStream.catch_up(), then add it again"
        else:
            advice = (
                f"tried {attempts} times, catching up each time, and other writers stored first every time; "
                "the history is current: add the event again, or let fewer workers write this conversation at once"
            )
        StoreError.__init__(
            self,
            f"conversation {conversation!r}: event {event_id!r} was not stored at index {index}: another writer "
            f"stored an event there first ({advice})",
        )


class StoreDatabaseError(StoreError):
    """The database behind a store cannot be reached, or refused an operation; the message says which.

    `location` names the store without its password. An append that fails this way while the
    connection is lost (the store already sent it again a few times) may or may not be stored: the
    message gives its key; adding the event again with that key (`EventStream.add_event(key=)`)
    stores it once.
    """

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = reason
        super().__init__(f"{location}: {reason}")


class StoreTimeoutError(StoreDatabaseError, TimeoutError):
    """The database did not answer in time (connecting, waiting for a lock, running a statement, or not at all).

    The bounds are the store's defaults (`connect_timeout`, `lock_timeout`, `statement_timeout`),
    or what the URL sets, and for a server that stopped answering (frozen: its own bounds never
    fire) `postgres_store.REPLY_TIMEOUT` on every call; the message names the one that passed.
    """


class SearchIndexError(StoreError):
    """The search index (a projection of the log) failed in a way it could not recover from; the log is untouched."""

    def __init__(self, path: str | PathLike[str] | None, reason: str) -> None:
        self.path = path
        """The sidecar file, or None for an index in memory."""
        self.reason = reason
        super().__init__(f"{path if path is not None else 'search index (in memory)'}: {reason}")


class CondenserConfigError(OpenHandsMemoryError, ValueError):
    """A condenser configuration cannot be used: an unknown type, a bad field, an unreadable file.

    The message names the file, the condenser type and the field when they are known, and
    suggests the closest known name for a typo.
    """

    exit_code = 2

    def __init__(
        self,
        reason: str,
        *,
        condenser_type: str | None = None,
        field: str | None = None,
        path: str | PathLike[str] | None = None,
    ) -> None:
        self.reason = reason
        self.condenser_type = condenser_type
        self.field = field
        self.path = path
        message = f"{field}: {reason}" if field else reason
        if condenser_type is not None:
            message = f"condenser {condenser_type!r}: {message}"
        if path is not None:
            message = f"{path}: {message}"
        super().__init__(message)


class NoCondensationAvailable(OpenHandsMemoryError):
    """A condenser should condense but can forget nothing (every event in view must be kept).

    `RollingCondenser.condense` catches it and returns the view unchanged.
    """

    def __init__(self, condenser: str, reason: str) -> None:
        self.condenser = condenser
        self.reason = reason
        super().__init__(f"{condenser}: nothing can be forgotten ({reason})")


class EventSize(NamedTuple):
    """One event of a view and the prompt tokens it takes, as a `CondensationStalledError` names it."""

    event_id: int | None
    """The event's id (None for the summary a condensation put in the view)."""
    kind: str
    """Its OpenHands kind and whether it is an action or an observation: `run action`, `run observation`, ..."""
    tokens: int
    """The prompt tokens it takes, by the token counter in use."""

    def __str__(self) -> str:
        name = f"id {self.event_id}" if self.event_id is not None else "the summary"
        return f"{name} ({self.kind}, {self.tokens} tokens)"


class CondensationStalledError(OpenHandsMemoryError, RuntimeError):
    """Condensing made no progress: asking the condenser again would loop, so the step stops here.

    Raised when a condenser asks to condense again after a condensation that left the view
    unchanged or no smaller, when it keeps condensing past the limit of one step, and when the
    model's context window was exceeded but condensing on request could not make the prompt
    smaller (or it still overflows after a few condensations). `largest_events` names what takes
    the room, largest first.
    """

    def __init__(
        self,
        condenser: str,
        reason: str,
        *,
        view_events: int,
        tokens: int | None = None,
        largest_events: Sequence[EventSize] = (),
    ) -> None:
        self.condenser = condenser
        self.reason = reason
        self.view_events = view_events
        self.tokens = tokens
        """The prompt tokens of the view, by the token counter in use (None: not counted)."""
        self.largest_events = tuple(largest_events)
        """The largest events still in view, largest first."""
        message = f"condenser {condenser!r} made no progress: {reason} ({view_events} events in view)"
        if self.largest_events:
            message += "; largest: " + ", ".join(str(size) for size in self.largest_events)
        super().__init__(message)


class StepNotFoundError(OpenHandsMemoryError, IndexError):
    """A replay was asked for an agent step the log does not have."""

    exit_code = 2

    def __init__(self, step: int, steps: int) -> None:
        self.step = step
        self.steps = steps
        super().__init__(f"no step {step}: the log has {steps} agent step{'s' if steps != 1 else ''} (steps count from 1)")


class InvalidSecretError(OpenHandsMemoryError, ValueError):
    """A secret to hide cannot be used (too short, not a string); nothing was stored with it.

    The message names the secret, never its value.
    """

    def __init__(self, name: str | None, reason: str, *, length: int | None = None) -> None:
        self.name = name
        """The secret's name (its key in the `secrets` mapping); None when `secrets` itself is wrong."""
        self.reason = reason
        self.length = length
        """How many characters its value has, when it is a string."""
        super().__init__(f"secret {name!r}: {reason}" if name is not None else reason)


class MemoryAdapterError(OpenHandsMemoryError, ValueError):
    """A memory adapter was given a query, an argument or a record it cannot take; it is unchanged."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class UnknownDelegationError(OpenHandsMemoryError, ValueError):
    """A scope names a delegation that no `AgentDelegateAction` of the events opened."""

    def __init__(self, delegation: int) -> None:
        self.delegation = delegation
        """The id the scope gave (an `AgentDelegateAction`'s id)."""
        super().__init__(f"no delegation was opened by event {delegation}: no AgentDelegateAction has that id")


class UnknownPriceError(OpenHandsMemoryError, ValueError):
    """A model's prices or cache rules cannot be made out (not in litellm's map, or a bad override)."""

    exit_code = 2

    def __init__(self, model: str, reason: str) -> None:
        self.model = model
        """The model (or pricing file) asked about."""
        self.reason = reason
        """What is missing or wrong."""
        super().__init__(f"pricing {model!r}: {reason}")


class UnknownModelError(OpenHandsMemoryError, ValueError):
    """A model named to count tokens (`--tokenizer`, `--model`) that litellm does not know: it would be counted
    with litellm's default tokenizer while reports name the model."""

    exit_code = 2

    def __init__(self, option: str, model: str, reason: str) -> None:
        self.option = option
        """The option that named it (`--tokenizer`, `--model`)."""
        self.model = model
        """The model named."""
        self.reason = reason
        """What is wrong, and the closest names."""
        super().__init__(f"{option} {model!r}: {reason}")


class OutputRefusedError(OpenHandsMemoryError):
    """A file or folder was not written, because writing it would destroy something; nothing was changed."""

    def __init__(self, path: str | PathLike[str], reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class OutputExistsError(OutputRefusedError, FileExistsError):
    """The output already exists, and replacing it was not asked for (`overwrite=True`, `--force`)."""

    def __init__(self, path: str | PathLike[str], reason: str = "already exists") -> None:
        super().__init__(path, f"{reason}; use --force to replace it")
        self.reason = reason


class OutputIsInputError(OutputRefusedError, ValueError):
    """The output is one of the command's inputs, by any path (link, relative path), or inside or around it.

    Always refused, even when overwriting was asked for: an input is never written to.
    """

    def __init__(self, path: str | PathLike[str], input_path: str | PathLike[str], relation: str = "is the input") -> None:
        self.input_path = input_path
        super().__init__(path, f"{relation} {input_path}, and an input is never written to; choose another output")
        self.reason = f"{relation} {input_path}"


class OutputNotWritableError(OutputRefusedError, PermissionError):
    """The output cannot be written: the folder it goes in (or the nearest one that exists) is not writable.

    Raised before any work is done, naming the output as the user gave it.
    """

    def __init__(self, path: str | PathLike[str], folder: str | PathLike[str], why: str = "is not writable") -> None:
        self.folder = folder
        """The folder that cannot be written (the output's own, or the nearest one that exists)."""
        super().__init__(path, f"cannot be written: {folder} {why}")


class OutputNameError(OutputRefusedError, ValueError):
    """The output's name says no layout we write (a log: `*.json`, `*.jsonl` or a folder)."""

    exit_code = 2


class LLMError(OpenHandsMemoryError):
    """A model call failed; every exception litellm raises reaches callers as one of these subclasses.

    The original exception is chained (`raise ... from exc`), so `__cause__` keeps the provider's
    details. `retryable` says whether `LLM.completion` retries this kind before giving up.
    """

    retryable: bool = False
    """Whether a later identical call may succeed (rate limits, timeouts, outages, garbage replies)."""

    def __init__(self, reason: str, *, model: str | None = None, status_code: int | None = None, attempts: int = 1) -> None:
        self.reason = reason
        self.model = model
        self.status_code = status_code
        self.attempts = attempts
        message = f"{model}: {reason}" if model else reason
        if attempts > 1:
            message = f"{message} (gave up after {attempts} attempts)"
        super().__init__(message)


class LLMRateLimitError(LLMError):
    """The provider refused the call for now: too many requests or tokens per minute (HTTP 429)."""

    retryable = True


class LLMTimeoutError(LLMError):
    """The call took longer than the configured `timeout`."""

    retryable = True


class LLMConnectionError(LLMError):
    """The provider could not be reached (DNS, refused connection, dropped stream)."""

    retryable = True


class LLMServiceUnavailableError(LLMError):
    """The provider failed on its side (HTTP 5xx, overloaded, bad gateway)."""

    retryable = True


class LLMResponseError(LLMError):
    """The model answered with nothing usable: no choices, no text and no tool call, or malformed tool-call JSON."""

    retryable = True


class LLMAuthenticationError(LLMError):
    """The API key is missing, wrong, or not allowed to use this model (HTTP 401/403).

    Never retried, and never turned into a fallback by a condenser's `on_model_error`: every later
    call would fail the same way until the key is set.
    """

    def __init__(
        self,
        reason: str,
        *,
        model: str | None = None,
        status_code: int | None = None,
        attempts: int = 1,
        variables: tuple[str, ...] = (),
    ) -> None:
        self.variables = tuple(variables)
        """The environment variables the key is read from (`OPENAI_API_KEY`, ...), when known."""
        super().__init__(reason, model=model, status_code=status_code, attempts=attempts)


class LLMUnclassifiedError(LLMError):
    """The model call failed with an exception no provider class names, kept as `__cause__`.

    A completion function or client raised something of its own: a `KeyError` on a malformed
    answer, a `RuntimeError` from a transport. Not retried (nothing says an identical call would
    fare better, and a bug would cost every retry's wait), but a condenser's `on_model_error`
    `fallback` or `skip` applies to it: it is no missing key and no rejected request.
    """


class LLMBadRequestError(LLMError):
    """The provider rejected the request itself (HTTP 4xx): unknown model, bad parameter, content policy, ..."""


class LLMContextWindowExceededError(LLMBadRequestError):
    """The prompt does not fit the model's context window: condense the history and ask again."""
