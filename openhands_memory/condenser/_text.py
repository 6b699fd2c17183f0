"""The text of events in a prompt, shared by token counting (`tokens`) and condensers' own prompts (`_model_backed`).

- `NOT_PROMPT_TEXT`: the payload fields that put no text in a prompt.
- `truncate`: text cut in the middle to a length, a marker saying where.
"""

from __future__ import annotations

__all__ = ["NOT_PROMPT_TEXT", "truncate"]

NOT_PROMPT_TEXT = frozenset(
    {
        # images: sent as image parts (or not at all), never as text
        "screenshot",
        "set_of_marks",
        "image_urls",
        # the file before and after an edit: OpenHands shows the editor's report or a diff instead
        "old_content",
        "new_content",
        # flags and bookkeeping the model is never shown
        "confirmation_state",
        "impl_source",
        "security_risk",
        "trigger_by_action",
        "openhands_version",
        "agent_class",
        # the system message's tool definitions: sent as the request's `tools`, counted there
        "tools",
    }
)
"""Payload fields that hold no prompt text: a token estimate skips them, a condenser's prompt leaves them out."""


def truncate(text: str, limit: int) -> str:
    """`text` cut in the middle to about `limit` characters (a marker says where)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n... [truncated] ...\n" + text[len(text) - (limit - half) :]
