"""The cost model against what providers billed, out of sample: learn the token ratios on half the logs, check on the other half.

    python benchmarks/calibration_held_out.py LOG_FOLDER [--json out.json]
    python benchmarks/calibration_held_out.py LOG_FOLDER --ship [--exclude NAME ...]

LOG_FOLDER holds OpenHands logs that record their usage (`llm_metrics.token_usages`), such as the
OpenAgentSafety trajectories of `xli04/Multi_Round_OpenAgentSafety` (`evaluation/{claude-sonnet,gpt-4o}/traj_*.json`;
not in this repository). Each log goes to one half by the MD5 of its file name (even: train, odd: test).

1. **Token ratio**, per provider family, on the train logs that show no browser page and no output
   over OpenHands' `max_message_chars`: the recorded prompt's growth from the first request to the
   last, summed over the logs, over ours (counted with gpt-4o's tokenizer, nothing reconstructed).
2. **Page ratio**, per family, on the train logs with browser pages, with that token ratio: the median
   of each log's `measured_page_ratio`.
3. **Check** on the test logs, every reconstruction on, once with the ratios the library ships
   (`TOKEN_RATIOS`, `PAGE_RATIOS`) and once with those just learned: per family, the logs whose
   cache reads and prompt dollars are both within ±5% of the recorded ones, and the summed differences.

Prints a table (and the learned ratios); `--json` writes every figure. The exit status is 0: this is a report.

`--ship` learns the ratios the library ships instead (steps 1 and 2 on every log of the folder, no check):
the half split above is how the method is checked out of sample; the ratios shipped are learned the same way on
all the logs there are, less those named by `--exclude` (by default the OpenAgentSafety logs in
`../shared/fixtures/openhands-logs/`, which the README and the tests compare with their bills: they stay out of
sample).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TOKENIZER = "gpt-4o"
WITHIN = 0.05


def half(name: str) -> str:
    """`train` or `test`, by the MD5 of the file name (stable across machines and runs)."""
    return "train" if int(hashlib.md5(name.encode()).hexdigest(), 16) % 2 == 0 else "test"


def family(model: str | None) -> str:
    from openhands_memory.replay.calibration import _family

    return _family(model or "")


def _ratios(token: dict[str, float] | None, page: dict[str, float] | None) -> None:
    """Use these ratios in this process (None: the shipped ones)."""
    from openhands_memory.replay import calibration

    for table, values in ((calibration.TOKEN_RATIOS, token), (calibration.PAGE_RATIOS, page)):
        for name, ratio in (values or {}).items():
            table[(name, TOKENIZER)] = calibration.TokenRatio(ratio, "calibration_held_out.py")


def _one(job: tuple[str, dict[str, float] | None, dict[str, float] | None, bool]) -> dict[str, Any] | None:
    path, token, page, reconstruct = job
    from openhands_memory.events import BrowserOutputObservation, Observation
    from openhands_memory.replay.calibration import OPENHANDS_MAX_MESSAGE_CHARS, calibrate_events
    from openhands_memory.stream.locations import load_log

    _ratios(token, page)
    events = load_log(path)
    report = calibrate_events(events, source=path, tokenizer=TOKENIZER, reconstruct=reconstruct)
    if not report.complete:
        return None
    first, last = report.requests[0], report.requests[-1]
    return {
        "log": Path(path).name,
        "family": family(report.model),
        "requests": len(report.requests),
        "pages": any(isinstance(e, BrowserOutputObservation) and e.trigger_by_action == "browse_interactive" for e in events),
        "long": any(isinstance(e, Observation) and len(e.content) > OPENHANDS_MAX_MESSAGE_CHARS for e in events),
        "growth": [last.recorded.sent_tokens - first.recorded.sent_tokens, last.counted_tokens - first.counted_tokens],
        "page_ratio": report.measured_page_ratio,
        "totals": report.totals(),
    }


def _run(paths: Iterable[Path], token: dict[str, float] | None, page: dict[str, float] | None, reconstruct: bool) -> list[dict[str, Any]]:
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = pool.map(_one, [(str(p), token, page, reconstruct) for p in paths])
        return [row for row in done if row is not None]


def learn(train: list[Path]) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """The token and page ratios the train logs give, per family, with how many logs each came from."""
    raw = _run(train, None, None, False)
    token: dict[str, float] = {}
    sources: dict[str, Any] = {}
    for name in sorted({row["family"] for row in raw}):
        plain = [row for row in raw if row["family"] == name and not row["pages"] and not row["long"] and row["growth"][1] > 0]
        token[name] = round(sum(r["growth"][0] for r in plain) / sum(r["growth"][1] for r in plain), 4)
        sources[f"token {name}"] = len(plain)
    with_pages = [path for path in train if any(row["log"] == path.name and row["pages"] for row in raw)]
    provisional = {name: 2.5 for name in token}  # any value: a page ratio is measured only where one is used
    measured = _run(with_pages, token, provisional, True)
    page: dict[str, float] = {}
    for name in sorted(token):
        ratios = [row["page_ratio"] for row in measured if row["family"] == name and row["page_ratio"] and row["page_ratio"] > 0]
        if ratios:
            page[name] = round(statistics.median(ratios), 4)
            sources[f"page {name}"] = len(ratios)
    return token, page, sources


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per family: logs, logs within ±5% (cache reads and prompt dollars), summed differences."""
    out: dict[str, dict[str, Any]] = {}
    for name in sorted({row["family"] for row in rows}):
        mine = [row for row in rows if row["family"] == name]
        within = sum(
            1
            for row in mine
            if abs(row["totals"]["cache_read_tokens"]["difference"]) <= WITHIN and abs(row["totals"]["cost"]["difference"]) <= WITHIN
        )
        summed = {}
        for key in ("prompt_tokens", "cache_read_tokens", "cost"):
            ours = sum(row["totals"][key]["ours"] for row in mine)
            recorded = sum(row["totals"][key]["recorded"] for row in mine)
            summed[key] = ours / recorded - 1 if recorded else None
        out[name] = {"logs": len(mine), "within": within, "summed": summed}
    return out


SHARED_LOGS = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "openhands-logs"


def shared_log_names() -> list[str]:
    """The OpenAgentSafety file names of the shared logs (`v0_oas_<name>` there), which `--ship` leaves out."""
    return sorted(p.name.removeprefix("v0_oas_") for p in SHARED_LOGS.glob("v0_oas_*.json"))


def ship(logs: list[Path], excluded: list[str]) -> int:
    """Learn the ratios to ship from `logs` less `excluded`, and print them."""
    kept = [p for p in logs if p.name not in set(excluded)]
    token, page, sources = learn(kept)
    print(f"{len(logs)} logs, {len(logs) - len(kept)} left out ({', '.join(excluded) or 'none'}): learned from {len(kept)}")
    for name in token:
        print(f"ship {name}: tokens x {token[name]} ({sources[f'token {name}']} logs), pages x {page.get(name, '-')} ({sources.get(f'page {name}', 0)} logs)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of OpenHands logs that record their usage")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--ship", action="store_true", help="learn the ratios to ship from every log (no check)")
    parser.add_argument("--exclude", nargs="+", metavar="NAME", help="with --ship: file names to leave out (default: the shared logs')")
    args = parser.parse_args(argv)
    logs = sorted(p for p in args.folder.iterdir() if p.suffix in (".json", ".jsonl"))
    if args.ship:
        return ship(logs, args.exclude if args.exclude is not None else shared_log_names())
    train = [p for p in logs if half(p.name) == "train"]
    test = [p for p in logs if half(p.name) == "test"]
    token, page, sources = learn(train)
    print(f"{len(logs)} logs: {len(train)} to learn from, {len(test)} to check on")
    for name in token:
        print(f"learned {name}: tokens x {token[name]} ({sources[f'token {name}']} logs), pages x {page.get(name, '-')} ({sources.get(f'page {name}', 0)} logs)")
    results = {"shipped": summarize(_run(test, None, None, True)), "learned": summarize(_run(test, token, page, True))}
    print("\n| ratios | family | test logs | within ±5% | prompt tokens | cache reads | prompt dollars |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, per_family in results.items():
        for name, row in per_family.items():
            summed = row["summed"]
            print(
                f"| {label} | {name} | {row['logs']} | {row['within']} ({row['within'] / row['logs']:.0%}) | "
                f"{summed['prompt_tokens']:+.1%} | {summed['cache_read_tokens']:+.1%} | {summed['cost']:+.1%} |"
            )
    if args.json is not None:
        args.json.write_text(json.dumps({"token": token, "page": page, "sources": sources, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
