"""A finding in a document a Helm ``range`` wrote lists the values of the item that wrote it, not of every item.

kvlint.origins attaches to each finding on a chart template line the values-file lines that fed it. Below
``{{ range .Values.models }}`` that was every value of every model, for every finding: the JSON report grew with
models x models (10 models: 0.24 MB, 100: 19 MB). The item is now told by the finding's object name (what
helm's ``range`` leaves of the iteration: each document is named after its item), and when it cannot be told the
list is cut at MAX_SOURCES with the number left out. Sizes are compared, never times; the expected lines come from
the values files the tests write (or the fixtures' values), read with kvlint's own YAML reader.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import sys
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint import origins
from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.report.jsonout import render_json
from kvlint.types import Diagnostic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from chart_map import range_template  # noqa: E402

OFFLINE = Options(allow_hub=False)
needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
MODEL = "meta-llama/Llama-3.1-8B-Instruct"

# a range over a list of models, each Deployment named by its item (``name``) or by its index only
LIST_TEMPLATE = range_template(name="NAME", image='"vllm/vllm-openai:v0.11.0"')
NAMES = {"named": ("{{ $m.name }}", "{name}"), "indexed": ("model-{{ $i }}", "model-{i}")}


def _document(header: str, name: str) -> str:
    return (
        f"---\n# Source: many/templates/{header}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
        f"  name: {name}\nspec:\n  replicas: 1\n  template:\n    spec:\n      nodeSelector:\n"
        "        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n        - name: vllm\n"
        '          image: "vllm/vllm-openai:v0.11.0"\n          args:\n            - --model\n'
        f"            - {MODEL}\n            - --max-num-seqs=64\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )


def _list_chart(root: Path, n: int, naming: str) -> Path:
    """A chart ``many`` whose one template ranges over N models (values.yaml), and the file ``helm template``
    prints for it beside it (kvlint maps it to the chart); returns that file."""
    chart = root / "many"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: many\nversion: 0.1.0\n")
    values = "models:\n" + "".join(
        f"  - name: llm{i}\n    model: {MODEL}\n    extraArgs:\n      - --max-num-seqs=64\n" for i in range(n)
    )
    (chart / "values.yaml").write_text(values)
    template, rendered_name = NAMES[naming]
    (chart / "templates" / "deployment.yaml").write_text(LIST_TEMPLATE.replace("NAME", template))
    out = root / "rendered.yaml"
    out.write_text(
        "".join(_document("deployment.yaml", rendered_name.format(name=f"llm{i}", i=i)) for i in range(n))
    )
    return out


def _check(path: Path, helm_values: tuple[str, ...] = ()) -> tuple[list[Diagnostic], str]:
    """The findings of ``kvlint check`` on ``path`` (with its sources) and the JSON report."""
    origins.clear_file_cache()
    run = run_paths([str(path)], replace(OFFLINE, helm_values=helm_values), no_config=True)
    return list(run.result.diagnostics), render_json(run.result)


@functools.cache
def _parsed(text: str) -> Any:
    """``yaml.safe_load(text)``, once per text (a test asks the lines of each of a catalogue's items); not to be
    changed by the caller."""
    return yaml.safe_load(text)


def _item_lines(values: Path, key: str, item: Any) -> set[int]:
    """The lines of item ``item`` (list index or map key) of ``values``'s top-level ``key``, read as text: from
    the item's first line (``  - `` or ``  NAME:``) to the last non-blank line before the next item or the next
    top-level key."""
    text = values.read_text().split("\n")
    data = _parsed(values.read_text())[key]
    start = next(i for i, t in enumerate(text, 1) if t.startswith(f"{key}:"))
    end = next(
        (i for i, t in enumerate(text, 1) if i > start and t and not t.startswith((" ", "#"))), len(text) + 1
    )
    head = re.compile(r"^  - " if isinstance(data, list) else r"^  [^\s#][^:]*:")
    heads = [i for i in range(start + 1, end) if head.match(text[i - 1])]
    names = list(range(len(data))) if isinstance(data, list) else list(data)
    assert len(heads) == len(names), (heads, names)
    k = names.index(item)
    last = heads[k + 1] - 1 if k + 1 < len(heads) else end - 1
    while last > heads[k] and not text[last - 1].strip():
        last -= 1
    return set(range(heads[k], last + 1))


def test_sources_name_the_model_that_wrote_the_document(tmp_path: Path) -> None:
    """Three models: each finding's sources are the ``models:`` line and that model's lines, no other model's."""
    rendered = _list_chart(tmp_path, 3, "named")
    values = tmp_path / "many" / "values.yaml"
    found, _ = _check(rendered)
    on_range = [d for d in found if d.loc is not None and d.loc.file.endswith("deployment.yaml")]
    assert {d.object for d in on_range} == {f"Deployment/llm{i}" for i in range(3)}
    for d in on_range:
        i = int(d.object.rsplit("llm", 1)[1])
        lines = {s.line for s in d.sources}
        assert all(Path(s.file).resolve() == values.resolve() for s in d.sources), d.sources
        assert lines == {1} | _item_lines(values, "models", i), (d.object, lines)
        assert d.sources_more == 0


@pytest.mark.parametrize("naming", ["named", "indexed"])
def test_json_report_grows_linearly_with_the_items(tmp_path: Path, naming: str) -> None:
    """Ten times the models make about ten times the JSON report, not a hundred: the sources of a finding are its
    own model's lines (``named``), or, when the document's name does not tell the item (``model-{{ $i }}``), the
    first MAX_SOURCES of every model's with the number left out."""
    size = {}
    found = {}
    for n in (10, 100):
        found[n], report = _check(_list_chart(tmp_path / str(n), n, naming))
        size[n] = len(report.encode())
    assert size[100] / size[10] < 20, size  # linear: ~10; models x models: ~90
    for n in (10, 100):
        on_range = [d for d in found[n] if d.loc is not None and d.loc.file.endswith("deployment.yaml")]
        assert len(on_range) == 2 * n  # two findings a Deployment
        every = 1 + 6 * n  # `models:`, and each model's 3 keys, 2 values and 1 list item
        if naming == "named":
            assert {len(d.sources) for d in on_range} == {7}
            assert {d.sources_more for d in on_range} == {0}
        else:
            assert {len(d.sources) for d in on_range} == {min(every, origins.MAX_SOURCES)}
            assert {d.sources_more for d in on_range} == {max(0, every - origins.MAX_SOURCES)}


MAP_TEMPLATE = """\
{{- range $name, $model := .Values.catalog }}
{{- if or $model.enabled $.Values.all.enabled }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}-engine
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: "vllm/vllm-openai:v0.11.0"
          args:
            - --model
            - {{ $model.model }}
          resources:
            limits:
              nvidia.com/gpu: 1
{{- end }}
{{- end }}
"""


@needs_helm
def test_map_range_with_skipped_items_and_an_override_file(tmp_path: Path) -> None:
    """A ``range`` over a map (helm iterates its keys sorted) whose ``if`` skips disabled items, so the document's
    ordinal is not the item's, and a second values file adding an item and overriding another: each finding
    lists its own item's lines in both files (``llama`` and ``llama-2`` told apart: the longest name wins)."""
    chart = tmp_path / "cat"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: cat\nversion: 0.1.0\n")
    (chart / "templates" / "engines.yaml").write_text(MAP_TEMPLATE)
    (chart / "values.yaml").write_text(
        "all:\n  enabled: false\ncatalog:\n"
        f"  zephyr:\n    enabled: true\n    model: {MODEL}\n"
        f"  llama:\n    enabled: true\n    model: {MODEL}\n"
        f"  off:\n    enabled: false\n    model: {MODEL}\n"
        f"  llama-2:\n    enabled: true\n    model: {MODEL}\n"
    )
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        f"catalog:\n  mistral:\n    enabled: true\n    model: {MODEL}\n  llama:\n    model: {MODEL}\n"
    )
    found, _ = _check(chart, (str(extra),))  # kvlint renders the chart with helm
    on_range = [d for d in found if d.loc is not None and d.loc.file.endswith("engines.yaml")]
    objects = {d.object.rsplit("/", 1)[-1] for d in on_range}
    assert objects == {f"{k}-engine" for k in ("llama", "llama-2", "mistral", "zephyr")}
    for d in on_range:
        key = d.object.rsplit("/", 1)[-1][: -len("-engine")]
        want: set[tuple[str, int]] = set()
        for values in (chart / "values.yaml", extra):
            if key in yaml.safe_load(values.read_text())["catalog"]:
                want |= {(str(values.resolve()), line) for line in _item_lines(values, "catalog", key)}
                want.add(
                    (
                        str(values.resolve()),
                        next(i for i, t in enumerate(values.read_text().split("\n"), 1) if t == "catalog:"),
                    )
                )
        got = {(str(Path(s.file).resolve()), s.line) for s in d.sources}
        assert got == want, (d.object, sorted(got ^ want))


def test_kubeai_catalogue_findings_list_their_own_model() -> None:
    """KubeAI's models chart (fixtures/helm/kubeai, rendered with all models enabled): a finding on a Model lists
    the ``catalog`` line and that model's lines of the chart's values.yaml, where the report listed all 47."""
    rendered = ROOT / "fixtures/helm/kubeai/rendered/models.yaml"
    values = ROOT / "fixtures/helm/kubeai/charts/models/values.yaml"
    found, _ = _check(rendered)
    catalog = yaml.safe_load(values.read_text())["catalog"]
    catalog_line = next(
        i for i, t in enumerate(values.read_text().split("\n"), 1) if t.startswith("catalog:")
    )
    on_models = [d for d in found if d.object.startswith("Model/") and d.sources]
    assert len({d.object for d in on_models}) >= 10
    for d in on_models:
        name = d.object.rsplit("/", 1)[-1]
        assert name in catalog
        lines = {s.line for s in d.sources if s.file.endswith("values.yaml")}
        assert catalog_line in lines and lines - {catalog_line} <= _item_lines(values, "catalog", name), (
            d.object
        )
        assert len(lines) > 2 and d.sources_more == 0


@needs_helm
def test_production_stack_model_specs_list_their_own_model(tmp_path: Path) -> None:
    """vLLM production-stack's chart (fixtures/helm/production-stack) with two ``modelSpec`` entries: the findings
    on each engine Deployment list that entry's lines of the values file, not the other's."""
    with tarfile.open(ROOT / "fixtures/helm/production-stack/vllm-stack-0.1.12.tgz") as tgz:
        tgz.extractall(tmp_path, filter="data")
    chart = tmp_path / "vllm-stack"
    spec = (
        "  - name: {name}\n    repository: vllm/vllm-openai\n    tag: v0.11.0\n    modelURL: {model}\n"
        "    replicaCount: 1\n    requestCPU: 4\n    requestMemory: 16Gi\n    requestGPU: 1\n"
        "    nodeSelectorTerms:\n      - matchExpressions:\n          - key: cloud.google.com/gke-accelerator\n"
        "            operator: In\n            values: [nvidia-l4]\n"
    )
    values = tmp_path / "two.yaml"
    values.write_text(
        "servingEngineSpec:\n  modelSpec:\n"
        + spec.format(name="llama", model=MODEL)
        + spec.format(name="llama-big", model="meta-llama/Llama-3.1-70B-Instruct")
    )
    found, _ = _check(chart, (str(values),))  # kvlint renders the chart with helm
    mine = [d for d in found if d.object.endswith("-deployment-vllm") and d.sources]
    names = {d.object: re.search(r"-(llama(?:-big)?)-deployment-vllm$", d.object) for d in mine}
    assert all(names.values()), names
    assert {m.group(1) for m in names.values() if m} == {"llama", "llama-big"}
    text = values.read_text().split("\n")
    first = {"llama": text.index("  - name: llama") + 1, "llama-big": text.index("  - name: llama-big") + 1}
    for d in mine:
        m = names[d.object]
        assert m is not None
        name = m.group(1)
        lines = {s.line for s in d.sources if Path(s.file).resolve() == values.resolve()}
        own = (
            set(range(first["llama"], first["llama-big"]))
            if name == "llama"
            else set(range(first["llama-big"], len(text) + 1))
        )
        assert lines and lines - {2} <= own, (d.object, sorted(lines))
        assert first[name] in lines
        assert d.sources_more == 0


def test_helm_sources_without_an_object_name_lists_every_item(tmp_path: Path) -> None:
    """The public helper keeps the previous answer when no object name is given (nothing to tell the item by)."""
    _list_chart(tmp_path, 3, "named")
    template = tmp_path / "many" / "templates" / "deployment.yaml"
    line = LIST_TEMPLATE.split("\n").index("            - {{ $m.model }}") + 1
    from kvlint.source import Loc

    origins.clear_file_cache()
    every = origins.helm_sources(Loc(str(template), line, 1))
    own = origins.helm_sources(Loc(str(template), line, 1), object_name="llm1")
    assert len(every) == 1 + 6 * 3
    assert set(own) < set(every) and len(own) == 7


def test_report_of_a_json_round_trip_keeps_the_count(tmp_path: Path) -> None:
    """The Action reads the JSON report back (kvlint.action): the number left out survives the round trip."""
    from kvlint.action import _diagnostic

    found, report = _check(_list_chart(tmp_path, 20, "indexed"))
    entries = [e for e in json.loads(report)["diagnostics"] if e.get("sources_more")]
    assert entries
    back = _diagnostic(entries[0])
    assert back.sources_more == entries[0]["sources_more"] == 1 + 6 * 20 - origins.MAX_SOURCES


def test_only_ranges_writing_a_document_per_item_are_told_by_the_object() -> None:
    """A ``range`` inside one document (over a list of flags) is not told by the document's name: its path keeps
    every item's lines (cut at MAX_SOURCES); the ``range`` around the ``---`` is."""
    text = (
        "{{- range $m := .Values.models }}\n"  # 1
        "---\n"  # 2
        "kind: Deployment\n"  # 3
        "args:\n"  # 4
        "  {{- range $.Values.flags }}\n"  # 5
        "  - {{ . }}\n"  # 6
        "  {{- end }}\n"  # 7
        "  - {{ $m.model }}\n"  # 8
        "{{- end }}\n"  # 9
        "{{- range .Values.flags }}\n"  # 10
        "  - {{ . }}\n"  # 11
        "{{- end }}\n"  # 12
    ).split("\n")
    table = origins.ValuesRefTable(text)
    assert table.ranged(6) == {("models",)}  # the flag's own range is inside the document
    assert table.ranged(8) == {("models",)}
    assert table.ranged(1) == set() and table.ranged(11) == set()
    assert table.refs(6) == [("flags",), ("models",)]


def test_items_keyed_by_numbers_and_hostile_names(tmp_path: Path) -> None:
    """Map keys that YAML reads as numbers tell their item as text (``m-1``); a name of 253 one-letter words, or
    longer than a Kubernetes name, is answered without error (every item, or the item it names)."""
    from kvlint.source import Loc

    chart = tmp_path / "num"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: num\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(f"catalog:\n  1:\n    model: {MODEL}\n  2:\n    model: {MODEL}\n")
    template = chart / "templates" / "t.yaml"
    template.write_text(
        "{{- range $k, $m := .Values.catalog }}\n---\nmetadata:\n  name: m-{{ $k }}\nargs: [{{ $m.model }}]\n{{- end }}\n"
    )
    origins.clear_file_cache()
    loc = Loc(str(template), 5, 1)
    assert {s.line for s in origins.helm_sources(loc, object_name="m-1")} == {1, 2, 3}
    assert {s.line for s in origins.helm_sources(loc, object_name="m-2")} == {1, 4, 5}
    every = {s.line for s in origins.helm_sources(loc)}
    assert every == {1, 2, 3, 4, 5}
    assert {s.line for s in origins.helm_sources(loc, object_name="-".join("x" * 127))} == every
    assert {
        s.line for s in origins.helm_sources(loc, object_name="m-1" + "-x" * 200)
    } == every  # too long a name
