"""params.yaml as the pipeline reads it: an error about a value names the key to fix."""

from __future__ import annotations

import pytest

from skillret.errors import ConfigError
from skillret.pipeline.params import EvalParams, compare_section, load_yaml, stage_runs
from skillret.pipeline.register import register


@pytest.mark.parametrize("section,message", [
    ({"profiles": ["oficial"]},
     "params.yaml: eval.profiles: unknown profile 'oficial' (known: official, mia5150, "
     "recommended)"),
    ({"profiles": ["official", "deep"], "define": {"deep": {"metrics": ["NDCG@100"]}},
      "plot_profile": "dep"},
     "params.yaml: eval.plot_profile: profile 'dep' is not among eval.profiles "
     "(official, deep)"),
    ({"profiles": ["official"], "breakdown": ["n_required"]},
     "params.yaml: eval.breakdown_profile: profile 'recommended' is not among eval.profiles "
     "(official)"),
    ({"profiles": "official", "bogus": 1},
     "params.yaml: unknown key under eval: bogus (known: profiles, relevance_level, define, "
     "plot_profile, breakdown, breakdown_profile, headline)"),
    ({"headlin": ["NDCG@10"], "profile": ["official"]},
     "params.yaml: unknown keys under eval: headlin (did you mean headline?), profile (did you "
     "mean profiles?) (known: profiles, relevance_level, define, plot_profile, breakdown, "
     "breakdown_profile, headline)"),
])
def test_eval_errors_name_the_key(section, message):
    with pytest.raises(ConfigError) as caught:
        EvalParams.from_mapping(section, "params.yaml")
    assert str(caught.value) == message


def test_user_profiles_count_as_known():
    params = EvalParams.from_mapping({"profiles": ["deep"], "define": {
        "deep": {"metrics": ["NDCG@100"]}}}, "params.yaml")
    assert params.profiles == ["deep"] and params.plot_profile == "deep"
    # breakdown_profile is only checked when there is a breakdown
    assert params.breakdown_profile == "recommended" and params.breakdown == []


def test_compare_metrics_error_names_the_key():
    with pytest.raises(ConfigError) as caught:
        compare_section({"compare": {"metrics": ["Recall@5", "NDGC@10"]}}, "params.yaml")
    assert str(caught.value).startswith(
        "params.yaml: compare.metrics: unknown measure 'NDGC' in 'NDGC@10'")


def test_stage_runs_are_registered_then_fused_each_checked():
    params = {"runs": {"b": "b.trec", "a": "a.trec"}, "fuse": {"h": {"runs": ["a", "b"]}}}
    assert stage_runs(params) == ["b", "a", "h"]
    assert stage_runs({"runs": {"a": "a.trec"}}) == ["a"]
    with pytest.raises(ConfigError, match="run name 'my run' is not a plain name"):
        stage_runs({"runs": {"my run": "x.trec"}})


def test_register_words_a_bad_params_file_as_the_pipeline_does(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("runs: [\n")
    (tmp_path / "a.trec").write_text("q1 Q0 s1 1 1.0 a\n")
    with pytest.raises(ConfigError) as by_register:
        register(params, [tmp_path / "a.trec"])
    with pytest.raises(ConfigError) as by_pipeline:
        load_yaml(params)
    assert str(by_register.value) == str(by_pipeline.value) == (
        f"{params}:2: not valid YAML (did not find expected node content)")
