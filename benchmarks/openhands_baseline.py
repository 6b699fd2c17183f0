"""Baseline timings for OpenHands V0 event handling (openhands-ai 0.62.0).

Run it with the interpreter of the separate OpenHands venv, for example

    /work/ohenv/bin/python benchmarks/openhands_baseline.py --events LOG.json --repeat 7

LOG.json is a JSON list of V0 event dicts (what OpenHands writes to its event
store). One JSON object is printed to stdout. The top-level keys ``load``,
``dump``, ``view``, ``step``, ``filter`` and ``messages`` hold the median
wall-clock seconds of one run of that measure (``null`` if it could not be
run; ``reasons`` then says why). ``per_event_us`` divides each median by the
number of events the measure processed. ``details`` has the min/max and the
raw samples.

Measures:
  load      event_from_dict over every dict (a fresh copy of the dicts each run,
            because OpenHands pops/rewrites keys of an action's ``args`` in place)
  dump      event_to_dict over every loaded event
  view      View.from_events(all loaded events)
  step      append one new event to the list, then View.from_events(whole list):
            the per-step view rebuild of a V0 agent
  filter    the controller's agent-history filter over every loaded event
            (excludes NullAction/NullObservation, ChangeAgentStateAction,
            AgentStateChangedObservation and hidden events)
  messages  ConversationMemory.process_events over the events of the view that
            a V0 agent sees (View.from_events of the filtered history), with a
            default AgentConfig and the CodeAct prompt templates; also without the
            collection before each run (``messages_warm``)

Every timed run uses time.perf_counter with the garbage collector disabled;
the result is the median of --repeat runs, after --warmup untimed runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import statistics
import sys
import time
import traceback
from typing import Any, Callable

# Must be set before litellm is imported (it is pulled in by openhands).
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

MEASURES = ('load', 'dump', 'view', 'step', 'filter', 'messages')


def _reason(exc: BaseException) -> str:
    return f'{type(exc).__name__}: {exc}'


def _time_runs(
    run: Callable[[Any], Any],
    prepare: Callable[[], Any] | None,
    repeat: int,
    warmup: int,
    cold: bool = True,
) -> list[float]:
    """Time ``run(prepare())`` ``repeat`` times; prepare() is not timed.

    ``cold``: a full collection before each run (which also leaves the CPU caches cold).
    """
    samples: list[float] = []
    for i in range(warmup + repeat):
        arg = prepare() if prepare is not None else None
        if cold:
            gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            run(arg)
            elapsed = time.perf_counter() - t0
        finally:
            gc.enable()
        if i >= warmup:
            samples.append(elapsed)
    return samples


class Baseline:
    def __init__(self, raw_events: list[dict], repeat: int, warmup: int, strict: bool):
        self.raw_text = json.dumps(raw_events)
        self.n_raw = len(raw_events)
        self.repeat = repeat
        self.warmup = warmup
        self.strict = strict
        self.result: dict[str, Any] = {m: None for m in MEASURES}
        self.per_event_us: dict[str, float | None] = {m: None for m in MEASURES}
        self.reasons: dict[str, str] = {}
        self.details: dict[str, Any] = {}
        self.counts: dict[str, int] = {'input_dicts': self.n_raw}
        self.oh: dict[str, Any] = {}
        self.events: list[Any] | None = None
        self.load_failures: list[dict[str, Any]] = []

    # -- helpers ---------------------------------------------------------
    def _record(self, name: str, samples: list[float], n_items: int, **extra: Any) -> None:
        med = statistics.median(samples)
        self.result[name] = med
        self.per_event_us[name] = (med / n_items * 1e6) if n_items else None
        self.details[name] = {
            'median_s': med,
            'min_s': min(samples),
            'max_s': max(samples),
            'n_items': n_items,
            'samples_s': samples,
            **extra,
        }

    def _fail(self, name: str, why: str, tb: str | None = None) -> None:
        self.result[name] = None
        self.per_event_us[name] = None
        self.reasons[name] = why
        if tb:
            self.details.setdefault(name, {})['traceback'] = tb

    def _guard(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - we report every failure
            self._fail(name, _reason(exc), traceback.format_exc(limit=6))

    def _need_events(self) -> list[Any]:
        if self.events is None:
            raise RuntimeError('no events were loaded (load failed)')
        if not self.events:
            raise RuntimeError('the event list is empty')
        return self.events

    # -- imports ---------------------------------------------------------
    def import_openhands(self) -> None:
        from openhands.events.serialization.event import event_from_dict, event_to_dict

        self.oh['event_from_dict'] = event_from_dict
        self.oh['event_to_dict'] = event_to_dict
        try:
            from importlib.metadata import version

            self.oh['version'] = version('openhands-ai')
        except Exception:  # noqa: BLE001
            self.oh['version'] = None
        try:
            from openhands.memory.view import View

            self.oh['View'] = View
        except Exception as exc:  # noqa: BLE001
            self.oh['View_error'] = _reason(exc)

    # -- measures --------------------------------------------------------
    def measure_load(self) -> None:
        event_from_dict = self.oh['event_from_dict']
        raw_text = self.raw_text

        def prepare() -> list[dict]:
            return json.loads(raw_text)

        def run(dicts: list[dict]) -> None:
            for d in dicts:
                try:
                    event_from_dict(d)
                except Exception:  # noqa: BLE001 - counted below, untimed
                    pass

        # One untimed pass to keep the events and to learn which dicts fail.
        events = []
        failures = []
        for i, d in enumerate(json.loads(raw_text)):
            try:
                events.append(event_from_dict(d))
            except Exception as exc:  # noqa: BLE001
                failures.append(
                    {
                        'index': i,
                        'id': d.get('id') if isinstance(d, dict) else None,
                        'type': (d.get('action') or d.get('observation'))
                        if isinstance(d, dict)
                        else None,
                        'error': _reason(exc)[:200],
                    }
                )
        self.load_failures = failures
        self.counts['loaded_events'] = len(events)
        self.counts['load_failures'] = len(failures)
        if failures and self.strict:
            raise RuntimeError(
                f'{len(failures)} of {self.n_raw} dicts failed event_from_dict '
                f'(first: {failures[0]["error"]}); --strict is set'
            )
        self.events = events
        samples = _time_runs(run, prepare, self.repeat, self.warmup)
        self._record(
            'load',
            samples,
            self.n_raw,
            note='failed dicts are attempted and included in the timing'
            if failures
            else None,
        )

    def measure_dump(self) -> None:
        events = self._need_events()
        event_to_dict = self.oh['event_to_dict']

        def run(_: Any) -> None:
            for e in events:
                event_to_dict(e)

        self._record('dump', _time_runs(run, None, self.repeat, self.warmup), len(events))

    def _view_cls(self):
        View = self.oh.get('View')
        if View is None:
            raise ImportError(self.oh.get('View_error', 'openhands.memory.view.View missing'))
        return View

    def measure_view(self) -> None:
        events = self._need_events()
        View = self._view_cls()
        view = View.from_events(events)
        self.counts['view_events'] = len(view.events)

        def run(_: Any) -> None:
            View.from_events(events)

        self._record(
            'view',
            _time_runs(run, None, self.repeat, self.warmup),
            len(events),
            view_len=len(view.events),
            unhandled_condensation_request=view.unhandled_condensation_request,
        )

    def _next_event(self) -> Any:
        """A new agent MessageAction with the next id (built untimed)."""
        from openhands.events.action import MessageAction
        from openhands.events.event import EventSource

        events = self._need_events()
        next_id = max((e.id for e in events), default=-1) + 1
        evt = MessageAction(content='baseline step')
        evt._id = next_id  # type: ignore[attr-defined]
        evt._source = EventSource.AGENT  # type: ignore[attr-defined]
        evt._timestamp = '2025-01-01T00:00:00'  # type: ignore[attr-defined]
        return evt

    def measure_step(self) -> None:
        events = self._need_events()
        View = self._view_cls()
        new_event = self._next_event()

        def prepare() -> list[Any]:
            return list(events)

        def run(history: list[Any]) -> None:
            history.append(new_event)
            View.from_events(history)

        self._record(
            'step',
            _time_runs(run, prepare, self.repeat, self.warmup),
            len(events) + 1,
            note='per_event_us is the step cost divided by the history length',
        )

    def _history_filter(self):
        from openhands.events.action.agent import ChangeAgentStateAction
        from openhands.events.action.empty import NullAction
        from openhands.events.event_filter import EventFilter
        from openhands.events.observation.agent import AgentStateChangedObservation
        from openhands.events.observation.empty import NullObservation

        # Same configuration as StateTracker.agent_history_filter in 0.62.0.
        return EventFilter(
            exclude_types=(
                NullAction,
                NullObservation,
                ChangeAgentStateAction,
                AgentStateChangedObservation,
            ),
            exclude_hidden=True,
        )

    def measure_filter(self) -> None:
        events = self._need_events()
        flt = self._history_filter()
        kept = [e for e in events if flt.include(e)]
        self.counts['history_events'] = len(kept)

        def run(_: Any) -> None:
            [e for e in events if flt.include(e)]

        self._record(
            'filter', _time_runs(run, None, self.repeat, self.warmup), len(events), kept=len(kept)
        )

    def measure_messages(self) -> None:
        events = self._need_events()
        View = self._view_cls()
        import openhands
        from openhands.core.config.agent_config import AgentConfig
        from openhands.core.config.llm_config import LLMConfig
        from openhands.events.action import MessageAction
        from openhands.memory.conversation_memory import ConversationMemory
        from openhands.utils.prompt import PromptManager

        prompt_dir = os.path.join(
            os.path.dirname(openhands.__file__), 'agenthub', 'codeact_agent', 'prompts'
        )
        memory = ConversationMemory(AgentConfig(), PromptManager(prompt_dir=prompt_dir))
        max_chars = LLMConfig().max_message_chars

        flt = self._history_filter()
        history = [e for e in events if flt.include(e)]
        view_events = View.from_events(history).events
        initial = next(
            (e for e in history if isinstance(e, MessageAction) and e.source == 'user'),
            None,
        )
        if initial is None:
            raise RuntimeError('no user MessageAction in history (CodeActAgent would raise)')

        def prepare() -> list[Any]:
            # process_events inserts into the list it is given.
            return list(view_events)

        def run(evts: list[Any]) -> None:
            memory.process_events(
                condensed_history=evts,
                initial_user_action=initial,
                max_message_chars=max_chars,
                vision_is_active=False,
            )

        n_messages = len(
            memory.process_events(
                condensed_history=list(view_events),
                initial_user_action=initial,
                max_message_chars=max_chars,
                vision_is_active=False,
            )
        )
        self._record(
            'messages',
            _time_runs(run, prepare, self.repeat, self.warmup),
            len(view_events),
            input='View.from_events(agent-history-filtered events).events',
            n_messages=n_messages,
            max_message_chars=max_chars,
        )
        # The same without the collection before each run (warm caches), reported apart.
        warm = _time_runs(run, prepare, self.repeat, self.warmup, cold=False)
        self.result['messages_warm'] = statistics.median(warm)
        self.details['messages_warm'] = {'median_s': statistics.median(warm), 'samples_s': warm}

    # -- driver ----------------------------------------------------------
    def run_all(self, skip: set[str]) -> dict[str, Any]:
        try:
            self.import_openhands()
        except Exception as exc:  # noqa: BLE001
            for m in MEASURES:
                self._fail(m, f'cannot import openhands: {_reason(exc)}')
            return self.report()
        for name in MEASURES:
            if name in skip:
                self._fail(name, 'skipped by --skip')
                continue
            # Measures after `load` report their own reason if no events loaded.
            self._guard(name, getattr(self, f'measure_{name}'))
        return self.report()

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.result)
        out['per_event_us'] = self.per_event_us
        out['reasons'] = self.reasons
        out['counts'] = self.counts
        out['load_failures'] = self.load_failures[:20]
        out['details'] = self.details
        out['meta'] = {
            'openhands_ai': self.oh.get('version'),
            'python': platform.python_version(),
            'repeat': self.repeat,
            'warmup': self.warmup,
            'timer': 'time.perf_counter, gc disabled per run, median',
            'logging': 'disabled' if logging.root.manager.disable else 'enabled',
        }
        return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--events', required=True, help='JSON file: a list of V0 event dicts')
    p.add_argument('--repeat', type=int, default=5, help='timed runs per measure (median)')
    p.add_argument('--warmup', type=int, default=1, help='untimed runs before timing')
    p.add_argument(
        '--strict',
        action='store_true',
        help='report load (and everything after it) as null if any dict fails to load',
    )
    p.add_argument(
        '--keep-logging',
        action='store_true',
        help="keep OpenHands' logging on (off by default so log I/O is not timed)",
    )
    p.add_argument('--skip', default='', help='comma-separated measures to skip')
    p.add_argument('--label', default=None, help='free-form label copied into the output')
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error('--repeat must be >= 1')

    if not args.keep_logging:
        os.environ.setdefault('LOG_LEVEL', 'ERROR')
        logging.disable(logging.CRITICAL)

    try:
        with open(args.events) as f:
            raw = json.load(f)
        if not isinstance(raw, list):
            raise ValueError(f'expected a JSON list, got {type(raw).__name__}')
    except Exception as exc:  # noqa: BLE001
        out = {m: None for m in MEASURES}
        out['reasons'] = {m: f'cannot read --events: {_reason(exc)}' for m in MEASURES}
        json.dump(out, sys.stdout)
        sys.stdout.write('\n')
        return 1

    skip = {s.strip() for s in args.skip.split(',') if s.strip()}
    bad = skip - set(MEASURES)
    if bad:
        p.error(f'unknown measures in --skip: {sorted(bad)}')
    bench = Baseline(raw, args.repeat, args.warmup, args.strict)
    out = bench.run_all(skip)
    out['meta']['events_file'] = os.path.abspath(args.events)
    if args.label:
        out['meta']['label'] = args.label
    json.dump(out, sys.stdout, default=repr)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
