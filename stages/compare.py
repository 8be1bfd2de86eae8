"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote.

    python stages/compare.py --per-query outputs/per_query --output metrics/compare.json \
        --markdown reports/compare.md

Reads the names under `runs` and `fuse` and the `compare` section from params.yaml. Writes both
outputs only after every table was read and every test done.
"""

from __future__ import annotations

import os
import sys

# Import the skillret of the tree this script is in, whatever is installed (see stages/score.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

from skillret.cli.guard import guarded  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--per-query", required=True,
                        help="folder of the per-query tables, <run>.tsv")
    parser.add_argument("--output", required=True, help="the comparison (JSON)")
    parser.add_argument("--markdown", required=True, help="the report (Markdown)")
    parser.add_argument("--qrels", help="canonical qrels: the tests within the strata of "
                                        "eval.breakdown need them")
    args = parser.parse_args(argv)

    def work():
        from pathlib import Path

        from skillret.analysis.breakdown import stage_strata
        from skillret.analysis.compare import compare_registered, stage_settings
        from skillret.pipeline.params import load_yaml
        from skillret.render.breakdown import stratified_table
        from skillret.render.compare import terminal_table

        params = load_yaml(args.params)
        runs = [str(name) for name in [*(params.get("runs") or {}), *(params.get("fuse") or {})]]
        tables = {name: Path(args.per_query) / f"{name}.tsv" for name in runs}
        settings = stage_settings(params.get("compare"), args.params)
        strata = stage_strata(params, args.params, args.qrels, settings["metrics"])
        comparison, notes = compare_registered(
            runs, tables, settings, output=args.output, markdown_path=args.markdown,
            strata=strata)
        for note in notes:
            print(f"compare: note: {note}", file=sys.stderr)
        print(terminal_table(comparison.result))
        if "breakdown" in comparison.result:
            print("\n" + stratified_table(comparison.result["breakdown"],
                                           settings["correction"]))

    return guarded(work, prog="compare")


if __name__ == "__main__":
    sys.exit(main())
