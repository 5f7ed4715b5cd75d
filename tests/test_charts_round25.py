"""Helm charts and values files as users run kvlint on them (pass 25 charts, fixtures/collected/trees): values
kept apart from their chart in the same repository, values left empty for ``helm install --set``, a chart rendered
with them, and a walk that meets the chart's raw templates. Each checked on the real chart."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kvlint.load import _charts_under, repository_chart
from kvlint.pipeline import Options, run_check
from kvlint.sizing import unread

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "collected" / "trees"
# AI-Hypercomputer/gpu-recipes: the A3 Ultra, A4 and A4X inference charts; two A3 Ultra values files its READMEs
# install the A3 Ultra chart with
GPU_RECIPES = TREES / "gpu-recipes-inference"
GR_CHART = GPU_RECIPES / "src" / "helm-charts" / "a3ultra" / "inference-templates" / "deployment"
GR_VLLM = GPU_RECIPES / "inference" / "a3ultra" / "single-host-serving" / "vllm" / "values.yaml"
GR_SGLANG = GPU_RECIPES / "inference" / "a3ultra" / "single-host-serving" / "sglang" / "values.yaml"
# llm-d-incubation/llm-d-modelservice: the chart under charts/, its example values under examples/
MODELSERVICE = TREES / "llm-d-modelservice"
MS_CHART = MODELSERVICE / "charts" / "llm-d-modelservice"
MS_MNNVL = MODELSERVICE / "examples" / "values-pd-mnnvl.yaml"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


def _kv(result, rule: str, path: Path | str) -> list:
    return [
        d
        for d in result.diagnostics
        if d.rule == rule
        and d.loc is not None
        and os.path.normpath(d.loc.file) == os.path.normpath(str(path))
    ]


@pytest.mark.parametrize("values", [GR_VLLM, GR_SGLANG], ids=["vllm", "sglang"])
def test_values_left_empty_for_set_say_what_to_set_and_name_the_chart(values: Path) -> None:
    """gpu-recipes' values leave ``workload.framework``, ``workload.image`` and ``workload.model.name`` empty (the
    README passes them with ``--set``): read alone it was a clean pass of 0 workloads. It is now a values file
    whose KV002 lists the empty keys, names the chart of the same checkout that reads them (not a generic
    ``helm template RELEASE CHART``), and is counted as not read."""
    text = values.read_text()
    assert "  framework:\n" in text and "  image:\n" in text  # empty in the upstream file
    result = run_check([str(values)], Options(allow_hub=False))
    (d,) = _kv(result, "KV002", values)
    for key in ("workload.model.name", "workload.image", "workload.framework"):
        assert key in d.message
        assert f"--helm-set {key}=VALUE" in (d.fix or "")
    assert (d.fix or "").startswith(
        f"lint what the chart of this repository renders from it, with a value for each: kvlint check {GR_CHART} "
        f"--helm-values {values} "
    )
    assert [why for _, why in unread(result)] == ["Helm values file not rendered"]


def test_values_of_a_chart_elsewhere_in_the_repository_name_it() -> None:
    """llm-d-modelservice's examples/ values hold ``{{ .Values.modelArtifacts.name }}`` (the chart passes them
    through ``tpl``): their KV002 said ``helm template RELEASE CHART -f values.yaml``, neither the chart nor the
    file. It names both now: the chart whose templates read the file's keys, under charts/."""
    result = run_check([str(MS_MNNVL)], Options(allow_hub=False))
    (d,) = _kv(result, "KV002", MS_MNNVL)
    assert d.fix is not None and d.fix.startswith(
        f"lint what the chart renders from it: kvlint check {MS_CHART} --helm-values {MS_MNNVL} "
    )


@needs_helm
def test_following_the_named_chart_fix_sizes_the_engine() -> None:
    """The command the fix names works: the chart rendered with the example values has serving containers."""
    result = run_check([str(MS_CHART)], Options(allow_hub=False, helm_values=(str(MS_MNNVL),)))
    assert len(result.containers) > 0
    assert not [d for d in result.diagnostics if d.rule == "KV001"]


def test_a_walk_of_the_chart_templates_is_no_yaml_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk of gpu-recipes without helm on PATH reads the chart's raw templates (kvlint.render.plan_walk's
    fallback): ``serving-launcher.yaml`` opens with ``{{ $nodes := ... }}`` lines, read as YAML flow mappings until
    "did not find expected <document start>". Beside its KV002 (render the chart) that was a KV001 error, failing
    the walk (exit 1) on a chart helm renders. Only the KV002 remains, naming the chart."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm (nor kubectl)
    launcher = GR_CHART / "templates" / "serving-launcher.yaml"
    result = run_check([str(GPU_RECIPES)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV001"]
    (d,) = _kv(result, "KV002", launcher)
    assert f"kvlint check {GR_CHART} " in (d.fix or "")


@needs_helm
def test_a_walk_renders_the_chart_and_says_where_it_fails() -> None:
    """With helm, the walk renders the chart with its own values (it has none: gpu-recipes' values sit beside the
    recipes): helm's nil-pointer error is one KV001 at the template line helm names, whose fix also says to lint the
    chart with the values it is deployed with; no raw template is read."""
    result = run_check([str(GPU_RECIPES)], Options(allow_hub=False))
    (d,) = [
        d for d in result.diagnostics if d.rule == "KV001" and str(GR_CHART) in (d.loc.file if d.loc else "")
    ]
    assert (
        d.loc is not None and d.loc.file.startswith(str(GR_CHART / "templates") + os.sep) and d.loc.line > 1
    )
    assert f"kvlint check {GR_CHART} --helm-values FILE" in (d.fix or "")
    assert not _kv(result, "KV002", GR_CHART / "templates" / "serving-launcher.yaml")


@needs_helm
def test_the_chart_rendered_with_empty_values_is_not_a_clean_pass() -> None:
    """``kvlint check CHART --helm-values values.yaml`` without the ``--set`` values: the chart renders a
    Deployment whose GPU container has ``image: ""``; it was 1 workload, 0 serving containers and no finding. A
    KV002 now says the image is empty, at the template line that writes it; with an image set it goes away."""
    template = GR_CHART / "templates" / "serving-launcher.yaml"
    line = next(
        i
        for i, t in enumerate(template.read_text().splitlines(), 1)
        if "image:" in t and "workload.image" in t
    )
    result = run_check([str(GR_CHART)], Options(allow_hub=False, helm_values=(str(GR_VLLM),)))
    (d,) = [x for x in result.diagnostics if x.rule == "KV002"]
    assert "its image is empty" in d.message and "nvidia.com/gpu" in d.message
    assert d.loc is not None and (d.loc.file, d.loc.line) == (str(template), line)
    set_image = run_check(
        [str(GR_CHART)],
        Options(
            allow_hub=False, helm_values=(str(GR_VLLM),), helm_set=("workload.image=vllm/vllm-openai:v0.8.5",)
        ),
    )
    assert not [x for x in set_image.diagnostics if "its image is empty" in x.message]


def _chart(root: Path, name: str, reads: str) -> Path:
    chart = root / "charts" / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (chart / "templates" / "deployment.yaml").write_text(reads)
    return chart


def test_repository_chart_lookup(tmp_path: Path) -> None:
    """One chart reading the file's keys is named; two equally good ones, a manifest, or a file outside any
    checkout (no ``.git`` above it) name none."""
    values = tmp_path / "deploy" / "values.yaml"
    values.parent.mkdir()
    values.write_text("workload:\n  image:\nservice:\n  port: 8000\n")
    _chart(tmp_path, "other", "{{ .Values.unrelated }}\n")
    assert repository_chart(str(values)) is None  # no .git: not a checkout
    (tmp_path / ".git").mkdir()
    _charts_under.cache_clear()
    assert repository_chart(str(values)) is None  # the one chart reads none of its keys
    chart = _chart(tmp_path, "serving", "{{ .Values.workload.image }} {{ .Values.service.port }}\n")
    _charts_under.cache_clear()
    assert repository_chart(str(values)) == str(chart)
    _chart(tmp_path, "twin", "{{ .Values.workload.image }} {{ .Values.service.port }}\n")
    _charts_under.cache_clear()
    assert repository_chart(str(values)) is None  # a tie: kvlint does not guess
    generic = tmp_path / "deploy" / "values-generic.yaml"
    generic.write_text("image: x\nservice:\n  port: 8000\n")
    _chart(tmp_path, "plain", "{{ .Values.image }} {{ .Values.service.port }}\n")
    _charts_under.cache_clear()
    assert repository_chart(str(generic)) is None  # only keys every chart takes: it names no chart
    manifest = tmp_path / "deploy" / "deployment.yaml"
    manifest.write_text("apiVersion: apps/v1\nkind: Deployment\nworkload: {}\n")
    assert repository_chart(str(manifest)) is None


def test_a_chart_values_file_with_template_text_names_its_chart() -> None:
    """A walk meets llm-d-modelservice's own values.yaml, whose ``{{ .Values.modelArtifacts.name }}`` (passed
    through ``tpl``) made its KV002 the generic ``helm template RELEASE CHART -f values.yaml``; it names the chart."""
    values = MS_CHART / "values.yaml"
    assert "{{ .Values.modelArtifacts.name }}" in values.read_text()
    result = run_check([str(values)], Options(allow_hub=False))
    (d,) = _kv(result, "KV002", values)
    assert (
        d.fix
        == f"lint what the chart renders from it: kvlint check {MS_CHART} (helm template reads its values.yaml)"
    )


@needs_helm
def test_llm_d_modelservice_findings_point_at_the_values_that_set_them(tmp_path: Path) -> None:
    """llm-d-modelservice writes each container with one helper call (``include "llm-d-modelservice.container"``
    inside ``with .Values.decode.containers``): every finding on the container was placed at that template line.
    Now a value the rendered text traces back to sits at its values line: the image's KV208 at the example's
    ``image:`` of that role, the container's findings at its ``name:`` entry; a container whose name the helper
    defaults (no ``name`` in the values) keeps the template line for them."""
    text = MS_MNNVL.read_text()
    lines = text.splitlines()
    decode = lines.index("decode:")
    prefill = lines.index("prefill:")
    name_line = {
        role: 1 + next(i for i in range(start, len(lines)) if lines[i].strip() == '- name: "vllm"')
        for role, start in (("decode", decode), ("prefill", prefill))
    }
    image_line = {
        role: 1 + next(i for i in range(start, len(lines)) if lines[i].strip().startswith("image:"))
        for role, start in (("decode", decode), ("prefill", prefill))
    }
    result = run_check([str(MS_CHART)], Options(allow_hub=False, helm_values=(str(MS_MNNVL),)))
    for role in ("decode", "prefill"):
        mine = [d for d in result.diagnostics if d.object.endswith(f"-{role}") and d.container == "vllm"]
        (kv208,) = [d for d in mine if d.rule == "KV208"]
        assert (kv208.loc.file, kv208.loc.line) == (str(MS_MNNVL), image_line[role])
        (kv202,) = [d for d in mine if d.rule == "KV202"]
        assert (kv202.loc.file, kv202.loc.line) == (str(MS_MNNVL), name_line[role])
    # the helper's default name: the container's own findings stay at the template line calling it
    unnamed = tmp_path / "values-unnamed.yaml"
    unnamed.write_text(text.replace('  - name: "vllm"\n    image:', "  - image:"))
    result = run_check([str(MS_CHART)], Options(allow_hub=False, helm_values=(str(unnamed),)))
    (kv202,) = [d for d in result.diagnostics if d.rule == "KV202" and d.object.endswith("-decode")]
    template = MS_CHART / "templates" / "decode-deployment.yaml"
    assert kv202.loc.file == str(template)
    assert 'include "llm-d-modelservice.container"' in template.read_text().splitlines()[kv202.loc.line - 1]
    (kv208,) = [d for d in result.diagnostics if d.rule == "KV208" and d.object.endswith("-decode")]
    assert kv208.loc.file == str(unnamed)  # the image is still set in the values


@pytest.mark.parametrize("resource", ["nvidia.com/gpu", "amd.com/cpx_nps4", "nvidia.com/mig-1g.10gb"])
def test_empty_image_kv002_whatever_accelerator_resource_the_container_requests(resource: str) -> None:
    """A container with ``image: ""`` that requests an AMD partition under the device plugin's ``mixed`` naming or a
    MIG slice is as unsized as one requesting ``nvidia.com/gpu``: the same KV002 (before, only
    ``nvidia.com/gpu``/``amd.com/gpu`` were looked at, and the run passed in silence)."""
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents

    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
        f'      containers:\n      - name: server\n        image: ""\n        resources:\n'
        f"          limits:\n            {resource}: 1\n"
    )
    result = run_documents(load_text(text, "x.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert f"container 'server' requests {resource}: 1 but its image is empty" in d.message, d.message
