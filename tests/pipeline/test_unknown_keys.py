"""Every section of params.yaml names an unknown key, with the closest known one (no DVC)."""

from __future__ import annotations

import pytest

from skillret.errors import ConfigError
from skillret.pipeline import params, run_stages

RUNS = {"runs": {"a": "a.trec", "b": "b.trec"}, "run_options": {"a": {}, "b": {}}}
CASES = {
    "eval": (lambda: params.EvalParams.from_mapping({"headlin": ["NDCG@10"]}, "params.yaml"),
             "unknown key under eval: headlin (did you mean headline?)"),
    "run_options": (lambda: params.run_entry({**RUNS, "run_options": {"a": {"fromat": "trec"}}},
                                             "a"),
                    "unknown key under run_options.a: fromat (did you mean format?)"),
    "qrels": (lambda: params.qrels_section({"qrels": {"path": "q", "fromat": None}}),
              "unknown key under qrels: fromat (did you mean format?)"),
    "compare": (lambda: params.compare_section({"compare": {"baselin": "a"}}),
                "unknown key under compare: baselin (did you mean baseline?)"),
    "validate": (lambda: params.validate_section({"validate": {"strickt": True}}),
                 "unknown key under validate: strickt (did you mean strict?)"),
    "fuse": (lambda: run_stages.fuse_section(
        {**RUNS, "fuse": {"h": {"methd": "rrf", "runs": ["a", "b"]}}}, "params.yaml"),
        "unknown key under fuse.h: methd (did you mean method?)"),
}


@pytest.mark.parametrize("section", CASES)
def test_an_unknown_key_is_named_with_the_closest_known_one(section):
    check, message = CASES[section]
    with pytest.raises(ConfigError) as raised:
        check()
    assert str(raised.value).startswith(f"params.yaml: {message}")
    assert "\n" not in str(raised.value)
