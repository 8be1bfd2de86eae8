"""`skillret-eval fuse`: one ranked run from several (RRF, CombSUM, CombMNZ).

    skillret-eval fuse --run bm25.trec --run dense=runs/e5.parquet --method rrf -o hybrid.trec
"""

from __future__ import annotations

import os
from skillret.analysis.fusion import DEFAULT_DEPTH, DEFAULT_K, Fusion
from skillret.cli.options import distinct_named_runs, open_runs, run_hints, tell
from skillret.errors import ConfigError, InputError
from skillret.io.streams import is_stream
from skillret.pipeline.fused_runs import fuse_from_params, fuse_to_file


def command(args) -> int:
    notices: list[str] = []
    if args.params:
        if not args.name:
            raise ConfigError("--params needs --name (the fused run to write)")
        if args.run or args.method or args.k or args.norm or args.weight or args.depth or \
                args.run_format or args.columns or args.split:
            raise ConfigError("with --params, the fusion comes from the params file: give "
                              "only --name, --run-pattern and --output")
        if not args.output:
            raise ConfigError("give --output PATH (.trec, .txt, .parquet or .json)")
        fusion, names, counts = fuse_from_params(args.params, args.name, args.output,
                                                 run_pattern=args.run_pattern, notices=notices)
    else:
        if not args.run or len(args.run) < 2:
            raise ConfigError("give at least two --run PATH")
        if not args.method:
            raise ConfigError("give --method (rrf, combsum or combmnz)")
        named = distinct_named_runs(args.run, each=True)
        names = [name for name, _ in named]
        fusion = Fusion(args.method, _option(args.k, "--k", float, DEFAULT_K), args.norm,
                        parse_weights(args.weight or []),
                        _option(args.depth, "--depth", int, DEFAULT_DEPTH))
        fusion.weight_vector(names)
        if not args.output:
            raise ConfigError("give --output PATH (.trec, .txt, .parquet or .json)")
        for _, path in named:
            if not os.path.exists(path) and not is_stream(path):
                raise InputError(path, "no such run file")
        runs = open_runs(args, named)
        with run_hints(args, {path: spec for (_, path), spec in zip(named, args.run)}):
            counts = fuse_to_file(runs, args.output, fusion, notices=notices)
    tell("note", notices)
    print(f"{fusion.describe(names)}: {counts['queries']} queries, {counts['rows']} "
          f"results -> {args.output}")
    return 0


def _option(text: str | None, flag: str, kind, default):
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: not {'an integer' if kind is int else 'a number'}"
                          ) from None


def parse_weights(specs: list[str]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            weights[name] = float(value) if sep and name else float("x")
        except ValueError:
            raise ConfigError(f"--weight {spec!r}: give NAME=NUMBER") from None
    return weights
