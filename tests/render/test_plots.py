"""The charts without a browser (skillret.render.plots, `skillret-eval plots`) and the plot
templates with many runs and two revisions, drawn by vl-convert. The offline pages of
`dvc plots show` and `dvc plots diff` in Chromium: tests/pipeline/test_plots_offline.py."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pixels  # noqa: E402

vl_convert = pytest.importorskip("vl_convert", reason="vl-convert-python draws the charts")

from skillret.cli import main  # noqa: E402
from skillret.render import plots  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUNS = ["bm25-desc", "bm25-full", "bm25-title", "colbert-v2", "combmnz", "combsum",
        "dense-bge-large", "dense-e5", "hybrid", "llm-rerank", "rrf-3", "splade"]
MEASURES = ["NDCG", "MAP", "Recall", "Precision", "Completeness", "MRR"]
CATEGORIES = ["data-analysis", "devops-and-infrastructure", "documents", "finance", "media",
              "security", "software-engineering", "web"]
REVISIONS = ["main", "workspace"]


def curve(i: int, shift: float = 0.0) -> list[dict]:
    return [{"k": k, **{m: round(0.3 + 0.03 * i + 0.01 * j + 0.005 * k + shift, 5)
                        for j, m in enumerate(MEASURES)}} for k in range(1, 16)]


def breakdown_records(runs=RUNS, zero_run="bm25-title") -> list[dict]:
    out = []
    for i, run in enumerate(runs):
        for facet, strata in (("n_required", ["1", "2", "3"]), ("skill_category", CATEGORIES)):
            for s, stratum in enumerate(strata):
                for m, metric in enumerate(["Recall@5", "NDCG@10", "Completeness@5", "MRR@5"]):
                    value = 0.0 if run == zero_run and stratum == "3" else \
                        round(0.2 + (i * 7 + s * 3 + m) % 13 / 20, 5)
                    out.append({"run": run, "facet": facet, "stratum": stratum,
                                "metric": metric, "value": value, "queries": 10})
    return out


@pytest.fixture
def project(tmp_path) -> Path:
    """A project laid out as the pipeline's: dvc.yaml's plot definitions, params.yaml, the
    templates, and plot files for three runs."""
    shutil.copy2(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    shutil.copy2(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "plots" / "templates", tmp_path / "plots" / "templates")
    (tmp_path / "plots" / "runs").mkdir()
    names = ["bm25-desc", "bm25-full", "hybrid"]
    for i, run in enumerate(names):
        (tmp_path / "plots" / "runs" / f"{run}.json").write_text(json.dumps(curve(i)))
    (tmp_path / "plots" / "curves.json").write_text(json.dumps(
        [{"run": run, **row} for i, run in enumerate(names) for row in curve(i)]))
    (tmp_path / "plots" / "breakdown.json").write_text(json.dumps(breakdown_records(names)))
    return tmp_path


def fill(template: str, records: list[dict], **props) -> dict:
    """A template filled as `dvc plots diff` fills it: each record tagged with its revision."""
    from dvc_render.vega import VegaRenderer
    return VegaRenderer(records, template, template=str(ROOT / "plots/templates" / template),
                        **props).get_filled_template()


def two_revisions(records: list[dict], shift: float = 0.05) -> list[dict]:
    """The records at main, and at the workspace with every measure ``shift`` higher."""
    out = []
    for rev in REVISIONS:
        for record in records:
            record = {**record, "rev": rev}
            if rev == "workspace":
                record.update({m: round(record[m] + shift, 5) for m in MEASURES if m in record})
            out.append(record)
    return out


def legends(spec: dict) -> list[dict]:
    return vl_convert.vegalite_to_vega(spec, vl_version=plots.vega_lite_version())["legends"]


# --- the charts of dvc.yaml -------------------------------------------------------------------

def test_every_chart_of_dvc_yaml_in_its_order_named_for_its_file(project):
    charts = plots.pipeline_charts(project)
    assert [c.id for c in charts] == ["plots/runs/bm25-desc.json", "plots/runs/bm25-full.json",
                                      "plots/runs/hybrid.json", "plots/breakdown.json",
                                      "NDCG@K, every run"]
    assert [c.name for c in charts] == ["runs-bm25-desc", "runs-bm25-full", "runs-hybrid",
                                        "breakdown", "NDCG-K-every-run"]
    titles = [c.spec["title"]["text"] for c in charts]
    assert titles == ["bm25-desc: every measure at cutoff K", "bm25-full: every measure at "
                      "cutoff K", "hybrid: every measure at cutoff K",
                      "recommended metrics by stratum, every run", "NDCG@K, every run"]
    overlay = charts[-1].spec
    assert overlay["encoding"]["y"]["field"] == "NDCG"
    assert {r["run"] for r in overlay["data"]["values"]} == {"bm25-desc", "bm25-full", "hybrid"}
    # one revision: nothing to tell apart, no revision legend
    assert "rev" not in json.dumps([c.spec.get("encoding") for c in charts])
    assert "rev" not in json.dumps(charts[3].spec["spec"]["layer"][0]["encoding"])


def test_images_png_and_svg_deterministic(project, tmp_path, capsys):
    out = tmp_path / "figures"
    assert main(["plots", "--format", "png", "--repo", str(project), "-o", str(out)]) == 0
    written = capsys.readouterr().out.split()
    assert [Path(p).name for p in written] == ["runs-bm25-desc.png", "runs-bm25-full.png",
                                               "runs-hybrid.png", "breakdown.png",
                                               "NDCG-K-every-run.png"]
    first = {p: Path(p).read_bytes() for p in written}
    for path, data in first.items():
        drawn, total = pixels.drawn(path)
        assert 0.02 * total < drawn < 0.6 * total, (path, drawn, total)
        width, height = pixels.size(data)
        assert width <= 2 * 1400, (path, width)  # scale 2: within 1,400 px on a page
    assert main(["plots", "--format", "png", "--repo", str(project), "-o", str(out)]) == 0
    assert {p: Path(p).read_bytes() for p in written} == first
    assert main(["plots", "--format", "svg", "--repo", str(project), "-o", str(out),
                 "--scale", "1"]) == 0
    svg = (out / "breakdown.svg").read_text()
    assert svg.startswith("<svg") and "recommended metrics by stratum" in svg


def test_the_images_are_the_charts_dvc_draws(project):
    """The specs are dvc-render's own filling of the same templates and files (what
    `dvc plots show --json` gives), less the revision's encodings."""
    charts = plots.pipeline_charts(project)
    breakdown = next(c for c in charts if c.id == "plots/breakdown.json").spec
    records = json.loads((project / "plots/breakdown.json").read_text())
    expected = fill("breakdown.json", [{**r, "rev": "workspace",
                                        "filename": "plots/breakdown.json", "field": "value"}
                                       for r in records],
                    x="stratum", y="value", title="recommended metrics by stratum, every run",
                    y_label="mean over the stratum's queries")
    assert plots.without_revision(expected) == breakdown


@pytest.mark.parametrize("case, message", [
    ("missing", "plots/runs/hybrid.json: no such plot file (run dvc repro)"),
    ("bad-json", "plots/curves.json:1: not valid JSON"),
    ("no-field", "plots/curves.json: cannot be drawn"),
    ("no-dvc-yaml", "dvc.yaml: no such file"),
])
def test_errors_are_one_line_naming_the_file_exit_2(project, tmp_path, capsys, case, message):
    if case == "missing":
        (project / "plots/runs/hybrid.json").unlink()
    elif case == "bad-json":
        (project / "plots/curves.json").write_text("[{")
    elif case == "no-field":
        (project / "plots/curves.json").write_text(json.dumps([{"run": "a", "k": 1}]))
    else:
        (project / "dvc.yaml").unlink()
    out = tmp_path / "figures"
    assert main(["plots", "--format", "png", "--repo", str(project), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists() or not list(out.iterdir())  # nothing written


def test_a_format_or_a_page_is_asked_for(capsys):
    assert main(["plots"]) == 2
    assert "give --format png or --format svg" in capsys.readouterr().err


@pytest.mark.parametrize("plot_id, name", [
    ("plots/runs/bm25.json", "runs-bm25"), ("NDCG@K, every run", "NDCG-K-every-run"),
    ("results/a b.csv", "results-a-b"), ("@@", "chart")])
def test_image_names(plot_id, name):
    assert plots.image_name(plot_id) == name


# --- the offline page --------------------------------------------------------------------------

def test_the_page_inlines_vega_and_keeps_dvcs_placeholders(tmp_path, capsys):
    target = tmp_path / "page.html"
    assert main(["plots", "--html-template", str(target)]) == 0
    page = target.read_text()
    assert page == plots.html_template()  # deterministic
    assert "{plot_divs}" in page and "{refresh_tag}" in page
    assert "{scripts}" not in page  # where DVC would put its CDN <script src=...> tags
    assert "<script src" not in page and "cdn.jsdelivr" not in page
    assert "window.vegaEmbed=" in page and len(page) > 500_000
    from dvc_render.html import HTML
    filled = HTML(page).with_element("<div>chart</div>").embed()
    assert "<div>chart</div>" in filled and "{plot_divs}" not in filled


def test_the_bundle_is_built_once_per_machine(tmp_path, monkeypatch):
    """The page is the same bytes whether its bundle was built now or read from the cache; a
    cache that cannot be written is no error."""
    monkeypatch.setenv("SKILLRET_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def build():
        calls.append(1)
        return "var bundle = 1;"

    assert plots.cached_bundle(build, "k") == "var bundle = 1;" and len(calls) == 1
    assert plots.cached_bundle(build, "k") == "var bundle = 1;" and len(calls) == 1
    assert plots.cached_bundle(build, "other") == "var bundle = 1;" and len(calls) == 2
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SKILLRET_CACHE_DIR", str(tmp_path / "file" / "cache"))  # unwritable
    assert plots.cached_bundle(build, "k") == "var bundle = 1;" and len(calls) == 3
    # the real page: cold (built) and warm (read) alike
    monkeypatch.setenv("SKILLRET_CACHE_DIR", str(tmp_path / "real"))
    cold = plots.html_template()
    assert list((tmp_path / "real").glob("vega-bundle-vl-convert-python-*-vega-lite-*.js"))
    assert plots.html_template() == cold


# --- the templates: twelve runs, two revisions -------------------------------------------------

def test_overlay_twelve_runs_twelve_colours_and_dashes_in_the_legend():
    records = [{"run": run, **row} for i, run in enumerate(RUNS) for row in curve(i)]
    spec = fill("runs.json", two_revisions(records), x="k", y="NDCG", title="t")
    colours = spec["encoding"]["color"]["scale"]["range"]
    assert len(set(c.lower() for c in colours[:12])) == 12 and len(set(colours)) >= 20
    dash = next(g for g in legends(spec) if g.get("strokeDash"))
    assert dash["symbolType"] == "stroke"  # a line sample, drawn with the revision's dash
    assert dash["encode"]["symbols"]["update"]["stroke"] != {"value": "transparent"}
    assert spec["encoding"]["strokeDash"]["sort"] == {"field": "rev_rank", "op": "min"}
    png = vl_convert.vegalite_to_png(spec, vl_version=plots.vega_lite_version())
    assert pixels.size(png)[0] < 1400


def test_measures_legend_draws_the_dash_too():
    spec = fill("measures.json", two_revisions(curve(0)), x="k", y="NDCG", title="t")
    dash = next(g for g in legends(spec) if g.get("strokeDash"))
    assert dash["symbolType"] == "stroke"


def test_breakdown_twelve_runs_two_revisions_fits_1400px_and_shows_a_zero(tmp_path):
    records = two_revisions(breakdown_records())
    spec = fill("breakdown.json", records, x="stratum", y="value", title="t",
                y_label="mean over the stratum's queries")
    version = plots.vega_lite_version()
    png = vl_convert.vegalite_to_png(spec, vl_version=version, scale=1)
    width, _ = pixels.size(png)
    assert width <= 1400, width  # the legends are on top, the columns are the metrics
    found = {g.get("title"): g for g in legends(spec)}
    assert set(found) == {"run", "revision"} and found["run"]["orient"] == "top"
    assert spec["spec"]["encoding"]["color"]["field"] == "run"  # a colour per run, not per rev
    # every zero value is marked: bm25-title at n_required 3, 4 metrics x 2 revisions
    zeros = sum(1 for r in records if r["value"] == 0)
    assert zeros == 8
    scene = vl_convert.vegalite_to_scenegraph(spec, vl_version=version)
    marks = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("marktype") == "symbol":
                marks.extend(i for i in node.get("items", []) if i.get("shape"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(scene)
    assert sum(1 for m in marks if m["shape"] == "triangle-right") == zeros
    (tmp_path / "breakdown.png").write_bytes(png)
    drawn, total = pixels.drawn(tmp_path / "breakdown.png")
    assert drawn > 0.05 * total
