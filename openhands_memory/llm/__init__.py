"""Talking to models: chat messages and their litellm form, tool calls written as text, and the
litellm-backed `LLM` (completion with retries, usage and cost, token counting).

Nothing imported here loads litellm: `LLM` imports it inside its methods, on first use.
"""

from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import (
    DEFAULT_CONTEXT_WINDOW,
    LLM,
    CompletionFn,
    LLMResponse,
    ModelRequestsDisallowedError,
    TokenCount,
)
from openhands_memory.llm.metrics import Cost, LLMMetrics, ResponseLatency, TokenUsage

from openhands_memory.llm.message import (
    Content,
    ImageContent,
    Message,
    Role,
    TextContent,
    ToolCall,
    ToolCallFunction,
    to_litellm_dicts,
)
from openhands_memory.llm.text_tool_calls import (
    TEXT_TOOL_CALL_STOP_WORDS,
    TextToolCallConverter,
    TextToolCallReply,
    describe_tools,
    parse_text_tool_calls,
    text_tool_calls_system_suffix,
    to_text_tool_calls,
    tool_call_to_text,
)

__all__ = [
    # the model
    "CompletionFn",
    "Cost",
    "DEFAULT_CONTEXT_WINDOW",
    "LLM",
    "LLMConfig",
    "LLMMetrics",
    "LLMResponse",
    "ModelRequestsDisallowedError",
    "ResponseLatency",
    "TokenCount",
    "TokenUsage",
    "import_litellm",
    # messages
    "Content",
    "ImageContent",
    "Message",
    "Role",
    "TextContent",
    "ToolCall",
    "ToolCallFunction",
    "to_litellm_dicts",
    # tool calls as text
    "TEXT_TOOL_CALL_STOP_WORDS",
    "TextToolCallConverter",
    "TextToolCallReply",
    "describe_tools",
    "parse_text_tool_calls",
    "text_tool_calls_system_suffix",
    "to_text_tool_calls",
    "tool_call_to_text",
]
