"""Stage fuse@<name>: the fused run <name> of params.yaml's `fuse` section, written as TREC.

    python -m stages.fuse NAME    # reads outputs/runs/<run>.parquet; writes outputs/fused/NAME.trec

Reads `fuse` (every entry: a fused run may fuse fused runs, which are computed on the way) and
`runs` (a fused name may not be a registered one). The registered runs are read from their
validated canonical files (`--runs`, {} standing for the run's name). In dvc.yaml the stage
depends on reports/fusion/NAME.json (stage fuse_inputs@NAME), not on every run's file.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.fuse(doc=__doc__))
