"""llmaz ``Playground`` (inference.llmaz.io/v1alpha1) with the ``OpenModel`` (llmaz.io/v1alpha1) it claims: the
model-runner pod llmaz's controllers build from them and from the BackendRuntime of llmaz's chart.

Sources, InftyAI/llmaz@3c13ff343e28cdbe842fd3c659e3daf0d1e27e91 (the chart's backends and values last changed at
4a29db2b792af7c52574fbce23df7a90ecd1d035):

* ``pkg/controller/inference/playground_controller.go`` ``buildTemplate``: one container ``model-runner``, image the
  BackendRuntime's ``image`` + ``":"`` + its ``version`` (``spec.backendRuntimeConfig.version`` wins), ``command`` the
  BackendRuntime's, ``args`` the args of its recommended config (``configName``, else ``default`` for a
  ``modelClaim``: ``helper.RecommendedConfigName``) rendered with ``{{ .ModelPath }}``/``{{ .ModelName }}``
  (``renderFlags``), then ``spec.backendRuntimeConfig.args``; env the BackendRuntime's merged with the Playground's
  ``envs``; resources the recommended config's with the Playground's ``resources`` merged over them
  (``util.MergeResources``: the Playground's quantities win); a memory-backed ``/dev/shm`` of the recommended
  ``sharedMemorySize`` (the Playground's wins). ``buildWorkloadTemplate``: one pod per replica ("workload size is 1
  for now until we support multi-host in Playground"); ``spec.replicas`` default 1.
* ``pkg/controller/inference/service_controller.go`` ``injectModelFlavor``: the limits of the OpenModel's first
  ``inferenceConfig.flavors`` entry (or of the flavor the claim's ``inferenceFlavors`` names first) overwrite the
  container's requests and limits of the same resources. A flavor's ``nodeSelector`` is not written into the pod
  (llmaz's scheduler plugin reads it), so it names no GPU here.
* ``pkg/controller_helper/modelsource/modelhub.go`` ``ModelPath``: ``/workspace/models/models--ORG--NAME`` (a
  ``filename``: ``/workspace/models/FILE``), the model ID itself when the Playground's annotation
  ``llmaz.io/skip-model-loader`` is ``"true"``; ``ModelName`` the OpenModel's name. ``uri.go``: a ``host://`` path as
  written, the URI with the loader skipped, else ``/workspace/models/models--LAST`` (a ``.gguf``: the file).
* ``chart/templates/backends/{vllm,sglang,tgi}.yaml`` and ``chart/values.global.yaml``: the BackendRuntimes llmaz's
  chart installs (:data:`BACKENDS`). Other backends (llama.cpp, Ollama, TensorRT-LLM) and BackendRuntimes of other
  names are not restated: the Playground keeps its KV503 note.

Each value is placed where it was written: the rendered model path at the OpenModel's ``modelID``/``filename``/
``uri`` line (in the OpenModel's own file), the model name at the Playground's ``modelClaim``, the Playground's args,
resources and envs at theirs, the flavor's limits at the OpenModel's, the chart's defaults at
``backendRuntimeConfig`` (else ``spec``). The model of a ``modelHub`` source is the workload's ``derived_model`` (the engine reads the copy the model loader
downloads); the first workload carries a KV504 note naming the chart commit restated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvlint.fastinit import replaced
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.values import non_string_env, non_string_items, structural_kind
from kvlint.wording import shell_word
from kvlint.workloads.base import get_in, ldict, llist, synthetic_workload

__all__ = ["BACKENDS", "LLMAZ_COMMIT", "open_model_index", "playground_workloads"]

#: The llmaz commit whose chart BackendRuntimes :data:`BACKENDS` restates.
LLMAZ_COMMIT = "4a29db2b792af7c52574fbce23df7a90ecd1d035"
#: Where the model loader puts the model (``modelsource.CONTAINER_MODEL_PATH``).
_MODEL_DIR = "/workspace/models/"
_SKIP_LOADER = "llmaz.io/skip-model-loader"


@dataclass(frozen=True)
class Backend:
    """One BackendRuntime of llmaz's chart: image repository and tag (``chart/values.global.yaml``), command, and
    the ``default`` recommended config's args, ``/dev/shm`` size and resources."""

    image: str
    tag: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    shm: str
    resources: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]


_CPU_MEM = (("requests", (("cpu", 4), ("memory", "8Gi"))), ("limits", (("cpu", 4), ("memory", "8Gi"))))

#: The chart's BackendRuntimes by name, their ``default`` recommended config (``speculative-decoding`` and other
#: configs are not restated).
BACKENDS: dict[str, Backend] = {
    "vllm": Backend(
        "vllm/vllm-openai",
        "v0.7.3",
        ("python3", "-m", "vllm.entrypoints.openai.api_server"),
        ("--model", "{{ .ModelPath }}", "--served-model-name", "{{ .ModelName }}", "--host", "0.0.0.0", "--port", "8080"),
        "2Gi",
        _CPU_MEM,
    ),
    "sglang": Backend(
        "lmsysorg/sglang",
        "v0.4.5-cu121",
        ("python3", "-m", "sglang.launch_server"),
        (
            "--model-path", "{{ .ModelPath }}", "--served-model-name", "{{ .ModelName }}", "--host", "0.0.0.0",
            "--port", "8080",
        ),
        "2Gi",
        _CPU_MEM,
    ),
    # no command: the image's entrypoint, text-generation-launcher; no sharedMemorySize
    "tgi": Backend(
        "ghcr.io/huggingface/text-generation-inference",
        "2.3.1",
        (),
        ("--model-id", "{{ .ModelPath }}", "--port", "8080"),
        "",
        _CPU_MEM,
    ),
}  # fmt: skip


def open_model_index(docs: list[Document]) -> dict[str, Document]:
    """The llmaz OpenModels among ``docs`` by name (cluster-scoped), the first of each name."""
    out: dict[str, Document] = {}
    for d in docs:
        if (
            d.kind == "OpenModel"
            and str(get_in(d.data, "apiVersion") or "").startswith("llmaz.io/")
            and d.name
        ):
            out.setdefault(d.name, d)
    return out


def _model_path(model: Any, skip: bool) -> tuple[str, str | None, Loc | None] | None:
    """``(ModelPath, hub model id or None, where the OpenModel wrote what the path is made of)`` of an OpenModel's
    source, as llmaz renders it; None when unreadable. The place is the ``modelID`` (the ``filename`` when the path
    is that file) or the ``uri`` line, so that a finding on the model points at the OpenModel line that set it."""
    hub = get_in(model, "spec", "source", "modelHub")
    if isinstance(hub, dict):
        mid = hub.get("modelID")
        if not isinstance(mid, str) or not mid:
            return None
        fname = hub.get("filename")
        if skip:
            return mid, mid, loc_of(hub, "modelID")
        if isinstance(fname, str) and fname:
            return _MODEL_DIR + fname, mid, loc_of(hub, "filename")
        return _MODEL_DIR + "models--" + mid.replace("/", "--"), mid, loc_of(hub, "modelID")
    source = get_in(model, "spec", "source")
    uri = source.get("uri") if isinstance(source, dict) else None
    if not isinstance(uri, str) or "://" not in uri:
        return None
    uloc = loc_of(source, "uri")
    protocol, value = uri.split("://", 1)
    if protocol.lower() == "host":
        return value, None, uloc
    if skip:
        return uri, None, uloc
    last = value.rstrip("/").split("/")[-1]
    return (_MODEL_DIR + last if ".gguf" in value else _MODEL_DIR + "models--" + last), None, uloc


def _flavor_limits(model: Any, claim: Any) -> dict[str, Any]:
    """The limits of the flavor llmaz applies (``injectModelFlavor``: the claim's first ``inferenceFlavors``, else
    the OpenModel's first flavor), as written (an empty mapping when there is none)."""
    flavors = get_in(model, "spec", "inferenceConfig", "flavors")
    if not isinstance(flavors, list) or not flavors or not isinstance(flavors[0], dict):
        return {}
    name = flavors[0].get("name")
    wanted = claim.get("inferenceFlavors") if isinstance(claim, dict) else None
    if isinstance(wanted, list) and wanted:
        name = wanted[0]
    for f in flavors:
        if isinstance(f, dict) and f.get("name") == name and isinstance(f.get("limits"), dict):
            limits: dict[str, Any] = f["limits"]
            return limits
    return {}


def playground_workloads(doc: Document, models: dict[str, Document]) -> list[Workload]:
    """The model-runner pod of an llmaz Playground whose ``modelClaim`` names an OpenModel among the inputs and
    whose backend is one of :data:`BACKENDS` (see the module docstring); [] otherwise (the caller's KV503 note
    says what is not read). ``modelClaims`` (several models: speculative decoding) and a ``configName`` other than
    ``default`` are not restated."""
    spec = get_in(doc.data, "spec")
    if not isinstance(spec, dict):
        return []
    claim = spec.get("modelClaim")
    name = get_in(claim, "modelName")
    model_doc = models.get(name) if isinstance(name, str) else None
    brc = spec.get("backendRuntimeConfig")
    brc = brc if isinstance(brc, dict) else {}
    backend_name = str(brc.get("backendName") or "vllm")
    backend = BACKENDS.get(backend_name)
    config = brc.get("configName")
    if claim is None and spec.get("modelClaims") is not None:
        return _not_built(doc, loc_of(spec, "modelClaims"), "it claims several models (spec.modelClaims, as for "
                          "speculative decoding), which kvlint does not restate")  # fmt: skip
    if model_doc is None:
        at = loc_of(claim, "modelName") if isinstance(claim, dict) else None
        # OpenModel is cluster-scoped (llmaz config/crd/bases/llmaz.io_openmodels.yaml, scope: Cluster): an object
        # of its own, never in the Playground's file by necessity, and never in the admission review of a Playground
        what = (
            f"the OpenModel {name[:100]!r} its modelClaim names is not among the inputs (a cluster-scoped object "
            "of its own, which an admission review of the Playground does not carry; kvlint builds the pod when "
            f"the OpenModel is linted with the Playground: kubectl get openmodel {shell_word(name[:100])} -o yaml)"
            if isinstance(name, str) and name
            else "its modelClaim names no OpenModel (spec.modelClaim.modelName, a string)"
        )
        return _not_built(doc, at or loc_of(spec, "modelClaim"), what)
    if backend is None:
        return _not_built(doc, loc_of(brc, "backendName"), f"backendName {backend_name[:100]!r} is a BackendRuntime "
                          "kvlint does not restate (only the vllm, sglang and tgi BackendRuntimes of llmaz's chart)")  # fmt: skip
    if config not in (None, "default"):
        return _not_built(doc, loc_of(brc, "configName"), f"configName {str(config)[:100]!r} is a recommended config "
                          "of the BackendRuntime kvlint does not restate (only 'default')")  # fmt: skip
    annotations = get_in(doc.data, "metadata", "annotations")
    skip = isinstance(annotations, dict) and str(annotations.get(_SKIP_LOADER)) == "true"
    found = _model_path(model_doc.data, skip)
    if found is None:
        return _not_built(doc, loc_of(get_in(model_doc.data, "spec"), "source") or model_doc.loc,
                          f"the OpenModel {model_doc.name!r} names no model kvlint reads (spec.source.modelHub."
                          "modelID, or a uri)")  # fmt: skip
    path, hub_id, path_loc = found
    sloc = loc_of(doc.data, "spec") or doc.loc
    bloc = loc_of(spec, "backendRuntimeConfig") or sloc
    cloc = loc_of(spec, "modelClaim") or sloc
    # each value at the line that set it: the model path at the OpenModel's source, its name at the claim
    values = {
        "ModelPath": (path, path_loc or model_doc.loc),
        "ModelName": (model_doc.name or str(name), cloc),
    }
    args: list[tuple[Any, Loc | None]] = []
    for a in backend.args:
        at = bloc
        for key, (v, vloc) in values.items():
            if "{{ ." + key + " }}" in a:
                a, at = a.replace("{{ ." + key + " }}", v), vloc
        args.append((a, at))
    own_args = brc.get("args")
    if isinstance(own_args, list):
        lst_loc = loc_of(brc, "args")
        locs = getattr(own_args, "locs", None) or []
        # as written: a number stays a number, which the API server refuses (KV005), as it does in a pod
        args += [(v, locs[i] if i < len(locs) else lst_loc) for i, v in enumerate(own_args)]
    version = brc.get("version")
    # a version that is not a string is refused with the Playground (KV005, :func:`_not_strings`): no release of its
    # own (``version: 0.10`` is the number 0.1 to YAML, and its text made the tag 0.1, KV208 "vLLM 0.1"), the chart's
    # tag stands
    image = f"{backend.image}:{version if isinstance(version, str) and version else backend.tag}"
    items: list[tuple[str, Any, Loc | None]] = [("name", "model-runner", bloc), ("image", image, bloc)]
    if backend.command:
        items.append(("command", llist(bloc, [(c, bloc) for c in backend.command]), bloc))
    items.append(("args", llist(bloc, args), bloc))
    envs = brc.get("envs")
    if isinstance(envs, list) and envs:
        items.append(("env", envs, loc_of(brc, "envs")))
    items.append(("resources", _resources(backend, brc, model_doc, claim), loc_of(brc, "resources") or bloc))
    ps_items: list[tuple[str, Any, Loc | None]] = []
    shm = brc.get("sharedMemorySize") or backend.shm
    if shm:
        mount = ldict(bloc, [("name", "dshm", bloc), ("mountPath", "/dev/shm", bloc)])
        items.append(("volumeMounts", llist(bloc, [(mount, bloc)]), bloc))
        empty = ldict(bloc, [("medium", "Memory", bloc), ("sizeLimit", shm, bloc)])
        vol = ldict(bloc, [("name", "dshm", bloc), ("emptyDir", empty, bloc)])
        ps_items.append(("volumes", llist(bloc, [(vol, bloc)]), bloc))
    container = ldict(bloc, items)
    ps = ldict(sloc, [("containers", llist(bloc, [(container, bloc)]), bloc), *ps_items])
    replicas = spec.get("replicas", 1)
    w = synthetic_workload(
        doc,
        ps,
        "spec",
        replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
        derived_model=hub_id,
    )
    note = Finding(
        "KV504",
        f"built from llmaz: kvlint linted the model-runner pod llmaz makes from this Playground, the OpenModel "
        f"'{model_doc.name}' and the BackendRuntime '{backend_name}' of llmaz's chart (chart/templates/backends/"
        f"{backend_name}.yaml at commit {LLMAZ_COMMIT[:12]}, image {image}); a BackendRuntime installed with other "
        "values or edited since runs what it says",
        bloc,
        fix="for certainty, lint the pod llmaz creates: kubectl get pod -l "
        f"{shell_word(f'llmaz.io/model-name={model_doc.name}')} -o yaml | kvlint check -",
        severity="info",
    )
    return [replaced(w, findings=(note, *_not_strings(brc), *w.findings))]


def _not_built(doc: Document, at: Loc | None, why: str) -> list[Workload]:
    """The Playground as a workload without containers carrying its KV503 note: why kvlint did not build its pod
    (``why``), at the field that decided it (``at``, else ``spec``); counted as not read, as the operators' notes
    (:func:`kvlint.workloads.operators.unread_kind_note`)."""
    sloc = loc_of(doc.data, "spec") or doc.loc
    claimed = get_in(doc.data, "spec", "modelClaim", "modelName")
    if not isinstance(claimed, str):  # llmaz labels the pod with the main (first) model of modelClaims
        first = get_in(doc.data, "spec", "modelClaims", "models")
        claimed = get_in(first[0], "name") if isinstance(first, list) and first else None
    label = shell_word(f"llmaz.io/model-name={claimed if isinstance(claimed, str) and claimed else 'MODEL'}")
    note = Finding(
        "KV503",
        f"kvlint does not read this Playground's engine settings: {why}; llmaz fills the BackendRuntime's "
        "command with the OpenModel's model",
        at or sloc,
        fix=f"lint the pods llmaz creates (kubectl get pod -l {label} -o yaml | kvlint check -), "
        "or check the engine command separately with kvlint plan -- <command>",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )
    ps = LDict(loc=sloc)
    ps["containers"] = LList([], loc=sloc)
    return [Workload(doc, doc.kind, doc.name, doc.namespace, ps, "spec", findings=(note,))]


def _not_strings(brc: dict[str, Any]) -> list[Finding]:
    """KV005 (error) for each field of ``spec.backendRuntimeConfig`` that llmaz's Playground CRD types ``string``
    (``version``; ``args`` items, ``[]string``; ``envs`` names and values, ``core/v1`` ``EnvVar``) written as
    something else (``args: [--max-model-len, 4096]``, ``version: 0.10``, which YAML reads as the number 0.1):
    the API server refuses the Playground ("... in body must be of type string"), so llmaz builds no pod.
    InftyAI/llmaz ``api/inference/v1alpha1/playground_types.go`` ``BackendRuntimeConfig`` and
    ``config/crd/bases/inference.llmaz.io_playgrounds.yaml``. One finding per field, at its first such value,
    counting the others; the pod is still built from the values' text, as a pod's KV005 still plans it."""
    bad: dict[str, list[tuple[str, str, Loc | None]]] = {}
    kind = structural_kind(brc.get("version"))
    if kind:
        bad["version"] = [("spec.backendRuntimeConfig.version", kind, loc_of(brc, "version"))]
    args = brc.get("args")
    bad["args"] = [
        (f"spec.backendRuntimeConfig.args[{i}]", k, loc_of(args, i) or loc_of(brc, "args"))
        for i, k in non_string_items(args, structural_kind)
    ]
    envs = brc.get("envs")
    if isinstance(envs, list):
        bad["envs"] = [
            (f"spec.backendRuntimeConfig.envs[{i}].{part}", k, loc_of(envs[i], part) or loc_of(envs, i))
            for i, part, k in non_string_env(envs, structural_kind)
        ]
    out = []
    for field, items in bad.items():
        if not items:
            continue
        where, kind, at = items[0]
        more = f" (and {len(items) - 1:,} more in its {field})" if len(items) > 1 else ""
        out.append(
            Finding(
                "KV005",
                f"{where} is a{'n' if kind[0] in 'aio' else ''} {kind}, not a string{more}: the API server refuses "
                f'the Playground, whose CRD types the field string ("... in body must be of type string: '
                f'"{kind}""), so llmaz creates no pod',
                at,
                fix='quote the value ("4096", "v0.10.0") so that YAML reads it as a string; in a Helm template, '
                "pipe it through quote",
                severity="error",
            )
        )
    return out


def _resources(backend: Backend, brc: dict[str, Any], model_doc: Document, claim: Any) -> LDict:
    """The model-runner's requests and limits: the recommended config's, the Playground's merged over them, the
    flavor's limits over both (:func:`_flavor_limits`)."""
    bloc = loc_of(brc) or model_doc.loc
    own = brc.get("resources")
    flavor = _flavor_limits(model_doc.data, claim)
    out = LDict(loc=loc_of(brc, "resources") or bloc)
    for section, defaults in backend.resources:
        block = LDict(loc=bloc)
        for k, v in defaults:
            block[k] = v
            block.locs[k] = bloc  # type: ignore[assignment]
        mine = own.get(section) if isinstance(own, dict) else None
        if isinstance(mine, dict):
            for k, v in mine.items():
                block[k] = v
                block.locs[k] = loc_of(mine, k) or bloc  # type: ignore[assignment]
        for k, v in flavor.items():
            block[k] = v
            block.locs[k] = loc_of(flavor, k) or model_doc.loc  # type: ignore[assignment]
        out[section] = block
        out.locs[section] = block.loc  # type: ignore[assignment]
    return out
