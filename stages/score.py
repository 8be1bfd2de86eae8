"""Stage score@<run>: validate one registered run against the canonical qrels, then score it.

    python -m stages.score NAME             # score_fused@NAME: python -m stages.score NAME --fused

Reads `runs.<NAME>` and `run_options.<NAME>` (the file, and how to read it), `validate.strict`
and `eval` from params.yaml. Writes the canonical run, the validation report (with its counts
and the metric contract), the metrics, per-query values and plot data (paths:
skillret.pipeline.layout), all computed before any is replaced: a failing run exits 2 with one
line and leaves every previous output as it was. Prints one line: the headline metrics and the
warnings' count.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.score(doc=__doc__))
