"""Stage compare: paired significance tests of every registered run against the baseline in
params.yaml (`compare`), from the per-query tables of the score stages.
"""

from __future__ import annotations

import argparse
import sys

from skillret.cli import guarded
from skillret.params import load_yaml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--per-query", required=True,
                        help="directory of the per-query tables, <run>.tsv")
    parser.add_argument("--output", required=True)
    parser.add_argument("--markdown", required=True)
    args = parser.parse_args(argv)

    def work():
        from pathlib import Path

        from skillret.compare import compare_registered, stage_settings, terminal_table

        params = load_yaml(args.params)
        runs = [str(name) for name in params.get("runs") or {}]
        tables = {name: Path(args.per_query) / f"{name}.tsv" for name in runs}
        comparison, notes = compare_registered(
            runs, tables, stage_settings(params.get("compare"), args.params),
            output=args.output, markdown_path=args.markdown)
        for note in notes:
            print(f"compare: note: {note}", file=sys.stderr)
        print(terminal_table(comparison.result))

    return guarded(work, prog="compare")


if __name__ == "__main__":
    sys.exit(main())
