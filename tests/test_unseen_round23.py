"""Repository trees a platform engineer lints as a directory (new-user pass 23, fixtures/collected/trees): Helm
charts, chart values kept apart from their chart, kustomize bases and overlays, Argo CD app-of-apps. What a first
``kvlint check DIR`` on them showed to be wrong, each checked on the tree itself."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kvlint.engines import sglang_flags_data
from kvlint.load import template_chart, values_chart
from kvlint.pipeline import Options, run_check
from kvlint.render import EMPTY_RENDER
from kvlint.sizing import unread
from kvlint.types import Mark

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "collected" / "trees"
# neuralmagic/helm-charts' charts/nm-vllm: Chart.yaml, values, templates, examples
NM = TREES / "neuralmagic-nm-vllm"
FREECHAT = TREES / "freechat-fun-freechat-vllm"
LLM_D = TREES / "maci0-gke-llm-d"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


def _walked(chart: Path) -> list[str]:
    """The files of ``chart`` a walk of a directory above it lints, as plain files (a walk renders no chart)."""
    return sorted(str(p) for p in chart.rglob("*.yaml") if p.name != "Chart.yaml")


def _kv002(result, name: str) -> list:
    return [
        d for d in result.diagnostics if d.rule == "KV002" and d.loc is not None and d.loc.file.endswith(name)
    ]


def test_raw_templates_of_a_walked_chart_name_the_chart_to_check() -> None:
    """``kvlint check repo/`` walks a chart's files as plain files (it renders only a chart directory it is given):
    each raw template got KV002 with a generic ``helm template RELEASE CHART`` fix, leaving the user to find which
    directory is the chart. The fix now names it, as the KV002 of a kustomization names its directory."""
    result = run_check(_walked(NM), Options(allow_hub=False))
    chart = str(NM)
    (d,) = _kv002(result, "templates/deployment.yaml")
    assert d.fix is not None and d.fix.startswith(f"lint what the chart renders: kvlint check {chart} ")
    assert f"helm template RELEASE {chart} -f values.yaml | kvlint check -" in d.fix
    (v,) = _kv002(result, f"{chart}/values.yaml")
    assert (
        v.fix
        == f"lint what the chart renders from it: kvlint check {chart} (helm template reads its values.yaml)"
    )
    (e,) = _kv002(result, "examples/basic/values.yaml")
    example = str(NM / "examples" / "basic" / "values.yaml")
    assert e.fix is not None and e.fix.startswith(
        f"lint what the chart renders from it: kvlint check {chart} --helm-values {example}, "
    )


def test_a_walked_chart_is_one_object_not_read() -> None:
    """The sizing summary counted each file of a walked chart that names an engine as one object not read: nm-vllm's
    deployment template, its service template (a vLLM label), its values and its example values were four. They are
    one chart not rendered; ``--require-sizing`` lists it once, at its first file."""
    result = run_check(_walked(NM), Options(allow_hub=False))
    (entry,) = unread(result)
    assert entry[1] == "Helm chart not rendered (its files linted as they are)"
    assert len([d for d in result.diagnostics if d.rule == "KV002"]) == 4  # each file still says what it is


@needs_helm
def test_following_the_values_fix_sizes_the_engine() -> None:
    """What the fix says to run renders the chart with the example values and sizes its vLLM container (the walk
    sized none)."""
    walked = run_check(_walked(NM), Options(allow_hub=False))
    assert not walked.containers
    options = Options(allow_hub=False, helm_values=(str(NM / "examples" / "basic" / "values.yaml"),))
    rendered = run_check([str(NM)], options)
    assert [c.workload.kind for c in rendered.containers] == ["Deployment"]
    assert rendered.containers[0].plan is not None


def test_template_and_values_chart_lookup(tmp_path: Path) -> None:
    """A template is a chart's when it sits in that chart's ``templates/`` (or below it); a file elsewhere, or a
    ``templates/`` folder of a directory without ``Chart.yaml``, keeps the generic fix. Values find their chart
    in their own directory or up to two above, only a chart with templates."""
    chart = tmp_path / "charts" / "serving"
    (chart / "templates" / "sub").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serving\nversion: 0.1.0\n")
    assert template_chart(str(chart / "templates" / "deployment.yaml")) == str(chart)
    assert template_chart(str(chart / "templates" / "sub" / "x.yaml")) == str(chart)
    assert template_chart(str(chart / "files" / "x.yaml")) is None
    assert template_chart(str(tmp_path / "templates" / "x.yaml")) is None
    assert template_chart("-") is None
    assert values_chart(str(chart / "values.yaml")) == str(chart)
    assert values_chart(str(chart / "ci" / "gpu" / "values.yaml")) == str(chart)
    assert values_chart(str(tmp_path / "values.yaml")) is None
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage: {repository: vllm/vllm-openai}\n")
    result = run_check([str(tmp_path / "values.yaml")], Options(allow_hub=False))
    (v,) = _kv002(result, "values.yaml")
    assert v.fix == f"helm template RELEASE CHART -f {tmp_path / 'values.yaml'} | kvlint check -"


@needs_helm
def test_a_chart_without_templates_is_not_a_clean_pass() -> None:
    """freechat-vllm's ``configs/helm`` is a ``Chart.yaml`` beside the values its scripts pass to a chart of a Helm
    repository: ``helm template`` prints nothing, and kvlint said "0 errors, 0 warnings" on a vLLM deployment it
    never saw. Now a KV002 at ``Chart.yaml`` says so, and the sizing summary counts it as not read."""
    result = run_check([str(FREECHAT)], Options(allow_hub=False))
    (d,) = [x for x in result.diagnostics if x.rule == "KV002"]
    assert d.loc is not None and d.loc.file == str(FREECHAT / "Chart.yaml")
    assert d.message.startswith(EMPTY_RENDER) and "(it has no templates/ directory)" in d.message
    assert [why for _, why in unread(result)] == ["Helm chart rendered nothing"]


@needs_helm
def test_a_chart_whose_templates_are_all_turned_off(tmp_path: Path) -> None:
    """A chart whose every template is behind a value that is off renders nothing too: the fix asks for the values
    deployed with. Turned on, the same chart renders its Deployment and the note goes away."""
    chart = tmp_path / "vllm"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: vllm\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("enabled: false\n")
    (chart / "templates" / "deployment.yaml").write_text(
        "{{- if .Values.enabled }}\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n"
        "  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata: {labels: {app: vllm}}\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct]\n{{- end }}\n"
    )
    (d,) = run_check([str(chart)], Options(allow_hub=False)).diagnostics
    assert d.rule == "KV002" and d.message.startswith(EMPTY_RENDER)
    assert "(its templates render nothing with its default values)" in d.message
    assert d.fix == f"name the values you deploy with: kvlint check {chart} --helm-values FILE"
    on = run_check([str(chart)], Options(allow_hub=False, helm_set=("enabled=true",)))
    assert on.workloads == 1 and not any(x.message.startswith(EMPTY_RENDER) for x in on.diagnostics)


def test_llm_d_chart_values_naming_a_model_are_not_silent() -> None:
    """maci0/gke-llm-d installs llm-d's ``llm-d`` chart with ``llm-d-sample.yaml``: ``sampleApplication.model.
    modelArtifactURI: hf://meta-llama/Llama-3.2-1B-Instruct``, the model the chart serves with vLLM. No engine, no
    GPU, no kind: the file was read as nothing (0 workloads, no finding). Now it is a KV002 values file, counted as
    not read; ``llm-d-gke.yaml`` of the same directory, which turns the sample application off, stays quiet."""
    result = run_check([str(LLM_D)], Options(allow_hub=False))
    (d,) = _kv002(result, "llm-d-sample.yaml")
    assert "sampleApplication.model.modelArtifactURI hf://meta-llama/Llama-3.2-1B-Instruct" in d.message
    assert not _kv002(result, "llm-d-gke.yaml")
    assert [why for _, why in unread(result)] == ["Helm values file not rendered"]


SGLANG = TREES / "lintasarta-sglang-helm"
GKE_BASE = TREES / "gcp-accelerated-platforms-online-inference-gpu" / "vllm" / "base" / "deployment.yaml"


def _kv208(result) -> list:
    return [d for d in result.diagnostics if d.rule == "KV208"]


def test_a_container_without_image_is_said_so(tmp_path: Path) -> None:
    """Lintasarta/sglang-helm's values leave ``image`` empty and the chart renders ``image:`` with no value: KV208
    said "image (no image) does not pin the sglang version (tag missing)". It now says the container names no
    image, and the fix is to set one (not to pin a tag of an image that is not there)."""
    text = (SGLANG / "templates" / "deployment.yaml").read_text()
    assert "image: {{ .Values.image }}" in text and "\nimage:" not in (SGLANG / "values.yaml").read_text()
    manifest = tmp_path / "sglang.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llama}\nspec:\n  selector: {matchLabels: {app: l}}\n"
        "  template:\n    metadata: {labels: {app: l}}\n    spec:\n      containers:\n      - name: llama\n"
        "        image:\n        command: [python3, -m, sglang.launch_server]\n"
        "        args: [--model-path, Qwen/Qwen2.5-7B-Instruct, --port, '8000']\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = _kv208(run_check([str(manifest)], Options(allow_hub=False)))
    assert d.message.startswith(
        "the container names no image (its pods cannot run without one), so the sglang"
    )
    assert "(no image)" not in d.message and "tag missing" not in d.message
    newest = sglang_flags_data.VERSIONS[
        -1
    ]  # the suggestion follows the release table (test_kv208_pin_example)
    assert (
        d.fix == f"set the container's image to the SGLang release it runs (e.g. lmsysorg/sglang:v{newest})"
    )
    assert d.severity == "warning"


@needs_helm
def test_the_sglang_chart_renders_a_container_without_image() -> None:
    (d,) = _kv208(run_check([str(SGLANG)], Options(allow_hub=False)))
    assert d.message.startswith("the container names no image")
    assert d.loc is not None and d.loc.file == str(SGLANG / "templates" / "deployment.yaml")


def test_replaced_by_kustomize_is_a_placeholder() -> None:
    """GoogleCloudPlatform/accelerated-platforms' vLLM kustomize base writes ``image: replaced-by-kustomize`` (each
    overlay's ``replacements`` sets it from a generated ConfigMap). Linted as a file of a walked directory, KV208
    warned that this "image" pins no vLLM version (tag missing), as if someone pulled it. It is a placeholder: KV002
    on the workload, and KV208 an info that the version is not known until rendered, as for ``${VLLM_IMAGE}``."""
    from kvlint.engines.images import image_placeholder

    assert image_placeholder("replaced-by-kustomize") is not None
    assert image_placeholder("vllm/vllm-openai") is None and image_placeholder("replaced") is None
    result = run_check([str(GKE_BASE)], Options(allow_hub=False))
    (d,) = _kv208(result)
    assert d.severity == "info" and "is a placeholder" in d.message
    assert any(
        x.rule == "KV002" and "'replaced-by-kustomize' is a placeholder" in x.message
        for x in result.diagnostics
    )


GKE_OVERLAY = TREES / "gcp-accelerated-platforms-online-inference-gpu" / "vllm" / "l4-gemma-3-1b-it"


def test_kustomize_error_of_a_base_is_quoted_first() -> None:
    """accelerated-platforms' overlays build on two bases whose configMapGenerator reads env files a script writes
    (configure_vllm.sh). kubectl kustomize wraps the missing file's error in two levels of "accumulating resources
    ... recursed accumulation of path" with absolute paths: the KV001 quoted the first 1,000 characters, and the
    cause, last on the line, was cut off. Now the cause comes first, with the base it is in."""
    from kvlint.render import kustomize_command

    if kustomize_command(str(GKE_OVERLAY)) is None:
        pytest.skip("neither kustomize nor kubectl is installed")
    kv001 = [
        x for x in run_check([str(GKE_OVERLAY)], Options(allow_hub=False)).diagnostics if x.rule == "KV001"
    ]
    # (the bases' entries naming the missing files get their own KV001, marked so: kvlint.render.missing_paths)
    (d,) = [x for x in kv001 if x.mark is not Mark.KUSTOMIZE_MISSING]
    assert len(kv001) > 1 and all(x.loc is not None and x.loc.line > 1 for x in kv001 if x is not d)
    assert "env source files: [deployment.env]" in d.message and "no such file or directory" in d.message
    assert "recursed accumulation" not in d.message and "cut to" not in d.message
    from kvlint.load import repository_root

    base = TREES / "gcp-accelerated-platforms-online-inference-gpu" / "base"  # (relative to the repository)
    shown = os.path.relpath(os.path.realpath(base), repository_root(str(base), resolve=True) or "/")
    assert d.message.endswith(f"(in the base {shown}, which this kustomization builds on)")


def test_a_long_renderer_line_keeps_its_end() -> None:
    """A line longer than RENDER_LINE_CHARS keeps its start and its end (where a nested error says what failed)."""
    from kvlint.render import RENDER_LINE_CHARS, _clip, _innermost

    line = "Error: " + "a" * 5000 + " the cause"
    cut = _clip(line)
    assert cut.startswith("Error: aaa") and cut.endswith(
        f" the cause (cut to {RENDER_LINE_CHARS} characters)"
    )
    assert len(cut) < RENDER_LINE_CHARS + 50
    assert _innermost("Error: plain") == "Error: plain"
    wrapped = "Error: accumulating resources: x: recursed accumulation of path '/b': y: recursed accumulation of path '/c': z"
    assert _innermost(wrapped) == "Error: z (in the base /c, which this kustomization builds on)"


def test_plan_without_a_gpu_asks_for_the_option_not_a_manifest_field(tmp_path: Path) -> None:
    """``kvlint plan -- vllm serve MODEL`` without --accelerator: KV501's fix said to request GPUs in
    ``resources.limits`` and name the type with a nodeSelector, fields of a manifest the user does not have. It now
    names the plan command's own options; a manifest's container without a GPU keeps the manifest fix."""
    from click.testing import CliRunner

    from kvlint.cli import main

    res = CliRunner().invoke(main, ["plan", "--offline", "--", "vllm", "serve", "Qwen/Qwen3-0.6B"])
    (line,) = [x for x in res.output.splitlines() if "KV501" in x]
    fix = res.output.splitlines()[res.output.splitlines().index(line) + 1]
    assert "no GPU was named" in line
    assert fix.strip().startswith("fix: name the GPU: --accelerator ID") and "resources.limits" not in fix
    manifest = tmp_path / "cpu.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n    args: [--model, Qwen/Qwen3-0.6B]\n"
    )
    (d,) = [x for x in run_check([str(manifest)], Options(allow_hub=False)).diagnostics if x.rule == "KV501"]
    assert d.fix is not None and d.fix.startswith(
        "request the GPUs the engine uses: resources.limits: {nvidia.com/gpu: 1} (vLLM's default tensor-parallel-size 1)"
    )
