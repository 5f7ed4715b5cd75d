"""Helm chart values kvlint reads as the objects the chart renders (kvlint.chart_values): KubeAI's ``models``
chart (``catalog.<name>`` -> one KubeAI Model each).

The values file and the chart are verbatim copies of substratusai/kubeai's ``charts/models`` and
``rendered/models.yaml`` is real ``helm template ... --set all.enabled=true`` output of that chart
(fixtures/helm/SOURCE.md): what kvlint builds from the values is compared with what it reads in the
Models helm rendered, so the expected findings come from helm, not from the reader under test."""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from kvlint import stream
from kvlint.checkrun import run_paths
from kvlint.load import load_text
from kvlint.pipeline import Options, run_check
from kvlint.render import load_inputs
from kvlint.report import render
from kvlint.sizing import summarise
from kvlint.workloads import find_workloads
from kvlint.workloads.kubeai import KUBEAI_CATALOG_TERMS, KUBEAI_MODEL_TERMS, MAX_CATALOG_ENTRIES

FIX = Path(__file__).resolve().parent.parent / "fixtures"
KUBEAI_VALUES = FIX / "helm" / "kubeai" / "charts" / "models" / "values.yaml"
KUBEAI_RENDERED = FIX / "helm" / "kubeai" / "rendered" / "models.yaml"
_ALL_OFF = "all:\n  # Enable all models instead of enabling them one-by-one via .catalog.<name>.enabled\n  enabled: false"


def _values(tmp_path: Path, *, all_enabled: bool = False, enable: str | None = None) -> Path:
    """A copy of the KubeAI catalogue values with ``all.enabled`` and one entry's ``enabled`` set as asked."""
    text = KUBEAI_VALUES.read_text(encoding="utf-8")
    if all_enabled:
        assert _ALL_OFF in text
        text = text.replace(_ALL_OFF, "all:\n  enabled: true", 1)
    if enable is not None:
        head = f"  {enable}:\n    enabled: false\n"
        assert head in text
        text = text.replace(head, f"  {enable}:\n    enabled: true\n", 1)
    out = tmp_path / "values.yaml"
    out.write_text(text, encoding="utf-8")
    return out


def _by_object(result, *, as_rendered: bool = False) -> dict[str, list[tuple[str, str, str, str]]]:
    """The findings of each object; ``as_rendered``: with the catalog entry's fix terms said as those of the
    Model the chart renders from it."""
    found: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    for d in result.diagnostics:
        if d.object:
            fix = d.fix
            if as_rendered and fix:
                for entry, model in zip(KUBEAI_CATALOG_TERMS, KUBEAI_MODEL_TERMS, strict=True):
                    fix = fix.replace(entry.heading, model.heading).replace(entry.phrase, model.phrase)
            found[d.object].append((d.rule, d.severity, d.message, fix))
    return {k: sorted(v) for k, v in found.items()}


def test_kubeai_catalog_values_give_what_the_helm_rendered_models_give(tmp_path: Path) -> None:
    """With ``all.enabled: true`` the chart renders every entry (rendered/models.yaml is that output): the
    values file read directly gives the same serving containers (image, command, args, env, GPU limits) and
    the same findings on each Model as helm's output does."""
    values = _values(tmp_path, all_enabled=True)
    opts = Options(allow_hub=False)
    direct, rendered = run_check([str(values)], opts), run_check([str(KUBEAI_RENDERED)], opts)
    assert len(rendered.containers) == 32  # the vLLM Models of the rendered file
    # a fix on either names the catalog entry the user edits (KUBEAI_CATALOG_TERMS): the rendered file holds the
    # chart's `# Source:` lines and sits beside the chart, so its Models are the models chart's too
    # (kvlint.workloads.kubeai.rendered_by_models_chart)
    assert _by_object(direct) == _by_object(rendered)
    assert _by_object(direct) != _by_object(direct, as_rendered=True)  # (the catalog's terms are said)

    def pods(result) -> dict[str, tuple]:
        out = {}
        for cr in result.containers:
            (c,) = cr.workload.pod_spec["containers"]
            out[cr.workload.name] = (
                c.get("image"),
                c.get("command"),
                c.get("args"),
                c.get("env"),
                c.get("resources"),
            )
        return out

    assert pods(direct) == pods(rendered)
    assert all(cr.workload.doc.path == str(values) for cr in direct.containers)


def test_every_vllm_entry_is_checked_and_disabled_ones_say_so(tmp_path: Path) -> None:
    """Every entry of the catalogue is a Model kvlint checks, vLLM ones give a serving container and the
    others none (as a Model of that engine does); an entry the chart does not render with these values
    (``enabled: false``, ``all.enabled: false``) is named ``(enabled: false)`` in every report."""
    catalog = yaml.safe_load(KUBEAI_VALUES.read_text(encoding="utf-8"))["catalog"]
    vllm = {name for name, entry in catalog.items() if entry.get("engine") == "VLLM"}
    result = run_check([str(_values(tmp_path, enable="opt-125m-l4"))], Options(allow_hub=False))
    names = {cr.workload.name for cr in result.containers}
    expected = {n if n == "opt-125m-l4" else f"{n} (enabled: false)" for n in vllm}
    assert names == expected
    objects = {d.object for d in result.diagnostics if d.object}
    assert "Model/opt-125m-l4" in objects and "Model/opt-125m-cpu (enabled: false)" in objects


def test_findings_point_at_the_entry_lines_of_the_values_file() -> None:
    """A finding on an entry is located in the values file, at the line of the value it is about: KV205 on
    ``--max-num-batched-token`` at that argument's line of the entry, the image (KV208) at its ``engine`` (as in a
    Model: the engine the installation maps to its image, where the engine's command is located)."""
    lines = KUBEAI_VALUES.read_text(encoding="utf-8").splitlines()
    start = lines.index("  llama-3.1-70b-instruct-fp8-l4:") + 1
    end = next(i for i in range(start, len(lines)) if re.match(r"  \S", lines[i])) + 1
    arg_line = next(i for i in range(start, end) if "--max-num-batched-token=" in lines[i - 1])
    engine_line = next(i for i in range(start, end) if lines[i - 1].strip().startswith("engine: "))
    result = run_check([str(KUBEAI_VALUES)], Options(allow_hub=False))
    mine = [
        d for d in result.diagnostics if d.object == "Model/llama-3.1-70b-instruct-fp8-l4 (enabled: false)"
    ]
    assert mine and all(d.loc is not None and d.loc.file == str(KUBEAI_VALUES) for d in mine)
    assert all(start <= d.loc.line < end for d in mine)
    assert any(
        d.rule == "KV205" and "--max-num-batched-token " in d.message and d.loc.line == arg_line for d in mine
    )
    assert any(d.rule == "KV208" and d.loc.line == engine_line for d in mine)


def test_one_note_says_the_models_were_built_from_chart_values_and_no_kv002() -> None:
    """The values file sits beside the chart's Chart.yaml (which alone made it a KV002 "values file" before):
    now one KV504 info at ``catalog:`` says the Models were built from the chart's values, naming the template,
    the disabled entries and the engines kvlint does not size; no KV002, and the file is not "not read"."""
    assert (KUBEAI_VALUES.parent / "Chart.yaml").is_file()
    result = run_check([str(KUBEAI_VALUES)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV002"]
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    catalog_line = KUBEAI_VALUES.read_text(encoding="utf-8").splitlines().index("catalog:") + 1
    assert note.loc is not None and note.loc.line == catalog_line and note.severity == "info"
    assert "charts/models/templates/models.yaml" in note.message
    assert "47 catalog entries" in note.message  # yaml.safe_load of the file: 47 entries
    assert "not enabled" in note.message and "OLlama" in note.message
    summary = summarise(result)
    assert summary.not_read == 0 and summary.serving == 32


def test_load_inputs_gives_the_note_in_place_of_kv002() -> None:
    loaded = load_inputs([str(KUBEAI_VALUES)])
    assert [f.rule for f in loaded.findings] == ["KV504"]


def test_streaming_run_reads_the_catalogue_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs 2`` (files analysed in worker processes, kvlint.stream) reports what the whole run does."""
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)  # fork workers even for a small input
    values = _values(tmp_path)
    shutil.copy(KUBEAI_RENDERED, tmp_path / "rendered.yaml")
    options = Options(allow_hub=False)
    two = run_paths([str(tmp_path)], options, no_config=True, jobs=2).result
    whole = run_check([str(tmp_path)], options)
    assert any(d.rule == "KV504" and d.loc is not None and d.loc.file == str(values) for d in two.diagnostics)
    assert {name: render(name, two) for name in ("text", "json")} == {
        name: render(name, whole) for name in ("text", "json")
    }


@pytest.mark.parametrize(
    "text",
    [
        "catalog:\n  m: {url: 'hf://facebook/opt-125m', engine: VLLM, args: '--max-model-len=8'}\n",
        "catalog:\n  m: {url: 'hf://x/y', engine: VLLM, resourceProfile: [1, 2], env: [a]}\n  n: just-a-string\n",
        "catalog:\n  m: {url: 'hf://x/y', engine: VLLM, resourceProfile: 'nvidia-gpu-l4:99999999999999999999999'}\n",
        "catalog:\n  m: {url: 'hf://x/y', engine: {a: 1}}\n  n: {url: 7, engine: VLLM}\nall: [1]\n",
        "catalog:\n  m: {url: 'hf://x/y', engine: VLLM, args: [{a: 1}, null, 3], minReplicas: -1}\n",
    ],
)
def test_hostile_catalogue_shapes_give_diagnostics_not_tracebacks(tmp_path: Path, text: str) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if "internal error" in d.message.lower()]
    assert [d.rule for d in result.diagnostics if d.rule == "KV504"] == ["KV504"]


def test_many_entries_stay_linear() -> None:
    """MAX_CATALOG_ENTRIES catalogue entries: one workload each, found in one pass (no quadratic rescans)."""
    text = "catalog:\n" + "".join(
        f"  m{i}: {{url: 'hf://facebook/opt-125m', engine: VLLM, resourceProfile: 'nvidia-gpu-l4:1'}}\n"
        for i in range(MAX_CATALOG_ENTRIES)
    )
    ws = find_workloads(load_text(text, "values.yaml").documents)
    assert len(ws) == MAX_CATALOG_ENTRIES and ws[-1].name == f"m{MAX_CATALOG_ENTRIES - 1} (enabled: false)"


def test_a_catalogue_past_the_limit_is_refused_not_analysed(tmp_path: Path) -> None:
    """10^5 one-line entries (9 MB) took 41 s of CPU and 1.4 GB analysing a Model each: past
    MAX_CATALOG_ENTRIES no Model is built, one KV002 at ``catalog:`` says why, and the file's other documents
    are still checked."""
    body = "# made up for a test\ncatalog:\n" + "".join(
        f"  m{i}: {{url: 'hf://facebook/opt-125m', engine: VLLM, resourceProfile: 'nvidia-gpu-l4:1'}}\n"
        for i in range(MAX_CATALOG_ENTRIES + 1)
    )
    body += (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\nspec:\n  template:\n    spec:\n"
    )
    body += "      containers:\n      - {name: c, image: 'vllm/vllm-openai:v0.8.5', args: [--model, facebook/opt-125m]}\n"
    path = tmp_path / "values.yaml"
    path.write_text(body, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert (
        f"{MAX_CATALOG_ENTRIES + 1:,} entries" in kv002.message and "is a Helm values file" in kv002.message
    )
    assert kv002.loc is not None and kv002.loc.line == 2
    assert not [d for d in result.diagnostics if d.rule == "KV504"]
    assert {d.object for d in result.diagnostics if d.object} == {"Deployment/other"}


def test_a_kubernetes_object_with_a_catalog_key_is_not_values() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ncatalog:\n  m: {url: 'hf://x/y', engine: VLLM}\n"
    assert find_workloads(load_text(text, "cm.yaml").documents) == []


def test_a_kvlint_comment_in_the_values_file_suppresses_an_entry_finding(tmp_path: Path) -> None:
    """Findings sit at the values' own lines, so ``# kvlint: ignore`` comments there apply to them."""
    text = KUBEAI_VALUES.read_text(encoding="utf-8")
    entry = text.index("  llama-3.1-70b-instruct-fp8-l4:\n")
    arg = text.index("      - --max-num-batched-token=32768\n", entry)
    text = text[:arg] + "      # kvlint: ignore KV205=KubeAI's own spelling, kept\n" + text[arg:]
    path = tmp_path / "values.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    name = "Model/llama-3.1-70b-instruct-fp8-l4 (enabled: false)"
    kv205 = [d for d in result.diagnostics if d.object == name and "--max-num-batched-token " in d.message]
    assert not kv205
    assert [s.diagnostic.rule for s in result.suppressed_diagnostics if s.diagnostic.object == name] == [
        "KV205"
    ]


def test_the_catalogue_models_are_built_once_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """The values' note counts the catalogue's entries without building their Models (it used to call
    ``catalog_models`` as the workload finder does, so every Model was built twice): one run of the values file
    builds each Model once, and the note still counts the entries, the disabled ones and the other engines as
    ``yaml.safe_load`` of the file gives them."""
    from kvlint.workloads import kubeai

    real = kubeai.catalog_models
    calls: list[str] = []

    def counting(doc):  # the real builder, counted
        calls.append(doc.path)
        return real(doc)

    monkeypatch.setattr(kubeai, "catalog_models", counting)
    result = run_check([str(KUBEAI_VALUES)], Options(allow_hub=False))
    assert calls == [str(KUBEAI_VALUES)]
    catalog = yaml.safe_load(KUBEAI_VALUES.read_text(encoding="utf-8"))["catalog"]
    disabled = sum(1 for e in catalog.values() if not e.get("enabled"))
    others = sorted({str(e["engine"]) for e in catalog.values() if str(e.get("engine")).upper() != "VLLM"})
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert f"each of the {len(catalog)} catalog entries" in note.message
    assert f"{disabled} of them are not enabled" in note.message
    assert f"Models of {', '.join(others)} run engines" in note.message


def test_a_flag_kubeai_writes_is_not_blamed_on_the_models_args(tmp_path: Path) -> None:
    """KubeAI's operator starts vLLM with ``--served-model-name=<metadata.name>`` before the Model's ``args``
    (kvlint.workloads.kubeai.model_workloads): ``--served-model-name=foo`` in ``args`` got KV207 "remove one of
    the --served-model-name settings", but the Model names it once. KV207 now says KubeAI writes it from
    metadata.name; two occurrences in ``args`` keep the parser's wording."""
    path = tmp_path / "model.yaml"
    path.write_text(
        "# made up for a test\napiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: llama\nspec:\n"
        "  features: [TextGeneration]\n  url: hf://meta-llama/Llama-3.1-8B-Instruct\n  engine: VLLM\n"
        "  resourceProfile: nvidia-gpu-l4:1\n  args:\n    - --served-model-name=foo\n"
        "    - --max-num-seqs=8\n    - --max-num-seqs=4\n",
        encoding="utf-8",
    )
    found = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV207"]
    by_option = {d.message.split()[0]: d for d in found}
    served = by_option["--served-model-name"]
    assert "KubeAI writes --served-model-name llama from metadata.name, then args gives" in served.message
    assert "set metadata.name" in served.fix and "remove --served-model-name foo from args" in served.fix
    assert served.loc is not None and served.loc.line == 12  # the args item
    assert by_option["--max-num-seqs"].fix == "remove one of the --max-num-seqs settings"
