"""Mapping a chart's rendered documents back to template and values lines in work linear in the documents.

One template that writes many documents (a ``range`` over a list of models, or documents written one after the
other) was mapped in work growing with documents x documents: each document was aligned with every region of its
template (kvlint.template_lines.align_document), and each finding looked up the ``.Values`` paths of its line
again, below a ``range`` every value of every model (kvlint.origins.helm_sources). The work is counted here (calls
made in the mapping modules, sys.setprofile), never timed; and the new region choice is compared with the previous
algorithm's, kept below as the reference, on the fixtures' charts and on seeded random templates.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kvlint import origins, render, template_lines
from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.template_lines import (
    RegionIndex,
    TemplateLine,
    align,
    align_document,
    matched_count,
    parse_template,
    regions,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from chart_map import range_template  # noqa: E402

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


def reference_align_document(
    rendered: Sequence[str],
    template: Sequence[TemplateLine],
    after: int = -1,
    helpers: Mapping[str, Sequence[re.Pattern[str]]] | None = None,
) -> tuple[list[tuple[int, int | None] | None], int]:
    """align_document before RegionIndex (main at 4247c742): every region aligned, the most matched lines win,
    ties to the first region after ``after``, else the first."""
    best: tuple[int, int, list[tuple[int, int | None] | None]] | None = None
    chosen = 0
    for ri, (a, b) in enumerate(regions(template)):
        table = align(rendered, template[a:b], helpers)
        score = matched_count(table)
        rank = (score, 1 if ri > after else 0)
        if best is None or rank > (best[0], best[1]):
            best = (score, 1 if ri > after else 0, table)
            chosen = ri
    assert best is not None
    return best[2], chosen


# --- the charts measured: one template writing N documents --------------------------------------------------

MODEL = "meta-llama/Llama-3.1-8B-Instruct"

RANGE_TEMPLATE = range_template(image='"vllm/vllm-openai:v0.11.0"')


def _range_document(i: int) -> str:
    """What helm writes for item ``i`` of RANGE_TEMPLATE's ``models`` (values.yaml below)."""
    return (
        "---\n# Source: many/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
        f"  name: m{i}\nspec:\n  replicas: 1\n  template:\n    spec:\n      nodeSelector:\n"
        "        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n        - name: vllm\n"
        '          image: "vllm/vllm-openai:v0.11.0"\n          args:\n            - --model\n'
        f"            - {MODEL}\n            - --max-num-seqs=64\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )


def _literal_document(i: int, header: str = "") -> str:
    """Document ``i`` of a template that writes its documents one after the other (each its own region)."""
    return (
        f"---\n{header}apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: model-{i}\nspec:\n"
        "  replicas: 1\n  template:\n    spec:\n      nodeSelector:\n"
        "        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n        - name: vllm\n"
        "          image: {{ .Values.image }}\n          args:\n            - --model\n"
        f"            - {MODEL}\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )


def _write_chart(root: Path, n: int) -> Path:
    """A chart ``many`` (a ``range`` template over N models and a template of N literal Deployments) and the file
    ``helm template`` prints for it, beside it; returns that file (kvlint maps it to the chart's templates)."""
    chart = root / "many"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: many\nversion: 0.1.0\n")
    values = "image: vllm/vllm-openai:v0.11.0\nmodels:\n" + "".join(
        f"  - name: m{i}\n    model: {MODEL}\n    extraArgs:\n      - --max-num-seqs=64\n" for i in range(n)
    )
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "deployment.yaml").write_text(RANGE_TEMPLATE)
    (chart / "templates" / "literal.yaml").write_text("".join(_literal_document(i) for i in range(n)))
    header = "# Source: many/templates/literal.yaml\n"
    rendered = "".join(_range_document(i) for i in range(n)) + "".join(
        _literal_document(i, header).replace("{{ .Values.image }}", "vllm/vllm-openai:v0.11.0")
        for i in range(n)
    )
    out = root / "rendered.yaml"
    out.write_text(rendered)
    return out


MAPPING_MODULES = tuple(os.path.abspath(m.__file__ or "") for m in (template_lines, origins))


def _mapping_work(path: Path) -> tuple[int, Any]:
    """Calls (Python functions and C built-ins) made in kvlint.template_lines and kvlint.origins while
    ``kvlint check`` reads ``path`` and its findings are listed, and the findings."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call") and frame.f_code.co_filename in MAPPING_MODULES:
            calls += 1

    render.clear_file_cache()
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        run = run_paths([str(path)], Options(allow_hub=False), no_config=True)
        diagnostics = list(run.result.diagnostics)  # a streamed run attaches the sources as they are read
    finally:
        sys.setprofile(previous)
    return calls, diagnostics


def test_mapping_work_grows_linearly_with_the_documents_of_one_template(tmp_path: Path) -> None:
    """Ten times the documents (a range over 10 then 100 models, and as many literal Deployments in one template)
    make about ten times the mapping work, not a hundred: before, the literal template aligned each document with
    every one of its N regions, and every finding on a range line listed all N models' values one by one."""
    small, big = 10, 100
    work = {}
    found = {}
    for n in (small, big):
        work[n], found[n] = _mapping_work(_write_chart(tmp_path / str(n), n))
    # the mapping is real: findings of both templates are on template lines, with the values that fed them
    for n in (small, big):
        files = {Path(d.loc.file).name for d in found[n] if d.loc is not None}
        assert {"deployment.yaml", "literal.yaml"} <= files, files
        on_range = [d for d in found[n] if d.loc is not None and d.loc.file.endswith("deployment.yaml")]
        assert on_range and all(d.sources for d in on_range)
        # `models:`, and the 3 keys, 2 values and 1 item of the model that wrote the document (its `name`)
        assert {len(d.sources) for d in on_range} == {7}
        names = {d.object for d in found[n] if d.loc is not None and d.loc.file.endswith("literal.yaml")}
        assert len(names) == n
    ratio = work[big] / work[small]
    assert ratio < 2 * big / small, (work, ratio)  # linear: ~10; documents x documents: ~100


@pytest.mark.parametrize("named", [False, True])
def test_documents_written_out_of_order_align_with_few_regions(named: bool) -> None:
    """The regions aligned per document stay few when the documents do not follow the template's order (a region
    whose ``if`` did not render, or documents given shuffled): a region is aligned only when the rendered lines
    its patterns match could beat the best so far. With each Deployment's name written by an action
    (``{{ .Release.Name }}-model-I``: a distinct pattern per region), each rendered name is tried against its own
    region's pattern only, not against all N."""
    n = 100  # against N: 3 N alignments is 300 here, all against all 10,000
    text = "".join(_literal_document(i) for i in range(n))
    if named:
        text = re.sub(r"name: model-", "name: {{ .Release.Name }}-model-", text)
    tpl = parse_template(text)
    index = RegionIndex(tpl)
    order = list(range(n))
    random.Random(7).shuffle(order)
    after = -1
    for i in order:
        doc = _literal_document(i).replace("{{ .Values.image }}", "vllm/vllm-openai:v0.11.0").split("\n")[1:]
        if named:
            doc = [line.replace("name: model-", "name: release-model-") for line in doc]
        table, region = align_document(doc, tpl, after, None, index)
        assert (table, region) == reference_align_document(doc, tpl, after), i
        assert region == i and table[3] == (5 + 20 * i, None)  # its own `name:` line, matched
        after = region
    # each document: the preferred region, and at most a couple of others (the one holding its name)
    assert index.aligned <= 3 * n, index.aligned
    # the patterns with actions tried: the image line's on each distinct text, each name's on its own text
    assert index.tried <= 3 * n, index.tried


# --- the same tables and regions as the previous algorithm ---------------------------------------------------


def _documents(text: str) -> Iterator[tuple[str, list[str]]]:
    """``(Source path, lines)`` of each document of rendered text that has a ``# Source:`` comment, as
    kvlint.render.map_sources cuts them (the lines after the comment, up to the next comment)."""
    sources = render.find_sources(text)
    lines = text.split("\n")
    for k, (line, src) in enumerate(sources):
        end = sources[k + 1][0] - 1 if k + 1 < len(sources) else len(lines)
        yield src, lines[line:end]


def _same_as_reference(docs: Sequence[tuple[Path, list[str]]]) -> int:
    """Compare align_document (with one RegionIndex per template, as map_sources) with the reference on each
    document in order; returns how many documents were compared."""
    indexes: dict[Path, RegionIndex | None] = {}
    last: dict[Path, int] = {}
    compared = 0
    for template, doc in docs:
        if template not in indexes:
            parsed = render._read_template(str(template))
            indexes[template] = RegionIndex(parsed) if parsed else None
        index = indexes[template]
        if index is None:
            continue
        helpers = render._chart_helpers(str(template))
        after = last.get(template, -1)
        got = align_document(doc, index.template, after, helpers, index)
        assert got == reference_align_document(doc, index.template, after, helpers), (template, doc)
        last[template] = got[1]
        compared += 1
    return compared


@needs_helm
def test_fixture_charts_map_as_before() -> None:
    """Every chart under fixtures/ (rendered with its default values) and the rendered files kept beside their
    charts: each document gets the same table and region as with the previous algorithm."""
    docs: list[tuple[Path, list[str]]] = []
    charts = sorted(p.parent for p in (ROOT / "fixtures").rglob("Chart.yaml"))
    rendered = 0
    for chart in charts:
        if (
            "charts" in chart.relative_to(ROOT / "fixtures").parts[:-1]
            and (chart.parent.parent / "Chart.yaml").exists()
        ):
            continue  # a subchart renders through its parent
        run = subprocess.run(
            ["helm", "template", "x", str(chart)], capture_output=True, text=True, timeout=120, check=False
        )
        if run.returncode != 0:
            continue
        rendered += 1
        for src, lines in _documents(run.stdout):
            rest = src.split("/", 1)[1] if "/" in src else src
            docs.append((chart / rest, lines))
    for path, chart_home in (
        (ROOT / "fixtures/helm/kubeai/rendered/models.yaml", ROOT / "fixtures/helm/kubeai/charts"),
        (ROOT / "fixtures/helm/rendered/chat-chart.yaml", ROOT / "fixtures/helm"),
    ):
        for src, lines in _documents(path.read_text()):
            docs.append((chart_home / src, lines))
    assert rendered >= 10, rendered
    assert _same_as_reference(docs) >= 50


_FIXED = [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    "data:",
    "  a: 1",
    "  b: 2",
    "spec:",
    "  - x",
    "  c: 3",
]
_WILD = [
    "  name: {{ .name }}",
    "  - {{ . }}",
    "  {{ .k }}: {{ .v }}",
    "  image: {{ .img }}:{{ .tag }}",
    "  n: {{ .n }}",
]
_OUTPUT = ["  {{- toYaml .extra | nindent 2 }}", '  {{- include "x" . | nindent 2 }}']


def _random_region(rng: random.Random, k: int) -> list[str]:
    """Lines of one random template region: fixed and wildcard lines, output actions, if/with/range blocks."""
    out: list[str] = []
    depth = 0
    for _ in range(rng.randint(2, 12)):
        roll = rng.random()
        if roll < 0.35:
            out.append(rng.choice(_FIXED))
        elif roll < 0.55:
            out.append(rng.choice(_WILD))
        elif roll < 0.62:
            out.append(f"  name: r{k}-{rng.randint(0, 3)}")  # a line few regions have
        elif roll < 0.7:
            out.append(rng.choice(_OUTPUT))
        elif roll < 0.85:
            out.append("  {{- " + rng.choice(["if .a", "with .b", "range .c"]) + " }}")
            depth += 1
        elif depth:
            out.append("  {{- else }}" if rng.random() < 0.2 else "  {{- end }}")
            depth -= out[-1].endswith("end }}")
    out += ["  {{- end }}"] * depth
    return out


def _random_rendering(rng: random.Random, region: list[str]) -> list[str]:
    """A document more or less like what ``region`` writes: literal lines kept or dropped, actions filled with
    values, output actions and range bodies writing several lines, some noise."""
    out: list[str] = []
    for line in region:
        if "{{-" in line and line.strip().startswith("{{-"):
            if "toYaml" in line or "include" in line:
                out += [f"  k{rng.randint(0, 3)}: v" for _ in range(rng.randint(0, 3))]
            continue
        if rng.random() < 0.15:
            continue
        text = re.sub(r"\{\{[^}]*\}\}", lambda _: rng.choice(["a", "b", "1", "x"]), line)
        out += [text] * (2 if rng.random() < 0.1 else 1)
    if rng.random() < 0.3:
        out.insert(rng.randint(0, len(out)), rng.choice(["noise: 1", "  - y", "", "kind: ConfigMap"]))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_templates_map_as_before(seed: int) -> None:
    """Seeded random templates of 1 to 12 regions sharing many lines, and documents drawn from their regions in
    order, shuffled or repeated (plus one from no region): every document gets the reference's table and region,
    ``after`` following the chosen regions as map_sources does."""
    rng = random.Random(seed)
    parts = [_random_region(rng, k) for k in range(rng.randint(1, 12))]
    text = "\n---\n".join("\n".join(p) for p in parts) + rng.choice(["", "\n"])
    tpl = parse_template(text)
    index = RegionIndex(tpl)
    picks = list(range(len(parts))) * 2
    if seed % 2:
        rng.shuffle(picks)
    after = rng.choice([-1, 0, len(parts) - 1, len(parts) + 3])
    for k in picks:
        doc = _random_rendering(rng, parts[k])
        got = align_document(doc, tpl, after, None, index)
        assert got == reference_align_document(doc, tpl, after), (seed, text, doc, after)
        after = got[1]
    doc = _random_rendering(rng, _random_region(rng, 99))
    assert align_document(doc, tpl, after) == reference_align_document(doc, tpl, after)
