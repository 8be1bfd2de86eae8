"""What the commands' shared options turn into: the run, the qrels, the profiles, named runs."""

from __future__ import annotations

import contextlib
import os

from skillret.cli.arguments import PER_RUN
from skillret.errors import ConfigError, InputError
from skillret.io.readers import open_run, parse_columns, read_qrels, run_name
from skillret.pipeline.params import eval_params


def run_from(args, with_rank: bool = False):
    """The run, its reading begun so that it overlaps the qrels' reading."""
    return open_run(args.run, fmt=args.run_format, split=args.split,
                    columns=parse_columns(args.columns)).read_ahead(with_rank=with_rank)


def qrels_from(args):
    return read_qrels(args.qrels, fmt=args.qrels_format, split=args.split,
                      columns=parse_columns(args.qrels_columns))


def profiles_from(args):
    """(profile names, relevance level, user definitions) from `--profile`, `--params` and
    `--relevance-level`."""
    params = eval_params(args.params)
    names = getattr(args, "profile", None) or (params.profiles if args.params else ["official"])
    level = args.relevance_level if args.relevance_level is not None else params.relevance_level
    return names, level, params.define


def named_run(text: str) -> tuple[str, str]:
    """`NAME=PATH`, or a path named by `run_name` (`runs/bm25.k1.trec.gz` -> `bm25.k1`)."""
    name, sep, path = text.partition("=")
    if sep and name and path and "/" not in name and not os.path.exists(text):
        return name, path
    return run_name(text), text


def distinct_named_runs(specs: list[str]) -> list[tuple[str, str]]:
    """(name, path) of each `--run`; two alike stop with one line."""
    named = [named_run(spec) for spec in specs]
    names = [name for name, _ in named]
    if len(set(names)) != len(names):
        raise ConfigError(f"two runs are named alike ({', '.join(names)}); name them: "
                          f"--run NAME=PATH")
    return named


def reading_options(args, i: int) -> dict:
    """How to read the `i`-th `--run`: its own options over those given before any run."""
    given = {**{k: getattr(args, k, None) for k in PER_RUN},
             **{k: v for k, v in args.run_options[i].items() if v is not None}}
    return {"fmt": given["run_format"], "columns": parse_columns(given["columns"]),
            "split": given["split"]}


def open_runs(args, named: list[tuple[str, str]]) -> dict:
    """`{name: RunSource}` of the `--run` options, each opened with its own reading options."""
    runs = {}
    for i, (name, path) in enumerate(named):
        with run_hints(args, {path: args.run[i]}):
            runs[name] = open_run(path, **reading_options(args, i))
    return runs


@contextlib.contextmanager
def run_hints(args, specs: dict):
    """An error in one of several runs shows its fix right after that run's `--run`."""
    try:
        yield
    except InputError as exc:
        spec = None
        if exc.path is not None and len(args.run or []) > 1:
            spec = specs.get(exc.path) or next(
                (s for p, s in specs.items() if os.path.abspath(p) == os.path.abspath(exc.path)),
                None)
        if spec is not None:
            exc.shown_with(lambda fix: fix.as_option(spec))
        raise
