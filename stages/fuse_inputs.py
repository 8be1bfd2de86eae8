"""Stage fuse_inputs@<name>: what the fused run <name> is made of, in one small file."""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import fused_runs
from skillret.pipeline.params import check_name

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("name", metavar="NAME", help="a name under fuse: in params.yaml")
    args = parser.parse_args()
    finish(guarded(lambda: fused_runs.fusion_inputs_stage("params.yaml",
                                                          check_name(args.name, "fused run")),
                   prog=f"fuse_inputs@{args.name}"))
