"""Options several commands share: inputs, limits, facets; and the library calls they
turn into (the run, the qrels, the profiles).
"""

from __future__ import annotations

import argparse

from skillret.errors import ConfigError


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
    from skillret.limits import MAX_INPUT_BYTES, MAX_JSON_DEPTH, MAX_RESULTS_PER_QUERY, show_size
    p.add_argument("--max-input-size", type=size, metavar="SIZE",
                   help="largest JSON, JSON lines or CSV/TSV input once decompressed; they are "
                        f"read whole (default {show_size(MAX_INPUT_BYTES)}; e.g. 512M, 8G)")
    p.add_argument("--max-json-depth", type=positive, metavar="N",
                   help=f"deepest nesting of a JSON document (default {MAX_JSON_DEPTH})")
    p.add_argument("--max-results-per-query", type=positive, metavar="N",
                   help=f"most results one query may hold in a run "
                        f"(default {MAX_RESULTS_PER_QUERY:,})")


def size(text: str) -> int:
    from skillret.limits import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def add_facets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--facets", metavar="FILE",
                   help="per-query facets keyed by query id (JSONL, CSV/TSV, Parquet; SkillRet's "
                        "queries JSONL as it is): any scalar field is a facet")
    p.add_argument("--skills", metavar="FILE",
                   help="SkillRet's skills JSONL (field 'category'), for skill_category")


def run_from(args, with_rank: bool = False):
    """The run, its reading already begun: it overlaps the imports and the qrels that follow."""
    from skillret.io.readers import open_run, parse_columns
    return open_run(args.run, fmt=args.run_format, split=args.split,
                    columns=parse_columns(args.columns)).read_ahead(with_rank=with_rank)


def qrels_from(args):
    from skillret.io.readers import parse_columns, read_qrels
    return read_qrels(args.qrels, fmt=args.qrels_format, split=args.split,
                      columns=parse_columns(args.qrels_columns))


def profiles_from(args):
    from skillret.pipeline.params import eval_params
    params = eval_params(args.params)
    names = getattr(args, "profile", None) or (params.profiles if args.params else ["official"])
    level = args.relevance_level if args.relevance_level is not None else params.relevance_level
    return names, level, params.define


def named_run(text: str) -> tuple[str, str]:
    """``NAME=PATH``, or a path named by ``run_name`` (``runs/bm25.k1.trec.gz`` -> ``bm25.k1``)."""
    name, sep, path = text.partition("=")
    if sep and name and path and "/" not in name:
        return name, path
    from skillret.io.readers import run_name

    return run_name(text), text


def distinct_named_runs(specs: list[str]) -> list[tuple[str, str]]:
    """(name, path) of each ``--run`` (:func:`named_run`); two alike stop with one line."""
    named = [named_run(spec) for spec in specs]
    names = [name for name, _ in named]
    if len(set(names)) != len(names):
        raise ConfigError(f"two runs are named alike ({', '.join(names)}); name them: "
                          f"--run NAME=PATH")
    return named


# ------------------------------------------------------------------ several runs (fuse, compare)
#: Options that say how to read a run; with several ``--run``, each applies to the run it
#: follows (before any ``--run``: to every run).
PER_RUN = {"run_format": "--format", "columns": "--columns", "split": "--split"}


class _Run(argparse.Action):
    """``--run``: one more run, with its own reading options to come."""

    def __call__(self, parser, namespace, value, option_string=None):
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), value])
        namespace.run_options = [*(getattr(namespace, "run_options", None) or []), {}]


class _PerRun(argparse.Action):
    """``--format``/``--columns``/``--split``: for the ``--run`` before it, or for every run
    when no ``--run`` came yet."""

    def __call__(self, parser, namespace, value, option_string=None):
        options = getattr(namespace, "run_options", None) or []
        if not options:
            setattr(namespace, self.dest, value)
            return
        if self.dest in options[-1]:
            parser.error(f"{option_string} given twice for --run {namespace.run[-1]}")
        options[-1][self.dest] = value


def add_runs(p: argparse.ArgumentParser, run_help: str, split_help: str) -> None:
    """``--run`` (repeatable), each followed by its own ``--format``, ``--columns`` and
    ``--split`` if it needs them."""
    p.set_defaults(run_options=[])
    p.add_argument("--run", action=_Run, metavar="[NAME=]PATH", help=run_help)
    p.add_argument("--format", dest="run_format", action=_PerRun, metavar="FMT",
                   help="format of the --run it follows (before any --run: of every run), "
                        "overriding detection (trec, skillret-json, json, jsonl, csv, tsv, "
                        "parquet)")
    p.add_argument("--columns", action=_PerRun, metavar="SPEC",
                   help="column names of the --run it follows (CSV/TSV/JSONL/Parquet; before "
                        "any --run: of every run), e.g. query=request,skill=skill_uuid,"
                        "score=overlap")
    p.add_argument("--split", action=_PerRun, metavar="NAME", help=split_help)


def reading_options(args, i: int) -> dict:
    """How to read the ``i``-th ``--run``: its own options over those given before any run."""
    from skillret.io.readers import parse_columns

    given = {**{k: getattr(args, k, None) for k in PER_RUN},
             **{k: v for k, v in args.run_options[i].items() if v is not None}}
    return {"fmt": given["run_format"], "columns": parse_columns(given["columns"]),
            "split": given["split"]}


def open_runs(args, named: list[tuple[str, str]]) -> dict:
    """``{name: RunSource}`` of the ``--run`` options (``named``: their names and paths, in
    order), each opened with its own reading options; an error names the ``--run`` to follow
    with the option its hint asks for."""
    from skillret.io.readers import open_run

    runs = {}
    for i, (name, path) in enumerate(named):
        with run_hints(args, {path: args.run[i]}):
            runs[name] = open_run(path, **reading_options(args, i))
    return runs


def run_hints(args, specs: dict):
    """An input error in one of several runs whose hint asks for a reading option
    (``pass --columns query=NAME``) says where it goes: right after that run's ``--run``.
    ``specs``: ``{path: the --run value}``."""
    import contextlib
    import os

    from skillret.errors import InputError

    @contextlib.contextmanager
    def rewritten():
        try:
            yield
        except InputError as exc:
            spec = specs.get(exc.path) if exc.path is not None else None
            if spec is None:
                spec = next((s for p, s in specs.items() if exc.path is not None
                             and os.path.abspath(p) == os.path.abspath(exc.path)), None)
            hint = exc.hint or ""
            if spec is not None and len(args.run or []) > 1:
                for flag in PER_RUN.values():
                    hint = _after_run(hint, flag, spec)
            if hint != (exc.hint or ""):
                exc.hint = hint
                exc.args = (exc.message,)
            raise

    return rewritten()


def _after_run(hint: str, flag: str, spec: str) -> str:
    """``pass --columns query=NAME`` -> ``pass --columns query=NAME right after --run SPEC``."""
    import re

    return re.sub(rf"((?:pass|with) {re.escape(flag)}(?: [^\s;)]+)?)(?=[;)]|$)",
                  lambda m: f"{m.group(1)} right after --run {spec}", hint)
