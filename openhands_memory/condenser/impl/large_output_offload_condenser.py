"""`large_output_offload`: large tool outputs are shown as a preview and a handle the agent can reload.

AgentScope's AutoContextMemory offloads large messages to a preview plus a handle; here the
original stays in the log, so the handle is the event id and `context_reload` reads it back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, model_validator

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, PrefixMapper, masked_fields, replace_at, sized
from openhands_memory.condenser.base import Condenser
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import (
    Action,
    AgentCondensationObservation,
    AgentDelegateObservation,
    AgentStateChangedObservation,
    Event,
    EventSource,
    FileEditObservation,
    LoopDetectionObservation,
    NullObservation,
    Observation,
    RecallObservation,
)
from openhands_memory.view import View

__all__ = ["LargeOutputOffloadCondenser", "LargeOutputOffloadCondenserConfig", "offload_notice"]

_TYPE = "large_output_offload"

# Observations whose content is not what the model reads: summaries and recalls are what the agent
# knows of forgotten history and its workspace, the others are never shown at all.
_NEVER_OFFLOADED: tuple[type[Observation], ...] = (
    AgentCondensationObservation,
    RecallObservation,
    NullObservation,
    AgentStateChangedObservation,
    LoopDetectionObservation,
)


def offload_notice(size: int, event_id: int) -> str:
    """The line that follows an offloaded observation's preview: its size and how to reload it."""
    return f"[... {size} characters offloaded; call context_reload with event_id={event_id} to see all of it]"


class LargeOutputOffloadCondenserConfig(BaseModel):
    """`large_output_offload`: show large tool outputs as a preview and a handle to reload them."""

    model_config = CONFIG
    type: Literal["large_output_offload"] = "large_output_offload"
    """The condenser type."""
    large_payload_threshold: int = sized("chars", default=5120, ge=1)
    """An observation whose shown text has more characters than this is offloaded."""
    preview_chars: int = sized("chars", default=200, ge=0)
    """The characters of an offloaded observation still shown (its beginning); less than the threshold."""
    protect_last_keep: bool = True
    """True: the newest `last_keep` events are never offloaded (AgentScope's strategy 2); false:
    only the latest model response and the observations answering it are (strategy 3)."""
    last_keep: int = sized("newest", default=50, ge=0)
    """The number of newest events left untouched when `protect_last_keep` is true."""

    @model_validator(mode="after")
    def _check_preview(self) -> Any:
        _check_preview(self.preview_chars, self.large_payload_threshold)
        return self


def _check_preview(preview_chars: int, threshold: int) -> None:
    if preview_chars >= threshold:
        # A preview as long as the threshold would show an offloaded output longer than before.
        raise ValueError(f"preview_chars ({preview_chars}) must be less than large_payload_threshold ({threshold})")


class LargeOutputOffloadCondenser(Condenser):
    """Shows each large observation outside the protected tail as its first characters and a handle.

    An observation whose shown text (its `content`; a delegate's `outputs["content"]`) has more
    than `large_payload_threshold` characters is replaced in the view by a copy whose content is
    its first `preview_chars` characters, then a line with its size and its event id telling the
    model to call `context_reload` (`offload_notice`). The copy keeps its type, id, `cause` and
    `tool_call_metadata`, so it still answers its tool call; bulky payloads (screenshots, images)
    are emptied as masking does. The log is never changed: this only transforms the view.

    What stays whole: with `protect_last_keep`, the newest `last_keep` events of the view; without
    it, only the latest model response (the newest agent actions sharing its response id) and the
    observations answering it. Summaries, recall observations, observations without an id (no
    handle to reload them by) and LLM-based file edits (shown as a diff of the file contents, not
    by their content) are never offloaded.

    Deterministic: the offloaded copy depends on the event alone and is made once, so step after
    step the earlier messages are identical and the prompt prefix stays cacheable.
    """

    config_cls = LargeOutputOffloadCondenserConfig

    def __init__(
        self,
        large_payload_threshold: int = FROM_CONFIG,
        preview_chars: int = FROM_CONFIG,
        protect_last_keep: bool = FROM_CONFIG,
        last_keep: int = FROM_CONFIG,
        *,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Offload observations over `large_payload_threshold` characters to `preview_chars` of them.

        Raises:
            CondenserConfigError: a threshold below 1, a negative `preview_chars` or `last_keep`,
                or `preview_chars` not less than the threshold (the message names the field).
        """
        super().__init__(token_counter=token_counter)
        for field, value, least in (
            ("large_payload_threshold", large_payload_threshold, 1),
            ("preview_chars", preview_chars, 0),
            ("last_keep", last_keep, 0),
        ):
            if value < least:
                raise CondenserConfigError(f"must be at least {least}, got {value}", condenser_type=_TYPE, field=field)
        try:
            _check_preview(preview_chars, large_payload_threshold)
        except ValueError as exc:
            raise CondenserConfigError(str(exc), condenser_type=_TYPE) from None
        self.large_payload_threshold = large_payload_threshold
        self.preview_chars = preview_chars
        self.protect_last_keep = protect_last_keep
        self.last_keep = last_keep
        self._offloaded: dict[int, tuple[Event, Event]] = {}
        self._kinds: dict[type, bool] = {}
        self._prefix = PrefixMapper()

    def condense(self, view: View) -> View:
        if self.protect_last_keep:
            end, tail = len(view) - self.last_keep, ()
        else:
            end, tail = self._outside_latest_response(view)
        if end <= 0 and not tail:
            return view
        if len(self._offloaded) > 2 * len(view) + 1024:
            # The memo holds the originals alive; forget it (and the prefix built from it) now and then.
            self._offloaded = {}
            self._prefix = PrefixMapper()
        shown = self._prefix.map_before(view, end, self.offload_if_large) if end > 0 else view
        tail = [index for index in tail if self.offload_if_large(view[index]) is not view[index]]
        if tail:
            shown = replace_at(shown, tail, self.offload_if_large)
        return shown

    def is_large(self, event: Event) -> bool:
        """Whether `event` is an observation shown over the threshold (`offload_if_large` would offload it)."""
        text = self._shown_text(event)
        return text is not None and len(text) > self.large_payload_threshold

    def offload_if_large(self, event: Event) -> Event:
        """The offloaded copy of `event` when it is an observation shown over the threshold, else the event itself."""
        text = self._shown_text(event)
        if text is None or len(text) <= self.large_payload_threshold:
            return event
        entry = self._offloaded.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        assert event.id is not None  # _shown_text gives None for an event without id
        preview = text[: self.preview_chars]
        notice = offload_notice(len(text), event.id)
        update = masked_fields(event, f"{preview}\n{notice}" if preview else notice)  # type: ignore[arg-type]
        if isinstance(event, AgentDelegateObservation):
            update["outputs"] = {key: value for key, value in event.outputs.items() if key != "content"}
        offloaded = event.model_copy(update=update)
        self._offloaded[id(event)] = (event, offloaded)
        return offloaded

    def _shown_text(self, event: Event) -> str | None:
        """The text the model reads of an offloadable observation (None: never offloaded)."""
        offloadable = self._kinds.get(type(event))
        if offloadable is None:
            offloadable = self._kinds[type(event)] = isinstance(event, Observation) and not isinstance(
                event, _NEVER_OFFLOADED
            )
        if not offloadable or event.id is None or event.hidden:
            return None
        if isinstance(event, FileEditObservation) and event.impl_source != "oh_aci":
            return None
        if isinstance(event, AgentDelegateObservation) and isinstance(event.outputs, dict):
            text = event.outputs.get("content", event.content)
            return text if isinstance(text, str) else str(text)
        return event.content  # type: ignore[attr-defined, no-any-return]

    @staticmethod
    def _outside_latest_response(view: View) -> tuple[int, list[int]]:
        """Where the latest model response starts, and the view indexes after it that do not answer it.

        The latest model response is the newest agent action and the agent actions before it that
        share its response id (parallel tool calls); its results are the observations after its
        first action that answer one of its calls (by tool call id or `cause`). With no agent
        action in view, nothing is protected.
        """
        index = len(view) - 1
        while index >= 0 and not (isinstance(view[index], Action) and view[index].source == EventSource.AGENT):
            index -= 1
        if index < 0:
            return len(view), []
        newest = view[index]
        response = newest.response_id
        call_ids: set[str] = set()
        action_ids: set[int] = set()
        start = index
        while index >= 0:
            event = view[index]
            if isinstance(event, Action):
                if event is not newest and (response is None or event.response_id != response):
                    break
                start = index
                if event.tool_call_metadata is not None:
                    call_ids.add(event.tool_call_metadata.tool_call_id)
                if event.id is not None:
                    action_ids.add(event.id)
            index -= 1
        tail = []
        for index in range(start, len(view)):
            event = view[index]
            if not isinstance(event, Observation):
                continue
            metadata = event.tool_call_metadata
            if (metadata is not None and metadata.tool_call_id in call_ids) or (
                event.cause is not None and event.cause in action_ids
            ):
                continue
            tail.append(index)
        return start, tail
