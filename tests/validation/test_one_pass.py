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

import contextlib
import hashlib
import json
from pathlib import Path

from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yaml

from skillret.analysis.breakdown import Facets
from skillret.io import text
from skillret.io.readers import open_run, read_qrels
from skillret.pipeline import layout
from skillret.pipeline.project_stages import normalize_qrels
from skillret.pipeline.comparable import contract, counts
from skillret.pipeline.run_stages import TIE_RULE, curve_profile, score, write_scores
from skillret.scoring.evaluator import Evaluator
from skillret.scoring.profiles import resolve_profiles

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


def project(folder: Path, run_path: Path, eval_section: dict) -> None:
    """The case as a project: params.yaml registering the run, the canonical qrels where the
    score stage reads them."""
    (folder / "params.yaml").write_text(yaml.safe_dump({
        "runs": {"run": run_path.name}, "run_options": {"run": {}}, "eval": eval_section}))
    normalize_qrels(folder / "qrels.txt", folder / layout.QRELS)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_one_pass_writes_what_scoring_the_canonical_file_writes(tmp_path_factory, case):
    qrels, run, shuffled, rnd, block = case
    folder = tmp_path_factory.mktemp("case")
    run_path = write_case(folder, qrels, run, shuffled, rnd)
    profiles = ["official", "mia5150", "recommended"]
    project(folder, run_path, {"profiles": profiles, "relevance_level": 1,
                               "breakdown": ["n_required"], "breakdown_profile": "recommended"})
    facets = Facets(facets=["n_required"])
    blocks = text.run_batches
    if block is not None:  # small blocks: a query's lines straddle batches and chunks
        text.run_batches = lambda path, *, block_size=None, **kw: blocks(path, block_size=block,
                                                                          **kw)
    try:
        with contextlib.chdir(folder):
            score("run")
    finally:
        text.run_batches = blocks
    one = {key: pattern.format("run") for key, pattern in layout.RUN_OUTPUTS.items()}
    two = {key: folder / f"two-{key}" for key in OUTPUTS}
    resolved = resolve_profiles(profiles, relevance_level=1)
    base = next(p for p in resolved if p.name == "official")
    curve = curve_profile(base)
    scores = Evaluator(read_qrels(folder / layout.QRELS), resolved,
                       extra_metrics=curve.parsed()).evaluate(
        open_run(folder / one["normalized"]))
    qrels_file = folder / layout.QRELS
    about = {"judgments": {"sha256": hashlib.sha256(qrels_file.read_bytes()).hexdigest(),
                           **counts(read_qrels(qrels_file))},
             "contract": contract(resolved),
             "judged": json.loads((folder / one["report"]).read_text())["judged"]}
    write_scores(scores, metrics=two["metrics"], per_query=two["per_query"], plots=two["plots"],
                 curve=curve, facets=facets, breakdown_profile="recommended",
                 about=about)
    for key in OUTPUTS:
        assert (folder / one[key]).read_bytes() == two[key].read_bytes(), key


def test_the_validation_report_carries_the_metric_contract(tmp_path, monkeypatch):
    """The validation report holds the metric contract: what the numbers mean, and the sha256
    of the run and the qrels scored."""
    run_path = write_case(tmp_path, {"q0": {"s00": 2, "s01": 1}, "q1": {"s02": 1}},
                          {"q0": {"s01": 0.5, "s00": 0.5}, "q1": {"s03": 1.0}}, False, None)
    project(tmp_path, run_path, {"profiles": ["official", "mia5150"], "relevance_level": 1})
    monkeypatch.chdir(tmp_path)
    score("run")
    contract = json.loads(Path(layout.RUN_OUTPUTS["report"].format("run")).read_text())["contract"]
    assert list(contract["profiles"]) == ["official", "mia5150"]
    assert contract["tie_rule"] == TIE_RULE and contract["plot_profile"] == "official"
    assert contract["run"] == {"path": "run.trec",
                               "sha256": hashlib.sha256(run_path.read_bytes()).hexdigest()}
    assert contract["qrels"] == {"path": layout.QRELS, "sha256": hashlib.sha256(
        Path(layout.QRELS).read_bytes()).hexdigest()}
