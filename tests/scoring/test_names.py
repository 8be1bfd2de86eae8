from __future__ import annotations

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.errors import ConfigError
from skillret.measures.registry import names as measure_names
from skillret.scoring.names import Metric, format_metric, parse_metric


@settings(max_examples=examples(300))
@given(st.sampled_from(measure_names()), st.integers(1, 10_000), st.integers(1, 5))
def test_names_round_trip(measure, k, rel):
    metric = Metric(measure, k, rel)
    assert parse_metric(format_metric(metric)) == metric


def test_official_names_carry_no_level():
    assert format_metric(Metric("NDCG", 10)) == "NDCG@10"
    assert format_metric(Metric("MRR", 5, 2)) == "MRR(rel=2)@5"
    assert parse_metric("ndcg_cut@10") == Metric("NDCG", 10)
    assert parse_metric("P@5", rel=2) == Metric("Precision", 5, 2)


@pytest.mark.parametrize("bad", ["NDCG", "NDCG@0", "Foo@5", "NDCG@x", "MRR(rel=0)@5"])
def test_bad_names_are_refused(bad):
    with pytest.raises(ConfigError):
        parse_metric(bad)
