"""Talking to models: chat messages and their litellm form, tool calls written as text, and the
litellm-backed `LLM` (completion with retries, usage and cost, token counting),
`LiteLLMEmbedder` for vector memory, and what a request costs with the provider's prompt cache
(`PromptPricing`, `PromptCache`).

Nothing imported here loads litellm: `LLM` imports it inside its methods, on first use.
"""

from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.embedding import EmbeddingFn, LiteLLMEmbedder
from openhands_memory.llm.llm import LLM, CompletionFn, InvalidToolCall, LLMResponse, ModelRequestsDisallowedError
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
from openhands_memory.llm.metrics import Cost, LLMMetrics, ResponseLatency, TokenUsage
from openhands_memory.llm.prompt_cache import (
    CACHE_RULES,
    CacheRules,
    PromptBlock,
    PromptCache,
    PromptPricing,
    RequestCost,
    resolve_pricing,
)
from openhands_memory.llm.text_tool_calls import TextToolCallConverter, TextToolCallReply, parse_text_tool_calls

__all__ = [
    "CACHE_RULES",
    "CacheRules",
    "PromptBlock",
    "PromptCache",
    "PromptPricing",
    "RequestCost",
    "resolve_pricing",
    "CompletionFn",
    "Content",
    "Cost",
    "EmbeddingFn",
    "ImageContent",
    "InvalidToolCall",
    "LLM",
    "LLMConfig",
    "LLMMetrics",
    "LLMResponse",
    "LiteLLMEmbedder",
    "Message",
    "ModelRequestsDisallowedError",
    "ResponseLatency",
    "Role",
    "TextContent",
    "TextToolCallConverter",
    "TextToolCallReply",
    "TokenUsage",
    "ToolCall",
    "ToolCallFunction",
    "import_litellm",
    "parse_text_tool_calls",
    "to_litellm_dicts",
]
