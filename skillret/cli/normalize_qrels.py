"""`skillret-eval normalize-qrels`: judgments in canonical form, with statistics."""

from __future__ import annotations

from skillret.io.atomic import reserve
from skillret.io.readers import parse_columns
from skillret.pipeline.project_stages import normalize_qrels


def command(args) -> int:
    reserve(args.output, args.stats)
    stats = normalize_qrels(args.qrels, args.output, args.stats, fmt=args.qrels_format,
                            split=args.split, columns=parse_columns(args.columns))
    print(f"{args.qrels}: {stats['queries']} queries, {stats['pairs']} judgments -> "
          f"{args.output}")
    return 0
