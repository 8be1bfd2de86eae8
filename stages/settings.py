"""Stage settings: what every run is scored with, and which runs there are, checked once.

    python -m stages.settings       # writes reports/settings.json and reports/runs.json

Reads `eval`, `validate`, `runs`, `fuse` and `data` from params.yaml, and hashes the canonical
qrels and the data files eval.breakdown reads. Every score@<run> depends on
reports/settings.json (and its own run); the stages over every run on reports/runs.json. A bad
profile, breakdown, headline or run name stops here, in one line, before any run is scored.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.settings(doc=__doc__))
