"""What the model-backed strategies (`llm`, `structured`, `llm_attention`) share.

- **The model.** A condenser built from a config calls its own `LLM`, without prompt caching (a
  condensation prompt is never sent twice, so cache writes would be paid for and never read) and
  with its usage reported as `condenser` unless the config names it.
- **Events in a prompt.** `render_event` writes an event as text (its kind, its source, the fields
  that differ from their defaults); `event_block` wraps it in `<EVENT id=N>` tags, cut to a length.
- **Bounded prompts.** `ModelCaller.ask` builds the request for an event length; when the model
  says the prompt does not fit its context window, it halves the length and asks again, a few times.
- **No model.** A condenser built with no model (`llm=None`; no `llm_config` in its config)
  condenses without one: the summarizers write the offline structured summary
  (`offline_summary`, recorded as `summarizer: "offline structured summarizer"`), `llm_attention`
  forgets like `amortized`. `ModelCaller.write_offline_summary` is the one way to write it.
- **Failures.** `ModelCaller.handle_model_error` applies the configured `OnModelError`: raise the
  error, fall back (the caller then condenses without the model: the summarizers write the offline
  structured summary), or skip (`NoCondensationAvailable`, which `RollingCondenser.condense` turns
  into the unchanged view). Fallback and skip apply to transient failures only (those `LLM` retries,
  and any failure no provider class names): a missing key or a rejected request is always raised.
- **Summarizers.** `ModelSummarizingCondenser` is `SummarizingCondenser` with all of the above: the
  prompt (instructions, the previous summary, the forgotten events, the request to cite their ids),
  the condensation, the offline summary with no model or as the fallback. `llm` and `structured` differ only in how they ask (`request_summary`).
- **Summaries that shrink the prompt.** A summary may take at most `max_summary_share` of the tokens
  of what it replaces (the forgotten events and the summary before it), or `MIN_SUMMARY_TOKENS`
  when that is more; a longer one is cut to fit, or left out when not even a cut one fits, and the
  condensation records which (`fit_summary`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_args

from openhands_memory.condenser._config_base import OnModelError
from openhands_memory.condenser._model_config import DEFAULT_MAX_SUMMARY_SHARE, ModelBackedConfig
from openhands_memory.condenser._text import NOT_PROMPT_TEXT as _NOT_PROMPT_TEXT
from openhands_memory.condenser._text import truncate
from openhands_memory.condenser._views import is_summary
from openhands_memory.condenser.base import Condensation, Condenser
from openhands_memory.condenser.forgetting import (
    ForgettingCondenser,
    ForgettingPlan,
    SummarizingCondenser,
)
from openhands_memory.condenser.offline_summary import (
    OFFLINE_SUMMARIZER_NAME,
    offline_summary,
)
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import (
    LLMContextWindowExceededError,
    LLMError,
    LLMResponseError,
    LLMUnclassifiedError,
    NoCondensationAvailable,
)
from openhands_memory.events import AgentCondensationObservation, CondensationAction, Event, Observation
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, LLMResponse
from openhands_memory.llm.metrics import LLMMetrics
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext


logger = logging.getLogger(__name__)
__all__ = [
    "CITE_EVENT_IDS",
    "DEFAULT_MAX_SUMMARY_SHARE",
    "MIN_EVENT_LENGTH",
    "MIN_SUMMARY_TOKENS",
    "SHRINK_TRIES",
    "ModelBacked",
    "ModelCaller",
    "ModelSummarizingCondenser",
    "condenser_llm",
    "event_block",
    "focus_instructions",
    "parse_json_reply",
    "render_event",
    "truncate",
]

SHRINK_TRIES = 3
"""How many times a prompt that overflows the context window is shrunk (event length halved) and sent again."""

MIN_EVENT_LENGTH = 100
"""Event texts are never cut shorter than this many characters when shrinking a prompt."""

MIN_SUMMARY_TOKENS = 128
"""A summary of up to this many tokens (about 500 characters) is never cut: below it a share of a few
small events would leave no room to say anything. So a condensation can grow the prompt by at most
this much, and only when it replaces fewer than `MIN_SUMMARY_TOKENS / max_summary_share` tokens."""

_MIN_SUMMARY_CHARS = 40
"""A summary cut shorter than this many characters says nothing: it is left out instead."""

CITE_EVENT_IDS = """\
Cite the events: each one above is tagged with its id (<EVENT id=...>). End each line of the summary \
that comes from events with their ids in parentheses, a range for a run of them, e.g. "edited src/x.py \
(events 120-131)" or "the test run failed (event 87)". Keep the ids the previous summary cites. The \
agent can reload a cited event by its id to read all of it."""
"""What every summarization prompt asks after the events (whatever the instructions): summaries that point back."""



def focus_instructions(focus: str | None) -> str:
    """What a summarization prompt says first when the condensation request carried a focus ('' without one)."""
    if not focus:
        return ""
    return (
        f"<FOCUS>\n{focus}\n</FOCUS>\n"
        "This summary was asked for with the focus above. Put what it names first in the summary, and keep every "
        "fact about it in full (paths, ids, names, numbers, commands, errors, decisions), even if you must shorten "
        "everything else."
    )


T = TypeVar("T")

def condenser_llm(config: LLMConfig) -> LLM:
    """The `LLM` a condenser built from `config` calls: prompt caching off, usage reported as `condenser`."""
    update: dict[str, Any] = {"caching_prompt": False}
    if config.usage_id == "default":
        update["usage_id"] = "condenser"
    return LLM(config.model_copy(update=update))


def _value_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if v not in (None, "", [], {})}
        if not value:
            return None
    elif isinstance(value, list | tuple) and not value:
        return None
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def render_event(event: Event) -> str:
    """An event as a condenser's prompt shows it: its kind and source, then each field that differs
    from its default (images and file snapshots left out), then an observation's content."""
    source = event.source.value if event.source is not None else "unknown"
    lines = [f"{type(event).__name__} ({event.kind}, from {source})"]
    values = event.__dict__
    defaults = event.payload_defaults
    for name in event.payload_fields:
        if name in _NOT_PROMPT_TEXT:
            continue
        value = values.get(name)
        if name in defaults and value == defaults[name]:
            continue
        text = _value_text(value)
        if text is None:
            continue
        lines.append(f"{name}:\n{text}" if "\n" in text else f"{name}: {text}")
    if isinstance(event, Observation) and event.content:
        lines.append(event.content)
    return "\n".join(lines)


def event_block(event: Event, limit: int, *, tag: str = "EVENT") -> str:
    """`<EVENT id=N>` + the event's text cut to `limit` characters + `</EVENT>` (a summary has no id)."""
    label = f"{tag} id={event.id}" if event.id is not None else tag
    return f"<{label}>\n{truncate(render_event(event), limit)}\n</{tag}>"


def parse_json_reply(text: str, *, model: str | None) -> Any:
    """The JSON value a reply's text holds (a code fence or words around it are tolerated).

    Raises:
        LLMResponseError: no JSON object or array could be read from it.
    """
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").strip()
        if stripped.lower().startswith("json"):
            stripped = stripped[4:]
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):  # (nested too deeply to read: as unreadable as bad JSON)
        pass
    for opening, closing in (("{", "}"), ("[", "]")):
        start, end = stripped.find(opening), stripped.rfind(closing)
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except (ValueError, RecursionError):
                continue
    raise LLMResponseError(f"the reply is not JSON: {text[:200]!r}", model=model)


def called_tool_arguments(response: LLMResponse, tool_name: str) -> Any:
    """The JSON arguments of the reply's call to `tool_name`, or the JSON its text holds when the
    model answered in text (a model without native tool calling).

    Raises:
        LLMResponseError: the reply calls another tool, its arguments are not JSON, or its text
            holds no JSON.
    """
    model = response.model
    call = next((c for c in response.tool_calls if c.function.name == tool_name), None)
    if call is not None:
        try:
            return json.loads(call.function.arguments)
        except ValueError as exc:
            raise LLMResponseError(f"{tool_name}: the arguments are not JSON: {exc}", model=model) from exc
    if response.tool_calls:
        names = ", ".join(sorted({c.function.name for c in response.tool_calls}))
        raise LLMResponseError(f"the reply calls {names}, not {tool_name}", model=model)
    try:
        return parse_json_reply(response.text, model=model)
    except LLMResponseError:
        raise LLMResponseError(f"the reply does not call {tool_name}: {response.text[:200]!r}", model=model) from None


def _is_transient_model_error(error: LLMError) -> bool:
    """Whether `on_model_error = "fallback"` or `"skip"` applies to `error` (see `ModelBacked.handle_model_error`)."""
    return error.retryable or isinstance(error, LLMContextWindowExceededError | LLMUnclassifiedError)


class ModelCaller(Condenser):
    """The model half of a model-backed condenser: its model, the shrink-and-retry loop, usage
    records and the failure rule, for any condenser (`ModelBacked` adds the forgetting plan).

    A strategy that is not a `ForgettingCondenser` puts it before its other base
    (`class C(ModelCaller, RollingCondenser)`), calls `init_model` and sets `max_event_length`.
    """

    llm: LLM | None
    """The model the condenser calls; None: it condenses without one (see the module docstring)."""
    on_model_error: OnModelError
    """What happens when the model fails or answers with nothing usable (see `OnModelError`)."""
    last_error: LLMError | None
    """The error of the latest condensation whose model call failed, whatever `on_model_error` made
    of it; None once a model call succeeds."""
    max_event_length: int
    """Event texts are cut to this many characters in the prompt (less after an overflow)."""

    def init_model(self, llm: LLM | LLMConfig | None, on_model_error: OnModelError) -> None:
        """Set the model (an `LLMConfig` is wrapped by `condenser_llm`; None: no model) and the failure rule.

        Raises:
            ValueError: `on_model_error` is not one of `raise`, `fallback`, `skip`.
        """
        if on_model_error not in get_args(OnModelError):
            raise ValueError(f"on_model_error must be one of {', '.join(get_args(OnModelError))}, got {on_model_error!r}")
        self.llm = condenser_llm(llm) if isinstance(llm, LLMConfig) else llm
        self.on_model_error = on_model_error
        self.last_error = None
        if self.llm is None:
            # Not an error (offline use is supported), but a forgotten llm_config should be visible.
            logger.info("%s has no model: it writes the %s", type(self).__name__, OFFLINE_SUMMARIZER_NAME)

    @staticmethod
    def model_from(config: Any, context: CondenserContext) -> LLM | None:
        """The model a config's `llm_config` names, resolved in `context` (None: it names none).

        Raises:
            CondenserConfigError: `llm_config` names an LLM config the context does not hold.
        """
        if config.llm_config is None:
            return None
        return condenser_llm(context.resolve_llm_config(config.llm_config, condenser_type=config.type))

    def ask(self, request: Callable[[int], T]) -> T:
        """`request(max_event_length)`; when the prompt overflows the model's context window, again
        with half the event length (at least `MIN_EVENT_LENGTH`), up to `SHRINK_TRIES` times.

        Raises:
            LLMError: what the last try raised.
        """
        limit = self.max_event_length
        shrinks = 0
        while True:
            try:
                result = request(limit)
            except LLMContextWindowExceededError:
                if shrinks >= SHRINK_TRIES or limit <= MIN_EVENT_LENGTH:
                    raise
                limit = max(MIN_EVENT_LENGTH, limit // 2)
                shrinks += 1
                self.add_metadata("prompt_shrinks", shrinks)
                self.add_metadata("max_event_length", limit)
                continue
            return result

    def record_usage_since(self, before: LLMMetrics) -> None:
        """Record the model usage since `before` (a `metrics.snapshot()`) for the condensation being made."""
        assert self.llm is not None, "only a condenser with a model has usage to record"
        self.record_llm_usage(self.llm.metrics.diff(before).to_dict())
        self.add_metadata("model", self.llm.config.model)

    def write_offline_summary(
        self,
        events: list[Event],
        previous: list[str],
        *,
        max_tokens: int | None,
        max_chars: int | None = None,
        focus: str | None = None,
    ) -> str:
        """The offline structured summary of `events` folded into the `previous` summaries (see
        `offline_summary`), within `max_tokens` by this condenser's token counter and within
        `max_chars` characters as far as its rounds can bring it (the caller cuts what is still
        over); recorded as `summarizer: "offline structured summarizer"`.

        What every model-backed strategy writes with no model, or as its `fallback`. `focus` (a
        condensation request's) goes first, and the lines that name it are kept in every round.
        """
        self.add_metadata("summarizer", OFFLINE_SUMMARIZER_NAME)
        if max_tokens is None and max_chars is None:
            return offline_summary(events, previous=previous, focus=focus)
        counter = self.token_counter

        def fits(text: str) -> bool:
            if max_chars is not None and len(text) > max_chars:
                return False
            return max_tokens is None or counter([AgentCondensationObservation(content=text)]) <= max_tokens

        return offline_summary(events, previous=previous, fits=fits, focus=focus)

    def handle_model_error(self, error: LLMError) -> None:
        """Apply `on_model_error` to a failed model call; returns only to fall back.

        `fallback` and `skip` are for failures a later call may not repeat: the kinds `LLM` retries
        (rate limit, timeout, connection, outage, unusable reply; `LLMError.retryable`), a failure
        no provider class names (`LLMUnclassifiedError`: a `KeyError` on a malformed answer, a
        transport's `RuntimeError`), and a prompt that still overflows the context window once
        shrunk (the fallback forgets those events anyway). Any other error would come back on every later call, and the log would fill with
        placeholders nobody asked for: a missing or refused key (`LLMAuthenticationError`), a
        request the provider rejects (`LLMBadRequestError`: unknown model, unsupported parameter,
        content policy, budget). Those are raised whatever `on_model_error` says.

        Raises:
            LLMError: `error` itself, under `raise`, or when it is not one `fallback`/`skip` apply to.
            NoCondensationAvailable: under `skip` (the view is then returned unchanged).
        """
        self.last_error = error
        if self.on_model_error == "raise" or not _is_transient_model_error(error):
            raise error
        if self.on_model_error == "skip":
            raise NoCondensationAvailable(self.name, f"the model failed, condensing skipped: {error}") from error
        self.add_metadata("outcome", "fallback")
        self.add_metadata("error", f"{type(error).__name__}: {error}")


class ModelBacked(ModelCaller, ForgettingCondenser):
    """Base for condensers that call a model: the arguments they share, the shrink-and-retry loop,
    usage records and the failure rule.

    Its constructor takes what every model-backed strategy is configured with (the fields of
    `ModelBackedConfig`), and `build` makes one from such a config; a strategy adds only its own
    arguments. Put it before the strategy's other base (`class C(ModelBacked, SummarizingCondenser)`).
    """

    default_max_event_length: ClassVar[int] = 10_000
    """`max_event_length` when none is given."""

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        max_size: int = 100,
        keep_first: int = 1,
        *,
        max_tokens: int | None = None,
        max_event_length: int | None = None,
        on_model_error: OnModelError = "raise",
        token_counter: TokenCounter | None = None,
        **options: Any,
    ) -> None:
        """Set the model and the budgets.

        Args:
            llm: the model it calls (an `LLMConfig` is wrapped by `condenser_llm`); None: no model,
                it condenses without one (see the module docstring).
            max_size: condense when the view has more events than this; keep about half.
            keep_first: the first events of the view, kept for good.
            max_tokens: condense when the view has more tokens than this; keep about half.
            max_event_length: cut each event's text to this many characters in the prompt
                (default: the strategy's `default_max_event_length`).
            on_model_error: what a failed or unusable answer leads to (see `OnModelError`).
            token_counter: counts tokens (default: `ApproximateTokenCounter`).
            options: the strategy's own arguments, for the next base's constructor.

        Raises:
            ValueError: a size rule is broken (see `ForgettingCondenser`), `max_event_length` < 1,
                or `on_model_error` is unknown.
        """
        if max_event_length is None:
            max_event_length = self.default_max_event_length
        if max_event_length < 1:
            raise ValueError(f"max_event_length ({max_event_length}) must be at least 1")
        super().__init__(max_size, keep_first, max_tokens=max_tokens, token_counter=token_counter, **options)
        self.max_event_length = max_event_length  # after the base's: `SummarizingCondenser` sets its own default
        self.init_model(llm, on_model_error)

    @classmethod
    def build(cls, config: ModelBackedConfig, context: CondenserContext) -> ModelBacked:  # type: ignore[override]
        """Build from a config: the model its `llm_config` names (resolved in `context`; none when it
        names none), every other field by name.

        Raises:
            CondenserConfigError: `llm_config` names an LLM config the context does not hold.
        """
        llm = cls.model_from(config, context)
        return cls(llm, **cls.config_arguments(config, exclude=("llm_config",)), token_counter=context.token_counter)


class ModelSummarizingCondenser(ModelBacked, SummarizingCondenser):
    """A `SummarizingCondenser` whose summary a model writes; subclasses implement `request_summary`.

    The prompt is one user message: the instructions (`summary_prompt`, or the strategy's
    `default_prompt`), the previous summary (the standing one and any summary being forgotten,
    cut to `max_event_length`), every forgotten event in `<EVENT id=N>` tags (cut to
    `max_event_length`, less after a context-window overflow), `citation` (cite the events' ids,
    so that the agent can reload what a summary line stands for), and the strategy's `closing` line.
    """

    default_prompt: ClassVar[str] = ""
    """The instructions used when no `summary_prompt` is given."""
    closing: ClassVar[str] = ""
    """The prompt's last line."""
    citation: ClassVar[str] = CITE_EVENT_IDS
    """What the prompt asks about event ids, after the events (kept with a custom `summary_prompt`: the
    ids are what lets the agent find a summarized event again)."""

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        max_size: int = 100,
        keep_first: int = 1,
        *,
        summary_prompt: str | None = None,
        max_summary_share: float = DEFAULT_MAX_SUMMARY_SHARE,
        **options: Any,
    ) -> None:
        """Set the model, the budgets and the prompt.

        Args:
            llm, max_size, keep_first: as for `ModelBacked`; the summary goes right after the kept head.
            summary_prompt: instructions that replace `default_prompt`.
            max_summary_share: the largest share of the tokens a summary replaces (the forgotten
                events and the previous summary) that it may take; a longer one is cut to fit.
            options: what every model-backed condenser takes (`max_tokens`, `max_event_length`,
                `on_model_error`, `token_counter`; see `ModelBacked`).

        Raises:
            ValueError: `max_summary_share` is not between 0 and 1 (both excluded), or see `ModelBacked`.
        """
        if not 0 < max_summary_share < 1:
            raise ValueError(f"max_summary_share ({max_summary_share}) must be between 0 and 1 (both excluded)")
        self.max_summary_share = max_summary_share
        """A summary may take at most this share of the tokens of what it replaces."""
        super().__init__(llm, max_size, keep_first, summary_prompt=summary_prompt, **options)

    @property
    def instructions(self) -> str:
        """The instructions the prompt starts with."""
        return self.summary_prompt if self.summary_prompt is not None else self.default_prompt

    def build_prompt(self, plan: ForgettingPlan, *, max_event_length: int | None = None) -> str:
        """The summarization prompt for `plan`, events cut to `max_event_length` (default: the configured one)."""
        limit = self.max_event_length if max_event_length is None else max_event_length
        previous = "\n\n".join(self.summaries_in(plan)) or "No previous summary."
        parts = [
            focus_instructions(plan.view.condensation_focus),
            self.instructions.rstrip(),
            f"<PREVIOUS SUMMARY>\n{self.truncate(previous)}\n</PREVIOUS SUMMARY>",
            "\n".join(event_block(e, limit) for e in plan.forgotten_events if not is_summary(e)),
            self.citation,
            self.closing,
        ]
        return "\n\n".join(part for part in parts if part)

    def request_summary(self, prompt: str) -> str:
        """Ask the model once and read its summary: by default, the reply's text (a strategy that
        asks for a structured answer overrides this).

        Raises:
            LLMError: the call failed; `LLMResponseError` when the answer is not a usable summary
                (here: a reply with no text).
        """
        assert self.llm is not None, "asked only when there is a model"
        response = self.llm.completion([{"role": "user", "content": prompt}], require_text=True)
        return response.text.strip()

    def summarize(self, plan: ForgettingPlan) -> str:
        """The model's summary of `plan` (shrinking the prompt if it overflows the context window);
        with no model, the offline structured summary (`offline_summary_of`).

        Raises:
            LLMError: the model failed or answered with nothing usable.
        """
        if self.llm is None:
            return self.offline_summary_of(plan)
        return self.ask(lambda limit: self.request_summary(self.build_prompt(plan, max_event_length=limit)))

    def offline_summary_of(self, plan: ForgettingPlan) -> str:
        """The offline structured summary of `plan`'s forgotten events and the summaries it replaces,
        within `summary_budget(plan)` (see `ModelCaller.write_offline_summary`)."""
        return self.write_offline_summary(
            plan.forgotten_events, self.summaries_in(plan), max_tokens=self.summary_budget(plan), focus=plan.view.condensation_focus
        )

    def fallback_summary(self, plan: ForgettingPlan, error: LLMError) -> str:
        """What is written when the model failed and `on_model_error` is `fallback`: the offline
        structured summary (the condensation records the error)."""
        return self.offline_summary_of(plan)

    def summary_budget(self, plan: ForgettingPlan) -> int:
        """The most tokens a summary for `plan` may take: `max_summary_share` of what it replaces
        (`replaced_tokens`), and never less than `MIN_SUMMARY_TOKENS`."""
        return max(MIN_SUMMARY_TOKENS, int(self.max_summary_share * self.replaced_tokens(plan)))

    def replaced_tokens(self, plan: ForgettingPlan) -> int:
        """The tokens a summary for `plan` replaces: the forgotten events, summaries included, and
        the standing summary, which it replaces too."""
        replaced = list(plan.forgotten_events)
        previous = plan.previous_summary
        if previous is not None and all(e is not previous for e in replaced):
            replaced.append(previous)
        return self.token_counter(replaced)

    def fit_summary(self, plan: ForgettingPlan, summary: str) -> str | None:
        """`summary` if it fits `summary_budget(plan)`; else cut in the middle to fit, or None when
        even a cut one would not fit (the condensation then forgets without a summary).

        A summary longer than what it replaces would make the prompt grow, and with a token budget
        the condenser would fire again at the next step; so it is cut, and the condensation records
        it (`summary_cut`: the tokens written, the budget, the tokens kept; or `summary_dropped`).
        """
        budget = self.summary_budget(plan)
        counter = self.token_counter

        def tokens(text: str) -> int:
            return counter([AgentCondensationObservation(content=text)])

        written = tokens(summary)
        if written <= budget:
            return summary
        # Aim by proportion, then tighten: the counter need not be linear in characters.
        limit = len(summary) * budget // written
        while limit >= _MIN_SUMMARY_CHARS:
            cut = truncate(summary, limit)
            kept = tokens(cut)
            if kept <= budget:
                self.add_metadata("summary_cut", {"tokens": written, "budget": budget, "kept_tokens": kept})
                return cut
            limit = min(limit * 9 // 10, limit * budget // kept)  # at least 10% less: a few rounds at most
        self.add_metadata(
            "summary_dropped",
            f"a summary of {written} tokens cannot be cut to fit {budget} tokens "
            f"({self.max_summary_share:g} of the tokens it replaces)",
        )
        return None

    def get_condensation(self, view: View) -> Condensation:
        plan = self.plan(view)
        if not plan.forgotten:
            if view.unhandled_condensation_request:
                return Condensation(plan.action())  # nothing to summarize: only mark the request handled
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        return Condensation(self.summary_action(plan))

    def summary_action(self, plan: ForgettingPlan) -> CondensationAction:
        """The condensation action for `plan` with its summary: the model's, the offline one with no
        model, or `on_model_error`'s outcome.

        Raises:
            LLMError: the model failed and `on_model_error` does not fall back.
        """
        self.last_error = None
        if self.llm is None:
            summary = self.offline_summary_of(plan)
            self.add_metadata("outcome", "offline summary")
            return plan.action(summary=self.fit_summary(plan, summary))
        before = self.llm.metrics.snapshot()
        try:
            summary = self.summarize(plan)
            self.add_metadata("outcome", "summary")
        except LLMError as error:
            self.record_usage_since(before)
            self.handle_model_error(error)  # raises unless falling back
            summary = self.fallback_summary(plan, error)
        else:
            self.record_usage_since(before)
        return plan.action(summary=self.fit_summary(plan, summary))

