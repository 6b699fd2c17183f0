"""`VectorMemory` and its offline embedder: ranking by similarity, any callable embedder."""

from __future__ import annotations

import pytest

from openhands_memory.events import load_events
from openhands_memory.memory import HashedBagOfWords, VectorMemory
from openhands_memory.testing.sessions import SessionBuilder
from conftest import require_real_logs_dir


def _session() -> SessionBuilder:
    s = SessionBuilder()
    s.user("The CSV export drops the header row")  # 0
    s.turn("pytest tests/test_export.py", "FAILED tests/test_export.py::test_header - AssertionError")  # 1, 2
    s.turn("grep -n header src/export.py", "42:    writer.writerow(rows)")  # 3, 4
    s.turn("git diff", "diff --git a/README.md b/README.md")  # 5, 6
    return s


def test_text_ranks_records_by_shared_words_and_top_k_bounds_them() -> None:
    memory = VectorMemory.from_events(_session().events, top_k=2)

    best = memory.retrieve({"text": "which test failed in test_export"})
    assert [r.event_id for r in best] == [2, 1]
    assert [r.event_id for r in memory.retrieve({"text": "header row", "top_k": 1})] == [0]
    assert [r.event_id for r in memory.retrieve({"text": "header", "roles": ["tool"], "top_k": 1})] == [2]


def test_without_text_the_most_recent_records_come_back() -> None:
    memory = VectorMemory.from_events(_session().events, top_k=2)

    assert [r.event_id for r in memory.retrieve()] == [5, 6]
    assert memory.evict() == 0 and len(memory) == 7


def test_any_callable_embeds_and_cosine_stays_an_option() -> None:
    def by_length(text: str) -> list[float]:
        return [float(len(text)), 1.0]

    memory = VectorMemory.from_events(_session().events, embedder=by_length, top_k=1, similarity="cosine")

    assert memory.retrieve({"text": "x" * 8})[0].content == "git diff"  # the shortest text points the same way
    with pytest.raises(ValueError, match="similarity must be 'dot' or 'cosine', not 'l2'"):
        VectorMemory(similarity="l2")  # type: ignore[arg-type]


def test_records_rank_by_dot_product_in_qitos_order_with_an_embedder_that_does_not_normalise() -> None:
    def counts(text: str) -> list[float]:  # QitOS-like: raw counts, longer texts make longer vectors
        return [float(text.count("a")), float(text.count("b"))]

    s = SessionBuilder()
    for text in ("ab", "aaaa", "b", "ab", "bbbbbb"):  # events 0-4
        s.user(text)
    memory = VectorMemory.from_events(s.events, embedder=counts, top_k=5)

    # Query (1, 1): dot products 2, 4, 1, 2, 6. QitOS sorts by score, best first, equal scores in log order;
    # by the angle, "ab" (twice) points exactly the query's way and would come first.
    assert [r.event_id for r in memory.retrieve({"text": "ab"})] == [4, 1, 0, 3, 2]
    cosine = VectorMemory.from_events(s.events, embedder=counts, top_k=5, similarity="cosine")
    assert [r.event_id for r in cosine.retrieve({"text": "ab"})] == [0, 3, 1, 2, 4]  # the other three at 45 degrees


def test_mixing_vector_lengths_is_an_error() -> None:
    sizes = iter([3, 3, 4])
    memory = VectorMemory(embedder=lambda text: [1.0] * next(sizes))
    SessionBuilder().user("a")
    s = SessionBuilder()
    s.user("a")
    s.user("b")
    memory.extend(s.events)
    with pytest.raises(ValueError, match=r"vectors of different lengths \(4 and 3\)"):
        memory.retrieve({"text": "q"})


def test_hashed_bag_of_words_is_deterministic_normalized_and_keeps_test_ids_whole() -> None:
    embed = HashedBagOfWords(dimensions=64)
    vector = embed("FAILED tests/test_x.py::test_y")

    assert vector == HashedBagOfWords(dimensions=64)("failed TESTS/TEST_X.PY::TEST_Y")
    assert len(vector) == 64
    assert sum(x * x for x in vector) == pytest.approx(1.0)
    assert embed("") == [0.0] * 64
    with pytest.raises(ValueError, match="dimensions must be an integer >= 8, not 4"):
        HashedBagOfWords(dimensions=4)


def test_on_a_real_log_four_words_of_a_record_find_it_in_the_top_five() -> None:
    # The measure behind the default (see the module docstring of memory.embedding): four words of
    # one record, as a query, bring back a record holding all four among the first five.
    events = load_events(require_real_logs_dir() / "v0_oh-multiswebench_ponyc-4588_history.json")
    memory = VectorMemory.from_events(events, top_k=5)
    queries = found = 0
    for record in memory.records:
        words = sorted({w for w in record.content.split() if w.isalpha() and len(w) > 3})
        if len(words) < 6:
            continue
        chosen = words[::3][:4]  # spread over the record, deterministic
        queries += 1
        hits = memory.retrieve({"text": " ".join(chosen)})
        found += any(all(w in hit.content for w in chosen) for hit in hits)
    assert queries >= 40
    assert found / queries >= 0.85
