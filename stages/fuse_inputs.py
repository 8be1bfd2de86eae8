"""Stage fuse_inputs@<name>: what the fused run <name> is made of, in one small file.

    python -m stages.fuse_inputs NAME        # writes reports/fusion/NAME.json

Reads `fuse` and `runs` from params.yaml and the canonical file of every registered run the
fused run reads (directly, or through the fused runs it fuses): its settings and their sha256.
fuse@<name> depends on this file alone, so it reruns only when one of its own runs changes.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.fuse_inputs(doc=__doc__))
