"""Stage inputs: every file params.yaml names (qrels.path, data.skills, data.queries, runs.<name>)
is there, or is an output of a stage (or of a .dvc file), before any stage depends on one.

    python -m stages.inputs         # writes reports/inputs.json (qrels.path)

DVC hashes a stage's dependencies before it runs the stage, so a typo in a path would be DVC's
own error; this stage lists only the params keys, and stops with one line naming the key to fix.
normalize_qrels depends on reports/inputs.json, and every score@<run> comes after it.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline.inputs import inputs_stage

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(inputs_stage, prog="inputs"))
