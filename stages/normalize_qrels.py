"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics.

Reads `qrels` (path, format, split) from params.yaml.
"""

from __future__ import annotations

import argparse
import sys

from skillret.guard import guarded
from skillret.params import load_yaml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--output", required=True, help="canonical qrels (TSV)")
    parser.add_argument("--stats", required=True, help="qrels statistics (JSON metrics)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import normalize_qrels

        qrels = load_yaml(args.params)["qrels"]
        normalize_qrels(qrels["path"], args.output, args.stats, fmt=qrels.get("format"),
                        split=qrels.get("split"))

    return guarded(work, prog="normalize_qrels")


if __name__ == "__main__":
    sys.exit(main())
