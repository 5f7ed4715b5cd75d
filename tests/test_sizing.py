"""No silent pass: every report says how many serving workloads were sized and why the others were not, and
``--require-sizing`` / ``require_sizing: true`` fail the run on an unsized one. Real manifests from
fixtures/examples and fixtures/collected (sources in its INDEX.csv)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.engines.images import image_placeholder
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import SIZED, outcomes, sizing_of, summarise
from kvlint.types import CheckResult

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "fixtures" / "examples"
COLLECTED = ROOT / "fixtures" / "collected"
#: names a model the offline catalogue lacks (google/flan-t5-xl, an encoder-decoder, served by TGI)
UNKNOWN_MODEL = COLLECTED / "rh-aiservices-bu__llm-on-openshift__llm-servers__hf_tgi__deployment.yaml"
#: names no GPU (SGLang's own k8s example): sized by the fleet verdict
NO_GPU = COLLECTED / "sgl-project__sglang__docker__k8s-sglang-service.yaml"


def _check(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", *args])
    return r.exit_code, r.stdout, r.stderr


def test_each_container_has_one_outcome_and_the_summary_counts_them(
    fixtures_and_corpus_check: CheckResult,
) -> None:
    """On the session's run of every fixture directory (fixtures/collected among them) and the shared corpus."""
    result = fixtures_and_corpus_check
    got = outcomes(result.containers)
    s = summarise(result)
    assert s.serving == len(got) and s.plan == got.count("plan") and s.fleet == got.count("fleet")
    assert s.leader == got.count("leader") > 0  # multi-node workers sized with their leader
    assert sum(s.not_sized.values()) == s.unsized - s.not_read == len([o for o in got if o not in SIZED])
    assert {"model unknown", "runtime template"} <= set(s.not_sized)
    # a worker is credited only when its own outcome is not sized and its leader's is
    for cr, o in zip(result.containers, got, strict=True):
        if o == "leader":
            assert cr.serving.joins is not None and sizing_of(cr) not in SIZED


def test_the_reason_matches_what_the_findings_say() -> None:
    result = run_check([str(UNKNOWN_MODEL)], Options(allow_hub=False))
    (cr,) = result.containers
    assert sizing_of(cr) == "model unknown"
    assert any(d.rule == "KV502" for d in result.diagnostics)
    fleet = run_check([str(NO_GPU)], Options(allow_hub=False))
    assert [sizing_of(c) for c in fleet.containers] == ["fleet"]


def test_text_json_sarif_markdown_and_github_all_say_it(tmp_path: Path) -> None:
    sarif, md, js = tmp_path / "r.sarif", tmp_path / "r.md", tmp_path / "r.json"
    code, out, _ = _check(
        "--fail-on",
        "never",
        "--format",
        "text",
        "--format",
        f"sarif={sarif}",
        "--format",
        f"markdown={md}",
        "--format",
        f"json={js}",
        str(UNKNOWN_MODEL),
        str(NO_GPU),
    )
    assert code == 0
    line = "sized 1 of 2 serving containers (1 against the fleet); not sized: model unknown 1"
    assert out.splitlines()[-2] == line
    data = json.loads(js.read_text())
    assert data["summary"]["sizing"] == {
        "serving": 2,
        "sized": 1,
        "plan": 0,
        "fleet": 1,
        "leader": 0,
        "not_sized": {"model unknown": 1},
        "not_read": 0,
        "not_read_items": [],
    }
    assert sorted(w["sizing"] for w in data["workloads"]) == ["fleet", "model unknown"]
    note = json.loads(sarif.read_text())["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert note == {"level": "warning", "message": {"text": line}}
    assert line in md.read_text()
    r = CliRunner().invoke(
        main,
        ["check", "--offline", "--no-config", "--fail-on", "never", "--format", "github", str(UNKNOWN_MODEL)],
    )
    assert "::warning title=kvlint sizing::sized 0 of 1 serving container" in r.stdout


def test_require_sizing_fails_the_run_and_names_each_workload(tmp_path: Path) -> None:
    code, _, err = _check("--fail-on", "never", "--require-sizing", str(UNKNOWN_MODEL), str(NO_GPU))
    assert code == 1
    assert (
        "not sized:" in err
        and "Deployment/hf-text-generation-inference-server container server: model unknown" in err
    )
    # the fleet verdict counts as sized: the SGLang file is not named (its name, not a word the checkout's path
    # may also hold)
    assert NO_GPU.name not in err and err.count(": model unknown") == 1
    assert _check("--fail-on", "never", "--require-sizing", str(NO_GPU))[0] == 0
    assert _check("--fail-on", "never", "--require-sizing", "--exit-zero", str(UNKNOWN_MODEL))[0] == 0
    assert _check("--fail-on", "never", str(UNKNOWN_MODEL))[0] == 0  # not required: reported, not failed


def test_require_sizing_names_the_container_when_no_rule_says_why() -> None:
    """With KV501-KV503 turned off and a container whose engine has no command (TGI configured by env), the
    ``--require-sizing`` line names the container's own position: the streaming run's record carries it (it
    raised AttributeError before, ``ContainerRecord`` typed as ``ContainerResult`` hid it from mypy)."""
    code, _, err = _check(
        "--fail-on", "never", "--require-sizing", "--ignore", "KV501,KV502,KV503", str(UNKNOWN_MODEL)
    )
    (cr,) = run_check([str(UNKNOWN_MODEL)], Options(allow_hub=False)).containers
    assert cr.serving.command_loc is None and cr.container.loc is not None
    where = f"{cr.container.loc.file}:{cr.container.loc.line}:{cr.container.loc.column}"
    assert code == 1, err
    assert (
        f"kvlint: not sized: {where}: Deployment/hf-text-generation-inference-server container server" in err
    )


def test_require_sizing_in_the_configuration(tmp_path: Path) -> None:
    (tmp_path / ".kvlint.yaml").write_text("require_sizing: true\nfail_on: never\n")
    target = tmp_path / UNKNOWN_MODEL.name
    target.write_bytes(UNKNOWN_MODEL.read_bytes())
    r = CliRunner().invoke(main, ["check", "--offline", str(target)])
    assert r.exit_code == 1 and "model unknown (--require-sizing)" in r.stderr


def test_serving_objects_seen_but_not_read_are_counted_and_fail_require_sizing(tmp_path: Path) -> None:
    """An unrendered template naming vLLM that does not parse, and a RayService (engine settings in
    serveConfigV2), are 'not read': said in the summary, and --require-sizing fails on them; a template of a
    plain Service is not counted."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "{{- with .Values.pod }}\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
        '        image: "vllm/vllm-openai:{{ .Values.tag }}"\n{{- end }}\n'
    )
    (templates / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n{{- if .Values.x }}\n"
        "  ports: [{port: 80}]\n{{- end }}\n"
    )
    # GKE's model-composition RayService: its containers run Ray images, not an engine's (named, since another
    # collected RayService, awslabs' vLLM-on-Inferentia2, runs an image that names vLLM and is a serving container)
    ray = (
        COLLECTED
        / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__model-composition__ray-service.yaml"
    )
    assert "kind: RayService" in ray.read_text()
    result = run_check([str(templates), str(ray)], Options(allow_hub=False))
    assert summarise(result).not_read == 2
    assert "not read: 2 template" in summarise(result).line()
    code, _, err = _check(str(templates))
    assert code == 0  # KV002 is a warning
    code, _, err = _check("--require-sizing", str(templates), str(ray))
    assert code == 1
    assert f"{templates / 'deploy.yaml'}:" in err and "template not rendered" in err
    assert "RayService/" in err and "operator settings not read" in err
    assert "svc.yaml" not in err


def test_unread_answers_from_the_text_the_run_read(
    tmp_path: Path, fixtures_and_corpus_paths: list[str], fixtures_and_corpus_check: CheckResult
) -> None:
    """A templated file's "names a serving engine" comes from the text the loader read
    (``CheckResult.engine_named``), not from reading the file again: overwritten after the run, it is still
    counted; with the noted answers dropped, :func:`unread` reads it again and finds no engine. On the
    fixtures and the shared corpus (when present), in a whole run and a streaming one, the noted answers are
    what reading the files again gives."""
    from dataclasses import replace as with_fields

    from kvlint.checkrun import run_paths
    from kvlint.sizing import unread

    template = tmp_path / "deploy.yaml"
    template.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "{{- with .Values.pod }}\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
        '        image: "vllm/vllm-openai:{{ .Values.tag }}"\n{{- end }}\n'
    )
    options = Options(allow_hub=False)
    whole = run_check([str(template)], options)
    streamed = run_paths([str(template)], options, no_config=True, jobs=1).result
    template.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n")
    for result in (whole, streamed):
        assert result.engine_named == {str(template): True}
        assert [why for _, why in unread(result)] == ["template not rendered"]
        assert unread(with_fields(result, engine_named={})) == []

    def answers(result: object) -> list[tuple[str, object, str]]:
        return [(d.rule, d.loc, why) for d, why in unread(result)]  # type: ignore[arg-type]

    # the whole run is the session's (every fixture directory and the shared corpus when present); the
    # streaming one reads the same paths
    streamed = run_paths(fixtures_and_corpus_paths, options, no_config=True, jobs=1).result
    for result in (fixtures_and_corpus_check, streamed):
        assert result.engine_named
        assert answers(result) == answers(with_fields(result, engine_named={}))


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_a_chart_helm_cannot_render_is_not_read_and_the_sizing_line_stays(tmp_path: Path) -> None:
    """fixtures/helm/chat-chart with a dependency its charts/ directory lacks (the error production-stack's
    chart gives without `helm dependency build`): real `helm template` fails (KV001), and the run still prints
    the sizing line, counting the other input's container as read and the chart as not read, which
    --require-sizing fails on. A failing chart whose files name no serving engine is not counted."""
    chart = tmp_path / "chat-chart"
    shutil.copytree(ROOT / "fixtures" / "helm" / "chat-chart", chart)
    with (chart / "Chart.yaml").open("a", encoding="utf-8") as fh:
        fh.write(
            "dependencies:\n  - name: prometheus-adapter\n    version: 4.11.0\n"
            "    repository: https://prometheus-community.github.io/helm-charts\n"
        )
    example = EXAMPLES / "chat-8b-l4.yaml"
    result = run_check([str(chart), str(example)], Options(allow_hub=False))
    assert [d.rule for d in result.diagnostics if d.loc and d.loc.file == str(chart / "Chart.yaml")] == [
        "KV001"
    ]
    sizing = summarise(result)
    assert (sizing.serving, sizing.sized, sizing.not_read) == (1, 1, 1)
    code, out, _ = _check("--fail-on", "never", str(chart))
    assert code == 0
    assert "sized 0 of 0 serving containers; not read: 1 template, Helm chart or operator object" in out
    code, out, err = _check("--fail-on", "never", "--require-sizing", str(chart), str(example))
    assert code == 1 and "sized 1 of 1 serving container (1 on the GPU it names); not read: 1 " in out
    # at the dependencies entry helm names (kvlint.render._helm_failure)
    dep_line = (chart / "Chart.yaml").read_text().splitlines().index("  - name: prometheus-adapter") + 1
    assert (
        f"not read: {chart / 'Chart.yaml'}:{dep_line}: Helm chart not rendered (helm template failed)" in err
    )
    # the same failure in a chart that deploys no serving engine: an error (KV001), not an unread workload
    plain = tmp_path / "plain"
    shutil.copytree(chart, plain)
    (plain / "templates" / "deployment.yaml").unlink()
    (plain / "values.yaml").write_text("replicas: 1\n")
    (plain / "Chart.yaml").write_text((plain / "Chart.yaml").read_text().replace("vLLM", "web"))
    assert summarise(run_check([str(plain)], Options(allow_hub=False))).not_read == 0


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_a_chart_failing_at_a_template_line_is_still_not_read(tmp_path: Path) -> None:
    """A ``required`` value missing: helm's error is placed at the template line (kvlint.render._helm_failure), in
    the chart's own template or in an unpacked subchart's; the chart still counts as not read, once, and
    --require-sizing still fails on it."""
    chart = tmp_path / "chat-chart"
    shutil.copytree(ROOT / "fixtures" / "helm" / "chat-chart", chart)
    bad = chart / "templates" / "required.yaml"
    bad.write_text('# needs a value\n{{ required "set gpuType" .Values.gpuType }}\n')
    result = run_check([str(chart)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert kv001.loc is not None and (kv001.loc.file, kv001.loc.line) == (str(bad), 2)
    assert summarise(result).not_read == 1
    code, _out, err = _check("--fail-on", "never", "--require-sizing", str(chart))
    assert code == 1 and f"not read: {bad}:2: Helm chart not rendered (helm template failed)" in err

    parent = tmp_path / "parent"
    (parent / "charts").mkdir(parents=True)
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n  - name: chat-chart\n    version: 0.1.0\n"
    )
    shutil.copytree(chart, parent / "charts" / "chat")
    result = run_check([str(parent)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert kv001.loc is not None and kv001.loc.file == str(
        parent / "charts" / "chat" / "templates" / "required.yaml"
    )
    assert summarise(result).not_read == 1


def test_require_sizing_names_the_place_of_the_finding_that_says_why() -> None:
    """Each 'not sized' line of --require-sizing names the file:line:column of the KV501/KV502 finding on the
    same container: the TPU nodeSelector of a real GKE sample (KV501; fixtures/sizing/SOURCE.md), the model
    argument of a model kvlint does not hold (KV502)."""
    import re

    tpu = ROOT / "fixtures" / "sizing" / "vllm-tpu-llama3-70b.yaml"
    code, out, err = _check("--fail-on", "never", "--require-sizing", str(tpu), str(UNKNOWN_MODEL))
    assert code == 1
    lines = re.findall(
        r"kvlint: not sized: (\S+:\d+:\d+): (\S+) container (\S+): (.+) \(--require-sizing\)", err
    )
    assert sorted(why for *_, why in lines) == ["model unknown", "not a CUDA/ROCm GPU"]
    for loc, obj, container, _ in lines:
        said = [
            ln
            for ln in out.splitlines()
            if ln.startswith(f"{loc}: ")
            and re.search(r" KV50[12] ", ln)
            and ln.endswith(f"[{obj} container {container}]")
        ]
        assert len(said) == 1, (loc, out)
    # the TPU's finding is at the nodeSelector, not at the --model argument the message used to name
    tpu_loc = next(loc for loc, *_, why in lines if why == "not a CUDA/ROCm GPU")
    row = tpu.read_text().splitlines()[int(tpu_loc.split(":")[-2]) - 1]
    assert "gke-tpu-accelerator" in row


def test_require_sizing_tells_alike_containers_of_one_object_apart(tmp_path: Path) -> None:
    """An LLMInferenceService's decode and prefill pods both run a container named ``main``: each not-sized
    line names where its pod is in the object (they were the same line twice)."""
    container = "containers:\n- name: main\n  image: vllm/vllm-openai:v0.11.0\n  resources: {limits: {nvidia.com/gpu: 1}}\n"
    text = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n  name: pd\nspec:\n"
        "  model:\n    uri: hf://example-org/model-not-in-any-catalogue\n"
        "  template:\n"
        + "".join("    " + ln + "\n" for ln in container.splitlines())
        + "  prefill:\n    template:\n"
        + "".join("      " + ln + "\n" for ln in container.splitlines())
    )
    path = tmp_path / "pd.yaml"
    path.write_text(text)
    code, _, err = _check("--fail-on", "never", "--require-sizing", str(path))
    lines = [ln for ln in err.splitlines() if "not sized:" in ln]
    assert code == 1 and len(lines) == 2, err
    assert "LLMInferenceService/pd (spec.template) container main" in lines[0]
    assert "LLMInferenceService/pd (spec.prefill.template) container main" in lines[1]


def test_engine_named_in_answers_as_reading_the_file(tmp_path: Path) -> None:
    """sizing.engine_named_in (the streaming run's answer from the bytes it analysed) says what _names_engine
    says reading the file: fixture files, and bytes with CRLF and lone CR breaks inside and around the names,
    upper case, a BOM, invalid UTF-8, UTF-16, non-ASCII text; None above the 1 MiB read."""
    from kvlint.sizing import _MAX_SCAN_BYTES, _names_engine, engine_named_in

    samples = [p.read_bytes() for p in sorted((ROOT / "fixtures").rglob("*.y*ml"))[:400]]
    words = [b"vllm", b"VLLM", b"sglang", b"text-generation-inference", b"text-generation-launcher", b"tgi"]
    for w in words:
        for around in (b"", b"\r\n", b"\r", b"\xff", b"\xe2\x82", "é".encode(), b"\xef\xbb\xbf"):
            samples += [
                around + w + around,
                w[:2] + b"\r\n" + w[2:],
                w[:2] + b"\r" + w[2:],
                b"x: " + w + around,
            ]
        samples += [w.decode().encode("utf-16"), b"\r" * 3 + w, "ſglang".encode() + w[:1]]
    for i, data in enumerate(samples):
        p = tmp_path / f"f{i}.yaml"
        p.write_bytes(data)
        assert engine_named_in(data) == _names_engine(str(p), {}), data[:200]
    assert engine_named_in(b"#" * _MAX_SCAN_BYTES + b"vllm") is None
    assert engine_named_in(b"#" * (_MAX_SCAN_BYTES - 4) + b"vllm") is True


def test_a_streaming_run_answers_not_read_from_what_it_read(tmp_path: Path) -> None:
    """A streaming run records, for a template with a file-level KV002, whether it names an engine, from the
    bytes it analysed: the summary's "not read" count is then not found by reading the file again (the file
    rewritten after the run without the name still counts), and equals run_check's."""
    from kvlint.checkrun import run_paths

    t = tmp_path / "templates"
    t.mkdir()
    (t / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "{{- with .Values.pod }}\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
        '        image: "vllm/vllm-openai:{{ .Values.tag }}"\n{{- end }}\n'
    )
    (t / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n{{- if .Values.x }}\n"
        "  ports: [{port: 80}]\n{{- end }}\n"
    )
    whole = run_check([str(t)], Options(allow_hub=False))
    for jobs in (1, 2):
        run = run_paths([str(t)], Options(allow_hub=False), no_config=True, jobs=jobs)
        assert run.result.engine_named == {str(t / "deploy.yaml"): True, str(t / "svc.yaml"): False}
        assert summarise(run.result).not_read == summarise(whole).not_read == 1
    (t / "deploy.yaml").write_text("kind: Deployment\n{{ .Values.x }}\n")
    assert summarise(run.result).not_read == 1


def test_a_container_that_only_runs_the_entrypoint_names_no_model() -> None:
    """A vllm/vllm-openai container with neither command nor args (the node-selection part of GKE's
    vllm-2b-it-a100-40gb sample; AIBrix's RoleSet sample has the same shape): its KV503 says the vLLM command
    names no model, and the sizing reason says the same ('no model in the command'; it was 'command
    unreadable', which contradicted the finding)."""
    path = ROOT / "fixtures" / "accelerators" / "gke-a100-40gb.yaml"
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.serving.engine == "vllm" and cr.serving.model is None and not cr.serving.flags
    (kv503,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "names no model" in kv503.message
    assert sizing_of(cr) == "no model in the command"


def test_values_files_naming_an_engine_image_by_a_name_without_the_engine_word_are_not_read(
    tmp_path: Path,
) -> None:
    """A Helm values file whose engine image is Habana's TGI (``ghcr.io/huggingface/tgi-gaudi``, the shape of
    OPEA's helm-charts/common/tgi/gaudi-values.yaml) or llm-d's vLLM build (``ghcr.io/llm-d/llm-d-cuda``) gets
    a KV002 and is counted as 'not read', as one naming ``vllm/vllm-openai`` is; the loader's test for an
    engine's name missed both (it knew only vllm, sglang and text-generation-*). The files are made up for the
    test; each names only its image."""
    from kvlint.engines.images import ENGINE_TEXT, engine_of_image, image_mentions_engine

    images = {
        "gaudi-values.yaml": "ghcr.io/huggingface/tgi-gaudi",
        "llmd-values.yaml": "ghcr.io/llm-d/llm-d-cuda",
        "vllm-values.yaml": "vllm/vllm-openai",
    }
    for name, repo in images.items():
        (tmp_path / name).write_text(
            f'image:\n  repository: {repo}\n  tag: "2.3.1"\nresources:\n  limits:\n    habana.ai/gaudi: 1\n'
        )
    (tmp_path / "other-values.yaml").write_text("image:\n  repository: ghcr.io/example/agent\n  tag: v1\n")
    result = run_check([str(tmp_path)], Options(allow_hub=False))
    kv002 = {Path(d.loc.file).name for d in result.diagnostics if d.rule == "KV002"}
    assert kv002 == {*images, "other-values.yaml"}
    assert summarise(result).not_read == len(images)
    # every image name kvlint's engine tables know, and each name image_mentions_engine reads, is named
    known = ["ghcr.io/huggingface/tgi-gaudi:2.3.1", "ghcr.io/llm-d/llm-d-rocm:v0.9.0", "ghcr.io/llm-d/llm-d:v0.2.0",
             "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu",
             "ghcr.io/huggingface/neuronx-tgi:latest", "lmsysorg/sglang:v0.5.5", "rocm/vllm-dev:nightly",
             "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/huggingface-text-generation-inference-cu124.2-3"
             ".ubuntu2204.py311"]  # fmt: skip
    for image in known:
        assert image_mentions_engine(image) and ENGINE_TEXT.search(image.lower()), image
    from kvlint.engines import images as im

    for repo in (*im._VLLM_REPOS, *im._TGI_REPOS, *im._SGLANG_REPOS):
        assert engine_of_image(repo) and ENGINE_TEXT.search(repo), repo
    for text in (
        "ghcr.io/example/agent:v1",
        '{{ include "tgi.fullname" . }}',
        "stgi-x",
        "text-generation-webui",
    ):
        assert not ENGINE_TEXT.search(text), text


def test_a_container_that_requests_no_gpu_is_not_counted_as_sized_against_the_fleet(tmp_path: Path) -> None:
    """A vLLM container with a known model and no GPU resource: KV501 says capacity rules were skipped (there is
    no GPU to size it on) and KV405 asks for the GPU, so the summary must not count it 'sized against the fleet'
    (it did: the fleet was planned with the engine's worker count and never reported); the reason is 'no GPU
    requested'. The same pod with a GPU limit and no GPU type is sized against the fleet."""
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
    )
    bare = tmp_path / "bare.yaml"
    bare.write_text(text)
    result = run_check([str(bare)], Options(allow_hub=False))
    (cr,) = result.containers
    assert not cr.fleet and sizing_of(cr) == "no GPU requested"
    assert any(d.rule == "KV501" and "requests no GPU" in d.message for d in result.diagnostics)
    assert summarise(result).sized == 0
    limited = tmp_path / "limited.yaml"
    limited.write_text(text + "        resources: {limits: {nvidia.com/gpu: 1}}\n")
    (cr,) = run_check([str(limited)], Options(allow_hub=False)).containers
    assert cr.fleet and sizing_of(cr) == "fleet"


@pytest.mark.parametrize(
    ("image", "resources", "reason", "says"),
    [
        # production-stack's EKS cpu-tinyllama shape: vLLM's CPU build, no GPU, the model on a volume
        ("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.8.5", "", "not a CUDA/ROCm GPU", "CPU build"),
        # a CUDA image that requests no GPU
        ("vllm/vllm-openai:v0.10.0", "", "no GPU requested", "requests no GPU"),
        # the same with a GPU: only the model is missing, and KV502 says so
        (
            "vllm/vllm-openai:v0.10.0",
            "        resources: {limits: {nvidia.com/gpu: 1}}\n",
            "model unknown",
            None,
        ),
    ],
)
def test_a_reason_no_model_would_change_comes_before_an_unknown_model(
    tmp_path: Path, image: str, resources: str, reason: str, says: str | None
) -> None:
    """A CPU build (or a container requesting no GPU) whose model is a local path got KV502 "no config.json"
    and counted as "model unknown", though a config.json would not let kvlint size it: KV501 (capacity rules
    skipped: a CPU build / no GPU requested) now takes precedence, with no KV502, and the sizing reason agrees.
    A GPU container with the same path keeps KV502 and "model unknown"."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "# made up for a test\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
        f"    spec:\n      containers:\n      - name: vllm\n        image: {image}\n"
        "        args: [--model, /data/models/tinyllama, --max-model-len, '2048']\n" + resources
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.model is None and sizing_of(cr) == reason
    rules = {d.rule: d for d in result.diagnostics}
    if says is None:
        assert "KV502" in rules and "KV501" not in rules
    else:
        assert "KV502" not in rules and says in rules["KV501"].message


def test_a_serving_runtime_template_keeps_its_own_reason() -> None:
    """A serving-runtime template (a KServe ServingRuntime) names no GPU and no model of its own: both come
    from the InferenceService that uses it, so the KV501-before-KV502 precedence does not apply to it: no
    "requests no GPU", and it counts as "runtime template"."""
    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures/collected/rh-aiservices-bu__llm-on-openshift__serving-runtimes__hf_tgi_runtime__hf-tgi-runtime.yaml"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.placement is not None and cr.placement.requests_no_gpu  # the template requests none itself
    assert sizing_of(cr) == "runtime template"
    assert not [d for d in result.diagnostics if d.rule == "KV501"]


def test_a_multi_node_runtime_worker_counts_as_a_runtime_template(tmp_path: Path) -> None:
    """KServe's kserve-huggingfaceserver-multinode ClusterServingRuntime (fixtures/load, kserve/kserve): its
    workerSpec container only runs ``ray start --address ... --block`` and names no model; like its head it is a
    template the InferenceService fills, so it counts as "runtime template", not "no model in the command". The
    same worker in a plain Deployment (no template) keeps "no model in the command"."""
    import yaml

    path = Path(__file__).resolve().parents[1] / (
        "fixtures/load/kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    by_name = {cr.container_name: cr for cr in result.containers}
    assert by_name["worker-container"].serving.model is None
    assert [sizing_of(by_name[n]) for n in ("kserve-container", "worker-container")] == [
        "runtime template"
    ] * 2
    assert summarise(result).not_sized == {"runtime template": 2}
    # the variant: the runtime's worker pod as a Deployment of its own is no template
    doc = yaml.safe_load(path.read_text())
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "worker"},
        "spec": {"template": {"spec": {"containers": doc["spec"]["workerSpec"]["containers"]}}},
    }
    plain = tmp_path / "worker.yaml"
    plain.write_text(yaml.safe_dump(deployment))
    (cr,) = run_check([str(plain)], Options(allow_hub=False)).containers
    assert sizing_of(cr) == "no model in the command"


def test_a_worker_joining_a_leader_not_sized_takes_the_leaders_reason(tmp_path: Path) -> None:
    """The LWS vLLM TPU example (fixtures/sizing/lws-vllm-tpu.yaml): the leader is "not a CUDA/ROCm GPU" and its
    worker, which joins the leader's Ray cluster and runs no engine of its own, counts the same (it was "no model
    in the command"). The variant: the LWS GPU example (fixtures/collected) with the leader's model replaced by a
    made-up id counts both as "model unknown"; with the real model both are sized (the worker with its leader)."""
    root = Path(__file__).resolve().parents[1]
    tpu = run_check([str(root / "fixtures/sizing/lws-vllm-tpu.yaml")], Options(allow_hub=False))
    by_role = {cr.workload.role: cr for cr in tpu.containers}
    assert by_role["worker"].serving.model is None and by_role["worker"].serving.joins is not None
    assert outcomes(tpu.containers) == ["not a CUDA/ROCm GPU"] * 2
    assert summarise(tpu).not_sized == {"not a CUDA/ROCm GPU": 2}

    gpu = root / "fixtures/collected/kubernetes-sigs__lws__docs__examples__vllm__lws.yaml"
    text = gpu.read_text()
    assert text.count("--model meta-llama/Meta-Llama-3.1-405B-Instruct") == 1
    sized = run_check([str(gpu)], Options(allow_hub=False))
    assert sorted(outcomes(sized.containers)) == ["fleet", "leader"]
    unknown = tmp_path / "lws.yaml"
    unknown.write_text(
        text.replace("meta-llama/Meta-Llama-3.1-405B-Instruct", "example-org/not-a-catalogued-model")
    )
    assert outcomes(run_check([str(unknown)], Options(allow_hub=False)).containers) == ["model unknown"] * 2


def test_a_model_path_holding_a_placeholder_token_is_a_template_not_rendered(tmp_path: Path) -> None:
    """GoogleCloudPlatform/accelerated-platforms' GCS FUSE vLLM Deployment (fixtures/collected) serves
    /gcs/V_MODEL_NAME/V_MODEL_VERSION, tokens its README has `sed` replace, as it does the image V_IMAGE_NAME:
    not sized as "template not rendered" (it was "model unknown"), and KV502 names the token instead of asking
    for the config of a directory that exists nowhere. Variants: a ``<...>`` token to fill in by hand reads the
    same; a real-looking path in lower case stays "model unknown"."""
    path = Path(__file__).resolve().parents[1] / (
        "fixtures/collected/GoogleCloudPlatform__accelerated-platforms__use-cases__inferencing__serving__vllm__"
        "gcsfuse__manifests__model-deployment-l4.yaml"
    )
    text = path.read_text()
    assert text.count("V_MODEL_NAME/V_MODEL_VERSION") == 1
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert sizing_of(cr) == "template not rendered"
    (kv502,) = [d for d in result.diagnostics if d.rule == "KV502"]
    assert "placeholder V_MODEL_NAME" in kv502.message and "kvlint.io/model" in kv502.fix
    for model, outcome in [
        ("<your-model>/V1", "template not rendered"),
        ("my-models/llama-finetune-v2", "model unknown"),
    ]:
        variant = tmp_path / "variant.yaml"
        variant.write_text(text.replace("V_MODEL_NAME/V_MODEL_VERSION", model))
        (cr,) = run_check([str(variant)], Options(allow_hub=False)).containers
        assert sizing_of(cr) == outcome, model


def test_a_model_word_that_is_a_sed_token_between_double_underscores_is_a_template_not_rendered(
    tmp_path: Path,
) -> None:
    """tlrmchlsmth/vllm-dp-lws' LeaderWorkerSet (fixtures/collected) runs ``vllm serve __MODEL__``: its Justfile's
    ``start`` recipe fills ``__MODEL__``, ``__LWS_NAME__`` and ``__SERVICE_NAME__`` with ``sed -e
    's#__MODEL__#{{MODEL}}#g' lws.yaml`` before ``kubectl apply``. Leader and worker are not sized as "template not
    rendered" (they were "model unknown", and KV502 said "not a hub id (org/name) nor an existing path" instead of
    naming the token). Variants: the token inside a path reads the same; a lower-case dunder word
    (``__pycache__``) and a word with one leading underscore stay "model unknown"."""
    path = COLLECTED / "tlrmchlsmth__vllm-dp-lws__lws.yaml"
    text = path.read_text()
    assert text.count("__MODEL__ \\\n") == 2
    result = run_check([str(path)], Options(allow_hub=False))
    assert outcomes(result.containers) == ["template not rendered"] * 2
    messages = [d.message for d in result.diagnostics if d.rule == "KV502"]
    assert messages and all("placeholder __MODEL__" in m for m in messages), messages
    for model, outcome in [
        ("/models/__MODEL__", "template not rendered"),
        ("/models/__pycache__", "model unknown"),
        ("_MODEL_NAME", "model unknown"),
    ]:
        variant = tmp_path / "variant.yaml"
        variant.write_text(text.replace("__MODEL__ \\\n", model + " \\\n"))
        assert set(outcomes(run_check([str(variant)], Options(allow_hub=False)).containers)) == {outcome}, (
            model
        )
    # the image field reads the same token as a placeholder (``image: __IMAGE__``), not an image to pull
    assert image_placeholder("__VLLM_IMAGE__") is not None and image_placeholder("__pycache__") is None


#: KubeRay's vLLM-on-TPU RayCluster (GKE sample): head and worker run KubeRay's ``ray start``; the worker requests
#: google.com/tpu on a TPU v6e node
TPU_RAYCLUSTER = COLLECTED / (
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__tpu__ray-cluster.tpu-v6e-"
    "singlehost.yaml"
)
#: ai-on-eks' vLLM RayService on Inferentia 2: the worker requests aws.amazon.com/neuron
INF2_RAYSERVICE = (
    COLLECTED / "awslabs__ai-on-eks__blueprints__inference__vllm-rayserve-inf2__vllm-rayserve-deployment.yaml"
)


@pytest.mark.parametrize(
    ("path", "worker_says"),
    [
        (TPU_RAYCLUSTER, "the pod runs on Google TPU v6e"),
        (INF2_RAYSERVICE, "requests aws.amazon.com/neuron, an AWS Neuron accelerator"),
    ],
)
def test_an_unreadable_command_on_a_non_gpu_accelerator_says_the_accelerator(
    path: Path, worker_says: str
) -> None:
    """A Ray worker on a TPU or an Inferentia device whose engine kvlint cannot read (KubeRay's ``ray start``,
    the engine in Python) counted as "command unreadable", and KV503 alone told the user how to let kvlint read
    the command, which would not size it either: kvlint's memory model is for CUDA/ROCm GPUs. The reason is now
    "not a CUDA/ROCm GPU" and KV501 says so on the worker; the head, which requests no accelerator, keeps
    "command unreadable" (its command is what is missing)."""
    result = run_check([str(path)], Options(allow_hub=False))
    head, worker = result.containers
    assert head.serving.unreadable and worker.serving.unreadable
    assert [sizing_of(head), sizing_of(worker)] == ["command unreadable", "not a CUDA/ROCm GPU"]
    kv501 = [d for d in result.diagnostics if d.rule == "KV501"]
    assert [d.container for d in kv501] == [worker.container_name]
    assert (
        worker_says in kv501[0].message and "kvlint's memory model is for CUDA/ROCm GPUs" in kv501[0].message
    )
    assert summarise(result).not_sized == {"command unreadable": 1, "not a CUDA/ROCm GPU": 1}


@pytest.mark.parametrize(
    ("image", "resources", "reason"),
    [
        # ai-on-eks' Trainium LWS shape: a Neuron build of vLLM started by a script inside the image
        (
            "public.ecr.aws/data-on-eks/neuron-sdk2.20-vllm0.5.0-neuron:v8",
            "{limits: {aws.amazon.com/neuron: '16'}}",
            "not a CUDA/ROCm GPU",
        ),
        # the same script on a CUDA image with a GPU: the command is what is missing
        ("vllm/vllm-openai:v0.10.0", "{limits: {nvidia.com/gpu: 1}}", "command unreadable"),
        # ... and with no GPU: the command is still what kvlint would need first
        ("vllm/vllm-openai:v0.10.0", "{}", "command unreadable"),
    ],
)
def test_a_script_the_image_runs_on_a_neuron_build_is_not_a_gpu(
    tmp_path: Path, image: str, resources: str, reason: str
) -> None:
    """A container that runs a script of its image (``/usr/local/bin/run.sh``, whose engine flags kvlint
    cannot see): on a Neuron build of vLLM the reason it is not sized is the accelerator (KV501), not the
    script; on a CUDA image it stays "command unreadable", with or without a GPU."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "# made up for a test\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
        f"    spec:\n      containers:\n      - name: vllm\n        image: {image}\n"
        f"        command: [sh, -c, /usr/local/bin/run.sh]\n        resources: {resources}\n"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.serving.unreadable and sizing_of(cr) == reason
    rules = {d.rule for d in result.diagnostics}
    assert "KV503" in rules
    assert ("KV501" in rules) == (reason == "not a CUDA/ROCm GPU")


#: CoreWeave's kbench Knative template: args only, to a custom vLLM image, with a fork's --tensorizer-path
KSVC_TENSORIZER = (
    COLLECTED / "coreweave__kubernetes-cloud__online-inference__kbench__examples__ksvc-template-mistral.yaml"
)


def test_args_to_an_unknown_vllm_image_name_the_option_no_vllm_release_has() -> None:
    """Args only, to an image kvlint does not know (navarrepratt/vllm), all of them vLLM's options but
    ``--tensorizer-path`` (released vLLM reads tensorizer settings from --model-loader-extra-config): KV503 said
    only "not a recognised engine command". It now names the option no release kvlint knows has, which is what
    the user must change for kvlint (and a released vLLM) to read the command."""
    assert "--tensorizer-path" in KSVC_TENSORIZER.read_text()
    result = run_check([str(KSVC_TENSORIZER)], Options(allow_hub=False))
    (cr,) = result.containers
    assert sizing_of(cr) == "command unreadable"
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "all vLLM options but --tensorizer-path, which no vLLM release kvlint knows" in d.message
    assert "--host" not in d.message.split("but", 1)[1] and "--tensorizer-path" in (d.fix or "")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        # one option vLLM lacks among vLLM's: named, each once
        ("[--model, Qwen/Qwen2.5-7B-Instruct, --acme-cache, /c, --acme-cache, /d]", "--acme-cache"),
        # nothing but options vLLM lacks: no vLLM options to go on, the plain message
        ("[--acme-cache, /c, --acme-mode, fast]", None),
    ],
)
def test_only_a_few_options_vllm_lacks_are_named(tmp_path: Path, args: str, named: str | None) -> None:
    """The option list is said only when the others are vLLM's (else the arguments may be another program's)."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "# made up for a test\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: vllm\n        image: registry.example.com/acme/vllm:1\n"
        f"        args: {args}\n        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    if named is None:
        assert "not a recognised engine command" in d.message and "all vLLM options but" not in d.message
    else:
        assert d.message.split("all vLLM options but ", 1)[1].split(", which", 1)[0] == named


def test_a_vllm_disaggregated_prefill_proxy_script_is_no_engine(tmp_path: Path) -> None:
    """zhaotyer/lws_usage's vllm_pd.yaml (fixtures/collected) runs vLLM's own request proxy in the vllm-openai image,
    ``python3 disagg_prefill_proxy_server.py --prefill-url ... --decode-url ...`` (a Quart app forwarding to the
    prefill and decode servers, vllm-project/vllm benchmarks/disagg_benchmarks/): it loads no model, so it is not a
    serving container (it was one, "command unreadable", with KV503's "a wrapper around the engine"). The prefill and
    decode LeaderWorkerSets of the file are untouched. Variants: vLLM's other proxies (``round_robin_proxy.py``, the
    NIXL ``toy_proxy_server.py`` after an interpreter option) read the same; another Python program is still a
    wrapper kvlint cannot see into."""
    from kvlint.engines.command import _serves_no_model

    path = COLLECTED / "zhaotyer__lws_usage__vllm_pd.yaml"
    text = path.read_text()
    assert text.count("python3 disagg_prefill_proxy_server.py") == 1
    result = run_check([str(path)], Options(allow_hub=False))
    names = {cr.workload.name for cr in result.containers}
    assert "vllm-lb-main" not in names and {"vllm-prefill", "vllm-decode"} <= names, names
    wrapper = tmp_path / "wrapper.yaml"
    wrapper.write_text(text.replace("python3 disagg_prefill_proxy_server.py", "python3 my_launcher.py"))
    (lb,) = [
        cr
        for cr in run_check([str(wrapper)], Options(allow_hub=False)).containers
        if cr.workload.name == "vllm-lb-main"
    ]
    assert sizing_of(lb) == "command unreadable"
    assert _serves_no_model(
        ["python3", "-u", "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py", "--port", "8192"]
    )
    assert _serves_no_model(["python", "benchmarks/disagg_benchmarks/round_robin_proxy.py"])
    assert not _serves_no_model(["python3", "-c", "import x", "toy_proxy_server.py"])
    assert not _serves_no_model(["python3", "serve.py", "toy_proxy_server.py"])


def test_an_image_named_a_proxy_of_an_engine_is_no_engine(tmp_path: Path) -> None:
    """ArchanaChetan07's manifests.yaml (fixtures/collected) runs ``ghcr.io/ArchanaChetan07/vllm-latency-proxy``
    (container ``proxy``, env ``VLLM_BASE_URL: http://vllm:8000``) beside its vLLM Deployment: a proxy whose image
    name merely mentions vLLM. It is not a serving container (it was one, "command unreadable": "no known engine
    entrypoint"), as an image named a router is not; an image with "vllm" and no such word still is."""
    from kvlint.engines.images import image_mentions_engine

    path = COLLECTED / "ArchanaChetan07__ai-inference-observability-platform__k8s__manifests.yaml"
    text = path.read_text()
    assert text.count("image: ghcr.io/ArchanaChetan07/vllm-latency-proxy:latest") == 1
    names = [cr.container_name for cr in run_check([str(path)], Options(allow_hub=False)).containers]
    assert names == ["vllm"], names
    assert image_mentions_engine("ghcr.io/acme/vllm_proxy:v1") is None
    assert image_mentions_engine("ghcr.io/acme/vllm-server:v1") == "vllm"
    assert image_mentions_engine("ghcr.io/acme/vllm-proxyless:v1") == "vllm"  # a word, not a substring


def test_a_proxy_named_container_that_requests_a_gpu_is_not_set_aside(tmp_path: Path) -> None:
    """A request proxy loads no model and needs no GPU; the name alone (an image ``ghcr.io/acme/vllm-proxy`` with no
    command, ``python3 disagg_prefill_proxy_server.py``, also in a ``sh -c`` script) does not say the container is one when it asks for
    ``nvidia.com/gpu``: such a container stays a vLLM serving container kvlint cannot read (KV503, "command
    unreadable") instead of leaving the report without a word. Without the GPU request both are still no engine."""
    deployment = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        image: IMAGE
COMMAND        resources: {limits: {nvidia.com/gpu: 1}}
"""
    cases = [
        ("ghcr.io/acme/vllm-proxy:0.1", ""),
        ("vllm/vllm-openai:v0.8.5", '        command: ["python3", "disagg_prefill_proxy_server.py"]\n'),
        (
            "vllm/vllm-openai:v0.8.5",
            '        command: ["sh", "-c", "cd /w && python3 round_robin_proxy.py"]\n',
        ),
    ]
    for image, command in cases:
        path = tmp_path / "d.yaml"
        text = deployment.replace("IMAGE", image).replace("COMMAND", command)
        path.write_text(text)
        result = run_check([str(path)], Options(allow_hub=False))
        assert outcomes(result.containers) == ["command unreadable"], image
        assert [d.rule for d in result.diagnostics if d.rule == "KV503"] == ["KV503"], image
        path.write_text(text.replace("{nvidia.com/gpu: 1}", "{cpu: 1}"))
        assert run_check([str(path)], Options(allow_hub=False)).containers == [], image
