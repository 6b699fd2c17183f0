"""Worker processes for `test_postgres_concurrency.py`: run as `python _postgres_workers.py ROLE URL ...`.

Each prints one line per step it finished (flushed), so the test can follow it, and waits for a
line on stdin where the test must act in between.
"""

from __future__ import annotations

import sys

from openhands_memory import EventStream, MessageAction
from openhands_memory.errors import ConcurrentAppendError


def say(*words: object) -> None:
    print(*words, flush=True)


def writer(url: str, name: str, count: int) -> None:
    """Append `count` messages `name:i`, taking the next free id after every lost race; report acks and conflicts."""
    conflicts = 0
    with EventStream.open(url) as stream:
        say("ready")
        sys.stdin.readline()  # every writer starts at once
        for number in range(count):
            event = MessageAction(content=f"{name}:{number}")
            while True:
                try:
                    event_id = stream.add_event(event, "agent")
                    break
                except ConcurrentAppendError:
                    conflicts += 1
                    stream.catch_up()
            say("ack", event_id)
    say("conflicts", conflicts)


def stepper(url: str) -> None:
    """Append one message per line read from stdin, saying `appending` before and `ack ID` after each."""
    with EventStream.open(url) as stream:
        say("ready")
        while line := sys.stdin.readline().strip():
            say("appending")
            say("ack", stream.add_event(MessageAction(content=line), "agent"))


def reader(url: str, count: int) -> None:
    """Follow the conversation live: wait (LISTEN, no timeout) and catch up until `count` events arrived."""
    with EventStream.open(url) as stream:
        stream.subscribe(lambda event: say("got", event.id, event.content), "dashboard")
        store = stream.store
        store.wait_for_events(timeout=0)  # starts listening; nothing is there yet
        say("ready")
        while len(stream) < count:
            if store.wait_for_events(timeout=None):
                stream.catch_up()
        say("notifications", store.notifications)


if __name__ == "__main__":
    role, url, *rest = sys.argv[1:]
    if role == "writer":
        writer(url, rest[0], int(rest[1]))
    elif role == "stepper":
        stepper(url)
    elif role == "reader":
        reader(url, int(rest[0]))
    else:
        raise SystemExit(f"unknown role {role!r}")
