"""bjw-s app-template chart values (:mod:`kvlint.workloads.app_template`): a Flux HelmRelease of the chart (by
``chartRef`` or ``chart.spec.chart``) and a plain values file are read as the pods the chart renders, every value
located at its own line of the file.

Before, a HelmRelease of app-template got one "operator settings not read" note and no serving container, and a
values file a KV002 "render the chart first". The real HelmReleases are from fixtures/collected (sources in its
INDEX.csv); the others are made up for these tests (each says so). Expected values are read from the files' own
text, not from kvlint's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvlint.load import load_paths
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise
from kvlint.workloads import find_workloads
from kvlint.workloads.app_template import MAX_CONTAINERS

OFFLINE = Options(allow_hub=False)
ROOT = Path(__file__).resolve().parent.parent
COLLECTED = ROOT / "fixtures" / "collected"
CHINGCODES = COLLECTED / "chingcodes__home-ops__kubernetes__apps__ai__vllm__app__helmrelease.yaml"
TANGUILLE = COLLECTED / "Tanguille__cluster__kubernetes__apps__ai__sglang__app__helmrelease.yaml"


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    return [i + 1 for i, line in enumerate(text.splitlines()) if needle in line][nth]


def test_real_chartref_helmrelease_becomes_the_vllm_pod() -> None:
    """chingcodes/home-ops: ``chartRef: {kind: OCIRepository, name: app-template}``; the pod the chart renders
    runs the image and args of ``controllers.vllm.containers.app``, with its amd.com/gpu resources, each located
    at its line; one serving container is read (none before)."""
    text = CHINGCODES.read_text()
    (w,) = find_workloads(load_paths([str(CHINGCODES)]).documents)
    assert (w.kind, w.name) == ("Deployment", "vllm")  # the release is the HelmRelease's name
    (c,) = w.pod_spec["containers"]
    assert c["image"] == "vllm/vllm-openai:v0.6.3.post1-rocm"
    args = list(c["args"])
    assert args[:2] == ["--model", "Qwen/Qwen2-1.5B-Instruct"]
    assert c["args"].locs[1].line == _line_of(text, '"Qwen/Qwen2-1.5B-Instruct"')
    assert str(c["resources"]["limits"]["amd.com/gpu"]) == "1"
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert mounts == {"/dev/dri", "/dev/kfd"}  # the disabled cache PVC is not mounted
    result = run_check([str(CHINGCODES)], OFFLINE)
    s = summarise(result)
    assert s.serving == 1 and s.not_read == 0
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.loc is not None and note.loc.line == _line_of(text, "name: app-template")
    assert "app-template" in note.message


def test_real_helmrelease_shm_is_the_memory_emptydir_of_advanced_mounts() -> None:
    """Tanguille/cluster: ``persistence.shm`` (``type: emptyDir``, ``medium: Memory``, ``sizeLimit: 8Gi``)
    mounted at ``/dev/shm`` through ``advancedMounts.app.app``; pod options from ``defaultPodOptions``; the
    SGLang image and its shell command read (the wrapper script is what keeps it unsized)."""
    (w,) = find_workloads(load_paths([str(TANGUILLE)]).documents)
    (c,) = w.pod_spec["containers"]
    assert c["image"].startswith("ghcr.io/tanguille/sglang-rdna4:v0.5.15-gfx1201")
    assert list(c["command"])[:2] == ["/bin/bash", "-c"]
    vols = {v["name"]: v for v in w.pod_spec["volumes"]}
    assert vols["shm"]["emptyDir"]["medium"] == "Memory"
    assert vols["shm"]["emptyDir"]["sizeLimit"] == "8Gi"
    assert vols["cache"]["persistentVolumeClaim"]["claimName"] == "sglang"
    assert {m["mountPath"]: m["name"] for m in c["volumeMounts"]} == {"/cache": "cache", "/dev/shm": "shm"}
    assert "nodeAffinity" in w.pod_spec["affinity"]
    s = summarise(run_check([str(TANGUILLE)], OFFLINE))
    assert s.serving == 1 and s.not_read == 0


# Made up for these tests: an app-template HelmRelease (chart.spec.chart form) running vLLM with a model of
# kvlint's catalogue on a named GPU, two GPUs with tensor parallelism.
_FLUX = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: chat, namespace: ai}
spec:
  chart:
    spec:
      chart: app-template
      version: 4.2.0
      sourceRef: {kind: HelmRepository, name: bjw-s}
  values:
    defaultPodOptions:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
    controllers:
      main:
        containers:
          app:
            image: {repository: vllm/vllm-openai, tag: v0.8.5}
            command: [vllm, serve, Qwen/Qwen2.5-7B, --tensor-parallel-size, "2", --max-model-len, "8192"]
            resources:
              limits: {nvidia.com/gpu: 2}
    persistence:
      shm:
        type: emptyDir
        medium: Memory
        globalMounts:
          - path: /dev/shm
"""


def test_made_up_helmrelease_is_sized(tmp_path: Path) -> None:
    """A serving container with a catalogue model and a named GPU is sized (before: not read)."""
    p = tmp_path / "hr.yaml"
    p.write_text(_FLUX)
    result = run_check([str(p)], OFFLINE)
    s = summarise(result)
    assert s.serving == 1 and s.plan == 1 and s.not_read == 0
    (w,) = find_workloads(load_paths([str(p)]).documents)
    assert (w.name, w.namespace) == ("chat", "ai")
    assert w.pod_spec["nodeSelector"]["nvidia.com/gpu.product"] == "NVIDIA-L4"


def test_plain_values_file_is_read_with_its_own_note(tmp_path: Path) -> None:
    """The same values as a values.yaml: the reader is chosen by the values' shape (controllers with an
    engine's image); the note is the reader's KV504 at ``controllers``; no KV002."""
    values = yaml.safe_dump(yaml.safe_load(_FLUX)["spec"]["values"], sort_keys=False)
    p = tmp_path / "values.yaml"
    p.write_text(values)
    result = run_check([str(p)], OFFLINE)
    assert summarise(result).plan == 1
    assert not [d for d in result.diagnostics if d.rule == "KV002"]
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.loc is not None and note.loc.line == _line_of(values, "controllers:")


def test_values_of_an_app_that_serves_no_llm_are_not_read(tmp_path: Path) -> None:
    """app-template values of another app (made up: a media server) build nothing and get no KV504."""
    p = tmp_path / "values.yaml"
    p.write_text(
        "controllers:\n  main:\n    containers:\n      app:\n        image: {repository: jellyfin/jellyfin, tag: '10'}\n"
    )
    assert find_workloads(load_paths([str(p)]).documents) == []
    assert not [d for d in run_check([str(p)], OFFLINE).diagnostics if d.rule == "KV504"]


def test_many_controllers_are_refused_before_building(tmp_path: Path) -> None:
    """More containers than :data:`MAX_CONTAINERS` (made up: every controller runs vLLM): no pod is built and
    KV002 says why at ``controllers``, never a traceback."""
    n = MAX_CONTAINERS + 1
    body = "controllers:\n" + "".join(
        f"  c{i}:\n    containers:\n      app:\n        image: {{repository: vllm/vllm-openai, tag: v0.8.5}}\n"
        for i in range(n)
    )
    p = tmp_path / "values.yaml"
    p.write_text(body)
    assert find_workloads(load_paths([str(p)]).documents) == []
    result = run_check([str(p)], OFFLINE)
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert str(MAX_CONTAINERS) in kv002.message and kv002.loc is not None and kv002.loc.line == 1


@pytest.mark.parametrize("controllers", [200, 1])
def test_shared_values_copied_per_container_are_bounded(tmp_path: Path, controllers: int) -> None:
    """A large ``persistence`` shared by 200 containers (made up; in 200 controllers or all in one) is refused,
    not walked and copied for each container."""
    body = "persistence:\n" + "".join(f"  v{i}: {{type: emptyDir}}\n" for i in range(2000))
    per = 200 // controllers
    body += "controllers:\n" + "".join(
        f"  c{i}:\n    containers:\n"
        + "".join(f"      a{j}:\n        image: {{repository: vllm/vllm-openai}}\n" for j in range(per))
        for i in range(controllers)
    )
    p = tmp_path / "values.yaml"
    p.write_text(body)
    assert find_workloads(load_paths([str(p)]).documents) == []
    (kv002,) = [d for d in run_check([str(p)], OFFLINE).diagnostics if d.rule == "KV002"]
    assert "copies" in kv002.message


def test_wrong_types_never_raise(tmp_path: Path) -> None:
    """Values of the wrong type at every level the reader walks (made up) give no traceback."""
    body = """\
defaultPodOptions: [1]
persistence:
  a: 3
  b: {type: emptyDir, globalMounts: 7, advancedMounts: {main: [1]}}
  c: {globalMounts: [{path: [1]}]}
controllers:
  main:
    pod: 5
    replicas: "two"
    containers:
      app:
        image: {repository: vllm/vllm-openai, tag: [1]}
        command: {a: 1}
        args: 7
        env: [1, {name: X}]
        resources: 5
      other: 3
  off: {enabled: false, containers: {app: {image: {repository: vllm/vllm-openai}}}}
"""
    p = tmp_path / "values.yaml"
    p.write_text(body)
    (w,) = find_workloads(load_paths([str(p)]).documents)
    assert w.name == "RELEASE"  # the disabled controller renders nothing; the other is the only one
    run_check([str(p)], OFFLINE)


def _values_with(tmp_path: Path, persistence: str, pod: str = "", top: str = "") -> Path:
    """A values file of one vLLM controller (made up) with the given ``persistence`` items, ``controllers.main
    .pod`` options and extra top-level values (YAML text, already indented)."""
    p = tmp_path / "values.yaml"
    p.write_text(
        top + "controllers:\n  main:\n" + pod + "    containers:\n      app:\n"
        "        image: {repository: vllm/vllm-openai, tag: v0.8.5}\n"
        "persistence:\n" + persistence
    )
    return p


def test_mount_paths_are_the_library_defaults(tmp_path: Path) -> None:
    """bjw-s common ``lib/container/fields/_volumeMounts.tpl``: a hostPath item mounted without a path is
    mounted at its hostPath (the home-ops ``/dev/dri`` shape, not ``/dev-dri``); an empty ``globalMounts`` is
    as unset (mounted at the default path, and the volume is in the pod); a mount without a path takes the
    path of the mount before it."""
    p = _values_with(
        tmp_path,
        "  dev-dri:\n    type: hostPath\n    hostPath: /dev/dri\n"
        "  models:\n    type: hostPath\n    hostPath: /mnt/models\n    globalMounts:\n      - readOnly: true\n"
        "  cache:\n    existingClaim: hf-cache\n    globalMounts: []\n"
        "  data:\n    existingClaim: data\n    globalMounts:\n      - path: /data\n      - subPath: x\n",
    )
    (w,) = find_workloads(load_paths([str(p)]).documents)
    (c,) = w.pod_spec["containers"]
    got = sorted((m["name"], m["mountPath"]) for m in c["volumeMounts"])
    assert got == [
        ("cache", "/cache"),
        ("data", "/data"),
        ("data", "/data"),
        ("dev-dri", "/dev/dri"),
        ("models", "/mnt/models"),
    ]
    assert {v["name"] for v in w.pod_spec["volumes"]} == {"dev-dri", "models", "cache", "data"}


def test_pod_options_follow_the_library_get_option(tmp_path: Path) -> None:
    """bjw-s common ``lib/pod/_getOption.tpl``: under ``defaultPodOptionsStrategy: merge`` the controller's
    ``nodeSelector`` is merged over ``defaultPodOptions`` (both keys kept; before only the controller's); an
    empty ``tolerations: []`` of the controller keeps the default tolerations (before it dropped them)."""
    top = (
        "defaultPodOptionsStrategy: merge\ndefaultPodOptions:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
    )
    pod = "    pod:\n      nodeSelector: {kubernetes.io/hostname: gpu-1}\n      tolerations: []\n"
    p = _values_with(tmp_path, "  {}\n", pod=pod, top=top)
    (w,) = find_workloads(load_paths([str(p)]).documents)
    assert dict(w.pod_spec["nodeSelector"]) == {
        "kubernetes.io/hostname": "gpu-1",
        "nvidia.com/gpu.product": "NVIDIA-L4",
    }
    assert [t["key"] for t in w.pod_spec["tolerations"]] == ["nvidia.com/gpu"]
    text = p.read_text()
    assert w.pod_spec["nodeSelector"].locs["nvidia.com/gpu.product"].line == _line_of(text, "NVIDIA-L4")


def test_empty_pod_mapping_clears_the_default_under_overwrite(tmp_path: Path) -> None:
    """Under the default strategy (overwrite) a controller's ``nodeSelector: {}`` replaces the default one, so
    the pod has no nodeSelector."""
    top = "defaultPodOptions:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
    p = _values_with(tmp_path, "  {}\n", pod="    pod:\n      nodeSelector: {}\n", top=top)
    (w,) = find_workloads(load_paths([str(p)]).documents)
    assert "nodeSelector" not in w.pod_spec


def test_controller_default_container_options_are_applied(tmp_path: Path) -> None:
    """bjw-s common ``lib/container/_valuesToObject.tpl``: a controller's ``defaultContainerOptions`` fill what
    its containers leave empty (overwrite, the default: the GPU resources; the container's own image kept),
    and under ``defaultContainerOptionsStrategy: merge`` are merged deeply (both limits kept). Before, the
    container had no GPU and was not sized on one."""
    p = tmp_path / "values.yaml"
    p.write_text(
        "controllers:\n"
        "  a:\n"
        "    defaultContainerOptions:\n"
        "      image: {repository: busybox, tag: '1'}\n"
        "      resources: {limits: {nvidia.com/gpu: 2}}\n"
        "    containers:\n"
        "      app:\n"
        "        image: {repository: vllm/vllm-openai, tag: v0.8.5}\n"
        "  b:\n"
        "    defaultContainerOptionsStrategy: merge\n"
        "    defaultContainerOptions:\n"
        "      resources: {limits: {nvidia.com/gpu: 1}}\n"
        "    containers:\n"
        "      app:\n"
        "        image: {repository: vllm/vllm-openai, tag: v0.8.5}\n"
        "        resources: {limits: {memory: 32Gi}}\n"
    )
    text = p.read_text()
    a, b = find_workloads(load_paths([str(p)]).documents)
    (ca,) = a.pod_spec["containers"]
    assert ca["image"] == "vllm/vllm-openai:v0.8.5"
    assert str(ca["resources"]["limits"]["nvidia.com/gpu"]) == "2"
    assert ca.locs["resources"].line == _line_of(text, "nvidia.com/gpu: 2")
    (cb,) = b.pod_spec["containers"]
    assert {k: str(v) for k, v in cb["resources"]["limits"].items()} == {
        "memory": "32Gi",
        "nvidia.com/gpu": "1",
    }


def test_engine_image_only_in_default_container_options_is_read(tmp_path: Path) -> None:
    """An engine image set once in ``defaultContainerOptions`` (containers without their own) is recognised and
    given to the container."""
    p = tmp_path / "values.yaml"
    p.write_text(
        "controllers:\n  main:\n    defaultContainerOptions:\n"
        "      image: {repository: vllm/vllm-openai, tag: v0.8.5}\n"
        "    containers:\n      app:\n        args: [--model, Qwen/Qwen2.5-7B]\n"
    )
    (w,) = find_workloads(load_paths([str(p)]).documents)
    assert w.pod_spec["containers"][0]["image"] == "vllm/vllm-openai:v0.8.5"


def test_default_container_options_copied_per_container_are_bounded(tmp_path: Path) -> None:
    """A large ``defaultContainerOptions`` (made up) copied into each of 200 containers is refused with a KV002,
    not copied."""
    from kvlint.workloads.base import MAX_COPIED_VALUES

    n = MAX_COPIED_VALUES // 200 + 10
    body = "controllers:\n  main:\n    defaultContainerOptions:\n      env:\n"
    body += "".join(f"        V{i}: x\n" for i in range(n))
    body += "    containers:\n" + "".join(
        f"      a{j}:\n        image: {{repository: vllm/vllm-openai, tag: v1}}\n" for j in range(200)
    )
    p = tmp_path / "values.yaml"
    p.write_text(body)
    assert find_workloads(load_paths([str(p)]).documents) == []
    (kv002,) = [d for d in run_check([str(p)], OFFLINE).diagnostics if d.rule == "KV002"]
    assert "defaultContainerOptions" in kv002.message


def test_controllers_are_named_as_the_library_names_them(tmp_path: Path) -> None:
    """bjw-s common ``lib/common/_determineResourceNameFromValues.tpl``: with several controllers, a controller
    whose identifier is the release name is not suffixed again (HelmRelease ``vllm`` with controllers ``vllm`` and
    ``webui``: ``vllm`` and ``vllm-webui``, before ``vllm-vllm``); ``forceRename`` names the object; names are
    lower-cased."""
    doc = yaml.safe_load(_FLUX)
    doc["metadata"]["name"] = "vllm"
    values = doc["spec"]["values"]
    app = values["controllers"].pop("main")
    values["controllers"]["vllm"] = app
    values["controllers"]["webui"] = {
        "containers": {"app": {"image": {"repository": "vllm/vllm-openai", "tag": "v0.8.5"}}}
    }
    values["controllers"]["Bench"] = {
        "forceRename": "bench-runner",
        "containers": {"app": {"image": {"repository": "vllm/vllm-openai", "tag": "v0.8.5"}}},
    }
    p = tmp_path / "hr.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    names = [w.name for w in find_workloads(load_paths([str(p)]).documents)]
    assert names == ["vllm", "vllm-webui", "bench-runner"]


def test_flux_post_build_variables_are_an_info_not_a_warning(tmp_path: Path) -> None:
    """Tanguille/cluster's HelmRelease sets ``TZ: ${TIMEZONE}``, a variable Flux's kustomize-controller
    substitutes at post-build (spec.postBuild.substituteFrom of the Kustomization applying it): an info that
    says so (before a warning that Kubernetes will not replace it). The same env in a plain Deployment still gets
    the warning, and a HelmRelease annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` too."""
    text = TANGUILLE.read_text()
    result = run_check([str(TANGUILLE)], OFFLINE)
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert kv002.severity == "info" and "postBuild" in kv002.message
    assert kv002.loc is not None and kv002.loc.line == _line_of(text, "${TIMEZONE}")
    off = tmp_path / "hr.yaml"
    off.write_text(
        text.replace(
            "metadata:\n", "metadata:\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\n", 1
        )
    )
    (kv002,) = [d for d in run_check([str(off)], OFFLINE).diagnostics if d.rule == "KV002"]
    assert kv002.severity == "warning"
    plain = tmp_path / "deploy.yaml"
    plain.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: app\n        image: vllm/vllm-openai:v0.8.5\n"
        "        env: [{name: TZ, value: '${TIMEZONE}'}]\n"
    )
    (kv002,) = [d for d in run_check([str(plain)], OFFLINE).diagnostics if d.rule == "KV002"]
    assert kv002.severity == "warning"


def test_default_container_options_of_many_controllers_are_bounded_together(tmp_path: Path) -> None:
    """200 controllers of one container each, each with a ``defaultContainerOptions`` under the bound alone
    (made up) but over it together: refused with a KV002, not copied."""
    from kvlint.workloads.base import MAX_COPIED_VALUES

    n = MAX_COPIED_VALUES // 200 + 10
    body = "controllers:\n" + "".join(
        f"  c{i}:\n    defaultContainerOptions:\n      env: {{"
        + ", ".join(f"V{k}: x" for k in range(n))
        + "}\n    containers:\n      app:\n        image: {repository: vllm/vllm-openai, tag: v1}\n"
        for i in range(200)
    )
    p = tmp_path / "values.yaml"
    p.write_text(body)
    assert find_workloads(load_paths([str(p)]).documents) == []
    (kv002,) = [d for d in run_check([str(p)], OFFLINE).diagnostics if d.rule == "KV002"]
    assert "defaultContainerOptions" in kv002.message


def test_custom_persistence_is_its_volume_spec(tmp_path: Path) -> None:
    """bjw-s common ``lib/pod/fields/_volumes.tpl``: a ``type: custom`` item is its ``volumeSpec`` (here the
    shared-memory emptyDir the /dev/shm rules read), an ``nfs`` item its server and path (before, volumes keyed
    ``custom``/``nfs`` with nothing in them)."""
    p = _values_with(
        tmp_path,
        "  shm:\n    type: custom\n    volumeSpec:\n      emptyDir: {medium: Memory, sizeLimit: 16Gi}\n"
        "    globalMounts: [{path: /dev/shm}]\n"
        "  models:\n    type: nfs\n    server: nas.lan\n    path: /export/models\n",
    )
    (w,) = find_workloads(load_paths([str(p)]).documents)
    vols = {v["name"]: v for v in w.pod_spec["volumes"]}
    assert vols["shm"]["emptyDir"]["medium"] == "Memory" and "custom" not in vols["shm"]
    assert dict(vols["models"]["nfs"]) == {"server": "nas.lan", "path": "/export/models"}


def test_container_without_image_tag_is_refused_as_the_chart_refuses_it(tmp_path: Path) -> None:
    """bjw-s common ``lib/container/_validate.tpl`` fails a container whose ``image.tag`` is empty ("No image tag
    specified for container"): a KV002 at the image (before, kvlint linted ``vllm/vllm-openai`` as if it
    rendered)."""
    p = tmp_path / "values.yaml"
    p.write_text(
        "controllers:\n  main:\n    containers:\n      app:\n        image: {repository: vllm/vllm-openai}\n"
    )
    result = run_check([str(p)], OFFLINE)
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert "image.tag" in kv002.message and kv002.loc is not None and kv002.loc.line == 5
