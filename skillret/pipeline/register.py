"""`skillret-eval register` and `unregister`: edit params.yaml's `runs:` (round-trip, with ruamel:
comments and layout kept) and take a run out of the project."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

from ruamel.yaml import YAML, YAMLError
from ruamel.yaml.comments import CommentedMap

from skillret.errors import ConfigError
from skillret.io.readers import open_run, run_name
from skillret.pipeline import layout
from skillret.pipeline.params import check_name, load_yaml, run_entry


def register(params: str | os.PathLike, paths, *, name: str | None = None,
             options: dict | None = None) -> list[tuple[str, str, bool]]:
    """Register `paths` (named by stem, unique; stored relative to the params file, POSIX); returns
    `(name, path, added)` per file (`added` false: already registered)."""
    params = Path(params)
    if name is not None and len(paths) != 1:
        raise ConfigError("--name names one run: give one file with it")
    root = params.resolve().parent
    entries = []
    for path in paths:
        full = Path(path).resolve()
        if not full.is_file():
            raise ConfigError(f"{path}: no such run file")
        try:
            entries.append(full.relative_to(root).as_posix())
        except ValueError:
            raise ConfigError(f"{path}: outside the project ({root}); copy it in first so "
                              f"that DVC can track it") from None
    with _edited(params) as doc:
        runs = doc.get("runs")
        if runs is None:
            runs = doc["runs"] = CommentedMap()
        if not isinstance(runs, dict):
            raise ConfigError(f"{params}: 'runs' must map run names to files")
        runs.fa.set_block_style()
        done = []
        for entry in entries:
            if name is not None:
                chosen = check_name(name)
                if runs.get(chosen, entry) != entry:
                    raise ConfigError(f"{params}: a run named {chosen!r} is already registered "
                                      f"({runs[chosen]}); choose another --name")
            else:  # the name it has, else its stem (`-2`, `-3`... when that is taken)
                stem = run_name(entry)
                chosen = next((k for k, v in runs.items() if v == entry), None) or next(
                    c for c in itertools.chain([stem], (f"{stem}-{n}" for n in itertools.count(2)))
                    if c not in runs)
            added = chosen not in runs
            runs[chosen] = entry
            done.append((chosen, entry, added))
        wanted = {k: v for k, v in (options or {}).items() if v is not None}
        run_options = doc.get("run_options")
        if not isinstance(run_options, dict):
            run_options = doc["run_options"] = CommentedMap()
        run_options.fa.set_block_style()
        for chosen, _, added in done:
            if added or wanted or chosen not in run_options:
                entry = CommentedMap(wanted)
                entry.fa.set_flow_style()
                run_options[chosen] = entry
            if added or wanted:  # read as its stage will: a wrong option fails now, not at repro
                path, read = run_entry(doc, chosen, str(params))
                with open_run(params.parent / path, **read) as run:
                    if read["columns"] and run.fmt in ("trec", "json", "skillret-json"):
                        raise ConfigError(f"{path}: --columns names the columns of a table (CSV, "
                                          f"TSV, JSON lines, Parquet); a {run.fmt} run has none")
                    run.read()
    return done


@contextlib.contextmanager
def _edited(params: Path):
    """The params file's document, written back (atomically) unless the body raises; its errors
    are `load_yaml`'s."""
    load_yaml(params)
    yaml = YAML()  # round-trip: comments and order kept
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.representer.add_representer(  # keep `null` as written, not an empty value
        type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    try:
        with open(params, encoding="utf-8") as fh:
            doc = yaml.load(fh) or CommentedMap()
    except YAMLError as exc:  # what PyYAML reads and ruamel refuses: a key given twice
        raise ConfigError(f"{params}: not valid YAML ({str(exc).splitlines()[0]})") from None
    yield doc
    tmp = params.with_name(f".{params.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        yaml.dump(doc, fh)
    os.replace(tmp, params)


def unregister(params: str | os.PathLike, name: str) -> list[Path]:
    """Remove run `name`'s params entries and every file the pipeline made for it (not the run's
    own file); return the files removed. A run another setting still names is refused."""
    params = Path(params)
    with _edited(params) as doc:
        runs, fused = doc.get("runs") or {}, doc.get("fuse") or {}
        if name not in runs and name not in fused:
            raise ConfigError(f"{params}: no run named {name!r} (registered or fused: "
                              f"{', '.join([*runs, *fused]) or 'none'})")
        users = [f"fuse.{other}.runs" for other, spec in fused.items()
                 if isinstance(spec, dict) and name in (spec.get("runs") or [])]
        if (doc.get("compare") or {}).get("baseline") == name:
            users.append("compare.baseline")
        if users:
            raise ConfigError(f"{params}: {users[0]} names {name!r}: change it first")
        for section in ("runs", "run_options", "fuse"):
            if isinstance(doc.get(section), dict):
                doc[section].pop(name, None)
    root = params.resolve().parent
    removed = [path for path in (root / pattern.format(name) for pattern in layout.RUN_FILES)
               if path.is_file()]
    for path in removed:
        path.unlink()
    return removed
