"""The engine's building blocks against plain-Python statements of what they must do."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.scoring import engine
from skillret.columnar import strings
from skillret.errors import InputError
from skillret.scoring.ordering import rank_order, trec_scores
from skillret.columnar.runs import RunChunk
from skillret.columnar.strings import EqualLengthIds, fingerprints

MIXED_LENGTHS = ["a", "b", "B", "ab", "aB", "10", "9", "é", "z\x00", "zz", "skill-1"]
ONE_LENGTH = ["ab", "aB", "Ab", "10", "09", "é", "zz", "z\x00", "\x00z"]  # é is two bytes


@pytest.mark.parametrize("pool", [MIXED_LENGTHS, ONE_LENGTH], ids=["mixed", "one-length"])
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), presorted=st.booleans(), depth=st.none() | st.integers(1, 6))
def test_rank_order_is_trec_evals_order(pool, data, presorted, depth):
    """Whatever the input order: grouped by query, score descending at float32, id descending.
    With a depth, the ranks up to it are in that order (a tied run may straddle the depth)."""
    rows = data.draw(st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(pool),
                  st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.1 + 2 ** -56, 0.1])),
        max_size=40, unique_by=lambda t: (t[0], t[1])))
    if presorted:  # the usual input: grouped and sorted by (double) score
        rows = sorted(rows, key=lambda r: (r[0], -r[2]))
    q = np.array([r[0] for r in rows], dtype=np.int64)
    if presorted is False:
        q_sorted = q  # rank_order needs rows grouped; sort by query only, stably
        order = np.argsort(q, kind="stable")
        rows = [rows[i] for i in order]
        q = q_sorted[order]
    score = np.array([r[2] for r in rows], dtype=np.float64)
    skill = pa.array([r[1] for r in rows], pa.string())
    by_id = sorted(range(len(rows)), key=lambda i: rows[i][1].encode(), reverse=True)
    expected = sorted(by_id, key=lambda i: (  # stable: equal scores keep id-descending order
        rows[i][0], -float(trec_scores(np.array([rows[i][2]]))[0])))
    # ties at float32 between different ids are broken by id descending in byte order
    if depth is None:
        perm, ranks = rank_order(q, score, skill)
        got = list(range(len(rows))) if perm is None else list(perm)
    else:  # the top `depth` of each query, in order, with their ranks
        top, top_rank = rank_order(q, score, skill, depth)
        got = top.tolist()
        ranks = [sum(1 for j in expected if rows[j][0] == rows[i][0]
                      and expected.index(j) < expected.index(i)) + 1 for i in expected]
        expected = [i for i, r in zip(expected, ranks) if r <= depth]
        assert top_rank.tolist() == [r for r in ranks if r <= depth]
    assert [(rows[i][0], rows[i][1]) for i in got] == [(rows[i][0], rows[i][1]) for i in expected]
    if depth is None:
        for query in set(q.tolist()):
            count = int((q == query).sum())
            assert sorted(ranks[q[got] == query].tolist()) == list(range(1, count + 1))


def chunk(queries, row_query, skills):
    return RunChunk(pa.array(queries), np.array(row_query, dtype=np.int64),
                    pa.array(skills, pa.string()), np.zeros(len(skills)),
                    line=np.arange(1, len(skills) + 1))


@pytest.mark.parametrize("skills", [["aa", "bb", "aa"], ["a", "bbb", "a"]])
def test_duplicates_found_for_equal_and_mixed_length_ids(skills):
    with pytest.raises(InputError, match="query 'q' lists skill 'a+' twice .first at line 1"):
        engine.check_unique(chunk(["q"], [0, 0, 0], skills), "run")


def test_same_skill_in_two_queries_is_fine():
    engine.check_unique(chunk(["q", "r"], [0, 1], ["aa", "aa"]), "run")


def test_fingerprint_collisions_are_not_duplicates(monkeypatch):
    monkeypatch.setattr(strings, "fingerprints", lambda rows: np.zeros(len(rows), np.uint64))
    engine.check_unique(chunk(["q"], [0, 0, 0], ["aa", "bb", "cc"]), "run")
    with pytest.raises(InputError):
        engine.check_unique(chunk(["q"], [0, 0, 0], ["aa", "bb", "aa"]), "run")


def test_equal_length_bytes_and_fingerprints():
    strings = pa.array(["abc", "abd", "abc", "xyz"])[1:]
    rows = EqualLengthIds.of(strings).matrix
    assert rows.tolist() == [list(b"abd"), list(b"abc"), list(b"xyz")]
    prints = fingerprints(rows)
    assert len(set(prints.tolist())) == 3
    assert EqualLengthIds.of(pa.array(["a", "bb"])) is None


@pytest.mark.parametrize("pool", [MIXED_LENGTHS, ONE_LENGTH], ids=["mixed", "one-length"])
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_qrels_lookup(pool, data):
    """Grades of (query, skill) pairs, judged or not, for ids of one or of mixed lengths."""
    from skillret.columnar.qrels import Qrels
    from skillret.scoring.engine import UNJUDGED, Judgments
    judged = data.draw(st.dictionaries(st.tuples(st.sampled_from(["q1", "q2", "q3"]),
                                                 st.sampled_from(pool)),
                                       st.integers(-1, 3), min_size=1))
    qrels = Judgments(Qrels.from_columns([q for q, _ in judged], [s for _, s in judged],
                                         list(judged.values())))
    probes = data.draw(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q9"]),
                                          st.sampled_from(pool)), max_size=20))
    qi = qrels.query_index(pa.array([q for q, _ in probes], pa.string()))
    skills = pa.array([s for _, s in probes], pa.string())
    expected = [judged.get(p, UNJUDGED) for p in probes]
    assert qrels.grades(qi, skills).tolist() == expected
    ids = EqualLengthIds.of(skills)
    if ids is not None:  # by fingerprints, confirmed byte for byte; any subset of rows
        rows = np.array(data.draw(st.permutations(range(len(probes)))), dtype=np.int64)
        by_prints = qrels.grades_by_prints(qi[rows], ids, rows)
        if by_prints is not None:  # None: too many judgments per query for this path
            assert by_prints.tolist() == [expected[i] for i in rows]


def test_judgment_lookup_by_prints_confirms_bytes(monkeypatch):
    """Colliding fingerprints do not make an unjudged skill judged; many judgments per query
    send the lookup back to hashing."""
    from skillret.columnar.qrels import Qrels
    from skillret.scoring.engine import UNJUDGED, Judgments
    a, b, c, z = (letter * 9 for letter in "abcz")  # wider than one 8-byte word
    qrels = Judgments(Qrels.from_columns(["q", "q", "r"], [a, b, c], [2, 1, 1]))
    monkeypatch.setattr(strings, "fingerprints", lambda rows: np.zeros(len(rows), np.uint64))
    ids = EqualLengthIds(np.frombuffer((b + z + a + c).encode(), np.uint8).reshape(4, 9))
    got = qrels.grades_by_prints(np.array([0, 0, 0, 0]), ids, np.arange(4))
    assert got.tolist() == [1, UNJUDGED, 2, UNJUDGED]
    many = Judgments(Qrels.from_columns(["q"] * 10, [f"s{i}" for i in range(10)], [1] * 10))
    assert many.grades_by_prints(np.array([0]), ids, np.arange(1)) is None


def _batches(queries_per_batch, pulled):
    from skillret.columnar.runs import RowBatch
    for queries in queries_per_batch:
        pulled.append(queries)
        ids = pa.array(queries, pa.string())
        yield RowBatch(ids, pa.array([f"s{i}" for i in range(len(queries))], pa.string()),
                       np.zeros(len(queries)))


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), min_size=1, max_size=6), min_size=1,
                max_size=6))
def test_chunks_of_a_stream_are_whole_queries_or_not_contiguous(batches):
    """Whole queries, each in one chunk, in order; a query whose rows start again is refused
    as soon as the batch where they do is read (never after the rest of the stream)."""
    from skillret.columnar.runs import NotGrouped, chunk_batches
    rows = [q for batch in batches for q in batch]
    groups = [q for i, q in enumerate(rows) if i == 0 or rows[i - 1] != q]
    pulled: list = []
    if len(groups) == len(set(groups)):
        chunks = list(chunk_batches(_batches(batches, pulled)))
        assert [q for c in chunks for q in c.queries.to_pylist()] == groups
        assert sum(len(c) for c in chunks) == len(rows)
        return
    with pytest.raises(NotGrouped) as raised:
        list(chunk_batches(_batches(batches, pulled)))
    seen_rows = [q for batch in pulled for q in batch]
    # The batch holding the repeat, and at most one more (which shows where its query ends).
    first_repeat = next(i for i in range(1, len(rows))
                        if rows[i] != rows[i - 1] and rows[i] in rows[:i])
    assert raised.value.query == rows[first_repeat]  # the first query to come back is named
    assert len(seen_rows) <= first_repeat + 1 + max(map(len, batches))
