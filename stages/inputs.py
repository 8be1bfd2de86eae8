"""Stage inputs: every file params.yaml names is there, or is an output of a stage or .dvc file."""

from skillret.pipeline.inputs import inputs_stage
from stages import main

if __name__ == "__main__":
    main(__doc__, lambda args: inputs_stage(), "inputs")
