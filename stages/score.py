"""Stage score@<run>: metrics of one canonical run under the profiles in params.yaml (`eval`);
per-query values, plot data and the metric contract beside them.
"""

from __future__ import annotations

import argparse
import sys

from skillret.guard import guarded
from skillret.params import eval_params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--qrels", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--per-query", required=True)
    parser.add_argument("--plots", required=True)
    parser.add_argument("--contract", required=True)
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import score_run
        from skillret.report import scores_table

        params = eval_params(args.params)
        scores = score_run(args.qrels, args.run, profiles=params.profiles,
                           relevance_level=params.relevance_level, define=params.define,
                           plot_profile=params.plot_profile, metrics=args.metrics,
                           per_query=args.per_query, plots=args.plots, contract=args.contract)
        print(scores_table(scores))

    return guarded(work, prog="score")


if __name__ == "__main__":
    sys.exit(main())
