"""The pipeline as a researcher uses it: real git and real dvc in a temporary directory.

One session fixture (``sample_pipeline``, tests/sample_pipeline.py) builds a project (this
repository's pipeline files, package, example retriever and sample data), commits it and runs
``dvc repro`` once in a clone; each test then works on its own copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import dvc_server
import sample_pipeline as sample
import yaml

ROOT = Path(__file__).resolve().parents[2]
GIT_ENV = dict(sample.GIT_ENV)
AGGREGATE = {"charts", "compare"}   # the stages over every run
RUN_OUTPUTS = ["metrics/runs/{}.json", "reports/validation/{}.json", "plots/runs/{}.json",
               "outputs/runs/{}.parquet", "outputs/per_query/{}.tsv"]

pytestmark = pytest.mark.pipeline


def run(cwd: Path, *args: str, check: bool = True, env: dict | None = None):
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **GIT_ENV, **(env or {})})
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def dvc(cwd: Path, *args: str, check: bool = True, env: dict | None = None):
    return run(cwd, *dvc_server.command(), *args, check=check, env=env)


def git(cwd: Path, *args: str, check: bool = True):
    return run(cwd, "git", *args, check=check)


def skillret_eval(cwd: Path, *args: str, check: bool = True):
    return run(cwd, sys.executable, "-m", "skillret.cli", *args, check=check)


def stages_run(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def set_params(repo: Path, update) -> None:
    path = repo / "params.yaml"
    params = yaml.safe_load(path.read_text())
    update(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def origin(sample_pipeline, tmp_path_factory) -> Path:
    """A committed project with the sample pipeline reproduced once, in a clean clone (the
    session's: tests read it; the ``repo`` fixture copies it)."""
    home = tmp_path_factory.mktemp("home")  # no user git config leaks into the tests
    GIT_ENV.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    assert stages_run(sample_pipeline.repro_stdout) == {
        "inputs", "retrieve@bm25-desc", "retrieve@bm25-full", "normalize_qrels", "settings",
        "score@bm25-desc", "score@bm25-full", "fuse_inputs@hybrid", "fuse@hybrid",
        "score_fused@hybrid", "plots_page"} | AGGREGATE
    return sample_pipeline.path


@pytest.fixture
def repo(origin, tmp_path) -> Path:
    return sample.copy(origin, tmp_path / "project")


def metrics(repo: Path, run_name: str) -> dict:
    return json.loads((repo / "metrics" / "runs" / f"{run_name}.json").read_text())


def outputs_of(repo: Path, name: str) -> dict[str, bytes]:
    return {p.format(name): (repo / p.format(name)).read_bytes() for p in RUN_OUTPUTS}


def mark_package(repo: Path, marker: str) -> None:
    """A harmless package change that shows in every contract: proof of whose code ran."""
    path = repo / "skillret" / "pipeline" / "run_stages.py"
    path.write_text(path.read_text().replace('TIE_RULE = ("score', f'TIE_RULE = ("{marker} score',
                                             1))


def tie_rule(repo: Path, name: str = "bm25-full") -> str:
    report = json.loads((repo / "reports/validation" / f"{name}.json").read_text())
    return report["contract"]["tie_rule"]


# --- what a clean clone gives --------------------------------------------------------------

def test_clean_clone_reproduces_every_profile(origin):
    for name in ("bm25-desc", "bm25-full"):
        scores = metrics(origin, name)
        assert list(scores) == ["official", "mia5150", "recommended", "queries", "judgments",
                                "contract", "judged", "breakdown"]
        assert scores["queries"]["judged"] == 98 and scores["queries"]["in_both"] == 98
        assert 0.3 < scores["official"]["NDCG@10"] < 0.95
        for path in outputs_of(origin, name):
            assert (origin / path).is_file(), path
        report = json.loads((origin / "reports/validation" / f"{name}.json").read_text())
        contract = report["contract"]
        assert contract["tie_rule"].startswith("score descending")
        assert contract["run"]["path"] == f"runs/{name}.json"
        assert contract["qrels"]["path"] == "outputs/qrels.tsv"
        assert not (origin / "reports/contracts").exists()
        assert report["queries"]["in_both"] == 98 and isinstance(report["warnings"], list)
    assert metrics(origin, "bm25-full")["official"] != metrics(origin, "bm25-desc")["official"]
    assert not (origin / "build").exists()


def test_pipeline_numbers_equal_the_official_function(origin):
    pytest.importorskip("pytrec_eval")
    sys.path.insert(0, str(ROOT / "tests"))
    import reference

    qrels: dict = {}
    for line in (origin / "data/sample/qrels/test.jsonl").read_text().splitlines():
        row = json.loads(line)
        qrels.setdefault(row["query_id"], {})[row["skill_id"]] = row["relevance"]
    for name in ("bm25-desc", "bm25-full"):
        results = json.loads((origin / "runs" / f"{name}.json").read_text())["retrieval"]["test"]
        assert metrics(origin, name)["official"] == reference.official_trec_eval(qrels, results)


def _absent_outputs_folder(path: str, kind: str) -> bool:
    """True for a folder dependency (outputs/runs, outputs/per_query) that holds nothing but
    DVC's .gitignore: in a fresh clone the other stages' outputs in it are not checked out, and
    DVC says "modified" rather than "deleted" for such a folder."""
    folder = ROOT / path
    return kind == "modified" and folder.is_dir() and all(
        p.name == ".gitignore" for p in folder.rglob("*") if p.is_file())


def test_committed_state_is_consistent():
    """This repository's own dvc.lock matches its dvc.yaml, params and code: nothing committed
    is out of date (outputs kept in DVC's cache may be absent, as in a fresh clone)."""
    status = json.loads(dvc(ROOT, "status", "--json").stdout or "{}")
    stale = {}
    for stage, changes in status.items():
        for change in changes:
            if isinstance(change, dict) and set(change) <= {"changed deps", "changed outs"}:
                kinds = {kind for files in change.values() for path, kind in files.items()
                         if not _absent_outputs_folder(path, kind)}
                if kinds <= {"deleted", "not in cache"}:
                    continue
            stale.setdefault(stage, []).append(change)
    assert stale == {}, stale


# --- what reruns -----------------------------------------------------------------------------

def test_second_repro_runs_nothing(repo):
    before = {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")}
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == set()
    assert {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")} == before


def test_stage_deps_are_whole_code_units(repo):
    """At most 8 deps per stage; the code folders each stage imports are deps as wholes, so
    a change to any module a stage runs reruns it (and nothing else). A per-run stage
    (score@run, score_fused@name) reaches its code through reports/settings.json, which records
    the sha256 of the package and of its script (the settings stage depends on both): a fused
    run's stage depends on it, a registered run's on reports/run_settings/<run>.json, which
    records its sha256 (and the run's options: no per-run params for DVC to read)."""
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    settings = json.loads((repo / "reports" / "settings.json").read_text())
    from skillret.io.hashing import sha256, tree_sha256
    assert settings["code"] == {"skillret": tree_sha256(repo / "skillret"),
                                "stages/score.py": sha256(repo / "stages" / "score.py")}
    assert {"skillret", "stages/score.py"} <= {d["path"] for d in lock["settings"]["deps"]}
    for name, stage in lock.items():
        deps = [d["path"] for d in stage["deps"]]
        assert len(deps) <= 8, (name, deps)  # compare: + the canonical runs of its query reports
        words = stage["cmd"].split()
        script = (f"{words[2].replace('.', '/')}.py" if words[1] == "-m" else words[1])
        if name.startswith(("score@", "score_fused@")):
            if name.startswith("score@"):
                own = repo / "reports" / "run_settings" / f"{name[len('score@'):]}.json"
                assert json.loads(own.read_text())["settings_sha256"] == hashlib.sha256(
                    (repo / "reports" / "settings.json").read_bytes()).hexdigest()
                assert "params" not in stage, (name, stage["params"])
                deps = [d for d in deps if d != own.relative_to(repo).as_posix()] + [
                    "reports/settings.json"]
            assert "reports/settings.json" in deps and "skillret" not in deps, (name, deps)
            deps = deps + list(settings["code"])          # its code, through the settings
        assert script in deps, (name, deps)
        if name.startswith("retrieve"):
            assert not any(d.startswith("skillret") for d in deps)
        else:
            assert "skillret" in deps
        result = subprocess.run(f"{sys.executable} -X importtime {stage['cmd'][len('python '):]}",
                                shell=True, cwd=repo, capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr[-500:])
        for module in re.findall(r"\|\s+((?:skillret|retrievers)(?:\.\w+)*)\s*$",
                                 result.stderr, re.M):
            top = module.split(".")[0]
            assert top in deps or f"{top}/{module.split('.')[1]}.py" in deps, (name, module)
    blocks = re.split(r"^  (?=\S)", (repo / "dvc.lock").read_text(), flags=re.M)
    per_run = [block.count("\n") for block in blocks if block.startswith("score@")]
    assert len(per_run) == 2 and max(per_run) <= 60, per_run


def test_retriever_change_reruns_retrieval_and_scoring_change_never_does(repo):
    path = repo / "retrievers" / "bm25.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    assert stages_run(dvc(repo, "repro").stdout) == {"retrieve@bm25-desc", "retrieve@bm25-full"}
    path = repo / "skillret" / "validation" / "checks.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    assert stages_run(dvc(repo, "repro").stdout) == {
        "inputs", "normalize_qrels", "settings", "score@bm25-desc", "score@bm25-full",
        "fuse_inputs@hybrid", "fuse@hybrid", "score_fused@hybrid", "plots_page"} | AGGREGATE
    # the per-run stages' script reaches them through reports/settings.json's sha256 of it
    path = repo / "stages" / "score.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    ran = stages_run(dvc(repo, "repro").stdout)
    assert {"settings", "score@bm25-desc", "score@bm25-full", "score_fused@hybrid"} <= ran
    assert not ran & {"inputs", "normalize_qrels", "fuse@hybrid", "retrieve@bm25-desc"}, ran


def test_adding_a_run_runs_only_its_stage(repo):
    results = json.loads((repo / "runs" / "bm25-desc.json").read_text())["retrieval"]["test"]
    lines = [f"{q} Q0 {s} {r} {score!r} mine"
             for q, ranking in results.items()
             for r, (s, score) in enumerate(ranking.items(), 1)]
    (repo / "data" / "mine.trec").write_text("\n".join(lines) + "\n")
    set_params(repo, lambda p: (p["runs"].update({"mine": "data/mine.trec"}),
                                p["run_options"].update({"mine": {}})))
    result = dvc(repo, "repro")
    # inputs checks the new run's file and writes what it wrote (qrels.path): normalize_qrels
    # does not run. The fused run does not read the new run: fuse_inputs@hybrid (over every
    # run) finds its own runs unchanged, and fuse@hybrid does not run
    assert stages_run(result.stdout) == {"inputs", "settings", "score@mine",
                                         "fuse_inputs@hybrid"} | AGGREGATE
    assert metrics(repo, "mine")["official"] == metrics(repo, "bm25-desc")["official"]
    headline = json.loads((repo / "metrics/headline.json").read_text())
    assert headline["mine"]["NDCG@10"] == headline["bm25-desc"]["NDCG@10"]


def test_changing_one_run_changes_only_its_metrics(repo):
    full_before = (repo / "metrics/runs/bm25-full.json").read_bytes()
    desc_before = (repo / "metrics/runs/bm25-desc.json").read_bytes()
    set_params(repo, lambda p: p["retrieve"]["configs"]["bm25-desc"].update(
        fields=["name", "description", "skill_md"]))
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {  # hybrid fuses bm25-desc
        "retrieve@bm25-desc", "score@bm25-desc", "fuse_inputs@hybrid", "fuse@hybrid",
        "score_fused@hybrid"} | AGGREGATE
    assert (repo / "metrics/runs/bm25-full.json").read_bytes() == full_before
    assert (repo / "metrics/runs/bm25-desc.json").read_bytes() != desc_before


# --- fused runs --------------------------------------------------------------------------------

def test_fused_run_is_scored_like_a_run(origin):
    """fuse@hybrid fuses the two BM25 runs (RRF); score_fused@hybrid gives it every output a
    registered run has, with the metrics of the same fusion done and scored by the library."""
    import skillret

    fused = skillret.fuse({name: origin / "runs" / f"{name}.json"
                           for name in ("bm25-desc", "bm25-full")}, method="rrf")
    expected = skillret.score(origin / "outputs" / "qrels.tsv", fused,
                              ["official", "mia5150", "recommended"]).to_dict()
    scored = metrics(origin, "hybrid")
    assert set(scored.pop("breakdown")) == {"n_required", "skill_category"}  # eval.breakdown
    assert scored.pop("judgments") == metrics(origin, "bm25-full")["judgments"]
    assert scored.pop("contract") == metrics(origin, "bm25-full")["contract"]
    assert set(scored.pop("judged")) == {"Judged@5", "Judged@10", "Judged@15"}
    assert scored == json.loads(json.dumps(expected))
    lines = (origin / "outputs" / "fused" / "hybrid.trec").read_text().splitlines()
    assert lines[0].split()[1::2] == ["Q0", "1", "hybrid"]
    for path in ("outputs/fused/hybrid.parquet", "outputs/per_query/hybrid.tsv",
                 "reports/fusion/hybrid.json", "reports/validation/hybrid.json",
                 "plots/runs/hybrid.json"):
        assert (origin / path).is_file(), path


def test_changing_a_fusion_reruns_only_its_stages(repo):
    before = metrics(repo, "hybrid")
    set_params(repo, lambda p: p["fuse"].update(
        {"hybrid": {"method": "combmnz", "runs": ["bm25-desc", "bm25-full"],
                    "norm": "zscore", "weights": {"bm25-full": 2}},
         "mix": {"method": "rrf", "runs": ["hybrid", "bm25-desc"], "k": 10, "depth": 20}}))
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {"settings", "fuse_inputs@hybrid", "fuse@hybrid",
                                         "score_fused@hybrid", "fuse_inputs@mix", "fuse@mix",
                                         "score_fused@mix"} | AGGREGATE
    assert metrics(repo, "hybrid") != before
    assert metrics(repo, "mix")["queries"]["in_both"] == 98


def test_bad_fusion_stops_repro_with_one_line(repo):
    set_params(repo, lambda p: p["fuse"].update(
        {"hybrid": {"method": "rrf", "runs": ["bm25-desc", "mix"]},
         "mix": {"method": "rrf", "runs": ["hybrid", "bm25-full"]}}))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    assert "error: params.yaml: a cycle of fused runs: hybrid -> mix -> hybrid" \
        in result.stderr
    assert "Traceback" not in result.stdout + result.stderr

# --- registering runs ------------------------------------------------------------------------

def csv_run(repo: Path, path: str) -> None:
    """The bm25-desc run as a CSV whose columns have no standard names."""
    results = json.loads((repo / "runs" / "bm25-desc.json").read_text())["retrieval"]["test"]
    rows = ["request,skill_uuid,overlap"] + [f"{q},{s},{score!r}" for q, ranking in results.items()
                                for s, score in ranking.items()]
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text("\n".join(rows) + "\n")


def test_register_keeps_comments_and_order_and_makes_names_unique(repo):
    before = (repo / "params.yaml").read_text()
    for sub in ("embed", "other"):
        (repo / "results" / sub).mkdir(parents=True)
        shutil.copy(repo / "runs/bm25-full.json", repo / "results" / sub / "e5.json")
    shutil.copy(repo / "runs/bm25-desc.json", repo / "results/embed/bge.json")
    out = skillret_eval(repo, "register", "results/embed/bge.json", "results/embed/e5.json",
                        "results/other/e5.json").stdout
    assert out.splitlines() == ["bge: results/embed/bge.json (registered)",
                                "e5: results/embed/e5.json (registered)",
                                "e5-2: results/other/e5.json (registered)"]
    again = skillret_eval(repo, "register", "results/embed/e5.json").stdout
    assert again == "e5: results/embed/e5.json (already registered)\n"
    after = (repo / "params.yaml").read_text()
    # everything before the runs section, comments included, is unchanged
    assert after.startswith(before[:before.index("runs:")])
    assert "# Register a run (`skillret-eval register FILE...` writes both lines)" in after
    assert "  plot_profile: official # query set and level of the metric-vs-K curves" in after
    runs = yaml.safe_load(after)["runs"]
    assert list(runs) == ["bm25-desc", "bm25-full", "bge", "e5", "e5-2"]
    assert yaml.safe_load(after)["run_options"]["e5-2"] == {}
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {"inputs", "settings", "score@bge", "score@e5",
                                         "score@e5-2", "fuse_inputs@hybrid"} | AGGREGATE
    assert metrics(repo, "e5-2")["official"] == metrics(repo, "bm25-full")["official"]


def test_a_run_with_options_and_the_hint_followed(repo):
    """A CSV run with its own column names fails with a hint naming the params key; following
    the hint (here through `register --columns`) makes it pass, and reruns that run only."""
    csv_run(repo, "results/mine.csv")
    refused = skillret_eval(repo, "register", "results/mine.csv", check=False)  # read at once
    assert refused.returncode == 2 and "or pass --columns query=NAME" in refused.stderr
    set_params(repo, lambda p: (p["runs"].update(mine="results/mine.csv"),  # by hand
                                p["run_options"].update(mine={})))
    failed = dvc(repo, "repro", check=False)
    assert failed.returncode != 0
    message = failed.stdout + failed.stderr
    assert ("results/mine.csv: has no query, skill or score column (columns: request, "
            "skill_uuid, overlap) (name them 'query_id', 'skill_id' and 'score' or set "
            "run_options.mine.columns: query=NAME,skill=NAME,score=NAME in params.yaml)"
            ) in message
    # the hint, followed
    skillret_eval(repo, "register", "results/mine.csv", "--name", "mine",
                  "--columns", "query=request,skill=skill_uuid,score=overlap", "--format", "csv")
    params = yaml.safe_load((repo / "params.yaml").read_text())
    assert params["runs"]["mine"] == "results/mine.csv"
    assert params["run_options"]["mine"] == {"format": "csv",
                                             "columns": "query=request,skill=skill_uuid,score=overlap"}
    result = dvc(repo, "repro")  # settings writes the run's options: its stage only reruns
    assert stages_run(result.stdout) == {"settings", "score@mine",
                                         "fuse_inputs@hybrid"} | AGGREGATE
    assert metrics(repo, "mine")["official"] == metrics(repo, "bm25-desc")["official"]


def test_a_run_without_its_options_entry_is_named(repo):
    set_params(repo, lambda p: p["runs"].update({"mine": "runs/bm25-desc.json"}))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    assert ("settings: error: params.yaml: run 'mine' has no run_options.mine entry ({} when "
            "its format is detected; `skillret-eval register --name mine runs/bm25-desc.json` "
            "writes it)\n") in result.stdout + result.stderr
    assert "score@mine" not in stages_run(result.stdout)
    # the same check in the stage itself (when it runs outside DVC), followed
    check = run(repo, sys.executable, "-m", "stages.score", "mine", check=False)
    assert check.returncode == 2
    assert check.stderr == ("score@mine: error: params.yaml: run 'mine' has no run_options.mine "
                            "entry ({} when its format is detected; `skillret-eval register "
                            "--name mine runs/bm25-desc.json` writes it)\n")
    skillret_eval(repo, "register", "--name", "mine", "runs/bm25-desc.json")
    assert yaml.safe_load((repo / "params.yaml").read_text())["run_options"]["mine"] == {}
    assert stages_run(dvc(repo, "repro").stdout) == {"settings", "score@mine",
                                                     "fuse_inputs@hybrid"} | AGGREGATE


def test_cli_columns_apply_to_the_run_and_qrels_columns_to_the_qrels(repo):
    csv_run(repo, "mine.csv")
    rows = ["q,s,grade"] + [f"{json.loads(line)['query_id']},{json.loads(line)['skill_id']},"
                            f"{json.loads(line)['relevance']}" for line in
                            (repo / "data/sample/qrels/test.jsonl").read_text().splitlines()]
    (repo / "qrels.csv").write_text("\n".join(rows) + "\n")
    failed = skillret_eval(repo, "score", "--qrels", "qrels.csv", "--run", "mine.csv",
                           "--columns", "query=request,skill=skill_uuid,score=overlap", check=False)
    assert failed.returncode == 2
    assert "or pass --qrels-columns query=NAME" in failed.stderr
    failed = skillret_eval(repo, "score", "--qrels", "qrels.csv", "--run", "mine.csv",
                           "--qrels-columns", "query=q,skill=s,relevance=grade", check=False)
    assert "or pass --columns query=NAME" in failed.stderr
    out = skillret_eval(repo, "score", "--qrels", "qrels.csv", "--run", "mine.csv",
                        "--columns", "query=request,skill=skill_uuid,score=overlap",
                        "--qrels-columns", "query=q,skill=s,relevance=grade", "-o", "m.json")
    assert out.returncode == 0
    assert json.loads((repo / "m.json").read_text())["official"] == \
        metrics(repo, "bm25-desc")["official"]


# --- honest failures -------------------------------------------------------------------------

def test_bad_run_stops_repro_and_keeps_every_previous_output(repo):
    before = outputs_of(repo, "bm25-full")
    (repo / "data" / "bad.trec").write_text("q-00001 Q0 a 1 1.0 t\nq-00001 Q0 b 2 nan t\n")
    set_params(repo, lambda p: p["runs"].update({"bm25-full": "data/bad.trec"}))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "score@bm25-full: error: data/bad.trec:2: score 'nan' is not a finite number" in message
    assert "Traceback" not in message
    assert outputs_of(repo, "bm25-full") == before
    status = json.loads(dvc(repo, "status", "--json").stdout)
    assert "score@bm25-full" in status  # still out of date: the failure is not hidden
    assert not list(repo.rglob("*.tmp")) and not list(repo.rglob(".*.tmp"))


@pytest.mark.parametrize("value, message", [
    (-1, "retrieve: error: params.yaml: retrieve.top_k: -1 is not a whole number >= 1"),
    ("ten", "retrieve: error: params.yaml: retrieve.top_k: 'ten' is not a whole number >= 1"),
    (0, "retrieve: error: params.yaml: retrieve.top_k: 0 is not a whole number >= 1 (0 would "
        "score every query as 0)"),
])
def test_bad_retriever_params_fail_in_one_line_and_keep_metrics(repo, value, message):
    before = {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")}
    runs_before = (repo / "runs/bm25-full.json").read_bytes()
    set_params(repo, lambda p: p["retrieve"].update(top_k=value))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "error:" in line]
    assert lines[0] == message
    assert "Traceback" not in result.stdout + result.stderr
    assert {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")} == before
    assert (repo / "runs/bm25-full.json").read_bytes() == runs_before


def test_unknown_retriever_field_fails_in_one_line(repo):
    set_params(repo, lambda p: p["retrieve"]["configs"]["bm25-desc"].update(fields=["title"]))
    result = dvc(repo, "repro", "retrieve@bm25-desc", check=False)
    assert result.returncode != 0
    assert ("retrieve: error: params.yaml: retrieve.configs.bm25-desc.fields: ['title'] is not "
            "a non-empty list drawn from name, description, skill_md") in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_an_empty_run_fails_instead_of_scoring_zero(repo):
    before = outputs_of(repo, "bm25-desc")
    (repo / "runs/empty.json").write_text('{"metrics": {}, "retrieval": {"test": {}}}\n')
    set_params(repo, lambda p: p["runs"].update({"bm25-desc": "runs/empty.json"}))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    assert "score@bm25-desc: error: runs/empty.json" in result.stderr
    assert outputs_of(repo, "bm25-desc") == before


@pytest.mark.parametrize("name", ["../evil", "a/b", "..x"])
def test_run_names_must_be_plain(repo, name):
    before = sorted(p.relative_to(repo.parent) for p in repo.parent.rglob("*") if p.is_file())
    set_params(repo, lambda p: (p["runs"].update({name: "runs/bm25-desc.json"}),
                                p["run_options"].update({name: {}})))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    after = sorted(p.relative_to(repo.parent) for p in repo.parent.rglob("*") if p.is_file()
                   if ".dvc/" not in p.as_posix() and "__pycache__" not in p.as_posix())
    assert [p for p in after if p not in before and "params.yaml" not in p.as_posix()] == []


def test_register_refuses_a_name_that_is_not_plain(repo):
    result = skillret_eval(repo, "register", "runs/bm25-desc.json", "--name", "../evil",
                           check=False)
    assert result.returncode == 2
    assert result.stderr == ("skillret-eval: error: run name '../evil' is not a plain name "
                             "(letters, digits, '.', '_', '-'; starting with a letter or digit; "
                             "no '/' and no '..')\n")


# --- every stage runs the code of its own tree -------------------------------------------------
# (queued experiments: tests/pipeline/test_grid.py queues a broken package before its grid)

def test_temp_experiment_runs_its_own_code(repo):
    mark_package(repo, "TEMP-MARK")     # the stage that shows it, and the stages it needs
    dvc(repo, "exp", "run", "--temp", "-n", "marked", "score@bm25-full")
    git(repo, "checkout", "--", "skillret")
    dvc(repo, "exp", "apply", "marked")
    assert tie_rule(repo).startswith("TEMP-MARK")
    git(repo, "checkout", "--", ".")
    sample.break_package(repo)
    failed = dvc(repo, "exp", "run", "--temp", "-n", "broken", check=False)
    assert failed.returncode != 0 and "broken package" in failed.stdout + failed.stderr


def test_a_git_worktree_runs_its_own_code(repo, tmp_path):
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "other")
    mark_package(tree, "WORKTREE-MARK")
    dvc(tree, "repro", "score@bm25-full")   # the stage that shows it, and the stages it needs
    assert tie_rule(tree).startswith("WORKTREE-MARK")
    assert not tie_rule(repo).startswith("WORKTREE-MARK")


def test_a_built_package_leaves_the_outputs_and_a_regular_install_does_not_shadow_the_tree(
        repo, tmp_path):
    """Building the package (pip wheel, in the project) mixes nothing into the pipeline's
    outputs; the wheel installed as a stale regular (non-editable) install first on the path,
    the stages still run the tree's code."""
    before = sorted(p for p in (repo / "outputs").rglob("*"))
    run(repo, sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
        str(tmp_path / "wheels"), ".")
    assert not (repo / "outputs" / "lib").exists()
    assert sorted(p for p in (repo / "outputs").rglob("*")) == before
    assert json.loads(dvc(repo, "status", "--json").stdout or "{}") == {}
    site = tmp_path / "site"
    [wheel] = (tmp_path / "wheels").glob("*.whl")
    run(ROOT, sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
        str(wheel))
    assert (site / "skillret" / "pipeline" / "run_stages.py").is_file()
    mark_package(repo, "TREE-MARK")
    env = {"PYTHONPATH": str(site)}
    dvc(repo, "repro", "score@bm25-full", env=env)  # the stage that shows it, and its inputs
    assert tie_rule(repo).startswith("TREE-MARK")
    # a script run by its path puts its own folder first: it would import the installed copy
    (repo / "stages" / "probe.py").write_text("import skillret\nprint(skillret.__file__)\n")
    check = run(repo, sys.executable, "stages/probe.py", env=env)
    assert check.stdout.startswith(str(site)), check.stdout
    # run as a module from the project root, as dvc.yaml does, it imports the tree's
    check = run(repo, sys.executable, "-m", "stages.probe", env=env)
    assert check.stdout.startswith(str(repo / "skillret")), check.stdout


# --- comparing and plotting ------------------------------------------------------------------

def test_metrics_diff_between_branches(origin, sample_revisions, tmp_path):
    """The session's branch ``low-k1`` (BM25's k1 changed, reproduced and committed;
    tests/sample_pipeline.py) against main."""
    repo = sample.copy(sample_revisions, tmp_path / "project")
    assert git(repo, "branch", "--show-current").stdout.strip() == "low-k1"
    before = json.loads(git(repo, "show", "main:metrics/runs/bm25-full.json").stdout)[
        "official"]["NDCG@10"]
    changes = json.loads(dvc(repo, "metrics", "diff", "main", "--json").stdout)
    assert list(changes) == ["metrics/headline.json"]   # the declared metrics: the headline
    change = changes["metrics/headline.json"]["bm25-full.NDCG@10"]
    after = metrics(repo, "bm25-full")["official"]["NDCG@10"]
    assert after != before
    assert (change["old"], change["new"]) == (before, after)
    # every other number, from the file that holds it
    changes = json.loads(dvc(repo, "metrics", "diff", "main", "--json", "--targets",
                             "metrics/runs/bm25-full.json").stdout)
    change = changes["metrics/runs/bm25-full.json"]["official.NDCG@10"]
    assert (change["old"], change["new"]) == (before, after)
    table = dvc(repo, "metrics", "diff", "main").stdout
    assert "bm25-full.NDCG@10" in table and "contract" not in table


def test_plots_name_their_run_and_overlay_every_run(repo):
    shown = json.loads(dvc(repo, "plots", "show", "--json").stdout)
    assert not shown.get("errors"), shown["errors"]
    shown = shown["data"]
    titles = {name: spec[0]["content"]["title"]["text"] for name, spec in shown.items()
              if isinstance(spec, list) and spec and spec[0].get("type") == "vega"}
    assert titles["plots/runs/bm25-full.json"] == "bm25-full: every measure at cutoff K"
    assert titles["plots/runs/bm25-desc.json"] == "bm25-desc: every measure at cutoff K"
    overlay = shown["NDCG@K, every run"][0]["content"]
    assert {d["run"] for d in overlay["data"]["values"]} == {"bm25-desc", "bm25-full", "hybrid"}
    assert {d["k"] for d in overlay["data"]["values"]} == set(range(1, 16))
    assert overlay["encoding"]["color"]["field"] == "run"
    template = json.loads((repo / "plots/templates/measures.json").read_text())
    from skillret.measures import registry
    assert template["transform"][0]["fold"] == list(registry.names("plotted"))


def test_the_split_hint_names_the_params_key_and_following_it_works(repo):
    results = json.loads((repo / "runs" / "bm25-desc.json").read_text())["retrieval"]["test"]
    (repo / "results").mkdir()
    (repo / "results" / "two.json").write_text(json.dumps(
        {"metrics": {}, "retrieval": {"dev": results, "val": {}}}))
    refused = skillret_eval(repo, "register", "results/two.json", check=False)  # read at once
    assert refused.returncode == 2 and "pass --split NAME" in refused.stderr
    set_params(repo, lambda p: (p["runs"].update(two="results/two.json"),  # by hand
                                p["run_options"].update(two={})))
    failed = dvc(repo, "repro", check=False)
    assert ("score@two: error: results/two.json: holds several splits (dev, val) (choose one: "
            "set run_options.two.split: NAME in params.yaml)") in failed.stderr
    skillret_eval(repo, "register", "results/two.json", "--split", "dev")
    assert stages_run(dvc(repo, "repro").stdout) == {"settings", "score@two",
                                                     "fuse_inputs@hybrid"} | AGGREGATE
    assert metrics(repo, "two")["official"] == metrics(repo, "bm25-desc")["official"]


# --- what a researcher sees through DVC (#20), in a 200-column terminal -------------------------

WIDE = {"COLUMNS": "200"}


def sweep(base: Path, origin: Path) -> Path:
    repo = sample.copy(origin, base / "project")
    for k1 in ("1.2", "2.0"):
        dvc(repo, "exp", "run", "-q", "-S", f"retrieve.k1={k1}")
    return repo


@pytest.fixture(scope="module")
def swept(origin, shared_dir, tmp_path_factory) -> Path:
    """The sample after two `dvc exp run -S retrieve.k1=...` (the last one applied): made
    once for the session, copied for each process that reads it."""
    built = sample.once(shared_dir / "swept", lambda base: sweep(base, origin))
    return sample.copy(built, tmp_path_factory.mktemp("swept") / "project")


def headline_keys(repo: Path, first_only: bool = True) -> list[str]:
    table = json.loads((repo / "metrics/headline.json").read_text())
    return [f"{run}.{key}" for run, row in table.items() for key in row
            if not first_only or key == "NDCG@10"]


def test_exp_show_only_changed_shows_the_parameter_and_every_headline(swept):
    shown = dvc(swept, "exp", "show", "--no-pager", "--only-changed", env=WIDE).stdout
    lines = shown.splitlines()
    assert max(map(len, lines)) <= 200, shown
    header = next(line for line in lines if "Experiment" in line)
    for column in ["retrieve.k1", *headline_keys(swept)]:   # every run's first headline metric
        assert f" {column} " in f" {header} ", (column, shown)
    # what does not fit (if anything) is behind one "…" column: only data hashes (paths)
    csv = dvc(swept, "exp", "show", "--csv", "--only-changed").stdout.splitlines()[0]
    hidden = [c for c in csv.split(",")[3:] if f" {c} " not in f" {header} "]
    assert all("/" in c for c in hidden), hidden
    assert len(lines) == 3 + 4 + 1  # rules, header; workspace, main, two experiments
    dropped = dvc(swept, "exp", "show", "--no-pager", "--only-changed", "--drop", ".*/.*",
                  env=WIDE).stdout  # the README's view: data hashes dropped, nothing else
    assert "…" not in dropped and "retrieve.k1" in dropped


def test_bare_exp_show_names_a_headline_metric_first(swept):
    shown = dvc(swept, "exp", "show", "--no-pager", env=WIDE).stdout
    header = next(line for line in shown.splitlines() if "Experiment" in line)
    assert header.split()[2] == "bm25-desc.NDCG@10", header  # after Experiment, Created
    assert "retrieve.k1" in header


def test_metrics_show_fits_200_columns(swept):
    shown = dvc(swept, "metrics", "show", env=WIDE).stdout
    assert shown.splitlines()[0].split()[0] == "Path"
    assert max(map(len, shown.splitlines())) <= 200, shown
    # every other number is one command away, from its own file
    full = dvc(swept, "metrics", "show", "metrics/runs/bm25-full.json", "--json").stdout
    [revision] = json.loads(full).values()
    assert "official" in revision["data"]["metrics/runs/bm25-full.json"]["data"]


def test_metrics_diff_after_a_parameter_change_is_short(swept):
    shown = dvc(swept, "metrics", "diff", env=WIDE).stdout  # HEAD (k1 1.5) vs k1 2.0
    lines = shown.splitlines()
    assert 2 <= len(lines) <= 40 and max(map(len, lines)) <= 120, shown
    assert {line.split()[1] for line in lines[1:]} <= set(headline_keys(swept, False))


def test_repro_after_a_parameter_change_prints_at_most_60_lines(repo):
    set_params(repo, lambda p: p["retrieve"].update(k1=1.2))
    result = dvc(repo, "repro")
    output = (result.stdout + result.stderr).splitlines()
    assert len(output) <= 60, "\n".join(output)
    assert stages_run(result.stdout) >= {"score@bm25-desc", "compare"}
    assert "(baseline)" in result.stdout            # compare's one-screen summary


def test_thirty_runs_metrics_diff_is_one_line_per_changed_headline_value(repo):
    """30 registered runs; one changed: `dvc metrics diff` prints that run's headline values
    (its metric, its delta against the baseline) and nothing else."""
    names = [f"r{i:02d}" for i in range(28)]
    for i, name in enumerate(names):
        source = "bm25-desc" if i % 2 else "bm25-full"
        shutil.copy(repo / "runs" / f"{source}.json", repo / "data" / f"{name}.json")
    set_params(repo, lambda p: (p["runs"].update({n: f"data/{n}.json" for n in names}),
                                p["run_options"].update({n: {} for n in names})))
    dvc(repo, "repro")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "30 runs")
    set_params(repo, lambda p: p["runs"].update(r03="runs/bm25-full.json"))  # was bm25-desc's
    dvc(repo, "repro")
    lines = dvc(repo, "metrics", "diff", env=WIDE).stdout.splitlines()
    changed = {line.split()[1] for line in lines[1:]}
    assert changed == {"r03.NDCG@10", "r03.delta"} or changed == {
        "r03.NDCG@10", "r03.delta", "r03.significant"}, lines
    assert max(map(len, lines)) <= 120


# --- the pipeline's shape --------------------------------------------------------------------

@pytest.mark.parametrize("section", ["fuse", "compare", "run_options"])
def test_a_missing_section_is_named_in_one_line(repo, section):
    set_params(repo, lambda p: p.pop(section))
    assert dvc(repo, "status", check=False).returncode == 0  # dvc.yaml still parses
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    errors = [line for line in (result.stdout + result.stderr).splitlines() if "ERROR" in line]
    assert len(errors) == 1 and f"Parameters '{section}" in errors[0], errors
    assert "are missing from 'params.yaml'" in errors[0]


def test_an_empty_fuse_section_is_no_fused_run(repo):
    set_params(repo, lambda p: p.update(fuse={}))
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {"settings"} | AGGREGATE  # the run set changed
    assert set(json.loads((repo / "metrics/headline.json").read_text())) == {
        "bm25-desc", "bm25-full", "qrels"}


def test_a_run_name_with_a_space_is_one_line(repo):
    before = {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")}
    set_params(repo, lambda p: (p["runs"].update({"my run": "runs/bm25-desc.json"}),
                                p["run_options"].update({"my run": {}})))
    result = dvc(repo, "repro", check=False)
    assert result.returncode == 255  # DVC's status for a failed stage (the stage exits 2)
    assert ("settings: error: run name 'my run' is not a plain name (letters, digits, '.', "
            "'_', '-'; starting with a letter or digit; no '/' and no '..')") in result.stderr
    # the stage itself (run by hand, or if settings had passed) says the same, in one line
    check = run(repo, sys.executable, "-m", "stages.score", "my run", check=False)
    assert check.returncode == 2 and check.stderr == (
        "score@my run: error: run name 'my run' is not a plain name (letters, digits, '.', "
        "'_', '-'; starting with a letter or digit; no '/' and no '..')\n")
    assert "usage:" not in result.stdout + result.stderr
    assert {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")} == before


def test_fused_run_depends_on_its_own_runs_only(repo):
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    assert {d["path"] for d in lock["fuse@hybrid"]["deps"]} == {
        "stages/fuse.py", "skillret", "reports/fusion/hybrid.json"}
    inputs = json.loads((repo / "reports/fusion/hybrid.json").read_text())
    assert set(inputs["registered"]) == {"bm25-desc", "bm25-full"}
