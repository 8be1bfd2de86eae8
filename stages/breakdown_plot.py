"""Stage breakdown_plot: every registered run's breakdown (the `breakdown` key of its metrics
file, see eval.breakdown) as one plot file, so `dvc plots show` draws the runs side by side.
"""

from __future__ import annotations

import os
import sys

# Import the skillret of the tree this script is in, whatever is installed (see stages/score.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

from skillret.cli.guard import guarded  # noqa: E402
from skillret.pipeline.params import load_yaml  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--metrics", required=True, help="directory of the runs' metrics files")
    parser.add_argument("--output", required=True, help="plot records (JSON)")
    args = parser.parse_args(argv)

    def work():
        from skillret.io.atomic import write_json
        from skillret.analysis.breakdown import collect_plot

        params = load_yaml(args.params)
        runs = [str(name) for section in ("runs", "fuse") for name in params.get(section) or {}]
        write_json(args.output, collect_plot({run: Path(args.metrics) / f"{run}.json"
                                              for run in runs}))

    return guarded(work, prog="breakdown_plot")


if __name__ == "__main__":
    sys.exit(main())
