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

# The door: the model and its messages. Prices and the prompt cache (`llm.prompt_cache`), metrics
# (`llm.metrics`), embedders and text tool calls are imported by their modules' paths.
__all__ = [
    "LLM",
    "LLMConfig",
    "LLMResponse",
    "Message",
    "TextContent",
    "ImageContent",
    "ToolCall",
    "to_litellm_dicts",
    "parse_text_tool_calls",
]
