from __future__ import annotations

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.errors import ConfigError
from skillret.measures import registry
from skillret.scoring.names import Metric, format_metric, parse_metric

FORMS = [(m.name, k) for m in registry.all_measures()
         for k in ([1] if m.cutoff else []) + ([None] if m.whole else [])]


@settings(max_examples=examples(300))
@given(st.sampled_from(FORMS), st.integers(1, 10_000), st.integers(1, 5))
def test_names_round_trip(form, k, rel):
    measure, cut = form
    metric = Metric(measure, None if cut is None else k, rel)
    assert parse_metric(format_metric(metric)) == metric


def test_official_names_carry_no_level():
    assert format_metric(Metric("NDCG", 10)) == "NDCG@10"
    assert format_metric(Metric("MRR", 5, 2)) == "MRR(rel=2)@5"
    assert format_metric(Metric("MAP", None, 2)) == "MAP(rel=2)"
    assert parse_metric("ndcg_cut@10") == Metric("NDCG", 10)
    assert parse_metric("P@5", rel=2) == Metric("Precision", 5, 2)


#: The names of issue 31's table, as each tool writes them, and the metric each one means there.
NEIGHBOURS = {
    # ir_measures
    "nDCG@10": Metric("NDCG", 10), "P@5": Metric("Precision", 5), "R@5": Metric("Recall", 5),
    "RR@5": Metric("MRR", 5), "P(rel=2)@5": Metric("Precision", 5, 2),
    "AP@10": Metric("MAP", 10), "AP": Metric("MAP", None), "Success@1": Metric("Success", 1),
    "Judged@10": Metric("Judged", 10), "Rprec": Metric("RPrec", None),
    "Bpref": Metric("Bpref", None), "nDCG": Metric("NDCG", None), "RR": Metric("MRR", None),
    # trec_eval's -m names and pytrec_eval's keys
    "ndcg_cut_10": Metric("NDCG", 10), "ndcg_cut.10": Metric("NDCG", 10),
    "map_cut_10": Metric("MAP", 10), "recall_5": Metric("Recall", 5),
    "P_5": Metric("Precision", 5), "P.5": Metric("Precision", 5),
    "success_1": Metric("Success", 1), "recip_rank": Metric("MRR", None),
    "ndcg": Metric("NDCG", None), "map": Metric("MAP", None), "bpref": Metric("Bpref", None),
    # ranx
    "hit_rate@5": Metric("Success", 5), "r-precision": Metric("RPrec", None),
    "ndcg@10": Metric("NDCG", 10), "map@10": Metric("MAP", 10), "mrr@10": Metric("MRR", 10),
    "precision@5": Metric("Precision", 5), "recall@5": Metric("Recall", 5),
}


@pytest.mark.parametrize("written", sorted(NEIGHBOURS))
def test_every_neighbours_name_parses_to_its_measure(written):
    for variant in (written, written.upper(), written.lower()):
        metric = parse_metric(variant)
        assert metric == NEIGHBOURS[written], variant
        assert parse_metric(metric.name) == metric    # the canonical name is a name too
    assert parse_metric(written).name == format_metric(NEIGHBOURS[written])


def test_every_listed_tool_name_parses():
    """What `skillret-eval measures` lists as each tool's name is accepted."""
    for measure in registry.all_measures():
        for tool in registry.TOOLS:
            for written in measure.tools.get(tool, ()):
                name = written.replace("K", "7") if written.endswith(("@K", "_K", ".K")) \
                    else written
                assert parse_metric(name).measure == measure.name, (tool, written)


@pytest.mark.parametrize("name", ["hits@5", "Hit@1", "HITS@10"])
def test_ambiguous_names_are_refused_with_their_meanings(name):
    with pytest.raises(ConfigError) as caught:
        parse_metric(name)
    message = str(caught.value)
    assert "\n" not in message and "ambiguous" in message
    assert "Success@K" in message and "ranx's hits@K" in message


@pytest.mark.parametrize("bad, problem", [
    ("NDCG@0", "cutoff"), ("Foo@5", "unknown measure 'Foo'"), ("NDCG@x", "not a metric name"),
    ("MRR(rel=0)@5", "relevance level"), ("Success", "needs a cutoff"),
    ("map_cut", "needs a cutoff"), ("RPrec@10", "takes no cutoff"),
    ("recip_rank@5", "write MRR@5"), ("Bpref@5", "takes no cutoff"),
])
def test_bad_names_are_refused(bad, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_metric(bad)
