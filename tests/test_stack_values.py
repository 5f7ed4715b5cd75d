"""vLLM production-stack chart values read as the engine Deployments the chart renders
(:mod:`kvlint.workloads.stack_values`).

Before this reader a ``servingEngineSpec.modelSpec`` values file got one KV002 ("render the chart first") and no
workload. The expected positions are found in the fixture's text (the line of ``tensorParallelSize:``, ...), not
copied from kvlint's output; the verdicts come from the rules on the built pods (the memory model is the one
every manifest gets).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kvlint.load import load_paths
from kvlint.pipeline import Options, run_check
from kvlint.render import load_inputs
from kvlint.sizing import summarise, unread
from kvlint.workloads import find_workloads
from kvlint.workloads.stack_values import CHART_COMMIT, MAX_MODEL_SPECS, go_text

VALUES = Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "values"
TP2 = VALUES / "vllm-project__production-stack__tutorials__assets__values-25-v100-multi-gpu-tp2.yaml"
TWO = VALUES / "vllm-project__production-stack__tutorials__assets__values-04-multiple-models.yaml"
OFFLINE = Options(allow_hub=False)


def _line_of(path: Path | str, text: str, nth: int = 0) -> int:
    """1-based line of the ``nth`` line of ``path`` that contains ``text`` (outside comments)."""
    hits = [
        i + 1 for i, line in enumerate(Path(path).read_text().splitlines()) if text in line.split("#", 1)[0]
    ]
    return hits[nth]


def _write(tmp: Path, name: str, body: str) -> str:
    p = tmp / name
    p.write_text(body)
    return str(p)


def test_tp2_values_become_the_deployment_the_chart_renders() -> None:
    """The V100 TP=2 tutorial values: one Deployment whose pod has what deployment-vllm-multi.yaml writes,
    each value located at the values line it comes from."""
    (w,) = find_workloads(load_paths([str(TP2)]).documents)
    data = yaml.safe_load(TP2.read_text())["servingEngineSpec"]["modelSpec"][0]
    assert (w.kind, w.name, w.replicas) == ("Deployment", "RELEASE-qwen7b-deployment-vllm", 1)
    (c,) = w.pod_spec["containers"]
    assert c["image"] == f"{data['repository']}:{data['tag']}"
    cmd = list(c["command"])
    assert cmd[:3] == ["vllm", "serve", data["modelURL"]]  # not lmcache/vllm-openai: plain `vllm`
    i = cmd.index("--tensor-parallel-size")
    assert cmd[i + 1] == str(data["vllmConfig"]["tensorParallelSize"])
    assert c["command"].locs[i].line == _line_of(TP2, "tensorParallelSize:")
    assert cmd[-1] == "--enforce-eager" and c["command"].locs[-1].line == _line_of(TP2, '- "--enforce-eager"')
    assert c["command"].locs[2].line == _line_of(TP2, "modelURL:")
    limits = c["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == str(data["requestGPU"])
    assert limits.locs["nvidia.com/gpu"].line == _line_of(TP2, "requestGPU:")
    # tensorParallelSize set: the chart mounts a memory-backed /dev/shm of shmSize
    (shm,) = [v for v in w.pod_spec["volumes"] if v["name"] == "shm"]
    assert shm["emptyDir"]["medium"] == "Memory" and shm["emptyDir"]["sizeLimit"] == data["shmSize"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["VLLM_USE_V1"] == "0"  # vllmConfig.v0: "1"
    assert env["VLLM_ENABLE_CUDA_COMPATIBILITY"] == "1"
    assert w.pod_spec["runtimeClassName"] == "nvidia"
    terms = w.pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == data["nodeSelectorTerms"]


def test_values_file_is_sized_not_reported_unread() -> None:
    """The values file is linted and sized like a manifest: no KV002, one KV504 info (read on the assumption
    that this chart version renders it) naming the chart template and commit, and the summary counts its
    container (sized), not a file not read."""
    result = run_check([str(TP2)], OFFLINE)
    assert not [d for d in result.diagnostics if d.rule == "KV002"]
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.severity == "info"
    assert "deployment-vllm-multi.yaml" in note.message and CHART_COMMIT[:12] in note.message
    assert note.loc is not None and note.loc.line == _line_of(TP2, "modelSpec:")
    summary = summarise(result)
    assert (summary.serving, summary.sized, summary.not_read) == (1, 1, 0)
    assert unread(result) == []


def test_two_models_are_two_deployments() -> None:
    ws = find_workloads(load_paths([str(TWO)]).documents)
    models = yaml.safe_load(TWO.read_text())["servingEngineSpec"]["modelSpec"]
    assert [w.name for w in ws] == [f"RELEASE-{m['name']}-deployment-vllm" for m in models]
    for n, (w, m) in enumerate(zip(ws, models, strict=True)):
        (c,) = w.pod_spec["containers"]
        assert c["command"][2] == m["modelURL"]
        assert c["command"].locs[2].line == _line_of(TWO, "modelURL:", n)
        cmd = list(c["command"])
        assert cmd[cmd.index("--gpu_memory_utilization") + 1] == str(m["vllmConfig"]["gpuMemoryUtilization"])
    result = run_check([str(TWO)], OFFLINE)
    assert summarise(result).serving == 2
    assert not [d for d in result.diagnostics if d.rule == "KV002"]


_MISMATCH = """\
# made up for a test: tensor parallel 2 on the 1 GPU the entry requests, and a context longer than
# Llama 3.1 8B's 131072 positions
servingEngineSpec:
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.8.5"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    requestCPU: 10
    requestMemory: "16Gi"
    requestGPU: 1
    vllmConfig:
      tensorParallelSize: 2
      maxModelLen: 262144
"""


def test_gpu_tp_mismatch_and_oversize_context_are_caught_at_the_values_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "values.yaml", _MISMATCH)
    result = run_check([path], OFFLINE)
    errors = {d.rule: d for d in result.diagnostics if d.severity == "error"}
    assert "KV403" in errors and "KV201" in errors
    assert errors["KV403"].loc is not None and errors["KV403"].loc.line == _line_of(
        path, "tensorParallelSize:"
    )
    assert errors["KV201"].loc is not None and errors["KV201"].loc.line == _line_of(path, "maxModelLen:")
    assert "262144" in errors["KV201"].message


def test_the_same_values_in_a_streamed_run(tmp_path: Path) -> None:
    """The CLI's run over a directory, with one job and with two (the streaming path), reads the values the
    same way: identical reports, three serving containers."""
    _write(tmp_path, "a.yaml", _MISMATCH)
    shutil.copy(TWO, tmp_path / "b.yaml")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    outs = [
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kvlint",
                "check",
                "--offline",
                "--no-config",
                "--jobs",
                jobs,
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        for jobs in ("1", "2")
    ]
    assert outs[0] == outs[1]
    assert "sized 3 of 3 serving containers" in outs[0] and "KV403" in outs[0]


def _entry(**over: str) -> str:
    fields = {
        "name": '"m"',
        "repository": '"vllm/vllm-openai"',
        "tag": '"v0.8.5"',
        "modelURL": '"meta-llama/Llama-3.1-8B-Instruct"',
        "requestCPU": "1",
        "requestMemory": '"1Gi"',
        "requestGPU": "1",
    }
    fields.update(over)
    lines = [f"    {k}: {v}" for k, v in fields.items() if v != "DROP"]
    return "  - " + "\n".join(lines).lstrip() + "\n"


@pytest.mark.parametrize(
    ("body", "why", "at"),
    [
        ("servingEngineSpec:\n  modelSpec:\n    llama: {name: x}\n", "wants an array", "llama:"),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry() + '    vllmConfig:\n      maxModelLen: "4096"\n',
            "maxModelLen is a string where the values.schema.json of chart vllm-stack 0.1.12 wants an integer",
            "maxModelLen:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry(replicaCount='"two"'),
            "replicaCount is a string",
            "replicaCount:",
        ),
        ("servingEngineSpec:\n  modelSpec:\n  - 3\n", "is not a mapping", "- 3"),
        (
            "servingEngineSpec:\n  modelSpec:\n"
            + _entry()
            + "    vllmConfig:\n      extraArgs:\n        - --max-num-seqs\n"
            "        - 8\n",
            "vllmConfig.extraArgs[1] is an integer where the values.schema.json of chart vllm-stack 0.1.12 wants a string",
            "- 8",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    vllmConfig:\n      runner: generate\n",
            "vllmConfig.runner is 'generate', not one of auto, pooling",
            "runner:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry(tag="DROP"),
            "Required value 'modelSpec.tag'",
            "- name:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry(enabled="false"),
            "every servingEngineSpec.modelSpec entry has enabled: false",
            "modelSpec:",
        ),
        (
            "servingEngineSpec:\n  enableEngine: false\n  modelSpec:\n" + _entry(),
            "enableEngine is off",
            "enableEngine:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    raySpec:\n      enabled: true\n",
            "raySpec.enabled",
            "raySpec:",
        ),
        # nulls inside a modelSpec entry are not merged away (the list replaces the chart's): the schema refuses
        # them ("Invalid type. Expected: string, given: null"), as helm template 0.1.12 does
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry(modelURL="null"),
            "modelURL is a null where the values.schema.json of chart vllm-stack 0.1.12 wants a string",
            "modelURL:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n"
            + _entry()
            + "    vllmConfig:\n      tensorParallelSize: ~\n",
            "vllmConfig.tensorParallelSize is a null",
            "tensorParallelSize:",
        ),
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    vllmConfig:\n",
            "vllmConfig is a null where",
            "vllmConfig:",
        ),
        # `hasKey $modelSpec.vllmConfig "v0"` on a missing vllmConfig: helm template fails
        (
            "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    lmcacheConfig:\n      enabled: true\n",
            "lmcacheConfig.enabled but no vllmConfig",
            "enabled: true",
        ),
        # a null deletes the chart's sharedPvcStorage map: `.Values.sharedPvcStorage.enabled` is a nil pointer
        (
            "sharedPvcStorage: null\nservingEngineSpec:\n  modelSpec:\n" + _entry(),
            "sharedPvcStorage is not a mapping",
            "sharedPvcStorage:",
        ),
        # the chart writes the shared PVC's mount without a volumeMounts key: a YAML parse error in helm
        (
            "sharedPvcStorage:\n  enabled: true\nservingEngineSpec:\n  modelSpec:\n" + _entry(),
            "has none of pvcStorage, chatTemplate, extraVolumeMounts or vllmConfig.tensorParallelSize",
            "enabled: true",
        ),
    ],
)
def test_values_kvlint_cannot_build_get_kv002_at_the_cause(
    tmp_path: Path, body: str, why: str, at: str
) -> None:
    """Hostile or unbuildable shapes: one KV002 warning saying why, at the line that decides it, no workload,
    no traceback."""
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    result = run_check([path], OFFLINE)
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert kv002.severity == "warning" and why in kv002.message, kv002.message
    assert "is a Helm values file" in kv002.message  # counted as "Helm values file not rendered"
    assert kv002.loc is not None and kv002.loc.line == _line_of(path, at)
    assert result.serving == 0
    assert not [d for d in result.diagnostics if d.rule == "KV503"]


def test_values_helm_renders_are_built_as_it_renders_them(tmp_path: Path) -> None:
    """Shapes helm template 0.1.12 renders that kvlint refused or built differently: ``requestCPU: 0`` and
    ``requestMemory: ""`` pass ``required`` (sprig's quote prints them ``"0"`` and ``""``; only a missing value
    fails), ``replicaCount: 2.0`` renders ``replicas: 2`` (Helm holds every number as a float64), and a probe
    port written as a string renders bare (``port: 8080``, an integer)."""
    body = 'servingEngineSpec:\n  livenessProbe:\n    httpGet:\n      port: "8080"\n  modelSpec:\n'
    body += _entry(requestCPU="0", requestMemory='""', replicaCount="2.0")
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    result = run_check([path], OFFLINE)
    assert result.serving == 1
    assert not [d for d in result.diagnostics if d.rule in ("KV002", "KV503")]
    (w,) = find_workloads(load_paths([path]).documents)
    assert w.replicas == 2
    (c,) = w.pod_spec["containers"]
    assert c["resources"]["requests"]["cpu"] == "0" and c["resources"]["requests"]["memory"] == ""
    assert c["livenessProbe"]["httpGet"]["port"] == 8080


def test_a_ray_entry_beside_a_deployment_is_counted_not_read(tmp_path: Path) -> None:
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry(name='"plain"') + _entry(name='"ray"')
    body += "    raySpec:\n      enabled: true\n"
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    result = run_check([path], OFFLINE)
    assert result.serving == 1
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "raySpec.enabled" in note.message and note.loc is not None
    assert note.loc.line == _line_of(path, "raySpec:")
    assert [why for _, why in unread(result)] == ["operator settings not read"]


def test_a_million_entries_are_refused_within_the_limits(tmp_path: Path) -> None:
    """10^6 ``modelSpec`` entries: the loader's limits hold the file; the reader builds nothing beyond
    :data:`MAX_MODEL_SPECS` and says so."""
    path = _write(tmp_path, "values.yaml", "servingEngineSpec:\n  modelSpec:\n" + "  - {}\n" * 10**6)
    result = run_documents_only(path)
    (kv002,) = [f for f in result if f.rule == "KV002"]
    assert f"more than the {MAX_MODEL_SPECS}" in kv002.message and "1,000,000" in kv002.message


def test_entries_copying_a_large_shared_spec_are_refused(tmp_path: Path) -> None:
    """Every engine pod holds servingEngineSpec's shared settings: 256 entries beside 40,000 shared env variables
    (a 1.4 MB values file) took 28 s and 0.5 GB to lint, each entry's pod analysed with all of them. Past
    MAX_COPIED_VALUES copied values the file is refused (KV002, not read, as above MAX_MODEL_SPECS); the same
    entries beside a few shared variables, and one entry beside all of them, are built."""
    from kvlint.workloads.base import MAX_COPIED_VALUES

    def values(entries: int, env: int) -> str:
        shared = "".join(f"  - {{name: E{j}, value: v{j}}}\n" for j in range(env))
        entry = (
            "  - {name: m%d, repository: vllm/vllm-openai, tag: v0.6.3, modelURL: Qwen/Qwen2.5-7B-Instruct, "
            "requestCPU: 1, requestMemory: 1Gi, requestGPU: 1}\n"
        )
        models = "".join(entry % i for i in range(entries))
        return f"servingEngineSpec:\n  env:\n{shared}  modelSpec:\n{models}"

    env = MAX_COPIED_VALUES // 3  # three values a variable: its mapping, name and value
    path = _write(tmp_path, "big.yaml", values(3, env))
    (kv002,) = [f for f in run_documents_only(path) if f.rule == "KV002"]
    assert f"more than the {MAX_COPIED_VALUES:,} values" in kv002.message, kv002.message
    assert kv002.loc is not None and kv002.loc.line == _line_of(path, "modelSpec:")
    assert len(find_workloads(load_paths([_write(tmp_path, "one.yaml", values(1, env))]).documents)) == 1
    assert len(find_workloads(load_paths([_write(tmp_path, "few.yaml", values(200, 4))]).documents)) == 200


def run_documents_only(path: str) -> list:
    """The load stage's findings and the workloads stage's for ``path`` (the workloads must be none)."""
    loaded = load_inputs([path])
    assert find_workloads(loaded.documents) == []
    return loaded.findings


@pytest.mark.parametrize(
    ("value", "text"),
    # Go's fmt.Sprint(float64): strconv 'g' with the shortest digits, exponent form from 1e+06 / below 1e-04
    [
        (4096, "4096"),
        (131072, "131072"),
        (1000000, "1e+06"),
        (1048576, "1.048576e+06"),
        (0.9, "0.9"),
        (0.00001, "1e-05"),
        (0.0001, "0.0001"),
        (True, "true"),
        (None, ""),
        ("0.8", "0.8"),
        (2.0, "2"),
    ],
)
def test_values_print_as_helm_prints_them(value: object, text: str) -> None:
    assert go_text(value) == text


def test_other_values_files_keep_their_kv002() -> None:
    """Values of other charts are still reported, not read."""
    path = VALUES / "vllm-project__vllm__examples__online_serving__chart-helm__values.yaml"
    kv002 = [f for f in load_inputs([str(path)]).findings if f.rule == "KV002"]
    assert len(kv002) == 1 and "render" in kv002[0].message + (kv002[0].fix or "")


#: vLLM production-stack's chart at CHART_COMMIT, packaged (fixtures/helm/SOURCE.md): what `helm template` renders
CHART = (
    Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "production-stack" / "vllm-stack-0.1.12.tgz"
)

#: values written for this comparison (made up), with the shapes the corpus files do not have: LMCache with PD
#: and NIXL, HAMi and MIG resources, limits, global and per-model tolerations, affinity, an init container,
#: probes set in part, chat template and revision, keda, a string requestGPU
_RICH = """\
# made up for a test: shapes the tutorial values do not have
sharedPvcStorage:
  enabled: true
servingEngineSpec:
  runtimeClassName: ""
  containerPort: 8080
  startupProbe:
    failureThreshold: 120
  tolerations:
    - {key: gpu, operator: Exists, effect: NoSchedule}
  env:
    - {name: GLOBAL_ENV, value: "1"}
  configs:
    VLLM_ATTENTION_BACKEND: FLASHINFER
    VLLM_ALLOW_LONG_MAX_MODEL_LEN: "1"
  modelSpec:
  - name: "pd"
    repository: "lmcache/vllm-openai"
    tag: "v0.3.1"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    modelRevision: "main"
    chatTemplate: "chat.jinja"
    pvcStorage: "50Gi"
    pvcExistingClaimName: "models"
    replicaCount: 2
    requestCPU: 4
    requestMemory: "30Gi"
    requestGPU: "2"
    requestGPUType: "nvidia.com/mig-3g.40gb"
    requestGPUMem: "3000"
    limitMemory: "60Gi"
    runtimeClassName: "nvidia"
    tolerations:
      - {key: model, operator: Exists}
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions:
                - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A100-SXM4-80GB]}
    shmSize: "8Gi"
    vllmConfig:
      enableChunkedPrefill: true
      enablePrefixCaching: true
      maxModelLen: 1000000
      tensorParallelSize: 2
      gpuMemoryUtilization: 0.85
      maxNumSeqs: 64
      extraArgs: ["--enforce-eager", "--max-num-batched-tokens", "8192"]
    lmcacheConfig:
      enabled: true
      kvRole: "kv_consumer"
      enablePD: true
      nixlRole: "receiver"
      nixlBufferSize: "1073741824"
      cpuOffloadingBufferSize: 20
      instanceId: "pd-0"
    hf_token: {secretName: hf, secretKey: token}
    envFromSecret: {name: more-env}
    env:
      - {name: MODEL_ENV, value: "2"}
  - name: "off"
    enabled: false
    repository: "vllm/vllm-openai"
    tag: "v0.8.5"
    modelURL: "x"
  - name: "small"
    repository: "vllm/vllm-openai"
    tag: "v0.8.5"
    modelURL: "Qwen/Qwen2.5-7B-Instruct"
    requestCPU: 2
    requestMemory: "8Gi"
    requestGPU: 1
    tolerationsPolicy: override
    tolerations:
      - {key: only, operator: Exists}
    nodeName: "node-1"
    nodeSelectorTerms:
      - matchExpressions: [{key: a, operator: In, values: [b]}]
    keda:
      enabled: true
    chatTemplate: "t.jinja"
    chatTemplateConfigMap: "{{ messages }}"
    vllmConfig:
      v0: "1"
      dtype: half
"""


@pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm on PATH (the dev extras install it)")
def test_built_pods_match_what_helm_renders(tmp_path: Path) -> None:
    """The engine pods kvlint builds equal what ``helm template`` renders from the chart at CHART_COMMIT:
    container image, command, env, envFrom, resources, probes and mounts, the pod's runtime class, affinity,
    tolerations, node name, volumes and host namespaces, and the replicas (the release name aside; what
    :func:`stack_values_workloads` says it does not build is not compared)."""
    rich = _write(tmp_path, "rich.yaml", _RICH)
    mismatch = _write(tmp_path, "mismatch.yaml", _MISMATCH)
    edge = "# made up for a test: values helm renders as it prints them\nservingEngineSpec:\n"
    edge += '  readinessProbe:\n    periodSeconds: 7.0\n    httpGet:\n      port: "8080"\n  modelSpec:\n'
    edge += _entry(requestCPU="0", requestMemory='""', replicaCount="2.0")
    for values in [
        *sorted(VALUES.glob("vllm-project__production-stack__*.yaml")),
        rich,
        mismatch,
        _write(tmp_path, "edge.yaml", edge),
    ]:
        out = subprocess.run(
            ["helm", "template", "release", str(CHART), "-f", str(values)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.replace("release-", "RELEASE-")
        rendered = [
            d
            for d in yaml.safe_load_all(out)
            if d and d.get("kind") == "Deployment" and d["metadata"]["name"].endswith("deployment-vllm")
        ]
        built = find_workloads(load_paths([str(values)]).documents)
        assert [d["metadata"]["name"] for d in rendered] == [w.name for w in built], values
        for d, w in zip(rendered, built, strict=True):
            assert d["spec"].get("replicas") == w.replicas
            pod = d["spec"]["template"]["spec"]
            for key in (
                "image",
                "command",
                "env",
                "envFrom",
                "resources",
                "volumeMounts",
                "startupProbe",
                "livenessProbe",
                "readinessProbe",
            ):
                assert _plain(w.pod_spec["containers"][0].get(key)) == pod["containers"][0].get(key), (
                    values,
                    key,
                )
            for key in (
                "runtimeClassName",
                "affinity",
                "tolerations",
                "nodeName",
                "volumes",
                "hostIPC",
                "hostPID",
            ):
                assert _plain(w.pod_spec.get(key)) == pod.get(key), (values, key)


def _plain(x: object) -> object:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def test_pod_annotations_of_an_entry_name_the_gpu(tmp_path: Path) -> None:
    """``podAnnotations`` are the pod template's annotations: ``kvlint.io/accelerator`` there places the pod
    (sized on the GPU it names, not against the fleet)."""
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry()
    body += "    podAnnotations:\n      kvlint.io/accelerator: nvidia-l4\n"
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    result = run_check([path], OFFLINE)
    summary = summarise(result)
    assert (summary.plan, summary.fleet) == (1, 0)
    assert not [d for d in result.diagnostics if d.rule == "KV501"]


def test_lmcache_image_and_connector(tmp_path: Path) -> None:
    """``lmcache/vllm-openai`` runs ``/opt/venv/bin/vllm``; ``lmcacheConfig.enabled`` adds LMCache's V1
    connector (the V0 one with ``vllmConfig.v0: "1"``), located at ``enabled``."""
    for v0, connector in (("", "LMCacheConnectorV1"), ('      v0: "1"\n', "LMCacheConnector")):
        body = "servingEngineSpec:\n  modelSpec:\n" + _entry(repository='"lmcache/vllm-openai"')
        body += "    vllmConfig:\n      maxModelLen: 4096\n" + v0
        body += "    lmcacheConfig:\n      enabled: true\n      kvRole: kv_producer\n"
        path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
        (w,) = find_workloads(load_paths([path]).documents)
        cmd = w.pod_spec["containers"][0]["command"]
        assert cmd[0] == "/opt/venv/bin/vllm"
        i = list(cmd).index("--kv-transfer-config")
        assert yaml.safe_load(cmd[i + 1]) == {"kv_connector": connector, "kv_role": "kv_producer"}
        assert cmd.locs[i].line == _line_of(path, "enabled: true")


def test_engine_configs_are_the_configmap_the_container_takes_its_env_from(tmp_path: Path) -> None:
    """``servingEngineSpec.configs`` becomes the ConfigMap ``RELEASE-configs`` (configmap.yaml) that the engine
    container's ``envFrom`` names, as the chart renders it (it was read as ``env`` entries): the pod's ``env``
    holds only what the template writes there, and the engine reads the ConfigMap's variables before ``env``,
    which wins (Kubernetes' order). ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` from configs lets vLLM start with a
    ``maxModelLen`` above the model's limit: no KV201 error, as with the same variable in ``env``."""
    body = (
        'servingEngineSpec:\n  configs:\n    VLLM_ALLOW_LONG_MAX_MODEL_LEN: "1"\n    SHARED: from-configs\n'
    )
    body += "  modelSpec:\n" + _entry() + "    env:\n      - {name: SHARED, value: from-env}\n"
    body += "    vllmConfig:\n      maxModelLen: 200000\n"  # above the 131,072 of Llama 3.1's config.json
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    (w,) = find_workloads(load_paths([path]).documents)
    c = w.pod_spec["containers"][0]
    assert _plain(c["envFrom"]) == [{"configMapRef": {"name": "RELEASE-configs"}}]
    names = [e["name"] for e in c["env"]]
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in names and names.count("SHARED") == 1
    data = w.configmaps[(None, "RELEASE-configs")]
    assert dict(data) == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "SHARED": "from-configs"}
    assert data.locs["SHARED"].line == _line_of(path, "SHARED: from-configs")
    from kvlint.engines.command import container_env

    env, locs = container_env(c, w.configmaps)
    assert env["SHARED"] == "from-env" and env["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] == "1"
    assert locs["VLLM_ALLOW_LONG_MAX_MODEL_LEN"].line == _line_of(path, "VLLM_ALLOW_LONG_MAX_MODEL_LEN:")
    rules = {d.rule for d in run_check([path], OFFLINE).diagnostics}
    assert "KV201" not in rules
    unlocked = body.replace('    VLLM_ALLOW_LONG_MAX_MODEL_LEN: "1"\n', "")
    assert "KV201" in {
        d.rule for d in run_check([_write(tmp_path, "v2.yaml", unlocked)], OFFLINE).diagnostics
    }


@pytest.mark.parametrize(
    ("value", "read"),
    # what YAML reads back from a bare `port: {{ .httpGet.port }}`: decimal digits an integer, the rest as is
    [("8080", 8080), (8080.0, 8080), ("0", 0), ("http", "http"), ("0755", "0755"), ("٣", "٣"), (7.5, 7.5)],
)
def test_bare_printed_values_read_back_as_yaml_reads_them(value: object, read: object) -> None:
    from kvlint.workloads.stack_values import _printed

    assert _printed(value) == read and type(_printed(value)) is type(read)


OCI = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "vllm-project__production-stack__deployment_on_cloud__oci__production_stack_specification.yaml"
)


def test_keys_the_chart_does_not_read_are_kv005_at_their_lines() -> None:
    """production-stack's own OCI values put ``extraArgs`` and ``nodeSelector`` beside ``vllmConfig`` in the
    modelSpec entry; the chart reads neither there (helm template renders no --max-model-len and no
    nodeSelector), so the pod kvlint builds has neither and each key gets a KV005 at its line: the first
    pointed to vllmConfig, the second to nodeSelectorTerms/affinity. Keys the chart reads get none."""
    result = run_check([str(OCI)], OFFLINE)
    kv005 = sorted(
        (d for d in result.diagnostics if d.rule == "KV005"), key=lambda d: d.loc.line if d.loc else 0
    )
    assert [d.loc.line if d.loc else None for d in kv005] == [
        _line_of(OCI, "nodeSelector:"),
        _line_of(OCI, "extraArgs:"),
    ]
    assert "'nodeSelector'" in kv005[0].message and "nodeSelectorTerms" in kv005[0].message
    assert "'extraArgs'" in kv005[1].message and "move 'extraArgs' under vllmConfig" == kv005[1].fix
    (w,) = find_workloads(load_paths([str(OCI)]).documents)
    (c,) = w.pod_spec["containers"]
    assert "--max-model-len=8192" not in list(c["command"]) and "nodeSelector" not in w.pod_spec
    # values files whose modelSpec keys are all ones the chart reads: no KV005
    for tp in (TP2, TWO):
        assert not [d for d in run_check([str(tp)], OFFLINE).diagnostics if d.rule == "KV005"]


def _diags(tmp_path: Path, body: str, rule: str) -> list:
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    return [d for d in run_check([path], OFFLINE).diagnostics if d.rule == rule]


def test_a_flag_the_chart_wrote_is_not_blamed_on_the_user(tmp_path: Path) -> None:
    """newuser8: ``extraArgs: [--enable-prefix-caching]`` without ``enablePrefixCaching`` got KV207 "remove one of
    the --enable-prefix-caching settings", but the user wrote one: the chart writes --no-enable-prefix-caching
    whenever the key is unset (deployment-vllm-multi.yaml). KV207 now says so and names the key to set; it stays
    at the extraArgs item (the occurrence vLLM uses)."""
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry()
    body += '    vllmConfig:\n      maxModelLen: 4096\n      extraArgs: ["--enable-prefix-caching"]\n'
    (d,) = _diags(tmp_path, body, "KV207")
    path = str(tmp_path / "values.yaml")
    assert d.loc.line == _line_of(path, "extraArgs:")
    assert (
        "the chart writes --no-enable-prefix-caching because vllmConfig.enablePrefixCaching is not set"
        in (d.message)
    )
    assert "then extraArgs gives --enable-prefix-caching" in d.message
    assert (
        d.fix == "set vllmConfig.enablePrefixCaching: true in place of --enable-prefix-caching in extraArgs"
    )


def test_a_setting_written_as_a_key_and_in_extra_args_names_both(tmp_path: Path) -> None:
    """``maxModelLen: 4096`` and ``--max-model-len 8192`` in extraArgs: the user wrote both, in two forms; KV207
    names the key the chart writes its flag from, and the fix keeps one of them in values terms. Two
    extraArgs occurrences of one setting are the user's alone: the parser's message stands."""
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry()
    body += "    vllmConfig:\n      maxModelLen: 4096\n"
    body += '      extraArgs: ["--max-model-len", "8192", "--max-num-seqs", "4", "--max-num-seqs", "8"]\n'
    by_option = {d.message.split()[0]: d for d in _diags(tmp_path, body, "KV207")}
    mml = by_option["--max-model-len"]
    assert (
        "the chart writes --max-model-len 4096 from vllmConfig.maxModelLen, then extraArgs gives"
        in mml.message
    )
    assert "set vllmConfig.maxModelLen" in mml.fix and "remove --max-model-len 8192 from extraArgs" in mml.fix
    seqs = by_option["--max-num-seqs"]
    assert "chart" not in seqs.message and seqs.fix == "remove one of the --max-num-seqs settings"


def test_a_value_the_engine_refuses_names_the_values_key(tmp_path: Path) -> None:
    """``vllmConfig.dtype: bf16`` (vLLM's choices are bfloat16, half, ...): KV206 at the key says the chart writes
    --dtype from it and asks for another value of the key, not of a flag the values never name; the same value
    in a plain Deployment's args keeps the flag's wording."""
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    vllmConfig:\n      dtype: bf16\n"
    (d,) = _diags(tmp_path, body, "KV206")
    assert d.loc.line == _line_of(str(tmp_path / "values.yaml"), "dtype:")
    assert "(the chart writes it from vllmConfig.dtype)" in d.message
    assert d.fix.startswith("give vllmConfig.dtype a value the engine accepts")
    plain = _write(
        tmp_path,
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
        '        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--dtype", "bf16"]\n',
    )
    (p,) = [d for d in run_check([plain], OFFLINE).diagnostics if d.rule == "KV206"]
    assert "chart" not in p.message and p.fix.startswith("give --dtype a value")


def test_fixes_say_what_to_change_in_the_values(tmp_path: Path) -> None:
    """The rules' fixes name PodSpec fields and engine flags, which a values file does not have: on a pod built
    from values each fix also says what they are in the values. ``--tensor-parallel-size 2`` in extraArgs (not
    ``tensorParallelSize``) leaves the chart's pod without /dev/shm: KV404 says the chart mounts it only with
    ``vllmConfig.tensorParallelSize``; ``containerPort: 8080`` moves --port but not the chart's default probes
    (port 8000): KV408 names the probes under servingEngineSpec and containerPort. kvlint's own options
    (``--model-dir`` in KV502's fix) are not engine flags and get no values term; a plain Deployment's fixes
    are left as they are."""
    body = "servingEngineSpec:\n  containerPort: 8080\n  modelSpec:\n" + _entry(
        requestGPU="2", modelURL='"/models/unknown-model"'
    )
    body += '    vllmConfig:\n      maxModelLen: 4096\n      extraArgs: ["--tensor-parallel-size", "2"]\n'
    path = _write(tmp_path, "values.yaml", "# made up for a test\n" + body)
    diags = run_check([path], OFFLINE).diagnostics
    (shm,) = [d for d in diags if d.rule == "KV404"]
    assert "(in these values: the chart mounts a memory-backed /dev/shm of shmSize only when " in shm.fix
    assert "vllmConfig.tensorParallelSize is set" in shm.fix
    probes = [d for d in diags if d.rule == "KV408"]
    assert len(probes) == 3
    for d in probes:
        assert "servingEngineSpec.startupProbe, livenessProbe and readinessProbe" in d.fix
        assert "--port is servingEngineSpec.containerPort" in d.fix
    (unknown,) = [d for d in diags if d.rule == "KV502"]
    assert "--model-dir" in unknown.fix and "in these values" not in unknown.fix
    plain = _write(
        tmp_path,
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
        '        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"]\n'
        "        resources: {limits: {nvidia.com/gpu: 2}}\n",
    )
    plain_diags = run_check([plain], OFFLINE).diagnostics
    assert any(d.rule == "KV404" for d in plain_diags)
    assert not [d for d in plain_diags if "in these values" in d.fix]


def test_a_number_helm_prints_in_exponent_form_is_explained(tmp_path: Path) -> None:
    """``maxModelLen: 1000000`` is an integer, as the chart's schema wants, but Helm prints it ``1e+06``
    (:func:`go_text`, Go's float formatting), which vLLM's integer parsing refuses: KV206 at the key says the
    chart printed the user's 1000000 so, and the fix passes the number through extraArgs as a string (which the
    template prints as written), not "write --max-model-len as a plain integer"."""
    assert go_text(1000000) == "1e+06"
    body = "servingEngineSpec:\n  modelSpec:\n" + _entry() + "    vllmConfig:\n      maxModelLen: 1000000\n"
    (d,) = _diags(tmp_path, body, "KV206")
    assert (
        "'1e+06'" in d.message
        and "vllmConfig.maxModelLen: 1000000, printed as Helm prints a number" in d.message
    )
    assert d.fix == 'give it in extraArgs instead of vllmConfig.maxModelLen: ["--max-model-len", "1000000"]'
    fixed = "servingEngineSpec:\n  modelSpec:\n" + _entry()
    fixed += '    vllmConfig:\n      extraArgs: ["--max-model-len", "1000000"]\n'
    assert not _diags(tmp_path, fixed, "KV206")
