"""`skillret-eval queries`: the queries whose metric changed most between two runs or two
revisions of one run, with the skills each needed and where they ranked."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from skillret.analysis import queries
from skillret.analysis.queries import KeptRows
from skillret.api import per_query_values
from skillret.cli.options import named_run
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import write_text
from skillret.io.facets import read_labels
from skillret.io.readers import open_run, read_qrels
from skillret.io.streams import readable
from skillret.pipeline import comparable
from skillret.pipeline.revisions import Revision, headline_metrics
from skillret.render.queries import render
from skillret.scoring.names import metric_names

# Bytes read at a time: less than the default, as two runs are read at once.
BLOCK_SIZE = 2 << 20


def _files(args):
    """Two run files: (metric, sides, qrels, texts, skills files, title); each run's rows are kept
    as it streams (`KeptRows`) for the rankings of the queries chosen."""
    if args.rev:
        raise ConfigError("give --rev (the pipeline's runs) or --qrels with --run (run files), "
                          "not both")
    if not args.run or len(args.run) != 2:
        raise ConfigError("give --qrels and two --run: A, then B")
    (name_a, path_a), (name_b, path_b) = (named_run(r) for r in args.run)
    if name_a == name_b:
        name_a, name_b = path_a, path_b
    metric = metric_names([args.metric or "NDCG@10"])[0]
    sides = []
    with contextlib.ExitStack() as stack:  # both runs are read while the qrels are
        sources = [stack.enter_context(open_run(p, split=args.split, block_size=BLOCK_SIZE)
                                       .read_ahead()) for p in (path_a, path_b)]
        qrels = read_qrels(args.qrels, split=args.split)
        for name, path, source in ((name_a, path_a, sources[0]), (name_b, path_b, sources[1])):
            kept = KeptRows()
            table = per_query_values(qrels, source, [metric], path, watch=kept.watch)
            sides.append((name, table, kept.rankings))
    return metric, sides, qrels, (lambda: _file_bytes(args.query_texts)), \
        (lambda: _file_bytes(args.skills)), None, None


def _file_bytes(path):
    if not path:
        return None
    copy = Path(readable(path))
    if not copy.is_file():
        raise InputError(path, "no such file")
    return copy.read_bytes(), path


def _pipeline(args):
    if args.query_texts or args.skills:
        raise ConfigError("--query-texts and --skills go with --qrels: the pipeline's are "
                          "data.queries and data.skills")
    revs = args.rev or [None]
    if len(revs) > 2:
        raise ConfigError("give --rev once or twice")
    keep = header = None
    if len(revs) == 2:
        if not args.run or len(args.run) != 1:
            raise ConfigError("with two --rev, name one run: --run NAME")
        old, new = (Revision(args.repo, r) for r in revs)
        keep, header = comparable.check(old, new, args.run, args.allow_different_judgments)
        plan = [(old, args.run[0], old.label), (new, args.run[0], new.label)]
        title = args.run[0]
    else:
        if not args.run or len(args.run) != 2:
            raise ConfigError("name two runs, A then B: --run A --run B (or one run and two "
                              "--rev)")
        new = Revision(args.repo, revs[0])
        plan = [(new, args.run[0], args.run[0]), (new, args.run[1], args.run[1])]
        title = None if revs[0] is None else new.label
    metric = metric_names([args.metric])[0] if args.metric else headline_metrics(new.params)[0]
    sides = []
    for files, name, label in plan:
        table = comparable.restricted(files.per_query_tables([name], [metric]), keep)[name]
        canonical, _ = files.canonical_run(name)
        sides.append((label, table, KeptRows.of_table(canonical).rankings))
    return metric, sides, new.qrels(), (lambda: new.data_file("queries")), \
        (lambda: new.data_file("skills")), title, header


def command(args) -> int:
    if args.worst < 0 or args.best < 0:
        raise ConfigError("--worst and --best must be >= 0")
    metric, sides, qrels, texts, skills, title, header = \
        _files(args) if args.qrels else _pipeline(args)
    (label_a, table_a, rank_a), (label_b, table_b, rank_b) = sides
    selected = queries.select(table_a, table_b, metric, worst=args.worst, best=args.best)
    wanted = selected.chosen()
    ranked_a, ranked_b = rank_a(wanted), rank_b(wanted)
    text_file = texts() if wanted else None
    labels = read_labels(*text_file, "query", wanted) if text_file else {}
    report = queries.explain(selected, qrels, ranked_a, ranked_b, label_a=label_a,
                             label_b=label_b, texts=labels, title=title)
    skill_file = skills() if wanted else None
    if skill_file:
        queries.name_skills(report, read_labels(*skill_file, "name",
                                                queries.shown_skill_ids(report)))
    text = render(report, args.format)
    if header is not None:
        text = comparable.headed(text, header, args.format)
        print(f"skillret-eval: note: {header}", file=sys.stderr)
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
