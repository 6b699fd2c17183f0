"""`MemoryViewObservation`: what a tool returned, as one of our view transforms shows it to an SDK agent.

A view transform (observation masking, browser output masking, large output previews,
`auto_context` and `compact_history` edits) changes the text of a tool result without condensing
the log. The SDK's own observation classes compute their text from their fields, so the changed
text rides in an observation of ours, in a copy of the SDK's `ObservationEvent` (same event id,
`tool_call_id` and `action_id`): the view given to the agent pairs every call with its result as
before, and the stored event is never touched.
"""

from __future__ import annotations

from pydantic import Field
from openhands.sdk.tool import Observation

__all__ = ["MemoryViewObservation"]


class MemoryViewObservation(Observation):
    """A tool result as a view transform of openhands-memory shows it: its text replaced (masked, a preview).

    It lives only in the views a condenser hands back: the conversation's events keep the original.
    """

    original_kind: str = Field(default="", description="The `kind` of the observation it stands for.")
    transformed_by: str = Field(default="", description="The openhands-memory strategy that changed the text.")
