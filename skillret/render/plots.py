"""The pipeline's charts offline, via vl-convert-python (the `example` extra):
- `html_template`: DVC's plots page with Vega, Vega-Lite and vega-embed inlined (no CDN);
- `pipeline_charts`, `write_images`: the charts `dvc plots show` draws, as PNG or SVG.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml
from platformdirs import user_cache_dir

from skillret.errors import ConfigError, InputError
from skillret.io.atomic import OutputSet, write_text

VEGA_LITE_MAJOR = "5"  # the $schema of plots/templates
WORKSPACE = "workspace"  # DVC's name for the working tree's revision
FORMATS = ("png", "svg")

_PAGE = """<!DOCTYPE html>
<html>
<head>
    <meta charset="utf-8">
    {refresh_tag}
    <title>DVC Plot</title>
    <!-- {versions}, inlined from vl-convert-python {package}
         by skillret-eval plots --html-template: this page needs no network. -->
    <script type="text/javascript">
(function () {
"use strict";
{bundle}
})();
    </script>
    <style>
        table {
            border-spacing: 15px;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""
# dvc-render's page placeholders; {scripts} (its CDN tags) left out on purpose
_DVC_PLACEHOLDERS = ("{scripts}", "{plot_divs}", "{refresh_tag}")


def _vl_convert():
    try:
        import vl_convert  # the example extra's, imported only to draw
    except ImportError:
        raise ConfigError("vl-convert-python is not installed: it draws the charts "
                          "(pip install -e \".[example]\")") from None
    return vl_convert


def vega_lite_version() -> str:
    """The newest Vega-Lite of the templates' major version that vl-convert ships."""
    versions = _vl_convert().get_vegalite_versions()
    same_major = [v for v in versions if v.split(".")[0] == VEGA_LITE_MAJOR]
    key = (lambda v: tuple(int(p) for p in v.split(".") if p.isdigit()))
    return max(same_major or versions, key=key)


def html_template() -> str:
    """The page for `plots.html_template` in `.dvc/config`."""
    vl = _vl_convert()
    vl_version = vega_lite_version()
    bundle = cached_bundle(lambda: vl.javascript_bundle(vl_version=vl_version),
                           f"vl-convert-python-{version('vl-convert-python')}-"
                           f"vega-lite-{vl_version}")
    # "</script" would end the inline script and dvc-render substitutes placeholders anywhere
    for text in ("</script", "<!--", *_DVC_PLACEHOLDERS):
        if text in bundle:
            raise ConfigError(f"the JavaScript bundle of vl-convert-python contains {text!r}: "
                              f"it cannot be inlined in the plots page")
    versions = (f"vega {vl.get_vega_version()}, vega-lite {vl_version}, "
                f"vega-embed {vl.get_vega_embed_version()}")
    page = _PAGE
    for name, value in (("versions", versions), ("package", version("vl-convert-python"))):
        page = page.replace("{" + name + "}", value)
    return page.replace("{bundle}", bundle.strip())


def cached_bundle(build, key: str) -> str:
    """`build()`, cached as `vega-bundle-<key>.js` in `$SKILLRET_CACHE_DIR` or the user cache
    (shared by clones); an unwritable cache is no error."""
    folder = Path(os.environ.get("SKILLRET_CACHE_DIR") or user_cache_dir("skillret-eval"))
    path = folder / f"vega-bundle-{key}.js"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    bundle = build()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text(path, bundle)
    except OSError:
        pass
    return bundle


def write_html_template(path: str | os.PathLike) -> Path:
    write_text(path, html_template())
    return Path(path)



@dataclass(frozen=True)
class Chart:
    """`id`: plot file or top-level plot name; `name`: image file stem; `spec`: Vega-Lite."""

    id: str
    name: str
    spec: dict


def pipeline_charts(repo: str | os.PathLike = ".", revision: str = WORKSPACE) -> list[Chart]:
    """The charts `dvc plots show` draws for `repo`, in dvc.yaml's order, filled by
    dvc-render."""
    repo = Path(repo)
    dvc_yaml = repo / "dvc.yaml"
    if not dvc_yaml.is_file():
        raise InputError(dvc_yaml, "no such file", hint="--repo names the project's folder")
    pipeline = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")) or {}
    params = repo / "params.yaml"
    context = (yaml.safe_load(params.read_text(encoding="utf-8")) or {}) if params.is_file() else {}
    for extra in pipeline.get("vars") or []:
        if isinstance(extra, dict):
            context = _merged(context, extra)
    charts: list[Chart] = []
    for plot_id, props in _definitions(pipeline, context, dvc_yaml):
        charts += _charts(repo, plot_id, props, revision, dvc_yaml)
    names = [c.name for c in charts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{dvc_yaml}: two charts would be written as {twice[0]!r}")
    return charts


def _merged(base: dict, extra: dict) -> dict:
    """`vars` over params.yaml as DVC merges: mappings key by key (`fuse: {}` keeps params'
    fused runs), anything else replaced."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _definitions(pipeline: dict, context: dict, dvc_yaml: Path):
    """(id, properties): stages' plots, then top-level ones."""
    for stage_name, stage in (pipeline.get("stages") or {}).items():
        if not isinstance(stage, dict):
            continue
        if "matrix" in stage:
            raise ConfigError(f"{dvc_yaml}: stage {stage_name!r} uses matrix:, which "
                              f"skillret-eval plots does not read (use dvc plots show)")
        if "foreach" in stage:
            items = _resolve(stage["foreach"], context, dvc_yaml)
            pairs = (items.items() if isinstance(items, dict)
                     else ((None, item) for item in items or []))
            for key, item in pairs:
                local = {**context, "item": item, **({} if key is None else {"key": key})}
                yield from _plot_entries((stage.get("do") or {}).get("plots"), local, dvc_yaml)
        else:
            yield from _plot_entries(stage.get("plots"), context, dvc_yaml)
    yield from _plot_entries(pipeline.get("plots"), context, dvc_yaml)


def _plot_entries(entries, context: dict, dvc_yaml: Path):
    for entry in entries or []:
        if isinstance(entry, dict):
            for plot_id, props in entry.items():
                yield (_resolve(plot_id, context, dvc_yaml),
                       _resolve(dict(props or {}), context, dvc_yaml))
        else:
            yield _resolve(entry, context, dvc_yaml), {}


_INTERPOLATION = re.compile(r"\$\{\s*([^}]*?)\s*\}")


def _resolve(value, context: dict, dvc_yaml: Path):
    """DVC's `${name}` interpolation (dotted params keys, `key`, `item`)."""
    if isinstance(value, dict):
        return {_resolve(k, context, dvc_yaml): _resolve(v, context, dvc_yaml)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, context, dvc_yaml) for v in value]
    if not isinstance(value, str):
        return value
    whole = _INTERPOLATION.fullmatch(value)
    if whole:
        return _lookup(whole.group(1), context, dvc_yaml)
    return _INTERPOLATION.sub(lambda m: str(_lookup(m.group(1), context, dvc_yaml)), value)


def _lookup(name: str, context: dict, dvc_yaml: Path):
    value: Any = context
    for part in name.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise ConfigError(f"{dvc_yaml}: ${{{name}}} is not defined (params.yaml, key, item)")
    return value


def _charts(repo: Path, plot_id: str, props: dict, revision: str, dvc_yaml: Path) -> list:
    y = props.get("y")
    if isinstance(y, dict):  # a top-level plot: {file: field}
        sources = [(file, field) for file, fields in y.items()
                   for field in (fields if isinstance(fields, list) else [fields])]
        if len(sources) != 1:
            raise ConfigError(f"{dvc_yaml}: plot {plot_id!r} draws {len(sources)} y sources; "
                              f"skillret-eval plots draws one (dvc plots show draws more)")
        (file, field), = sources
        return [_chart(repo, plot_id, file, {**props, "y": field}, revision)]
    path = repo / plot_id
    if path.is_dir():
        return [_chart(repo, f"{plot_id.rstrip('/')}/{child.name}",
                       f"{plot_id.rstrip('/')}/{child.name}", props, revision)
                for child in sorted(path.iterdir()) if child.is_file()]
    if isinstance(y, list):
        if len(y) != 1:
            raise ConfigError(f"{dvc_yaml}: plot {plot_id!r} draws {len(y)} y fields; "
                              f"skillret-eval plots draws one (dvc plots show draws more)")
        props = {**props, "y": y[0]}
    return [_chart(repo, plot_id, plot_id, props, revision)]


def _chart(repo: Path, plot_id: str, file: str, props: dict, revision: str) -> Chart:
    from dvc_render.exceptions import DvcRenderError  # the pipeline extra
    from dvc_render.vega import VegaRenderer

    records = read_records(repo / file)
    x, y = props.get("x"), props.get("y")
    if y is None:  # DVC's default: the last field of a record
        y = next(reversed(records[0])) if records else None
    points = []
    for step, record in enumerate(records):
        point = {**record, "rev": revision, "filename": file, "field": y}
        if x is None:
            point["step"] = step
        points.append(point)
    properties = {"title": plot_id}  # DVC's title when dvc.yaml gives none
    properties.update({key: props[key] for key in ("title", "x_label", "y_label")
                       if key in props})
    properties.update(x=x or "step", y=y, template=_template(repo, props.get("template")),
                      template_dir=str(repo / ".dvc" / "plots"))
    try:
        spec = VegaRenderer(points, plot_id, **properties).get_filled_template()
    except DvcRenderError as exc:
        raise InputError(repo / file, f"cannot be drawn ({exc})") from None
    if not spec:
        raise InputError(repo / file, "holds no records to draw", hint="run dvc repro")
    return Chart(plot_id, image_name(plot_id), without_revision(spec))


def _template(repo: Path, template: str | None) -> str:
    if template is None:
        return "linear"
    path = repo / template
    if path.is_file():
        return str(path)
    return template  # one of dvc-render's own (linear, scatter, ...), or .dvc/plots/<name>


def read_records(path: Path) -> list[dict]:
    """Records of a JSON (a list, or an object holding one), CSV or TSV plot file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such plot file", hint="run dvc repro") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    if path.suffix.lower() in (".csv", ".tsv"):
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        return list(csv.DictReader(text.splitlines(), delimiter=delimiter))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(path, "expected a list of records (objects) to plot")
    return data


def without_revision(spec):
    """`spec` without `rev` encodings (one revision: a legend saying only 'workspace')."""
    if isinstance(spec, list):
        return [without_revision(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    out = {}
    for key, value in spec.items():
        if key == "encoding" and isinstance(value, dict):
            value = {channel: enc for channel, enc in value.items()
                     if not (isinstance(enc, dict) and enc.get("field") == "rev")}
        out[key] = without_revision(value)
    return out


def image_name(plot_id: str) -> str:
    """Image stem: `plots/runs/bm25.json` -> `runs-bm25`, `NDCG@K, every run` ->
    `NDCG-K-every-run`."""
    stem = re.sub(r"\.(json|csv|tsv|ya?ml)$", "", plot_id, flags=re.IGNORECASE)
    stem = re.sub(r"^plots/", "", stem)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "chart"



def render(spec: dict, fmt: str, scale: float = 2.0) -> bytes:
    """PNG (`scale` pixels per CSS pixel) or SVG bytes."""
    vl = _vl_convert()
    version = vega_lite_version()
    if fmt == "png":
        return vl.vegalite_to_png(spec, vl_version=version, scale=scale)
    if fmt == "svg":
        return vl.vegalite_to_svg(spec, vl_version=version).encode("utf-8")
    raise ConfigError(f"unknown image format {fmt!r} (png or svg)")


def write_images(repo: str | os.PathLike, output_dir: str | os.PathLike, fmt: str,
                 scale: float = 2.0) -> list[Path]:
    """Every chart as `<output_dir>/<name>.<fmt>`: all written, or none on an error."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown image format {fmt!r} (png or svg)")
    charts = pipeline_charts(repo)
    images = [(Path(output_dir) / f"{chart.name}.{fmt}", render(chart.spec, fmt, scale))
              for chart in charts]
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    with OutputSet() as out:
        for path, data in images:
            out.write_bytes(path, data)
    return [path for path, _ in images]
