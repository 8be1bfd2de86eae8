"""The one table of measures: everything that lists measures derives from it, and adding a
measure is one new file."""

from __future__ import annotations

import importlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import skillret
from skillret.scoring import names, profiles
from skillret.errors import ConfigError
from skillret.measures import registry
from skillret.render.tables import catalogue_text

ROOT = Path(__file__).resolve().parents[2]
SIX = ("NDCG", "MAP", "Recall", "Precision", "Completeness", "MRR")   # plotted, vs K
ALL = SIX + ("Success", "RPrec", "Bpref", "Judged")
MODULES = {"NDCG": "ndcg", "MAP": "average_precision", "Recall": "recall",
           "Precision": "precision", "Completeness": "completeness", "MRR": "reciprocal_rank",
           "Success": "success", "RPrec": "r_precision", "Bpref": "bpref", "Judged": "judged"}


def test_each_measure_is_registered_beside_its_definition():
    assert registry.names() == ALL
    assert registry.names("official") == SIX[:5]
    assert registry.names("plotted") == SIX
    for name, module_name in MODULES.items():
        module = importlib.import_module(f"skillret.measures.{module_name}")
        measure = registry.lookup(name)
        assert module.MEASURE is measure
        assert measure.compute is module.compute
        assert measure.definition == module.__doc__.strip()
        # the formula is stated, for each form
        assert measure.cutoff == (f"{name}@K" in measure.definition)
        text = " ".join(measure.definition.split())
        assert measure.whole == (f" {name} = " in text or f"{name}, without a cutoff" in text)


def test_lists_of_measures_derive_from_the_registry():
    assert registry.names() == ALL
    assert registry.lookup("ndcg_cut").name == "NDCG"
    assert registry.lookup("RECIP_RANK").name == "MRR"
    for measure in registry.all_measures():
        assert all(registry.lookup(s) is measure for s in measure.forms())
    official = profiles.BUILTIN["official"]
    assert official.metrics == tuple(f"{m}@{k}" for m in registry.names("official")
                                     for k in (5, 10, 15))
    assert list(skillret.trec_eval({"q": {"a": 1}}, {"q": {"a": 1.0}}, k_values=(3,))) == [
        f"{m}@3" for m in registry.names("official")]


def plotted_measure_lists() -> dict[str, list[str]]:
    """Every list of measures the plots name: ``y`` lists in dvc.yaml (top level and stages)
    and the ``fold`` lists of the Vega-Lite templates in plots/templates/."""
    found: dict[str, list[str]] = {}

    def visit(where: str, y) -> None:
        if isinstance(y, dict):  # {file: names}
            for file, names in y.items():
                visit(f"{where} ({file})", names)
        elif isinstance(y, list):
            found[where] = list(y)
        elif isinstance(y, str):
            found[where] = [y]

    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    plots = list(dvc.get("plots") or [])
    for stage in (dvc.get("stages") or {}).values():
        plots += list((stage.get("do", stage)).get("plots") or [])
    for plot in plots:
        for name, spec in (plot.items() if isinstance(plot, dict) else []):
            if isinstance(spec, dict) and "y" in spec:
                if str(spec.get("template", "")).endswith("breakdown.json"):
                    continue  # a profile's metrics by stratum (long records), not measures
                visit(f"dvc.yaml plot {name}", spec["y"])
    for template in sorted((ROOT / "plots" / "templates").glob("*.json")):
        for step in json.loads(template.read_text()).get("transform", []):
            if "fold" in step:
                found[f"{template.relative_to(ROOT)} fold"] = list(step["fold"])
    return found


def test_plots_name_exactly_the_registered_measures():
    """dvc.yaml and the plot templates cannot import Python: their lists are checked here."""
    lists = plotted_measure_lists()
    every = [names for names in lists.values() if len(names) > 1]
    assert every, f"no plot lists the measures together: {lists}"
    for where, names in lists.items():
        assert set(names) <= set(registry.names("plotted")), f"{where} plots an unknown measure"
        if len(names) > 1:
            assert sorted(names) == sorted(registry.names("plotted")), \
                f"{where} must plot every registered measure: {names}"


def _hits(ranking, k, rel):
    return ranking.column(ranking.relevant_so_far(rel), k).astype(np.float64)


@pytest.fixture
def toy_measure(monkeypatch):
    """A toy measure, registered through the public API, gone afterwards."""
    monkeypatch.setattr(registry, "_TABLE", dict(registry._TABLE))
    monkeypatch.setattr(registry, "_SPELLINGS", dict(registry._SPELLINGS))
    return registry.register("Found", _hits, "Found@K: relevant results within the top K.\n",
                             aliases=("num_rel_ret",), order=200)


def test_a_registered_measure_reaches_names_profiles_catalogue_and_scores(toy_measure):
    assert registry.names() == ALL + ("Found",)
    assert names.parse_metric("num_rel_ret(rel=2)@3") == names.Metric("Found", 3, 2)
    define = {"toy": {"metrics": {"Found": [1, 3], "NDCG": [3]}, "query_set": "all-judged"}}
    [toy] = profiles.resolve_profiles(["toy"], define=define)
    assert toy.metrics == ("Found@1", "Found@3", "NDCG@3")
    text = catalogue_text(profiles.catalogue(define))
    assert "Found@K: relevant results within the top K.\n  (also written num_rel_ret;" in text
    assert text.index("Judged@K") < text.index("Found@K")  # listed in registry order
    qrels = {"q1": {"A": 1, "B": 1, "C": 1}, "q2": {"D": 1}}
    run = {"q1": {"X": 5.0, "A": 4.0, "Y": 3.0, "C": 2.0}}
    got = skillret.evaluate(qrels, run, "toy", define=define)
    assert got["Found@1"] == 0.0                # X is not relevant; q2 (absent) scores 0
    assert got["Found@3"] == 0.5                # (A) / 2 queries
    assert got["NDCG@3"] == round((1 / math.log2(3)) / (1 + 1 / math.log2(3) + 0.5) / 2, 5)


@pytest.mark.parametrize("name, aliases, definition, problem", [
    ("NDCG", (), "d", "ndcg already names 'NDCG'"),
    ("Other", ("P",), "d", "p already names 'Precision'"),
    ("Bad-Name", (), "d", "letters and underscores"),
    ("Blank", (), "  ", "needs a definition"),
])
def test_registration_refuses_clashes_and_unparseable_names(name, aliases, definition, problem):
    with pytest.raises(ValueError, match=problem):
        registry.register(name, _hits, definition, aliases=aliases)
    assert registry.names() == ALL


def test_adding_a_measure_is_one_new_file(tmp_path):
    """Copy the package, drop one module into skillret/measures/, and use it end to end."""
    shutil.copytree(ROOT / "skillret", tmp_path / "skillret",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "skillret" / "measures" / "found.py").write_text('''"""Found@K: relevant
results within the top K (trec_eval's ``num_rel_ret`` cut at K)."""

import numpy as np

from .registry import Ranking, register


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    return ranking.column(ranking.relevant_so_far(rel), k).astype(np.float64)


MEASURE = register("Found", compute, __doc__, order=200)
''')
    code = """
import skillret
from skillret.render import tables as report
from skillret.measures import registry
from skillret.scoring import profiles
assert skillret.__file__.startswith(%r), skillret.__file__
define = {"toy": {"metrics": ["Found@2", "MRR@2"]}}
print(registry.names())
print(skillret.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, "toy",
                        define=define))
print("Found@K: relevant" in report.catalogue_text(profiles.catalogue(define)))
""" % str(tmp_path)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        str(ALL + ("Found",)), "{'Found@2': 2.0, 'MRR@2': 1.0}", "True"]
