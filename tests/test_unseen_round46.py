"""Real public manifests kvlint had not seen (new-user pass 46, fixtures/collected: Tencent TKE's AI playbook
charts, StackHPC's Azimuth LLM chart, homelab and proof-of-concept vLLM Deployments). What a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.engines.shell import commands
from kvlint.pipeline import Options, run_check, volume_location

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
TKE = COLLECTED / "trees" / "tke-ai-playbook" / "helm-charts"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


def _run(*paths: Path, **kw: object):  # type: ignore[no-untyped-def]
    return run_check([str(p) for p in paths], Options(allow_hub=False, **kw))  # type: ignore[arg-type]


def _deployment(script: str) -> str:
    """A one-GPU Deployment whose container runs ``script`` with ``bash -c`` (a literal block scalar from line 12),
    probed on port 30000."""
    body = "".join(f"          {line}\n" for line in script.splitlines())
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: inference\n        image: vllm/vllm-openai:v0.8.5\n"
        "        command:\n        - /bin/bash\n        - -c\n        - |\n"
        + body
        + "        readinessProbe:\n"
        "          httpGet: {path: /health, port: 30000}\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


SCRIPT = (
    "set -e\n"
    "vllm serve /data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B{stray} \\\n"
    "  --served-model-name deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B \\\n"
    "  --max-num-seqs 1024 \\\n"
    "  --port 30000\n"
)


def test_an_unclosed_quote_in_the_engine_command_means_the_container_never_starts(tmp_path: Path) -> None:
    """TKE's llm-inference chart runs ``vllm serve /data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B" \\`` in a
    ``bash -c`` script: the stray ``"`` is never closed, so bash stops with "unexpected EOF while looking for
    matching" (exit 2) and vLLM never starts. kvlint's tolerant lexer ran the quote to the end of the script
    and read the model as the whole rest of it ('/data/...-1.5B --trust-remote-code --served-model-name ...
    --port 30000'), warned that this "model" had no config.json, and reported a false KV408 error (the probe's
    port 30000 "but vllm listens on 8000"), the --port 30000 being inside the quoted word. Now: a KV503 error at
    the quote, and nothing read from the broken command."""
    broken = tmp_path / "broken.yaml"
    broken.write_text(_deployment(SCRIPT.format(stray='"')))
    res = _run(broken)
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.severity == "error"
    assert d.loc is not None and d.loc.line == 15  # the script's second line, where the quote is
    assert 'the " at line 2 of the shell script is never closed' in d.message
    assert "unexpected EOF while looking for matching" in d.message and "status 2" in d.message
    assert not [d for d in res.diagnostics if d.rule in ("KV408", "KV502")]

    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(_deployment(SCRIPT.format(stray="")))
    res = _run(fixed)
    assert not [d for d in res.diagnostics if d.rule in ("KV503", "KV408")]
    (w,) = [c for c in res.containers if c.serving is not None]
    assert (
        w.serving.model is not None
        and w.serving.model.value == "/data/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"
    )


def test_the_lexer_marks_only_a_quote_the_script_never_closes() -> None:
    """The word an unclosed single or double quote runs to the end of the script carries the quote's offset; a
    closed quote, a quote inside the other kind, an escaped one and one in a comment do not."""

    def unclosed(script: str) -> list[int]:
        return [w.unclosed for cmd in commands(script, {}) for w in cmd if w.unclosed >= 0]

    assert unclosed('vllm serve "/m" --port 1') == []
    assert unclosed('echo "it\'s" \'say "hi"\' \\" # don\'t\nvllm serve m') == []
    assert unclosed('vllm serve /m" --port 1') == [13]
    assert unclosed("vllm serve 'm --port 1\nexit 0") == [11]
    assert unclosed('echo ok\nvllm serve m "') == [21]


@needs_helm
def test_tke_llm_inference_chart_is_an_error_not_a_wrong_model() -> None:
    """The chart itself, rendered as ``kvlint check CHART`` does."""
    res = _run(TKE / "llm-inference")
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.severity == "error" and "never closed" in d.message
    assert not [d for d in res.diagnostics if d.rule in ("KV408", "KV502")]


def _mounted(volume: str, mount_extra: str = "", model: str = "/data/model") -> str:
    """A 4-GPU Deployment serving ``model`` from the volume ``model`` (``volume``: its source, flow style) mounted
    at /data/model (``mount_extra``: more keys of the mount)."""
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: server\n        image: vllm/vllm-openai:v0.9.1\n"
        f"        command: [vllm, serve, {model}, -tp, '4', --max-model-len, '32768']\n"
        "        resources: {limits: {nvidia.com/gpu: 4}}\n"
        f"        volumeMounts: [{{name: model, mountPath: /data/model{mount_extra}}}]\n"
        f"      volumes: [{{name: model, {volume}}}]\n"
    )


@pytest.mark.parametrize(
    ("volume", "extra", "location"),
    [
        ("hostPath: {path: /data0/Qwen/Qwen3-32B}", "", "/data0/Qwen/Qwen3-32B"),
        (
            "persistentVolumeClaim: {claimName: ai-model}",
            ", subPath: Qwen/Qwen3-32B",
            "pvc://ai-model/Qwen/Qwen3-32B",
        ),
        ("nfs: {server: nas, path: /exports/models/Qwen3-32B}", "", "/exports/models/Qwen3-32B"),
    ],
)
def test_a_model_path_on_a_volume_named_after_the_model_is_sized(
    tmp_path: Path, volume: str, extra: str, location: str
) -> None:
    """TKE's vllm-single, vllm-multi, qwen3-32b-vllm and vllm-inference-tke charts serve ``vllm serve /data/model``
    with /data/model a volume: the hostPath ``/data0/Qwen/Qwen3-32B`` (or a PVC mounted with ``subPath:
    Qwen/Qwen3-32B``). kvlint looked only at ``/data/model``, which names nothing: KV502 "config.json not found",
    not sized. The volume's own path names the model as a container path would (KV505, the same rule as a
    ``/models/Qwen3-32B`` path or KServe's ``storageUri``)."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(_mounted(volume, extra))
    res = _run(manifest)
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (d,) = [d for d in res.diagnostics if d.rule == "KV505"]
    assert f"so /data/model is {location}, which kvlint cannot read" in d.message
    assert "catalogued Qwen/Qwen3-32B only" in d.message
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.model is not None and c.model.id == "Qwen/Qwen3-32B"


@pytest.mark.parametrize(
    ("volume", "extra"),
    [
        ("hostPath: {path: /data0/models}", ""),  # the host path names no model either
        ("persistentVolumeClaim: {claimName: qwen3-32b}", ""),  # only an object name: not taken
        ("persistentVolumeClaim: {claimName: ai-model}", ", subPathExpr: $(MODEL)"),  # the kubelet expands it
        ("emptyDir: {}", ""),
        ("configMap: {name: Qwen3-32B}", ""),
    ],
)
def test_a_volume_that_does_not_name_the_model_leaves_it_unknown(
    tmp_path: Path, volume: str, extra: str
) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(_mounted(volume, extra))
    res = _run(manifest)
    assert [d for d in res.diagnostics if d.rule == "KV502"]
    assert not [d for d in res.diagnostics if d.rule == "KV505"]


def test_the_deepest_mount_holding_the_path_decides() -> None:
    """A path under two mounts is on the deeper one; the part of the path below the mount follows the volume's."""
    pod = {
        "volumes": [
            {"name": "a", "hostPath": {"path": "/srv/Qwen3-8B"}},
            {"name": "b", "hostPath": {"path": "/srv/weights"}},
        ]
    }
    container = {
        "volumeMounts": [{"name": "a", "mountPath": "/data"}, {"name": "b", "mountPath": "/data/model/"}]
    }
    got = volume_location("/data/model/Qwen3-32B/", container, pod)
    assert got is not None and got[0] == "/srv/weights/Qwen3-32B"
    got = volume_location("/data/other", container, pod)
    assert got is not None and got[0] == "/srv/Qwen3-8B/other"
    assert volume_location("/datax", container, pod) is None  # not below /data
    assert volume_location("relative/path", container, pod) is None


def test_the_annotation_still_wins_over_the_volume(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    text = _mounted("hostPath: {path: /data0/Qwen/Qwen3-32B}").replace(
        "metadata: {name: m}", "metadata: {name: m}", 1
    )
    text = text.replace(
        "  template:\n", "  template:\n    metadata: {annotations: {kvlint.io/model: Qwen/Qwen3-8B}}\n"
    )
    manifest.write_text(text)
    res = _run(manifest)
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.model is not None and c.model.id == "Qwen/Qwen3-8B"
    assert not [d for d in res.diagnostics if d.rule == "KV505"]


@needs_helm
def test_tke_charts_serving_a_mounted_model_are_sized() -> None:
    for chart, model in (
        ("vllm-single", "Qwen/Qwen3-32B"),
        ("qwen3-32b-vllm", "Qwen/Qwen3-32B"),
        ("vllm-inference-tke", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        ("vllm-multi", "deepseek-ai/DeepSeek-V3-0324"),
    ):
        res = _run(TKE / chart)
        leaders = [c for c in res.containers if c.serving is not None and c.model is not None]
        assert leaders and {c.model.id for c in leaders} == {model}, chart
        assert not [d for d in res.diagnostics if d.rule == "KV502"], chart


def _lws(leader_image: str, leader_script: str) -> str:
    """A two-pod LeaderWorkerSet whose worker joins the leader's Ray cluster with vLLM's multi-node-serving.sh."""
    return (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: pd}\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n      spec:\n        containers:\n"
        f"        - name: leader\n          image: {leader_image}\n          command: [sh, -c]\n"
        f"          args: ['{leader_script}']\n          resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
        "    workerTemplate:\n      spec:\n        containers:\n        - name: worker\n"
        f"          image: {leader_image}\n          command: [sh, -c]\n"
        "          args: ['bash /workspace/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)']\n"
        "          resources: {limits: {nvidia.com/gpu: 8}}\n"
    )


def test_a_worker_whose_leader_runs_no_engine_kvlint_knows_does_not_point_at_findings_it_has_not(
    tmp_path: Path,
) -> None:
    """TKE's deepseek-r1-dynamo-vllm-pd chart: the LWS leader runs Dynamo 0.3's ``dynamo serve
    components.prefill_worker:PrefillWorker -f ./configs/configs.yaml`` on a Dynamo image, which kvlint does not
    take for a serving engine, so it reports nothing on the leader; each worker's note still said the leader's
    command "cannot be read either (see its findings)" and to "lint the leader together with its workers", which
    the user had done. The note now says what the leader runs and how to check that engine; a leader kvlint
    reads as an engine it cannot parse keeps the old note."""
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(
        _lws(
            "registry.example.com/dynamo:v0.3.0",
            "bash /workspace/multi-node-serving.sh leader; dynamo serve graphs.graphs:Frontend -f cfg.yaml",
        )
    )
    (d,) = [d for d in _run(unknown).diagnostics if d.rule == "KV503"]
    assert "see its findings" not in d.message
    assert "runs no vLLM, SGLang or TGI command kvlint recognises" in d.message
    assert "dynamo serve graphs.graphs:Frontend -f cfg.yaml" in d.message
    assert "kvlint plan --" in (d.fix or "") and "lint the leader together" not in (d.fix or "")

    unread = tmp_path / "unread.yaml"
    unread.write_text(_lws("vllm/vllm-openai:v0.10.2", "vllm serve $MODEL $EXTRA_ARGS"))
    notes = [d for d in _run(unread).diagnostics if d.rule == "KV503"]
    assert any("cannot be read either (see its findings)" in d.message for d in notes)
    assert any(d.container == "leader" for d in notes)  # the findings it points at


def test_kv501_says_what_in_the_manifest_did_not_name_the_gpu(tmp_path: Path) -> None:
    """des-chatbot pins its pod with ``nodeSelector: {accelerator: nvidia-gtx-2080ti}``, a label of its own cluster.
    KV501 said "kvlint cannot tell which GPU this pod lands on" and to "add a nodeSelector", beside a nodeSelector
    that names the GPU; why the label decided nothing (kvlint does not read it) was only in the JSON report's
    ``accelerator_how``. The text now says it, as for a GPU model outside the catalogue or a resource that names
    only the vendor; a pod with no such fact keeps the bare sentence."""
    res = _run(COLLECTED / "TobiasEdman__des-chatbot__k8s__vllm-deployment.yaml")
    (d,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert d.message.startswith(
        "kvlint cannot tell which GPU this pod lands on: label accelerator=nvidia-gtx-2080ti is not one kvlint reads"
    )
    assert "planned on kvlint's default fleet" in d.message

    plain = tmp_path / "plain.yaml"
    plain.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: s\n        image: vllm/vllm-openai:v0.9.1\n"
        "        command: [vllm, serve, Qwen/Qwen3-8B]\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = [d for d in _run(plain).diagnostics if d.rule == "KV501"]
    assert d.message.startswith("kvlint cannot tell which GPU this pod lands on; planned on")


AZIMUTH = COLLECTED / "trees" / "stackhpc-azimuth-llm" / "charts" / "azimuth-llm"


@pytest.mark.parametrize(
    ("image", "extra", "error"),
    [
        ("ghcr.io/stackhpc/vllm-cpu:v0.11.0", "", False),
        ("vllm/vllm-openai:v0.11.0", "", True),
        # vLLM picks its platform from the build ("cpu" in its version), not --device: the CUDA image still
        # finds no device
        ("vllm/vllm-openai:v0.8.5", ", --device, cpu", True),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", ", --device, cpu", True),
    ],
)
def test_a_zero_gpu_limit_is_an_error_only_for_a_gpu_build(
    tmp_path: Path, image: str, extra: str, error: bool
) -> None:
    """StackHPC's Azimuth chart, with ``api.gpus: 0`` (its CI values), runs its vllm-cpu image and renders
    ``nvidia.com/gpu: 0``. KV405 called that an error ("gives the container no GPU ... vllm finds no device at
    start-up") while KV501 said, rightly, that the image is a CPU build: a CPU build needs no GPU. A CUDA image
    with a zero limit stays an error."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n      - name: api\n        image: {image}\n"
        f"        args: [--model, HuggingFaceTB/SmolLM2-135M-Instruct, --max-model-len, '100'{extra}]\n"
        "        resources: {limits: {nvidia.com/gpu: 0}}\n"
    )
    found = [d for d in _run(manifest).diagnostics if d.rule == "KV405"]
    assert bool(found) is error
    if error:
        assert found[0].severity == "error"
        assert ("--device cpu does not make" in found[0].message) is bool(extra)


@needs_helm
def test_azimuth_chart_with_its_ci_values_has_no_false_error() -> None:
    res = _run(AZIMUTH, helm_values=(str(AZIMUTH / "ci" / "default-values.yaml"),))
    assert not [d for d in res.diagnostics if d.severity == "error"]
    assert any(d.rule == "KV501" and "CPU build" in d.message for d in res.diagnostics)


def _installing(image: str, install: str) -> str:
    """A 4-GPU Pod whose ``bash -c`` script runs ``install`` and then vLLM's OpenAI server module."""
    script = f"{install}\npython3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4\n"
    body = "".join(f"      {line}\n" for line in script.splitlines())
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        f"    image: {image}\n    command: [/bin/bash, -c]\n    args:\n    - |\n{body}"
        "    resources: {limits: {nvidia.com/gpu: 4}}\n"
    )


@pytest.mark.parametrize(
    ("image", "install", "version"),
    [
        ("nvcr.io/nvidia/pytorch:24.01-py3", "pip install vllm==0.6.6 --quiet", "0.6.6"),
        ("nvcr.io/nvidia/pytorch:24.01-py3", 'python3 -m pip install "vllm==0.8.5.post1"', "0.8.5.post1"),
        ("nvcr.io/nvidia/pytorch:24.01-py3", "pip install -U vllm", None),  # whatever is newest that day
        ("nvcr.io/nvidia/pytorch:24.01-py3", "pip install sglang==0.4.6", None),  # another engine
        # pip replaces the release a release image carried: the pinned one runs, not the tag's
        ("vllm/vllm-openai:v0.10.2", "pip install vllm==0.6.6", "0.6.6"),
        ("vllm/vllm-openai:v0.10.2", "pip install -U vllm==0.8.5 --no-deps", "0.8.5"),
        ("vllm/vllm-openai:v0.10.2", "uv pip install --system vllm==0.8.5", "0.8.5"),
        ("vllm/vllm-openai:v0.10.2", "pip install vllm==0.8.5 && echo installed", "0.8.5"),
        ("vllm/vllm-openai:v0.10.2", 'pip install "vllm>=0.6"', "0.10.2"),  # satisfied: pip changes nothing
        ("vllm/vllm-openai:v0.10.2", "pip install sglang==0.4.6", "0.10.2"),  # another engine
        (
            "vllm/vllm-openai:v0.10.2",
            "sudo -E pip3 install VLLM==0.8.5",
            "0.8.5",
        ),  # names are case-insensitive
        # not an install into the environment the engine runs from: the image's release still runs
        ("vllm/vllm-openai:v0.10.2", "echo pip install vllm==0.6.6", "0.10.2"),
        ("vllm/vllm-openai:v0.10.2", "pip install --target /opt/old vllm==0.6.6", "0.10.2"),
        ("vllm/vllm-openai:v0.10.2", "pip install --dry-run vllm==0.6.6", "0.10.2"),
        ("vllm/vllm-openai:v0.10.2", "pip install -r vllm==0.6.6", "0.10.2"),  # a requirements file so named
    ],
)
def test_the_release_a_script_installs_is_the_one_it_runs(
    tmp_path: Path, image: str, install: str, version
) -> None:  # type: ignore[no-untyped-def]
    """deepaksatna's privileged benchmark Pod runs ``pip install vllm==0.6.6 --quiet`` on NGC's PyTorch 24.01 image,
    then ``python3 -m vllm.entrypoints.openai.api_server``. kvlint read the tag 24.01-py3, found no vLLM release in
    it, and read and planned the command with the newest release it models (KV208 info "kvlint assumed 0.34.0").
    The release the script pins takes --engine-version's place, as a RayService's ``runtime_env.pip`` pin does,
    and the tag's place on the engine's own release image (pip uninstalls the release the image carried first)."""
    manifest = tmp_path / "p.yaml"
    manifest.write_text(_installing(image, install))
    res = _run(manifest)
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version == version
    assert bool([d for d in res.diagnostics if d.rule == "KV208"]) is (version is None)


def test_deepaksatna_privileged_pod_is_read_with_the_vllm_it_installs() -> None:
    res = _run(
        COLLECTED / "deepaksatna__Agentic-AI-Reasoning-and-Benchmarking-Framework__k8s__vllm-privileged.yaml"
    )
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version == "0.6.6"
    assert not [d for d in res.diagnostics if d.rule == "KV208"]


def test_a_pin_after_the_engine_or_in_another_container_is_not_the_release_it_runs(tmp_path: Path) -> None:
    """Only an install the script runs before the engine command changes the release that command runs: one after
    it (the engine runs in the foreground until it exits) or in another container (its own filesystem) does not."""
    after = tmp_path / "after.yaml"
    after.write_text(
        _installing("vllm/vllm-openai:v0.10.2", "true").replace(
            "--tensor-parallel-size 4\n", "--tensor-parallel-size 4\n      pip install vllm==0.6.6\n"
        )
    )
    other = tmp_path / "other.yaml"
    other.write_text(
        _installing("vllm/vllm-openai:v0.10.2", "true")
        + "  - name: side\n    image: python:3.12\n    command: [sh, -c, 'pip install vllm==0.6.6 && sleep infinity']\n"
    )
    for manifest in (after, other):
        res = _run(manifest)
        (c,) = [c for c in res.containers if c.serving is not None and c.serving.container["name"] == "vllm"]
        assert c.serving.version == "0.10.2", manifest.name


def test_an_ansi_c_quote_with_an_escaped_quote_is_closed() -> None:
    """bash's ``$'...'`` (ANSI-C quoting) lets a backslash escape the next character, a ``'`` included:
    ``--served-model-name $'it\\'s'`` is one closed word (``bash -n`` accepts it). The reader took ``\\'`` as
    the end of a plain ``'...'`` and the last ``'`` as a quote never closed: a false KV503 error, "the shell
    stops with a syntax error before running vllm"."""

    def unclosed(script: str) -> list[int]:
        return [w.unclosed for cmd in commands(script, {}) for w in cmd if w.unclosed >= 0]

    def texts(script: str) -> list[str]:
        return [w.text for cmd in commands(script, {}) for w in cmd]

    assert unclosed("vllm serve m --served-model-name $'it\\'s' --port 1") == []
    assert texts("vllm serve m --served-model-name $'it\\'s\\tq'") == [
        "vllm",
        "serve",
        "m",
        "--served-model-name",
        "it's\tq",
    ]
    assert unclosed("vllm serve m --served-model-name $'it\\'s") == [34]  # never closed: still an error
    assert texts("vllm serve m --served-model-name \"$'it\\'s\"")[-1] == "$'it\\'s"  # none inside "..."


def test_a_volume_path_is_never_opened_by_check_or_the_webhook(tmp_path: Path) -> None:
    """A model path on a hostPath volume is sized from the volume path's name alone: neither ``kvlint check`` (whose
    local paths are allowed) nor the admission webhook opens, lists or stats the directory the manifest names, even
    when it exists on the machine running kvlint and holds a config.json (here with absurd values that would show if
    it were read)."""
    import json
    import os
    import sys

    from kvlint.webhook.review import lint_review, parse_review, webhook_options

    host = tmp_path / "Qwen3-8B"
    host.mkdir()
    (host / "config.json").write_text(
        json.dumps({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 99999})
    )
    pod = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "m"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.8.5",
                            "command": ["sh", "-c", "vllm serve /data/model --max-model-len 4096"],
                            "resources": {"limits": {"nvidia.com/gpu": 1}},
                            "volumeMounts": [{"name": "d", "mountPath": "/data/model"}],
                        }
                    ],
                    "volumes": [{"name": "d", "hostPath": {"path": str(host)}}],
                }
            }
        },
    }
    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps(pod))
    review = json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "name": "m",
                "namespace": "s",
                "operation": "CREATE",
                "userInfo": {"username": "alice"},
                "object": pod,
                "oldObject": None,
                "dryRun": False,
            },
        }
    )
    touched: list[str] = []
    auditing = [False]

    def audit(event: str, args: tuple) -> None:  # type: ignore[type-arg]
        if auditing[0] and event in ("open", "os.listdir", "os.scandir") and args and args[0] is not None:
            if isinstance(args[0], (str, bytes, os.PathLike)):
                touched.append(os.fsdecode(args[0]))

    sys.addaudithook(audit)  # hooks cannot be removed; this one records only while auditing[0] is set
    auditing[0] = True
    try:
        checked = run_check([str(manifest)], Options(allow_hub=False))
        reviewed = lint_review(parse_review(review), webhook_options())
    finally:
        auditing[0] = False
    assert not [p for p in touched if p.startswith(str(host))], touched
    for res in (checked, reviewed):
        (c,) = [c for c in res.containers if c.serving is not None]
        assert c.model is not None and c.model.hidden_size != 99999
        assert any(d.rule == "KV505" and str(host) in d.message for d in res.diagnostics)
