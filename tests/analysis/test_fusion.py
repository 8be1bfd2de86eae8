"""Fusion against a plain-Python implementation of its definitions, on generated runs with tied
scores, missing queries and empty rankings; the routes (streamed, sort-merged in small chunks,
in memory) against each other; the writers' formats read back.
"""

from __future__ import annotations

import json
import struct
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillret
from skillret.errors import ConfigError, InputError
from skillret.api import fuse
from skillret.pipeline.run_stages import fuse_to_file
from skillret.analysis.fusion import Stream as _Stream
from skillret.analysis.fusion import fuse_chunks, merged
from skillret.analysis.fusion import Fusion
from skillret.analysis import fusion as fusion_module


# ---------------------------------------------------------------------------- the reference
def f32(x: float) -> float:
    """x as trec_eval keeps it (a C float)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def trec_order(items: dict[str, float]) -> list[str]:
    """Skills by score descending (as 32-bit floats), then skill id descending in byte order."""
    by_id = sorted(items, key=lambda s: s.encode(), reverse=True)
    return sorted(by_id, key=lambda s: -f32(items[s]))


def normalised(items: dict[str, float], norm: str) -> dict[str, float]:
    if norm == "none" or not items:
        return dict(items)
    values = list(items.values())
    low, high = min(values), max(values)
    if norm == "minmax":
        return {s: 1.0 if low == high else (v - low) / (high - low) for s, v in items.items()}
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5   # population sd
    return {s: 0.0 if low == high or sd == 0 else (v - mean) / sd for s, v in items.items()}


def reference(runs: list[dict], method: str, k: float = 60, norm: str | None = None,
              weights: list[float] | None = None, depth: int = 100) -> dict[str, list]:
    """The definitions of issue #13, one query and one skill at a time."""
    weights = weights or [1.0] * len(runs)
    norm = norm or "minmax"
    queries = sorted({q for run in runs for q in run}, key=lambda q: q.encode())
    out = {}
    for q in queries:
        total: dict[str, float] = {}
        holders: dict[str, int] = {}
        for run, w in zip(runs, weights):
            items = run.get(q, {})
            if method == "rrf":
                value = {s: 1.0 / (k + r) for r, s in enumerate(trec_order(items), start=1)}
            else:
                value = normalised(items, norm)
            for s, v in value.items():
                total[s] = total.get(s, 0.0) + w * v
                holders[s] = holders.get(s, 0) + 1
        if method == "combmnz":
            total = {s: v * holders[s] for s, v in total.items()}
        out[q] = [(s, total[s]) for s in trec_order(total)[:depth]]
    return out


def as_dict(run) -> dict[str, list]:
    """A fused skillret.Run as {query: [(skill, score), ...]} in rank order."""
    out = {q: [] for q in run.queries.to_pylist()}
    ranks = {}
    for q, s, v, r in zip(run.query_id.to_pylist(), run.skill_id.to_pylist(), run.score.tolist(),
                          run.rank.tolist()):
        out[q].append((s, v))
        ranks.setdefault(q, []).append(r)
    for q, r in ranks.items():
        assert r == list(range(1, len(r) + 1))
    return out


# ---------------------------------------------------------------------------- generated runs
# ids chosen so that byte order, case and non-ASCII matter; scores tie often, some only as
# 32-bit floats (0.1 and 0.10000000000000002), some are negative or huge
SKILLS = ["a", "b", "B", "aa", "s1", "s10", "s2", "é", "z-9", "Z"]
QUERIES = ["q1", "q2", "q10", "Q3", "q-ü"]
SCORES = [0.0, 1.0, 2.0, 2.5, -1.0, 0.1, 0.10000000000000002, 3.0, 1e-9, 7.25, 1e6]

ranking = st.dictionaries(st.sampled_from(SKILLS), st.sampled_from(SCORES), max_size=7)
run_st = st.dictionaries(st.sampled_from(QUERIES), ranking, max_size=len(QUERIES))
runs_st = st.lists(run_st, min_size=2, max_size=4)
fusion_st = st.one_of(
    st.builds(lambda k: ("rrf", k, None), st.sampled_from([60, 1, 0.5, 1000])),
    st.builds(lambda m, n: (m, 60, n), st.sampled_from(["combsum", "combmnz"]),
              st.sampled_from(["minmax", "zscore", "none"])))


@settings(max_examples=examples(300), deadline=None)
@given(runs=runs_st, spec=fusion_st, depth=st.sampled_from([1, 3, 100]),
       weighted=st.booleans())
def test_fusion_equals_the_definitions(runs, spec, depth, weighted):
    method, k, norm = spec
    names = [f"r{i}" for i in range(len(runs))]
    weights = [0.5 + i for i in range(len(runs))] if weighted else None
    fused = fuse(dict(zip(names, runs)), method=method, k=k, norm=norm, depth=depth,
                 weights=dict(zip(names, weights)) if weights else None)
    expected = reference(runs, method, k, norm, weights, depth)
    got = as_dict(fused)
    assert list(got) == list(expected)            # the union of queries, in id order
    for q in expected:
        # rankings exactly (rankings of up to 7 rows are summed in the same order by numpy
        # and by Python, so even near-ties agree); scores to float tolerance
        assert [s for s, _ in got[q]] == [s for s, _ in expected[q]], q
        assert [v for _, v in got[q]] == pytest.approx([v for _, v in expected[q]],
                                                       rel=1e-12, abs=1e-12)


def test_worked_example():
    """By hand: r1 ranks a (3), then the tie b = c (2) broken by id descending: c, b."""
    r1 = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0}, "q2": {"a": 1.0}}
    r2 = {"q1": {"c": 9.0, "d": 1.0}, "q3": {"x": 5.0}, "q4": {}}
    fused = as_dict(fuse({"r1": r1, "r2": r2}, method="rrf"))
    assert fused == {
        "q1": [("c", 1 / 62 + 1 / 61), ("a", 1 / 61), ("d", 1 / 62), ("b", 1 / 63)],
        "q2": [("a", 1 / 61)], "q3": [("x", 1 / 61)], "q4": []}
    fused = as_dict(fuse({"r1": r1, "r2": r2}, method="combmnz"))  # minmax
    # q1: r1 -> a 1, b 0, c 0; r2 -> c 1, d 0; c is held by both runs: (0 + 1) x 2
    assert fused["q1"] == [("c", 2.0), ("a", 1.0), ("d", 0.0), ("b", 0.0)]
    assert fused["q2"] == [("a", 1.0)]   # a ranking whose scores are all equal: 1
    zs = as_dict(fuse({"r1": r1, "r2": r2}, method="combsum", norm="zscore"))
    assert zs["q2"] == [("a", 0.0)]      # sd 0: 0
    assert dict(zs["q1"])["a"] == pytest.approx((3 - 7 / 3) / np.std([3, 2, 2]))


def test_larger_rankings_follow_the_tie_rule_on_their_own_scores():
    """Rankings of 50 rows: scores equal the definitions to float tolerance, and the order is
    exactly the tie rule applied to the fused scores."""
    rng = np.random.default_rng(7)
    runs = [{f"q{q}": {f"s{j}": float(rng.integers(0, 20)) / 4
                       for j in rng.choice(200, 50, replace=False)} for q in range(30)}
            for _ in range(3)]
    for method, norm in (("rrf", None), ("combsum", "zscore"), ("combmnz", "minmax")):
        got = as_dict(fuse(runs, method=method, norm=norm, depth=40))
        expected = reference(runs, method, 60, norm, None, 10**9)
        for q, ranked in got.items():
            full = dict(expected[q])
            assert [v for _, v in ranked] == pytest.approx([full[s] for s, _ in ranked],
                                                           rel=1e-12)
            assert [s for s, _ in ranked] == trec_order(dict(ranked))[:40]
            # nothing cut off scores above the last kept skill (as 32-bit floats)
            kept = {s for s, _ in ranked}
            assert all(f32(v) <= f32(ranked[-1][1]) for s, v in full.items() if s not in kept)


# ---------------------------------------------------------------------------- routes, formats
def write_trec(path, run: dict, sort_queries=True):
    queries = sorted(run, key=lambda q: q.encode(), reverse=not sort_queries)
    lines = [f"{q} Q0 {s} {r} {v!r} t" for q in queries
             for r, (s, v) in enumerate(run[q].items(), start=1)]
    path.write_text("".join(line + "\n" for line in lines))


def test_streamed_in_memory_and_small_chunks_agree(tmp_path):
    """The sort-merge over tiny chunks, the streamed files and the in-memory route give the
    same rankings, and the same bytes in every output format."""
    rng = np.random.default_rng(3)
    runs = []
    for r in range(3):
        run = {}
        for q in range(40):
            if rng.random() < 0.2:
                continue      # a query this run does not hold
            run[f"q{q:03d}"] = {f"s{j}": float(rng.integers(0, 6))
                                for j in rng.choice(30, int(rng.integers(1, 12)), replace=False)}
        runs.append(run)
    fusion = Fusion("combmnz", norm="zscore", depth=5)
    names = ["r0", "r1", "r2"]
    loaded = [skillret.Run.from_dict({q: run[q] for q in sorted(run)}) for run in runs]
    whole = _concat([fuse_chunks(_everything(loaded), fusion, names)])
    for rows in (1, 3, 17):
        streams = [_Stream(n, run.chunks(max_rows=rows)) for n, run in zip(names, loaded)]
        assert _concat(merged(streams, fusion, names)) == whole

    for i, run in enumerate(runs):
        write_trec(tmp_path / f"r{i}.trec", run)
        (tmp_path / f"r{i}.json").write_text(json.dumps(run))
        write_trec(tmp_path / f"u{i}.trec", run, sort_queries=False)
    for ext in ("trec", "parquet", "json"):
        outputs = {}
        for label, stem in (("trec", "r"), ("json", "r"), ("unsorted", "u")):
            files = {n: tmp_path / f"{stem}{i}.{'json' if label == 'json' else 'trec'}"
                     for i, n in enumerate(names)}
            notices = []
            with mock.patch.object(fusion_module, "_fuse_whole",
                                   wraps=fusion_module._fuse_whole) as whole_read:
                fuse_to_file(files, tmp_path / f"out-{label}.{ext}",
                             Fusion("combmnz", norm="zscore", depth=5), tag="fused",
                             notices=notices)
            assert bool(notices) == (label == "unsorted" and len(runs[0]) > 1)
            # runs whose queries ascend are sort-merged a chunk at a time, not read whole
            assert whole_read.called == bool(notices), label
            outputs[label] = (tmp_path / f"out-{label}.{ext}").read_bytes()
        assert outputs["trec"] == outputs["json"] == outputs["unsorted"], ext
        back = as_dict(skillret.open_run(tmp_path / f"out-trec.{ext}").read(with_rank=True)
                       if ext != "json" else _ranked(tmp_path / f"out-trec.{ext}"))
        expected = reference(runs, "combmnz", norm="zscore", depth=5)
        assert {q: [s for s, _ in v] for q, v in back.items()} == \
            {q: [s for s, _ in v] for q, v in expected.items()}


def _ranked(path):
    run = skillret.open_run(path).read()
    run.rank = np.concatenate([np.arange(1, n + 1) for n in np.unique(
        run.row_query(), return_counts=True)[1]]) if len(run) else np.zeros(0, np.int64)
    return run


def _everything(loaded):
    return [list(run.chunks()) for run in loaded]


def _concat(batches) -> list:
    out = []
    for b in batches:
        q = b.queries.to_pylist()
        out += [(q[i], s, v, r) for i, s, v, r in zip(b.row_query.tolist(),
                                                      b.skill_id.to_pylist(),
                                                      b.score.tolist(), b.rank.tolist())]
        used = set(b.row_query.tolist())
        out += [(q[i], None, None, None) for i in range(len(q)) if i not in used]
    return sorted(out, key=lambda row: (row[0].encode(), row[3] or 0))


def test_formats_read_back_with_empty_rankings(tmp_path):
    runs = {"a": {"q1": {"x": 1.0, "y\"q": 2.0}, "q2": {}}, "b": {"q1": {"x": 3.0}, "q3": {}}}
    for name, run in runs.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(run))
    files = {n: tmp_path / f"{n}.json" for n in runs}
    fuse_to_file(files, tmp_path / "f.json", Fusion("rrf"))
    assert json.loads((tmp_path / "f.json").read_text()) == {
        "q1": {"x": 1 / 61 + 1 / 62, "y\"q": 1 / 61}, "q2": {}, "q3": {}}
    for name in runs:
        (tmp_path / f"{name}.json").write_text("{}")
    fuse_to_file(files, tmp_path / "none.json", Fusion("rrf"))
    assert (tmp_path / "none.json").read_text() == "{}\n"
    for name, run in runs.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(run))
    fuse_to_file(files, tmp_path / "f.parquet", Fusion("rrf"))
    table = pq.read_table(tmp_path / "f.parquet")
    assert table.column_names == ["query_id", "skill_id", "score", "rank"]
    assert table.column("query_id").to_pylist() == ["q1", "q1", "q2", "q3"]
    assert table.column("skill_id").to_pylist() == ["x", "y\"q", None, None]
    fused = skillret.open_run(tmp_path / "f.parquet").read()
    assert fused.queries.to_pylist() == ["q1", "q2", "q3"]
    with pytest.raises(InputError, match="TREC cannot carry"):
        fuse_to_file({"a": files["a"], "b": files["b"], "c": _spaced(tmp_path)},
                     tmp_path / "f.trec", Fusion("rrf"))
    assert not (tmp_path / "f.trec").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _spaced(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"q1": {"has space": 1.0}}))
    return path


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "borda"}, "unknown fusion method"),
    ({"method": "rrf", "norm": "minmax"}, "takes no norm"),
    ({"method": "rrf", "k": 0}, "k must be a number > 0"),
    ({"method": "rrf", "k": -1}, "k must be a number > 0"),
    ({"method": "combsum", "norm": "l2"}, "unknown norm"),
    ({"method": "rrf", "depth": 0}, "depth must be an integer >= 1"),
    ({"method": "rrf", "weights": {"c": 1}}, "not among the runs fused"),
    ({"method": "rrf", "weights": {"a": float("nan")}}, "finite number"),
])
def test_bad_settings(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        fuse({"a": {"q": {"x": 1.0}}, "b": {"q": {"x": 1.0}}}, **kwargs)


def test_a_skill_twice_in_a_run_is_refused(tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 x 1 2 t\nq1 Q0 x 2 1 t\n")
    (tmp_path / "b.trec").write_text("q1 Q0 x 1 2 t\n")
    with pytest.raises(InputError, match="'x' appears twice for query 'q1'"):
        fuse_to_file([tmp_path / "a.trec", tmp_path / "b.trec"], tmp_path / "f.trec", Fusion())
    assert not (tmp_path / "f.trec").exists()


def test_pyarrow_table_of_output_is_canonical(tmp_path):
    """A fused Parquet run is the canonical run validate writes: it validates and scores."""
    (tmp_path / "a.trec").write_text("q1 Q0 x 1 2 t\nq1 Q0 y 2 1 t\n")
    (tmp_path / "b.trec").write_text("q1 Q0 y 1 2 t\nq2 Q0 z 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 y 1\nq2 0 z 1\n")
    fuse_to_file([tmp_path / "a.trec", tmp_path / "b.trec"], tmp_path / "f.parquet", Fusion())
    scores = skillret.score(tmp_path / "qrels.txt", tmp_path / "f.parquet", ["official"])
    assert scores.metrics["official"]["NDCG@5"] == 1.0
    assert pa.types.is_int64(pq.read_schema(tmp_path / "f.parquet").field("rank").type)


def test_the_packed_sorts_equal_lexsort():
    """order_results and argsort_by against numpy's lexsort, through each of their branches
    (packed value sort, packed argsort, lexsort when the keys do not fit in 63 bits)."""
    from skillret.scoring.ordering import argsort_by, order_results
    rng = np.random.default_rng(5)
    query = np.sort(rng.integers(0, 50, 3000))
    score = rng.choice([0.5, 0.25, -1.0, 0.1, 0.10000000000000002, 1e-40, -0.0, 0.0], 3000)
    # rows of a query are in skill id order: the position within the query stands for it
    position = np.arange(3000) - np.searchsorted(query, query)
    expected = np.lexsort((-position, -score.astype(np.float32), query))
    assert (order_results(query, 50, score) == expected).all()
    assert (order_results(query, 1 << 30, score) == expected).all()   # argsort_by's way
    a, b = rng.integers(0, 1000, 3000), rng.permutation(3000)
    expected = np.lexsort((b, a))
    for size_a in (1000, 1 << 40, 1 << 62):
        assert (argsort_by((a, size_a), (b, 3000)) == expected).all()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=runs_st, spec=fusion_st, rows=st.lists(st.integers(1, 9), min_size=4, max_size=4),
       depth=st.sampled_from([1, 2, 100]))
def test_sort_merge_over_any_chunking_equals_one_batch(runs, spec, rows, depth):
    """The sort-merge, fed chunks of any size per run (queries a run lacks, empty rankings,
    runs that end early), fuses exactly what one batch over everything fuses."""
    method, k, norm = spec
    fusion = Fusion(method, k, norm, depth=depth)
    names = [f"r{i}" for i in range(len(runs))]
    loaded = [skillret.Run.from_dict({q: run[q] for q in sorted(run, key=str.encode)})
              for run in runs]
    whole = _concat([fuse_chunks(_everything(loaded), fusion, names)])
    streams = [_Stream(n, run.chunks(max_rows=r)) for n, run, r in zip(names, loaded, rows)]
    assert _concat(merged(streams, fusion, names)) == whole
