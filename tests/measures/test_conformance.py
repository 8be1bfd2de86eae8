"""trec_eval's own conformance files, read in place from ../shared/conformance/trec_eval/.

The expected values are printed with four decimals; every `all` row (and every per-query row) of
the measures this project maps must print identically.
"""

from __future__ import annotations

import pytest

from skillret.io.readers import open_run, read_qrels
from skillret.scoring.names import Metric
from skillret.scoring.profiles import Profile
from skillret.api import score
from skillret.scoring.evaluator import Evaluator

TREC = {"P": "Precision", "recall": "Recall", "ndcg_cut": "NDCG", "map_cut": "MAP"}
CUTOFFS = (5, 10, 15)
NAMES = tuple(f"{m}@{k}" for m in TREC.values() for k in CUTOFFS)


def expected(path):
    """{(trec measure, query): printed value} from a trec_eval -q output file."""
    out = {}
    for line in path.read_text().splitlines():
        measure, query, value = line.split()
        out[(measure, query)] = value
    return out


def our_name(trec_name: str) -> str:
    base, k = trec_name.rsplit("_", 1)
    return f"{TREC[base]}@{k}"


def check(scores, profile, table):
    rows = [key for key in table if key[0].rsplit("_", 1)[0] in TREC
            and key[0].rsplit("_", 1)[1] in {"5", "10", "15"}]
    assert len(rows) >= 12
    for measure, query in rows:
        if query == "all":
            got = scores.metrics[profile][our_name(measure)]
        else:
            frame = scores.per_query_columns(profile)
            i = list(frame["query_id"]).index(query)
            got = frame[our_name(measure)][i]
        assert f"{got:.4f}" == table[(measure, query)], (measure, query)


def test_out_test_aq_official_profile(conformance):
    profile = Profile("official-unrounded", NAMES, query_set="run-judged", rounding=None)
    scores = score(read_qrels(conformance / "qrels.test"),
                   open_run(conformance / "results.test"), [profile])
    table = expected(conformance / "out.test.aq")
    check(scores, "official-unrounded", table)
    assert scores.query_counts["evaluated"]["official-unrounded"] == int(table[("num_q", "all")])


def test_out_test_aqc_all_judged_on_truncated_run(conformance):
    profile = Profile("all-judged", NAMES, query_set="all-judged", rounding=None)
    scores = score(read_qrels(conformance / "qrels.test"),
                   open_run(conformance / "results.trunc"), [profile])
    table = expected(conformance / "out.test.aqc")
    check(scores, "all-judged", table)
    assert scores.query_counts["evaluated"]["all-judged"] == int(table[("num_q", "all")]) == 3
    assert scores.query_counts["missing"] == 1  # 302, the num_ret 0 rows


def test_out_test_aql_relevance_level_2(conformance):
    profile = Profile("level2", NAMES, query_set="run-judged", relevance_level=2, rounding=None)
    scores = score(read_qrels(conformance / "qrels.rel_level"),
                   open_run(conformance / "results.test"), [profile])
    check(scores, "level2", expected(conformance / "out.test.aql"))


@pytest.mark.parametrize("qrels,run,out,level", [
    ("qrels.test", "results.test", "out.test.aq", 1),
    ("qrels.rel_level", "results.test", "out.test.aql", 2),
])
def test_mrr_is_recip_rank_when_the_first_hit_is_within_k(conformance, qrels, run, out, level):
    """recip_rank has no cutoff; MRR@1000 equals it when every ranking is shorter than 1000."""
    table = expected(conformance / out)
    evaluator = Evaluator(read_qrels(conformance / qrels), [],
                          extra_metrics=[Metric("MRR", 1000, level)])
    res = evaluator.query_results(open_run(conformance / run))[0]
    for i, query in enumerate(res.queries.to_pylist()):
        value = res.values[Metric("MRR", 1000, level)][i]
        assert f"{value:.4f}" == table[("recip_rank", query)]


#: trec_eval's names of the measures added for issue 31, by the metric they are
NEW = {"success_1": "Success@1", "success_5": "Success@5", "success_10": "Success@10",
       "Rprec": "RPrec", "bpref": "Bpref", "map": "MAP", "ndcg": "NDCG", "recip_rank": "MRR"}


@pytest.mark.parametrize("qrels,run,out,query_set,level", [
    ("qrels.test", "results.test", "out.test.aq", "run-judged", 1),
    ("qrels.test", "results.trunc", "out.test.aqc", "all-judged", 1),
    ("qrels.rel_level", "results.test", "out.test.aql", "run-judged", 2),
])
def test_new_measures_print_as_trec_eval_does(conformance, qrels, run, out, query_set, level):
    """Success@K, RPrec, Bpref and the whole-ranking MAP, NDCG and MRR: every per-query and
    `all` row; Judged@K is 1 - trec_eval 10's unj_K where the two agree (no negative grade, a
    ranking at least K long)."""
    profile = Profile("new", tuple(NEW.values()) + ("Judged@5", "Judged@10"),
                      query_set=query_set, relevance_level=level, rounding=None)
    scores = score(read_qrels(conformance / qrels), open_run(conformance / run), [profile])
    table = expected(conformance / out)
    frame = scores.per_query_columns("new")
    rows = list(frame["query_id"])
    checked = 0
    for (measure, query), printed in table.items():
        if measure in NEW:
            got = scores.metrics["new"][NEW[measure]] if query == "all" \
                else frame[NEW[measure]][rows.index(query)]
            assert f"{got:.4f}" == printed, (measure, query)
            checked += 1
        elif measure in ("unj_5", "unj_10") and query != "all" and level == 1 \
                and int(table[("num_ret", query)]) >= int(measure[4:]):
            got = frame[f"Judged@{measure[4:]}"][rows.index(query)]
            assert f"{1 - got:.4f}" == printed, (measure, query)
            checked += 1
    assert checked >= 4 * len(NEW)


@pytest.mark.parametrize("ci", ["true", "TRUE", None, "false", ""])
def test_missing_conformance_files_fail_under_ci_and_skip_elsewhere(tmp_path, monkeypatch, ci):
    """Without trec_eval's files the conformance tests cannot check anything: under CI that is a
    failure (with a one-line reason), elsewhere a skip (with the same reason)."""
    import conftest

    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    missing = tmp_path / "shared" / "conformance" / "trec_eval"
    outcome = pytest.fail.Exception if ci in ("true", "TRUE") else pytest.skip.Exception
    with pytest.raises(outcome) as caught:
        conftest.conformance_files(missing)
    reason = str(caught.value)
    assert len(reason.splitlines()) == 1 and f"not found at {missing}" in reason, reason
    assert reason.startswith("CI=true: ") == (outcome is pytest.fail.Exception)
    if outcome is pytest.fail.Exception:
        assert not caught.value.pytrace      # the reason alone, no traceback
    # Present, the files are used whatever CI says.
    (missing / "qrels.test").parent.mkdir(parents=True)
    (missing / "qrels.test").write_text("301 0 d 1\n")
    assert conftest.conformance_files(missing) == missing
