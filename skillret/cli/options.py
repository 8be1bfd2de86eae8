"""What the commands' shared options turn into: the run, the qrels, the profiles, named runs."""

from __future__ import annotations

import contextlib
import os
import sys

from skillret.cli.arguments import PER_RUN
from skillret.errors import ConfigError, InputError
from skillret.io.readers import open_run, parse_columns, read_qrels, run_name
from skillret.pipeline.params import eval_params
from skillret.scoring.names import format_metric, metric_names
from skillret.scoring.profiles import resolve_profiles


def tell(kind: str, lines) -> None:
    """Each line on stderr as `skillret-eval: KIND: line`."""
    for line in lines:
        print(f"skillret-eval: {kind}: {line}", file=sys.stderr)


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


def metrics_from(args, default) -> tuple[list[str], int | None]:
    """`--metric` or `--profile`'s metrics, else `default()`; and their rounding."""
    if args.metric and args.profile:
        raise ConfigError("give --metric or --profile, not both")
    if args.profile:
        profile = resolve_profiles([args.profile])[0]
        return [format_metric(m) for m in profile.parsed()], profile.rounding
    return metric_names(args.metric) if args.metric else default(), 5


def named_run(text: str) -> tuple[str, str]:
    """`NAME=PATH`, or a path named by `run_name` (`runs/bm25.k1.trec.gz` -> `bm25.k1`)."""
    name, sep, path = text.partition("=")
    if sep and name and path and "/" not in name and not os.path.exists(text):
        return name, path
    return run_name(text), text


def distinct_named_runs(specs: list[str], each: bool = False) -> list[tuple[str, str]]:
    """(name, path) of each `--run`; two alike stop with one line (`each`: naming the first)."""
    named = [named_run(spec) for spec in specs]
    names = [name for name, _ in named]
    if each and len(set(names)) != len(names):
        twice = next(name for i, name in enumerate(names) if name in names[:i])
        raise ConfigError(f"two runs are named {twice!r}: name them with --run NAME=PATH")
    if len(set(names)) != len(names):
        raise ConfigError(f"two runs are named alike ({', '.join(names)}); name them: "
                          f"--run NAME=PATH")
    return named


def open_runs(args, named: list[tuple[str, str]]) -> dict:
    """`{name: RunSource}` of the `--run` options, each read with its own options over those
    given before any run."""
    runs = {}
    for i, (name, path) in enumerate(named):
        given = {k: args.run_options.get((i, k), getattr(args, k, None)) for k in PER_RUN}
        with run_hints(args, {path: args.run[i]}):
            runs[name] = open_run(path, fmt=given["run_format"], split=given["split"],
                                  columns=parse_columns(given["columns"]))
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
            exc.shown_with(run=spec)
        raise
