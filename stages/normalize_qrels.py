"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics.

Reads `qrels` (path, format, split, columns) from params.yaml.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.normalize_qrels(doc=__doc__))
