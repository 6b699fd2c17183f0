"""openhands-memory's strategies as OpenHands SDK condensers (the `[sdk]` extra: `openhands-sdk>=1.58`, Python 3.12+).

    import openhands_memory.integrations.openhands_sdk  # before an Agent is loaded from JSON
    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser

    agent = Agent(llm=llm, tools=tools, condenser=OpenHandsMemoryCondenser.from_file("pipeline.toml"))

The SDK resolves a condenser's `kind` among the subclasses loaded so far, so this package must be
imported before `Agent.model_validate(...)` reads a condenser of ours. See `docs/openhands_sdk.md`.
"""

from openhands_memory.integrations.openhands_sdk.condenser import CondensationRecord, OpenHandsMemoryCondenser
from openhands_memory.integrations.openhands_sdk.observation import MemoryViewObservation

__all__ = ["CondensationRecord", "MemoryViewObservation", "OpenHandsMemoryCondenser"]
