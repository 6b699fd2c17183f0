"""From a view of the history to role messages with every tool call matched, ready for litellm.

`ConversationMemory.process_events(view, initial_user_action)` renders the events the model may see
as chat messages, the way OpenHands V0 does, so recorded logs read the same. Where we differ on
purpose:

- the system message is moved first when the view has one elsewhere (the chat APIs want it first);
- the initial user message is not put back when the view forgot it on purpose (its id is among the
  view's forgotten ids);
- `max_message_chars` cuts every observation, file reads and browser pages included, and a limit
  below 2 keeps nothing of the end (OpenHands' `text[-0:]` kept all of it);
- kinds OpenHands cannot render (a fork's `chat`, `success`, `write`) are shown by their content,
  an agent action without a tool call as the agent's words, and a user action without one as
  "User requested: ..." (OpenHands raises, asserts, or says "read file" for every kind);
- an event of a class that is no event kind nor a subclass of one (a programming error, never
  what a log holds) raises `MalformedEventError`, a `ValueError`, for actions too (OpenHands raises
  `ValueError` for such an observation and skips such an action silently);
- a finish action's text is computed without editing the event; an assistant message whose calls
  all lost their results keeps its text; the workspace-context wording of recalls is our own (the
  sections and when they appear are OpenHands').

Everything else renders as OpenHands 0.62 renders it (checked message by message on the real logs).

Two options go beyond OpenHands: `HistoryPolicy` (`history_policy`), QitOS' history policy as a
final trim of the chat (the system message and the first user message kept, tool calls never
split from their results), and `tool_result_format="inkeep_handoff"`, tool results written out as
Inkeep writes them for a handoff to another agent (`_handoff`).

Modules: `memory` (the class and the framing of system and first user message), `_render` (one
event at a time; a file edit is shown by its `str()`, OpenHands' text), `_assembly` (tool-call
matching and the final checks), `_recall` (the recall texts).
"""

from openhands_memory.conversation_memory.history_policy import (
    HISTORY_POLICY_PRESETS,
    HistoryPolicy,
    HistoryTrim,
    MessageTokenCounter,
    approximate_message_tokens,
)
from openhands_memory.conversation_memory.memory import ConversationMemory, ToolResultFormat, apply_prompt_caching

# The door: the renderer and the history policy; the rest by its module's path.
__all__ = [
    "ConversationMemory",
    "HistoryPolicy",
    "HistoryTrim",
]
