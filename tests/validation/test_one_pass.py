"""The pipeline's one pass against two passes: ``score@<run>`` validates a run and scores it as
its canonical copy orders it, in one pass over the file
(:func:`skillret.validation.checks.validate_and_score`); before, it wrote the canonical run and
scored that file. The two routes must write the same bytes: every generated run is put through
the stage's step, and its canonical Parquet is then scored as a file with the same profiles.

Generated: ties (scores from a few values), graded and negative judgments, queries the qrels
lack and judged queries the run lacks, rankings shorter and longer than the cutoffs, empty
rankings (JSON), lines in any order (a TREC file whose queries are not grouped is read whole),
and small blocks, so that queries straddle chunks."""

from __future__ import annotations

import json
from pathlib import Path

from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillret.analysis.breakdown import Facets
from skillret.io import trec
from skillret.pipeline.params import EvalParams, RunEntry
from skillret.pipeline.steps import evaluate_registered_run, score_run

QUERIES = [f"q{i}" for i in range(9)]
SKILLS = [f"s{i:02d}" for i in range(14)]
SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.5000001, 1.0, 2.0, -1.0])
OUTPUTS = ("metrics", "per_query", "plots")


@st.composite
def cases(draw):
    qrels = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), unique=True, min_size=1, max_size=7)):
        skills = draw(st.lists(st.sampled_from(SKILLS), unique=True, min_size=1, max_size=5))
        qrels[q] = {s: draw(st.integers(-1, 2)) for s in skills}
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), unique=True, min_size=1, max_size=8)):
        skills = draw(st.lists(st.sampled_from(SKILLS), unique=True, max_size=14))
        run[q] = {s: draw(SCORES) for s in skills}
    if not any(q in qrels for q in run):  # a run sharing no query is an error, tested elsewhere
        run[next(iter(qrels))] = {SKILLS[0]: 1.0}
    shuffled = draw(st.booleans())
    block = draw(st.one_of(st.integers(24, 400), st.just(None)))  # None: the reader's own
    return qrels, run, shuffled, draw(st.randoms(use_true_random=False)), block


def write_case(folder: Path, qrels: dict, run: dict, shuffled: bool, rnd) -> Path:
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {s} {g}\n" for q, judged in qrels.items()
                                              for s, g in judged.items()))
    if any(not ranking for ranking in run.values()):  # TREC cannot say "retrieved nothing"
        path = folder / "run.json"
        path.write_text(json.dumps(run))
        return path
    lines = [f"{q} Q0 {s} {i + 1} {score!r} tag\n" for q, ranking in run.items()
             for i, (s, score) in enumerate(ranking.items())]
    if shuffled:
        rnd.shuffle(lines)
    path = folder / "run.trec"
    path.write_text("".join(lines))
    return path


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_one_pass_writes_what_scoring_the_canonical_file_writes(tmp_path_factory, case):
    qrels, run, shuffled, rnd, block = case
    folder = tmp_path_factory.mktemp("case")
    run_path = write_case(folder, qrels, run, shuffled, rnd)
    evaluation = EvalParams(profiles=["official", "mia5150", "recommended"], relevance_level=1,
                            breakdown=["n_required"], breakdown_profile="recommended")
    facets = Facets(facets=["n_required"])
    one = {key: folder / f"one-{key}" for key in OUTPUTS}
    outputs = {**one, "normalized": folder / "canonical.parquet", "report": folder / "r.json",
               "contract": folder / "c.json"}
    blocks = trec.run_batches
    if block is not None:  # small blocks: a query's lines straddle batches and chunks
        trec.run_batches = lambda path, *, block_size=None, **kw: blocks(path, block_size=block,
                                                                          **kw)
    try:
        evaluate_registered_run(folder / "qrels.txt", RunEntry("run", str(run_path)),
                                outputs=outputs, eval_params=evaluation, facets=facets)
    finally:
        trec.run_batches = blocks
    two = {key: folder / f"two-{key}" for key in OUTPUTS}
    score_run(folder / "qrels.txt", outputs["normalized"], profiles=evaluation.profiles,
              relevance_level=evaluation.relevance_level, plot_profile="official",
              metrics=two["metrics"], per_query=two["per_query"], plots=two["plots"],
              breakdown=facets, breakdown_profile="recommended")
    for key in OUTPUTS:
        assert one[key].read_bytes() == two[key].read_bytes(), key


def test_the_validation_report_carries_the_metric_contract(tmp_path):
    """The pipeline's layout has no contract file: the report holds it (``contract``), and a
    stage asked for ``--contract PATH`` writes the same mapping there too."""
    import hashlib

    from skillret.pipeline.steps import TIE_RULE

    run_path = write_case(tmp_path, {"q0": {"s00": 2, "s01": 1}, "q1": {"s02": 1}},
                          {"q0": {"s01": 0.5, "s00": 0.5}, "q1": {"s03": 1.0}}, False, None)
    evaluation = EvalParams(profiles=["official", "mia5150"], relevance_level=1)
    reports = {}
    for name, extra in (("plain", {}), ("alone", {"contract": tmp_path / "contract.json"})):
        outputs = {"normalized": tmp_path / f"{name}.parquet", "report": tmp_path / f"{name}.json",
                   **{key: tmp_path / f"{name}-{key}" for key in OUTPUTS}, **extra}
        report, _ = evaluate_registered_run(tmp_path / "qrels.txt",
                                            RunEntry("run", str(run_path)), outputs=outputs,
                                            eval_params=evaluation)
        written = json.loads((tmp_path / f"{name}.json").read_text())
        assert written["contract"] == json.loads(json.dumps(report["contract"]))
        reports[name] = written
    contract = reports["plain"]["contract"]
    assert reports["alone"]["contract"] == contract
    assert json.loads((tmp_path / "contract.json").read_text()) == contract
    assert list(contract["profiles"]) == ["official", "mia5150"]
    assert contract["tie_rule"] == TIE_RULE and contract["plot_profile"] == "official"
    assert contract["run"] == {"path": run_path.as_posix(),
                               "sha256": hashlib.sha256(run_path.read_bytes()).hexdigest()}
    assert contract["qrels"]["sha256"] == hashlib.sha256(
        (tmp_path / "qrels.txt").read_bytes()).hexdigest()
