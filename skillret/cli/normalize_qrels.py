"""``skillret-eval normalize-qrels``: judgments in canonical form, with statistics."""

from __future__ import annotations

from skillret.cli.options import add_limits


def add_parser(sub) -> None:
    p = sub.add_parser("normalize-qrels", help="write qrels in canonical form, with statistics")
    p.add_argument("--qrels", required=True, metavar="PATH")
    p.add_argument("--qrels-format", metavar="FMT")
    p.add_argument("--split", metavar="NAME")
    p.add_argument("--columns", metavar="SPEC")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="canonical qrels (TSV: query_id, skill_id, relevance)")
    p.add_argument("--stats", metavar="FILE", help="write qrels statistics as JSON")
    add_limits(p)


def command(args) -> int:
    from skillret.io.atomic import reserve
    from skillret.io.readers import parse_columns
    from skillret.pipeline.steps import normalize_qrels

    reserve(args.output, args.stats)
    stats = normalize_qrels(args.qrels, args.output, args.stats, fmt=args.qrels_format,
                            split=args.split, columns=parse_columns(args.columns))
    print(f"{args.qrels}: {stats['queries']} queries, {stats['pairs']} judgments -> "
          f"{args.output}")
    return 0
