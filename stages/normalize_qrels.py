"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics.

Reads `qrels` (path, format, split, columns) from params.yaml.
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
    parser.add_argument("--output", required=True, help="canonical qrels (TSV)")
    parser.add_argument("--stats", required=True, help="qrels statistics (JSON metrics)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline.params import load_yaml, qrels_section
        from skillret.pipeline.steps import normalize_qrels, params_hints

        qrels = qrels_section(load_yaml(args.params).get("qrels"), args.params)
        with params_hints("qrels"):
            normalize_qrels(qrels["path"], args.output, args.stats, fmt=qrels["format"],
                            split=qrels["split"], columns=qrels["columns"])

    return guarded(work, prog="normalize_qrels")


if __name__ == "__main__":
    sys.exit(main())
