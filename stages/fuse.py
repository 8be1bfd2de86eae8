"""Stage fuse@<name>: the fused run <name> of params.yaml's `fuse` section, written as TREC."""

from skillret.cli.guard import stage
from skillret.pipeline import run_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: run_stages.fuse_stage(args.name), "fuse@{name}",
         ("name", {"metavar": "NAME", "help": "a name under fuse: in params.yaml"}))
