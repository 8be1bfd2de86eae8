"""Where the pipeline keeps its files: the paths `dvc.yaml` lists, in one place (stage commands
name only their run), and how a canonical run is read back. `tests/pipeline/test_layout.py` checks
`dvc.yaml` against them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from skillret.errors import InputError

PARAMS = "params.yaml"                         # read from the project root, where stages run
SCORE_SCRIPT = "stages/score.py"               # what score@<run> runs (settings records it)
INPUTS = "reports/inputs.json"                 # qrels.path, once every input file is found
QRELS = "outputs/qrels.tsv"
QRELS_STATS = "metrics/qrels.json"
SETTINGS = "reports/settings.json"             # what every run is scored with (stage settings)
RUN_SET = "reports/runs.json"                  # the registered and fused runs' names
RUN_SETTINGS_DIR = "reports/run_settings"      # <run>.json: what score@<run> depends on

#: a run's outputs: key -> path pattern, `{}` standing for the run's name
RUN_OUTPUTS = {
    "normalized": "outputs/runs/{}.parquet",     # the canonical run (DVC cache)
    "per_query": "outputs/per_query/{}.tsv",     # per-query values (DVC cache)
    "metrics": "metrics/runs/{}.json",           # every profile, the breakdown (git)
    "report": "reports/validation/{}.json",      # counts and the metric contract (git)
    "plots": "plots/runs/{}.json",               # every measure at K = 1.. (git)
}
#: a fused run's files where they differ from a registered run's
FUSED_OUTPUTS = {**RUN_OUTPUTS, "normalized": "outputs/fused/{}.parquet"}
FUSED_RUN = "outputs/fused/{}.trec"
FUSION_INPUTS = "reports/fusion/{}.json"       # what a fused run is made of (git)

CANONICAL_RUN = RUN_OUTPUTS["normalized"]

HEADLINE = "metrics/headline.json"             # the declared metrics (dvc metrics, exp show)
HEADLINE_QRELS = "qrels"                       # its entry of the judgments' counts: no run's name
COMPARE = "metrics/compare.json"
COMPARE_REPORT = "reports/compare.md"
QUERY_REPORTS = "reports/queries"             # <run>.md: largest per-query changes (git)
CURVES = "plots/curves.json"
BREAKDOWN_PLOT = "plots/breakdown.json"


#: every file the pipeline makes for one run, registered or fused
RUN_FILES = (*RUN_OUTPUTS.values(), FUSED_OUTPUTS["normalized"], FUSED_RUN, FUSION_INPUTS,
             QUERY_REPORTS + "/{}.md", RUN_SETTINGS_DIR + "/{}.json")


def files_of_runs_not_in(runs, registered) -> list[Path]:
    """Files in the per-run folders of no run in `runs` (settings files: of none in `registered`),
    sorted: what unregistered runs and removed fusions left."""
    stale = set()
    for pattern in RUN_FILES:
        keep = set(registered if pattern.startswith(RUN_SETTINGS_DIR) else runs)
        prefix, suffix = pattern.split("{}")
        for path in Path().glob(pattern.format("*")):
            if path.is_file() and path.as_posix()[len(prefix):-len(suffix)] not in keep:
                stale.add(path)
    return sorted(stale)


def read_canonical(file, name) -> pa.Table:
    """A canonical run's ids (dictionary-encoded) and scores; `name`: the file's, for messages."""
    try:
        return pq.ParquetFile(file, read_dictionary=["query_id", "skill_id"]).read(
            columns=["query_id", "skill_id", "score"])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise InputError(name, f"not a canonical run ({str(exc).splitlines()[0]})") from None
