"""The event stream: ids, subscribers and reads over one `EventStore` (JSONL file, memory, or PostgreSQL)."""

from openhands_memory.stream.file_store import JsonlEventStore, RecoveryReport, RecoveryWarning
from openhands_memory.stream.filter import EventFilter, EventPredicate
from openhands_memory.stream.memory_store import InMemoryEventStore
from openhands_memory.stream.postgres_store import PostgresEventStore
from openhands_memory.stream.repair import RepairReport, UnreadableLine, repair_log
from openhands_memory.stream.session_folder import export_session_folder, import_session_folder
from openhands_memory.stream.store import EventStore
from openhands_memory.stream._redact import SECRET_PLACEHOLDER, Redactor
from openhands_memory.stream.stream import EventStream, Subscriber

# The door: the stream and its stores. Filters, redaction, recovery and session-folder helpers are
# imported by their modules' paths (`stream.filters`, `stream.redaction`, ...).
__all__ = [
    "EventStream",
    "EventStore",
    "InMemoryEventStore",
    "JsonlEventStore",
    "PostgresEventStore",
    "repair_log",
]
