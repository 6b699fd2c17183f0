"""Small logs for the report's tests, and reading a page's embedded data back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from openhands_memory.events import dump_events
from openhands_memory.testing.sessions import SessionBuilder

HOSTILE = '</script><script>document.title="owned"</script><!-- & \u2028 \u2029 <img src=x onerror=alert(1)>'
"""Text a log may hold that would run, or break the page, if it were written into the page as markup."""


def hostile_log(path: Path, *, turns: int = 12) -> Path:
    """A session whose user, commands and outputs hold `HOSTILE`, written as JSONL to `path`."""
    session = SessionBuilder()
    session.header()
    session.user(f"Fix it {HOSTILE}")
    for number in range(turns):
        session.turn(f"echo {number} {HOSTILE}", f"output {number} {HOSTILE} " + "line\n" * 40)
    dump_events(session.events, path)
    return path


def page_data(page: str) -> dict[str, Any]:
    """The JSON a page embeds (`<script id="report-data" type="application/json">`)."""
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page, re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))


def content_text(content: Any) -> str:
    """A message's text as the page shows it: a string, or its text parts joined by newlines (other parts by type)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] if part.get("type") == "text" else f"[{part.get('type')}]" for part in content)


def recall_log(path: Path) -> Path:
    """`hostile_log`'s session and then a `search_history` call of the memory tools, answered: a recall answer."""
    from openhands_memory.events import SearchHistoryAction, SearchHistoryObservation, ToolCallMetadata, load_events

    session = SessionBuilder()
    session.events = load_events(hostile_log(path, turns=4))
    session.next_id = len(session.events)
    session._calls = 100  # the ids hostile_log's calls took
    metadata = ToolCallMetadata(
        function_name="search_history", tool_call_id="call_recall", model_response={"id": "resp_recall"}, total_calls_in_response=1
    )
    action = session.add(SearchHistoryAction(query="output 1", tool_call_metadata=metadata))
    session.add(SearchHistoryObservation(content="event 9: output 1 ...", cause=action.id, tool_call_metadata=metadata))
    session.turn("ls", "done")
    path.unlink()
    dump_events(session.events, path)
    return path
