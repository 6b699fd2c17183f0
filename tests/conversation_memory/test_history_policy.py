"""HistoryPolicy: which messages of a chat are kept, exactly, and that a trim always leaves a valid chat."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from openhands_memory.conversation_memory import HistoryPolicy, approximate_message_tokens
from openhands_memory.llm.message import ImageContent, Message, TextContent, ToolCall, ToolCallFunction
from openhands_memory.testing.chat import assert_valid_chat


def text(role: str, words: str, **fields: object) -> Message:
    return Message(role=role, content=(TextContent(text=words),), **fields)  # type: ignore[arg-type]


def call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, function=ToolCallFunction(name="run", arguments='{"command": "ls"}'))


def result(call_id: str, words: str) -> Message:
    return text("tool", words, tool_call_id=call_id, name="run")


# system, task | step 0: a1 (c1) r1 | step 1: a2 (c2, c3) r2 r3 | step 2: more, a3 | step 3 (current): now
CHAT = [
    text("system", "sys"),
    text("user", "task"),
    text("assistant", "a1", tool_calls=(call("c1"),)),
    result("c1", "r1"),
    text("assistant", "a2", tool_calls=(call("c2"), call("c3"))),
    result("c2", "r2"),
    result("c3", "r3"),
    text("user", "more"),
    text("assistant", "a3"),
    text("user", "now"),
]


def kept(policy: HistoryPolicy, chat: list[Message] = CHAT, **options: object) -> list[str]:
    trim = policy.apply(chat, **options)  # type: ignore[arg-type]
    assert_valid_chat(trim.messages)
    return [message.text for message in trim.messages]


def test_defaults_are_qitos_24_messages_and_no_other_limit() -> None:
    policy = HistoryPolicy()
    assert (policy.roles, policy.max_messages, policy.step_window, policy.max_tokens) == (None, 24, None, None)
    trim = policy.apply(CHAT)
    assert trim.messages == CHAT and all(a is b for a, b in zip(trim.messages, CHAT))
    assert trim.dropped == 0


def test_max_messages_keeps_the_newest_whole_units_besides_system_and_task() -> None:
    assert kept(HistoryPolicy(max_messages=3)) == ["sys", "task", "more", "a3", "now"]
    # a2 and its two results are one unit of 3: with room for 4, it does not fit, and nothing older is taken.
    trim = HistoryPolicy(max_messages=4).apply(CHAT)
    assert [m.text for m in trim.messages] == ["sys", "task", "more", "a3", "now"]
    assert trim.dropped_by_max_messages == 5 and trim.dropped == 5
    assert kept(HistoryPolicy(max_messages=6)) == ["sys", "task", "a2", "r2", "r3", "more", "a3", "now"]


def test_step_window_counts_the_current_step_and_the_responses_before_it() -> None:
    assert kept(HistoryPolicy(step_window=1)) == ["sys", "task", "now"]
    assert kept(HistoryPolicy(step_window=2)) == ["sys", "task", "more", "a3", "now"]
    assert kept(HistoryPolicy(step_window=3)) == ["sys", "task", "a2", "r2", "r3", "more", "a3", "now"]
    trim = HistoryPolicy(step_window=2).apply(CHAT)
    assert trim.dropped_by_step_window == 5


def test_step_window_one_keeps_the_last_response_with_its_results_when_it_is_what_the_model_answers() -> None:
    chat = CHAT[:7]  # ends with r2, r3: the model answers its own last results
    assert kept(HistoryPolicy(step_window=1), chat) == ["sys", "task", "a2", "r2", "r3"]


def test_roles_user_and_assistant_keep_the_words_and_no_tool_exchange() -> None:
    trim = HistoryPolicy(roles=("user", "assistant")).apply(CHAT)
    assert [m.text for m in trim.messages] == ["sys", "task", "more", "a3", "now"]
    assert trim.dropped_by_roles == 5
    # Without "tool", a tool exchange cannot be kept; without "user", only the pinned task is.
    assert kept(HistoryPolicy(roles=("assistant",))) == ["sys", "task", "a3"]
    assert kept(HistoryPolicy(roles=("user",))) == ["sys", "task", "more", "now"]
    assert kept(HistoryPolicy(roles=())) == ["sys", "task"]


def test_max_tokens_counts_each_message_with_the_counter_given() -> None:
    counted: list[str] = []

    def ten_each(message: Message) -> int:
        counted.append(message.text)
        return 10

    trim = HistoryPolicy(max_messages=None, max_tokens=35).apply(CHAT, count_tokens=ten_each)
    assert [m.text for m in trim.messages] == ["sys", "task", "more", "a3", "now"]
    assert (trim.tokens, trim.dropped_by_max_tokens, trim.kept_over_limit) == (30, 5, False)
    assert "sys" not in counted and "task" not in counted  # the pinned head is not counted


def test_the_newest_unit_is_kept_over_a_limit_and_says_so() -> None:
    chat = CHAT[:7]
    trim = HistoryPolicy(max_messages=2).apply(chat)
    assert [m.text for m in trim.messages] == ["sys", "task", "a2", "r2", "r3"]
    assert trim.kept_over_limit and trim.dropped_by_max_messages == 2
    huge = HistoryPolicy(max_messages=None, max_tokens=1).apply(chat)
    assert [m.text for m in huge.messages] == ["sys", "task", "a2", "r2", "r3"] and huge.kept_over_limit


def test_a_late_first_user_message_is_pinned_where_it_is() -> None:
    chat = [text("system", "sys"), text("assistant", "hello"), text("user", "task"), text("assistant", "a"), text("user", "b")]
    assert kept(HistoryPolicy(max_messages=1), chat) == ["sys", "task", "b"]


def test_fixed_limit_is_inkeeps_50_messages_and_8000_tokens() -> None:
    policy = HistoryPolicy.fixed_limit()
    assert (policy.preset, policy.max_messages, policy.max_tokens, policy.step_window, policy.roles, policy.pin_first_user) == (
        "inkeep_fixed_limit", 50, 8000, None, None, False,
    )  # fmt: skip
    assert policy.describe() == "max_messages=50, max_tokens=8000, pin_first_user=False (inkeep_fixed_limit)"
    # A field given beside the preset wins over it.
    assert HistoryPolicy.model_validate({"preset": "inkeep_fixed_limit", "max_tokens": 4000}).max_tokens == 4000


def test_fixed_limit_sends_at_most_50_conversation_messages_the_task_among_them() -> None:
    chat = [text("system", "s"), text("user", "task")] + [text("user" if i % 2 else "assistant", f"m{i}") for i in range(60)]
    trim = HistoryPolicy.fixed_limit().apply(chat)
    # "Up to the 50 most recent messages": the system prompt and 50 of the conversation, the task not on top.
    assert len(trim.messages) == 51 and [m.text for m in trim.messages[:2]] == ["s", "m10"]
    assert trim.dropped_by_max_messages == 11
    # Pinned, as our own default keeps it, the task would be a 51st.
    pinned = HistoryPolicy.fixed_limit().model_copy(update={"pin_first_user": True}).apply(chat)
    assert len(pinned.messages) == 52 and pinned.messages[1].text == "task"


def test_fixed_limit_counts_8000_tokens_of_the_conversation() -> None:
    chat = [text("system", "s" * 4000), text("user", "t" * 4000)] + [text("assistant", "x" * 3984) for _ in range(10)]
    trim = HistoryPolicy.fixed_limit().apply(chat)  # 1,000 tokens each (3,984 characters and 4 of framing)
    assert [len(m.text) for m in trim.messages] == [4000] + [3984] * 8
    assert trim.tokens == 8000 and trim.dropped_by_max_tokens == 3


def test_inkeep_compression_retrieves_up_to_10000_messages_and_no_token_limit() -> None:
    policy = HistoryPolicy(preset="inkeep_compression")
    assert (policy.max_messages, policy.max_tokens, policy.pin_first_user) == (10_000, None, False)
    chat = [text("system", "s")] + [text("user" if i % 2 else "assistant", "m" * 2000) for i in range(10_005)]
    trim = policy.apply(chat)
    assert len(trim.messages) == 10_001 and trim.messages[1] is chat[6] and trim.dropped_by_max_messages == 5


def test_qitos_default_is_a_24_message_window() -> None:
    policy = HistoryPolicy(preset="qitos_default")
    assert (policy.max_messages, policy.roles, policy.step_window, policy.max_tokens, policy.pin_first_user) == (
        24, None, None, None, False,
    )  # fmt: skip
    chat = [text("system", "s"), text("user", "task")] + [text("user" if i % 2 else "assistant", f"m{i}") for i in range(30)]
    trim = policy.apply(chat)
    assert [m.text for m in trim.messages] == ["s"] + [f"m{i}" for i in range(6, 30)]


def test_build_query_is_qitos_query() -> None:
    # QitOS' HistoryPolicy(): {"roles": ["user", "assistant"], "max_items": 24}; step_min = step - window + 1.
    assert HistoryPolicy(preset="qitos_default").build_query(step_id=7) == {"roles": ["user", "assistant"], "max_items": 24}
    policy = HistoryPolicy(roles=("user", "tool"), max_messages=10, step_window=3, max_tokens=900)
    assert policy.build_query(step_id=7, phase="decide") == {
        "roles": ["user", "tool"], "max_items": 10, "step_min": 5, "max_tokens": 900, "phase": "decide",
    }  # fmt: skip
    assert HistoryPolicy(step_window=10, max_messages=None).build_query(step_id=2) == {"roles": ["user", "assistant"], "step_min": 0}


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValidationError):
        HistoryPolicy(max_messages=0)
    with pytest.raises(ValidationError):
        HistoryPolicy(roles=("robot",))  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        HistoryPolicy(max_mesages=3)  # type: ignore[call-arg]


def test_approximate_tokens_count_text_calls_and_images() -> None:
    assert approximate_message_tokens(text("user", "x" * 8)) == 2 + 4
    assistant = text("assistant", "", tool_calls=(call("c1"),))
    assert approximate_message_tokens(assistant) == -(-(3 + len('{"command": "ls"}')) // 4) + 4
    image = Message(role="user", content=(ImageContent(image_urls=("data:a", "data:b")),))
    assert approximate_message_tokens(image) == 2 * 85 + 4


# -- properties -----------------------------------------------------------------------------------


@st.composite
def chats(draw: st.DrawFn) -> list[Message]:
    """A valid chat: system, task, then user messages, plain replies and tool exchanges of 1-3 calls."""
    chat = [text("system", "sys"), text("user", "task")]
    next_id = 0
    for kind in draw(st.lists(st.sampled_from(["user", "reply", "tools"]), max_size=25)):
        if kind == "user":
            chat.append(text("user", "u" * draw(st.integers(1, 40))))
        elif kind == "reply":
            chat.append(text("assistant", "a" * draw(st.integers(0, 40))))
        else:
            ids = [f"c{next_id + i}" for i in range(draw(st.integers(1, 3)))]
            next_id += len(ids)
            chat.append(text("assistant", "", tool_calls=tuple(call(i) for i in ids)))
            chat.extend(result(i, "r" * draw(st.integers(1, 80))) for i in ids)
    return chat


policies = st.builds(
    HistoryPolicy,
    roles=st.none() | st.lists(st.sampled_from(["system", "user", "assistant", "tool"]), unique=True).map(tuple),
    max_messages=st.none() | st.integers(1, 12),
    step_window=st.none() | st.integers(1, 6),
    max_tokens=st.none() | st.integers(1, 200),
    pin_first_user=st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(chats(), policies)
def test_a_trim_is_a_valid_chat_of_the_same_messages_that_keeps_the_head(chat: list[Message], policy: HistoryPolicy) -> None:
    trim = policy.apply(chat)
    assert_valid_chat(trim.messages)
    head = 2 if policy.pin_first_user else 1
    assert trim.messages[:head] == chat[:head] and all(a is b for a, b in zip(trim.messages[:head], chat))
    positions = [next(i for i, m in enumerate(chat) if m is k) for k in trim.messages]
    assert positions == sorted(set(positions))  # the same objects, in order
    assert len(chat) - len(trim.messages) == trim.dropped
    rest = trim.messages[head:]
    if not trim.kept_over_limit:
        assert policy.max_messages is None or len(rest) <= policy.max_messages
        assert policy.max_tokens is None or sum(map(approximate_message_tokens, rest)) <= policy.max_tokens
    if policy.roles is None and policy.step_window is None and rest:
        assert positions[head:] == list(range(positions[head], len(chat)))  # a suffix: only the oldest go
