"""Stage inputs: every file params.yaml names is there, or is an output of a stage or .dvc file."""

from skillret.cli.guard import stage
from skillret.pipeline.project_stages import inputs_stage

if __name__ == "__main__":
    stage(__doc__, lambda args: inputs_stage(), "inputs")
