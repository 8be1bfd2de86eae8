"""Stage inputs: every file params.yaml names is there, or is an output of a stage or .dvc file."""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline.inputs import inputs_stage

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(inputs_stage, prog="inputs"))
