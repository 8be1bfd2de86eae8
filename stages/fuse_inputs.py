"""Stage fuse_inputs@<name>: what the fused run <name> is made of, in one small file."""

from skillret.cli.guard import stage
from skillret.pipeline import run_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: run_stages.fusion_inputs_stage(args.name), "fuse_inputs@{name}",
         ("name", {"metavar": "NAME", "help": "a name under fuse: in params.yaml"}))
