"""Every command's arguments, built without importing what the commands run."""

from __future__ import annotations

import argparse

from skillret.limits import (MAX_INPUT_BYTES, MAX_JSON_DEPTH, MAX_RESULTS_PER_QUERY, parse_size,
                             show_size)


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qrels", required=True, metavar="PATH",
                   help="judgments: TREC qrels, SkillRet qrels/queries JSONL, JSON, CSV/TSV, "
                        "Parquet, or a SkillRet data directory")
    p.add_argument("--run", required=True, metavar="PATH",
                   help="ranked results: TREC run, SkillRet results JSON, JSON, JSONL, CSV/TSV, "
                        "Parquet (.gz of text formats too)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="run format, overriding detection (trec, skillret-json, json, jsonl, "
                        "csv, tsv, parquet)")
    p.add_argument("--qrels-format", metavar="FMT",
                   help="qrels format (trec, jsonl, queries-jsonl, json, csv, tsv, parquet, "
                        "skillret-dir)")
    p.add_argument("--split", metavar="NAME",
                   help="split inside SkillRet files (default: the only one, else 'test')")
    p.add_argument("--columns", metavar="SPEC",
                   help="the run's column names (CSV/TSV/JSONL/Parquet), e.g. "
                        "query=qid,skill=docno,score=sim")
    p.add_argument("--qrels-columns", metavar="SPEC",
                   help="the qrels' column names, e.g. query=qid,skill=docno,relevance=rel")
    p.add_argument("--params", metavar="FILE",
                   help="params.yaml whose 'eval' section gives profiles, relevance level and "
                        "user-defined profiles")
    p.add_argument("--relevance-level", type=int, metavar="N",
                   help="grade >= N counts as relevant (default 1)")
    add_limits(p)


def add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-input-size", type=size, metavar="SIZE",
                   help="largest JSON, JSON lines or CSV/TSV input once decompressed; they are "
                        f"read whole (default {show_size(MAX_INPUT_BYTES)}; e.g. 512M, 8G)")
    p.add_argument("--max-json-depth", type=positive, metavar="N",
                   help=f"deepest nesting of a JSON document (default {MAX_JSON_DEPTH})")
    p.add_argument("--max-results-per-query", type=positive, metavar="N",
                   help=f"most results one query may hold in a run "
                        f"(default {MAX_RESULTS_PER_QUERY:,})")


def size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _checked(convert, kind: str, ok, bounds: str):
    """An argparse type: `convert(text)`, refused unless a `kind` within `bounds`."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{text} is not {bounds}")
        return value
    return parse


positive = _checked(int, "an integer", lambda v: v >= 1, "a positive integer")
scale = _checked(float, "a number", lambda v: 0 < v <= 10, "a scale between 0 and 10")


def add_facets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--facets", metavar="FILE",
                   help="per-query facets keyed by query id (JSONL, CSV/TSV, Parquet; SkillRet's "
                        "queries JSONL as it is): any scalar field is a facet")
    p.add_argument("--skills", metavar="FILE",
                   help="SkillRet's skills JSONL (field 'category'), for skill_category")


class _PerRun(argparse.Action):
    """`--format`/`--columns`/`--split`: for the `--run` before it (in `run_options`, keyed by
    the run's index and the option), else for every run."""

    def __call__(self, parser, namespace, value, option_string=None):
        if not namespace.run:
            setattr(namespace, self.dest, value)
            return
        key = (len(namespace.run) - 1, self.dest)
        if key in namespace.run_options:
            parser.error(f"{option_string} given twice for --run {namespace.run[-1]}")
        namespace.run_options = {**namespace.run_options, key: value}


def add_runs(p: argparse.ArgumentParser, run_help: str, split_help: str) -> None:
    """`--run` (repeatable), each followed by its own reading options."""
    p.set_defaults(run_options={})
    p.add_argument("--run", action="append", metavar="[NAME=]PATH", help=run_help)
    p.add_argument("--format", dest="run_format", action=_PerRun, metavar="FMT",
                   help="format of the --run it follows (before any --run: of every run), "
                        "overriding detection (trec, skillret-json, json, jsonl, csv, tsv, "
                        "parquet)")
    p.add_argument("--columns", action=_PerRun, metavar="SPEC",
                   help="column names of the --run it follows (CSV/TSV/JSONL/Parquet; before "
                        "any --run: of every run), e.g. query=request,skill=skill_uuid,"
                        "score=overlap")
    p.add_argument("--split", action=_PerRun, metavar="NAME", help=split_help)


# --- the commands ----------------------------------------------------------------------

def score(sub) -> None:
    p = sub.add_parser("score", help="compute a run's metrics under one or more profiles")
    add_inputs(p)
    p.add_argument("--profile", action="append", metavar="NAME",
                   help="profile to compute (repeatable; default: official, or eval.profiles "
                        "from --params; none when --metric is given)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="also compute this metric, under any name `skillret-eval measures` "
                        "lists (repeatable): NDCG@10, nDCG@10, ndcg_cut_10, Success@1, RPrec, "
                        "P(rel=2)@5; shown under profile 'metrics'")
    p.add_argument("--query-set", choices=("run-judged", "all-judged"), default="run-judged",
                   help="which queries --metric averages over (default: run-judged, the run's "
                        "queries with judgments, as trec_eval, ir_measures and the official "
                        "profile average; all-judged: every judged query, a missing one "
                        "scoring 0)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the metrics as JSON")
    p.add_argument("--per-query", metavar="FILE",
                   help="write per-query values (TSV; .parquet for Parquet)")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also give the first profile's metrics per stratum of FACET "
                        "(repeatable): n_required, n_relevant, skill_category, or a field of "
                        "--facets")
    add_facets(p)
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the table")


def validate(sub) -> None:
    p = sub.add_parser("validate", help="check a run against the qrels before scoring it")
    add_inputs(p)
    p.add_argument("--report", metavar="FILE", help="write the validation report as JSON")
    p.add_argument("--normalized", metavar="FILE",
                   help="write the canonical run (Parquet) when validation passes")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--depth", type=int, metavar="K",
                   help="largest cutoff in use (default: from the profiles, 15)")
    add_facets(p)


def profiles(sub) -> None:
    p = sub.add_parser("profiles", help="list the profiles and the definitions of the measures")
    p.add_argument("--params", metavar="FILE", help="also list the profiles defined there")
    p.add_argument("--json", action="store_true", help="print as JSON")


def measures(sub) -> None:
    p = sub.add_parser("measures", help="list every measure: its definition, the names other "
                                        "tools give it, whether the official evaluator has it")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal",
                   help="terminal (default) or json")


def normalize_qrels(sub) -> None:
    p = sub.add_parser("normalize-qrels", help="write qrels in canonical form, with statistics")
    p.add_argument("--qrels", required=True, metavar="PATH")
    p.add_argument("--qrels-format", metavar="FMT")
    p.add_argument("--split", metavar="NAME")
    p.add_argument("--columns", metavar="SPEC")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="canonical qrels (TSV: query_id, skill_id, relevance)")
    p.add_argument("--stats", metavar="FILE", help="write qrels statistics as JSON")
    add_limits(p)


def register(sub) -> None:
    p = sub.add_parser("register", help="add run files to params.yaml's runs: (name = file stem)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="run files inside the project")
    p.add_argument("--params", default="params.yaml", metavar="FILE",
                   help="the params file to edit (default: params.yaml)")
    p.add_argument("--name", metavar="NAME", help="the run's name (one file only)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="written under run_options.<name>.format")
    p.add_argument("--columns", metavar="SPEC", help="written under run_options.<name>.columns")
    p.add_argument("--split", metavar="NAME", help="written under run_options.<name>.split")


def unregister(sub) -> None:
    p = sub.add_parser("unregister", help="take a run out of params.yaml (runs, run_options, or "
                                          "fuse) and delete every file the pipeline made for it")
    p.add_argument("name", metavar="NAME", help="a registered or fused run")
    p.add_argument("--params", default="params.yaml", metavar="FILE",
                   help="the params file to edit (default: params.yaml)")


def add_revisions(p, rev_help: str) -> None:
    p.add_argument("--rev", action="append", metavar="REV", help=rev_help)
    p.add_argument("--repo", default=".", metavar="DIR", help="project directory for --rev")
    p.add_argument("--allow-different-judgments", action="store_true",
                   help="compare two revisions scored against different judgments or metric "
                        "contracts anyway, on the queries judged the same at both (the output "
                        "says so first); without it, such revisions are refused")


def compare(sub) -> None:
    p = sub.add_parser("compare", help="paired significance tests between runs, or between two "
                                       "git revisions of the registered runs")
    p.add_argument("--qrels", metavar="PATH", help="judgments (comparing run files)")
    add_runs(p, "a run file (repeatable; named by its file stem unless NAME= is given; "
                "--format, --columns, --split after it say how to read it); with --rev: a "
                "registered run's name (default: every one)",
             "split inside SkillRet files: before any --run, of the qrels and every run; "
             "after a --run, of that run")
    p.add_argument("--baseline", metavar="NAME",
                   help="the run the others are compared with (default: the first); with one "
                        "--rev: the registered runs of that revision against this one")
    add_revisions(p, "compare the registered runs at git revision REV (the baseline) with "
                     "the workspace, or with a second --rev")
    p.add_argument("--metric", action="append", metavar="M",
                   help="metric to test (repeatable; default: the recommended profile's)")
    p.add_argument("--profile", metavar="NAME", help="test every metric of this profile")
    p.add_argument("--permutations", type=int, default=10000, metavar="N",
                   help="random sign flips of the randomization test (default 10000)")
    p.add_argument("--bootstrap", type=int, default=2000, metavar="N",
                   help="bootstrap resamples of the 95%% interval (default 2000; 0: none)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance level of the adjusted p-values (default 0.05)")
    p.add_argument("--correction", default="holm", choices=("holm", "bh", "none"),
                   help="multiple-comparison adjustment over every (run, metric) (default holm)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown report")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also test within each stratum of FACET (repeatable; run files only), "
                        "adjusted over every stratum, run and metric")
    add_facets(p)
    add_limits(p)


def plots(sub) -> None:
    p = sub.add_parser("plots", help="the pipeline's charts as PNG or SVG files (no browser), "
                                     "or the offline page of dvc plots show")
    p.add_argument("--format", dest="image_format", choices=("png", "svg"),
                   help="write every chart of dvc.yaml as an image of this format")
    p.add_argument("--output-dir", "-o", default="figures", metavar="DIR",
                   help="where the images go (default: figures)")
    p.add_argument("--repo", default=".", metavar="DIR",
                   help="the project: its dvc.yaml, params.yaml and plot files (default: .)")
    p.add_argument("--scale", type=scale, default=2.0, metavar="N",
                   help="PNG pixels per chart pixel (default 2)")
    p.add_argument("--html-template", metavar="FILE",
                   help="write instead the page for plots.html_template in .dvc/config: "
                        "Vega, Vega-Lite and vega-embed inlined, no network needed")


def report(sub) -> None:
    p = sub.add_parser(
        "report", help="a results table (best value in bold, the runs each value beats "
                       "significantly) or, with two --rev, the summary between them")
    add_revisions(p, "the pipeline's runs at git revision REV (default: the workspace); "
                     "twice: the summary from the first to the second (`workspace` names "
                     "the files on disk)")
    p.add_argument("--qrels", metavar="PATH", help="judgments (a table of run files)")
    p.add_argument("--run", action="append", metavar="[NAME=]PATH",
                   help="a run file (repeatable, with --qrels); from the pipeline: a run's "
                        "name (default: every run)")
    p.add_argument("--baseline", metavar="NAME",
                   help="mark each value against this run (+ / -) instead of every pair")
    p.add_argument("--metric", action="append", metavar="M",
                   help="metric (repeatable; default: compare.metrics of params.yaml, else "
                        "eval.headline, else the recommended profile's)")
    p.add_argument("--profile", metavar="NAME", help="every metric of this profile")
    p.add_argument("--format", default="terminal",
                   choices=("terminal", "markdown", "latex", "csv", "json"))
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--params", metavar="FILE",
                   help="with --qrels: params.yaml giving the headline and the compare "
                        "settings")
    p.add_argument("--permutations", type=int, metavar="N",
                   help="random sign flips (default: compare.permutations, else 10000)")
    p.add_argument("--bootstrap", type=int, metavar="N",
                   help="bootstrap resamples of the summary's 95%% interval (default: "
                        "compare.bootstrap, else 2000)")
    p.add_argument("--seed", type=int, metavar="N", help="random seed (default: compare.seed)")
    p.add_argument("--alpha", type=float, metavar="A",
                   help="significance level of the adjusted p (default: compare.alpha, 0.05)")
    p.add_argument("--correction", choices=("holm", "bh", "none"),
                   help="adjustment over the whole family (default: compare.correction, holm)")
    p.add_argument("--split", metavar="NAME", help="split inside SkillRet files")
    gate = p.add_argument_group("the gate (two --rev): exit 1 after the report when a row fails")
    gate.add_argument("--fail-if-worse", action="store_true",
                      help="fail when any run's headline metric (the first of eval.headline; "
                           "else the first shown) is significantly worse at the second --rev, "
                           "after correction")
    gate.add_argument("--tolerance", action="append", metavar="METRIC=DROP",
                      help="fail when METRIC drops by more than DROP (a number, e.g. "
                           "NDCG@10=0.005, or a percentage of the first value, e.g. "
                           "NDCG@10=1%%), significant or not (repeatable)")


def queries(sub) -> None:
    p = sub.add_parser("queries", help="the queries that changed most between two runs or two "
                                       "revisions, and where their needed skills ranked")
    p.add_argument("--run", action="append", metavar="[NAME=]PATH",
                   help="twice: the two runs, A then B (files with --qrels, else the "
                        "pipeline's run names); once, with two --rev: the run at both")
    add_revisions(p, "the pipeline's outputs at git revision REV (default: the workspace); "
                     "twice: one run, A at the first and B at the second")
    p.add_argument("--qrels", metavar="PATH", help="judgments (comparing run files)")
    p.add_argument("--query-texts", metavar="FILE",
                   help="with --qrels: SkillRet's queries JSONL (field 'query'); from the "
                        "pipeline: data.queries")
    p.add_argument("--skills", metavar="FILE",
                   help="with --qrels: SkillRet's skills JSONL (field 'name'); from the "
                        "pipeline: data.skills")
    p.add_argument("--metric", default=None, metavar="M",
                   help="the metric (default: the first of compare.metrics, else of "
                        "eval.headline; NDCG@10 for run files)")
    p.add_argument("--worst", type=int, default=10, metavar="N",
                   help="largest losses shown (default 10)")
    p.add_argument("--best", type=int, default=10, metavar="N",
                   help="largest gains shown (default 10)")
    p.add_argument("--format", default="terminal", choices=("terminal", "markdown", "json"))
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--split", metavar="NAME", help="split inside SkillRet files")


def fuse(sub) -> None:
    p = sub.add_parser("fuse", help="fuse runs into one ranked run (RRF, CombSUM, CombMNZ)")
    add_runs(p, "a run to fuse (repeatable; named by file stem unless NAME= is given); "
                "--format, --columns, --split after it say how to read it",
             "split inside a SkillRet results file, of the --run it follows (before any "
             "--run: of every run)")
    p.add_argument("--method", metavar="METHOD", help="rrf, combsum or combmnz")
    p.add_argument("--k", metavar="K", help="RRF's constant (default 60)")
    p.add_argument("--norm", metavar="NORM",
                   help="score normalisation for combsum/combmnz: minmax (default), zscore, none")
    p.add_argument("--weight", action="append", metavar="NAME=W",
                   help="weight of a run (repeatable; default 1)")
    p.add_argument("--depth", metavar="N", help="results kept per query (default 100)")
    p.add_argument("--output", "-o", metavar="PATH",
                   help="the fused run: .trec/.txt (TREC), .parquet or .json")
    p.add_argument("--params", metavar="FILE",
                   help="take the fusion NAME from this params.yaml's 'fuse' section")
    p.add_argument("--name", metavar="NAME", help="with --params: the fused run to write")
    p.add_argument("--run-pattern", metavar="PATTERN",
                   help="with --params: where a named run's file is, {} standing for its name "
                        "(e.g. outputs/runs/{}.parquet)")
    add_limits(p)
