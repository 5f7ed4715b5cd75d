"""Ray Serve LLM applications of a KubeRay ``RayService`` (ray.io/v1): each ``llm_configs[]`` entry of an
application built by ``ray.serve.llm:build_openai_app`` (or one ``LLMConfig`` given to
``ray.serve.llm:build_llm_deployment``) in ``spec.serveConfigV2`` becomes the vLLM engine Ray Serve LLM starts,
placed on the pod of the worker group whose GPUs run it.

What Ray Serve LLM passes to vLLM, restated from ray-project/ray (read at Ray 2.56.0; the same in 2.50 - 2.55
except where noted):

* ``python/ray/llm/_internal/serve/core/ingress/builder.py::build_openai_app`` validates ``args`` as
  ``LLMServingArgs``: ``llm_configs`` is a list of ``LLMConfig`` mappings or of *paths to YAML files* inside the
  cluster (read with ``LLMConfig.from_file``; kvlint cannot see those and says so).
* ``python/ray/llm/_internal/serve/engines/vllm/vllm_models.py::VLLMEngineConfig.from_llm_config``: the model
  is ``model_loading_config.model_source`` when it is a string, else ``model_id`` (a ``bucket_uri`` mirror is
  downloaded first); every ``engine_kwargs`` key must be a field of vLLM's ``AsyncEngineArgs`` or
  ``FrontendArgs`` ("Unknown engine argument").
* ``VLLMEngineConfig.get_initialization_kwargs``: ``model`` and ``served_model_name`` are not allowed in
  ``engine_kwargs`` (Ray sets them: ``served_model_name=[model_id]``); ``distributed_executor_backend`` is
  forced to ``ray`` on GPUs (any other value is refused); the rest is passed to
  ``vllm.engine.arg_utils.AsyncEngineArgs(**kwargs)`` (``engines/vllm/vllm_engine.py::_get_vllm_engine_config``),
  so vLLM's own defaults apply to every setting not given -- Ray changes none that sizes memory.
* ``VLLMEngineConfig.placement_bundles``: one bundle ``{"GPU": 1}`` per device, ``tensor_parallel_size x
  pipeline_parallel_size`` devices, strategy ``PACK`` (best effort on one node, spilling to others); an
  ``accelerator_type`` adds ``accelerator_type:<name>`` to each bundle, so the engine runs only on nodes Ray
  labels with that GPU (``LLMConfig.validate_accelerator_type``: one of ``ray.util.accelerators``' names,
  ``A10`` read as ``A10G``).

The engine's container is built as ``vllm serve MODEL --served-model-name MODEL_ID
--distributed-executor-backend ray --KEY VALUE ...`` (``true`` -> ``--KEY``, ``false`` -> ``--no-KEY``, a
list -> repeated values, a mapping -> JSON, as vLLM reads a ``--config`` file), each word located at its
``engine_kwargs`` line inside the ``serveConfigV2`` block scalar. Its image, env, volume mounts and GPU
resources are those of the worker group's Ray container (the first group requesting a GPU; of several GPU
groups whose node selectors name different GPUs, the one of the ``accelerator_type``'s GPU, else the one of the GPU
with the least memory, said in a KV504 note: :meth:`_Reader.group_for`), its node selector, affinity and
tolerations that group's pod's; the application's and the entry's
``runtime_env.env_vars`` are added to its env. The vLLM release is the one a ``runtime_env`` ``pip``/``uv``
requirement pins, the entry's own (``LLMConfig.runtime_env``, for its replica and engine workers) before the
application's (:func:`_pinned_vllm`, a KV504 note at it), else the one the Ray release of a ``rayproject/ray-llm``
image installs (:func:`kvlint.engines.images.engine_version`).

A ``!!binary`` value in ``serveConfigV2`` (an ``import_path`` among them) is read as the text it decodes to, as
KubeRay's Go YAML reader decodes it, with a KV504 note at it; invalid base64, which that reader refuses, is a
KV002 warning (:func:`_decode_binary`).

Not modelled, each a located KV503 (info, counted as "not read"): applications whose ``import_path`` is the
user's own Python code, other ``ray.serve.llm`` builders (prefill/decode disaggregation, data-parallel
apps), ``llm_configs`` entries given as file paths, ``llm_engine`` other than vLLM. Wrong types are KV002
warnings at their line; at most :data:`MAX_LLM_CONFIGS` entries are read per object, and at most
:data:`MAX_COPIED_VALUES` values of the worker pod are copied into the engines beyond the first (a KV001 error
past it).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from kvlint.engines.requirements import RequirementReader
from kvlint.fastinit import replaced
from kvlint.gpu_resources import MIG_RESOURCE_PREFIX, NVIDIA_GPU_SHARED, WHOLE_GPUS, amd_partition_of
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Accelerator, DerivedAccelerator, Document, Finding, Mark, Workload
from kvlint.workloads.base import (
    MAX_COPIED_VALUES,
    count_values,
    get_in,
    int_or_none,
    ldict,
    llist,
    located_copy,
    synthetic_workload,
)

__all__ = [
    "MAX_COPIED_VALUES",
    "MAX_LLM_CONFIGS",
    "RAY_ACCELERATORS",
    "ray_gpu_label",
    "ray_label_matches",
    "rayservice_workloads",
    "serve_llm_reads",
]

#: The most ``llm_configs`` entries (over all applications) read in one object; the rest get one KV002.
#: [assumed] a hand-written serve config holds a few models; the cap bounds the work on hostile input, as
#: KubeAI's 1,000 models do.
MAX_LLM_CONFIGS = 1000
#: The most applications read in one ``serveConfigV2``. [assumed], as :data:`MAX_LLM_CONFIGS`.
MAX_APPLICATIONS = 1000
#: The longest ``serveConfigV2`` string parsed, in characters (the file is already capped by the loader).
MAX_SERVE_CONFIG_CHARS = 1 << 20

#: ``import_path`` values of Ray Serve LLM's OpenAI app builder: ``args`` is ``LLMServingArgs``
#: (``llm_configs``). ``ray.serve.llm`` re-exports the builder (python/ray/serve/llm/__init__.py).
_OPENAI_BUILDERS = frozenset({"ray.serve.llm:build_openai_app", "ray.serve.llm.builders:build_openai_app"})
#: ``import_path`` values whose ``args`` is one ``LLMConfig`` (``build_llm_deployment``; Ray 2.43 - 2.44 named it
#: ``build_vllm_deployment``).
_DEPLOYMENT_BUILDERS = frozenset(
    {
        "ray.serve.llm:build_llm_deployment",
        "ray.serve.llm:build_vllm_deployment",
        "ray.serve.llm.builders:build_vllm_deployment",
    }
)

#: Ray Serve applications of published samples whose Python code kvlint restates: ``import_path`` -> the
#: ``runtime_env.env_vars`` the program reads and the vLLM option each sets. Read only when the application's
#: ``runtime_env.working_dir`` is that repository's archive (:data:`_SAMPLE_SOURCES`), whose code Ray downloads.
#: GoogleCloudPlatform/kubernetes-engine-samples ``ai-ml/gke-ray/rayserve/llm/serve.py`` (``VLLMDeployment.bind(
#: model=os.environ['MODEL_ID'], tensor_parallel_size=int(os.environ['TENSOR_PARALLELISM']))``, passed to
#: ``AsyncEngineArgs(**kwargs)``) and ``serve_chat_completion.py`` (``build_app({"model": os.environ['MODEL_ID'],
#: "tensor-parallel-size": os.environ['TENSOR_PARALLELISM']})``, parsed by vLLM's ``make_arg_parser`` into
#: ``AsyncEngineArgs.from_cli_args``), both last changed at 91b8ed04 (read at 2b503651); every other setting is
#: vLLM's default. Both index ``os.environ[...]``, so a variable not set stops the application (``KeyError``).
_SAMPLE_PROGRAMS: dict[str, tuple[tuple[str, str], ...]] = {
    "ai-ml.gke-ray.rayserve.llm.serve:model": (
        ("MODEL_ID", ""),
        ("TENSOR_PARALLELISM", "--tensor-parallel-size"),
    ),
    "ai-ml.gke-ray.rayserve.llm.serve_chat_completion:model": (
        ("MODEL_ID", ""),
        ("TENSOR_PARALLELISM", "--tensor-parallel-size"),
    ),
}
#: The ``working_dir`` archives the programs of :data:`_SAMPLE_PROGRAMS` come from, as (host, path prefix) of a
#: GitHub archive URL of the repository (``https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/
#: main.zip``, any ref): the URL's host must be the host and its path start with the prefix (GitHub reads owner and
#: repository names case-insensitively), so ``https://other.example/github.com/GoogleCloudPlatform/
#: kubernetes-engine-samples/x.zip`` or ``https://github.com@other.example/...`` is not taken for it.
_SAMPLE_SOURCES = (("github.com", "/googlecloudplatform/kubernetes-engine-samples/archive/"),)
#: ``ray.util.accelerators`` names (python/ray/util/accelerators/accelerators.py, Ray 2.56.0) -> kvlint catalogue
#: id, with what the mapping assumes (None: none). ``A100``, ``V100`` and ``H100`` name several GPUs each: Ray
#: puts its own label on every node of the family (:func:`ray_gpu_label`), ``A100-40G``/``A100-80G`` only by
#: hand ("not auto-added to nodes", the module's comment). The id is the GPU planned when the engine's worker
#: group names none; a group whose nodes carry a GPU of the family is planned on that GPU
#: (:func:`ray_label_matches`).
RAY_ACCELERATORS: dict[str, tuple[str, str | None]] = {
    "V100": ("nvidia-v100-sxm2-16gb", "V100 is taken as the 16 GB part"),
    "T4": ("nvidia-t4", None),
    "A10G": ("nvidia-a10g", None),
    "L4": ("nvidia-l4", None),
    "L40S": ("nvidia-l40s", None),
    "A100": (
        "nvidia-a100-sxm4-40gb",
        "A100 is taken as the 40 GB SXM part (Ray's A100 label covers both sizes)",
    ),
    "A100-40G": ("nvidia-a100-sxm4-40gb", None),
    "A100-80G": ("nvidia-a100-sxm4-80gb", None),
    "H100": ("nvidia-h100-sxm5-80gb", "H100 is taken as the 80 GB SXM part"),
    "H200": ("nvidia-h200-141gb", None),
    "B200": ("nvidia-b200", None),
    "AMD-Instinct-MI210": ("amd-instinct-mi210", None),
    "AMD-Instinct-MI250X": ("amd-instinct-mi250x", None),
    "AMD-Instinct-MI300X-OAM": ("amd-instinct-mi300x", None),
    "AMD-Instinct-MI325X-OAM": ("amd-instinct-mi325x", None),
}

#: The labels Ray adds only by hand (Ray 2.56.0 accelerators.py: "not auto-added to nodes"), each on the A100s
#: of one memory size (the size as the NVML device name spells it: ``NVIDIA A100-SXM4-80GB``, ``NVIDIA A100 80GB
#: PCIe``).
_HAND_LABELS = {"A100-40G": ("A100", "40GB"), "A100-80G": ("A100", "80GB")}

#: An NVIDIA device name as Ray reads it: a first word, blanks, then the run of capitals and digits that is the
#: node's accelerator type.
_NVIDIA_NAME_RE = re.compile(r"\w+\s+([A-Z0-9]+)")


def ray_gpu_label(acc: Accelerator) -> str | None:
    """The accelerator type Ray gives a node of NVIDIA GPU ``acc`` (its ``accelerator_type:<type>`` resource), or
    None for other vendors.

    Ray's NVIDIA detection (ray-project/ray python/ray/_private/accelerators/nvidia_gpu.py,
    ``NvidiaGPUAcceleratorManager._gpu_name_to_accelerator_type``, Ray 2.56.0) reads the NVML device name of
    GPU 0 and keeps, after its first word and the blanks that follow, the run of capital letters and digits:
    ``NVIDIA A100-SXM4-80GB`` -> ``A100``, ``Tesla V100-SXM2-32GB`` -> ``V100``, ``NVIDIA H100 NVL`` ->
    ``H100``. The catalogue's ``name`` is that NVML name."""
    if acc.vendor != "nvidia":
        return None
    m = _NVIDIA_NAME_RE.match(acc.name)
    return m.group(1) if m else None


def ray_label_matches(name: str, acc: Accelerator) -> bool:
    """Whether nodes of GPU ``acc`` carry Ray's ``accelerator_type:<name>`` resource: the label Ray adds itself
    (:func:`ray_gpu_label`), or one of :data:`_HAND_LABELS`, put by hand on A100 nodes of its memory size (read
    as the catalogue's GPU of that size: no other A100 may bear it); for other names, the catalogue GPU
    :data:`RAY_ACCELERATORS` maps the name to."""
    if name in _HAND_LABELS:
        family, size = _HAND_LABELS[name]
        return ray_gpu_label(acc) == family and size in acc.name
    if ray_gpu_label(acc) == name:
        return True
    mapped = RAY_ACCELERATORS.get(name)
    return mapped is not None and mapped[0] == acc.id


#: The path prefix of every workload this module builds (read by :func:`kvlint.workloads.find._unread_notes`).
SERVE_PATH = "spec.serveConfigV2"

_NAME_RE = re.compile(r"[^a-z0-9-]+")


def _builder_path(imp: str) -> str:
    """``import_path`` as ``module:attr``: Ray Serve imports ``module.attr`` as ``module:attr``
    (ray-project/ray python/ray/_private/utils.py::import_attr: without a colon the last dot splits the module
    from the attribute; ``ServeApplicationSchema`` accepts both forms)."""
    imp = imp.strip()
    if ":" not in imp and "." in imp:
        module, _, attr = imp.rpartition(".")
        return f"{module}:{attr}"
    return imp


def _names_serve_llm(apps: Any) -> bool:
    """Some application's ``import_path`` (as Ray Serve imports it) is in ``ray.serve.llm``."""
    return isinstance(apps, list) and any(
        isinstance(app, dict)
        and isinstance(app.get("import_path"), str)
        and app["import_path"].strip().startswith("ray.serve.llm")
        for app in apps[:MAX_APPLICATIONS]
    )


def serve_llm_reads(w: Workload) -> bool:
    """The workload was built by this module from a Ray Serve LLM config."""
    return w.path.startswith(SERVE_PATH)


def _finding(
    rule: str, message: str, loc: Loc | None, fix: str = "", severity: Any = None, mark: Mark | None = None
) -> Finding:
    return Finding(rule, message, loc, fix=fix, severity=severity, mark=mark)


def _parse(s: str, at: Loc | None, path: str) -> tuple[LDict | None, str | None]:
    """``serveConfigV2`` parsed with the loader's safe reader and limits, positions mapped into the file's block
    scalar (as :mod:`kvlint.workloads.gitops` reads Argo CD's ``helm.values``), or ``(None, why)``."""
    from kvlint.workloads.gitops import _relocated, load_block_scalar

    if len(s) > MAX_SERVE_CONFIG_CHARS:
        return None, f"it is {len(s)} characters long, more than kvlint reads ({MAX_SERVE_CONFIG_CHARS})"
    result, placed = load_block_scalar(s, at, path)
    if not result.documents:
        why = result.findings[0].message if result.findings else "it is empty"
        return None, f"it does not parse as YAML: {why}"
    if any(f.rule in ("KV001", "KV002") for f in result.findings):
        return None, f"it does not parse as Ray Serve reads it: {result.findings[0].message}"
    data = result.documents[0].data
    if not isinstance(data, dict):
        return None, "its YAML is not a mapping"
    if not placed:
        data = _relocated(data, at or Loc(path))
    return (data if isinstance(data, LDict) else None), None


_BINARY_TAG = "tag:yaml.org,2002:binary"
#: The most decoded ``!!binary`` values said (KV504) per object; the rest are decoded silently.
_MAX_BINARY_NOTES = 10
#: The most characters of a decoded ``!!binary`` value a KV504 note quotes.
_MAX_BINARY_CHARS = 200


def _go_base64(text: str) -> str:
    """``text`` as Go's ``base64.StdEncoding.DecodeString`` reads it: carriage returns and newlines ignored,
    any other character outside the alphabet an error (left in, for :func:`base64.b64decode` to refuse)."""
    return text.replace("\r", "").replace("\n", "")


#: Most ``!!binary`` values :func:`_decode_binary` replaces in one ``serveConfigV2`` (the copies its aliases
#: make included); the rest keep their base64 text. [assumed] far beyond a hand-written serve config.
MAX_BINARY_VALUES = 100_000


def _binary_values(raw: str) -> tuple[list[tuple[tuple[Any, ...], str, str]], str | None]:
    """``(path, name, base64 text)`` of each ``!!binary`` scalar value of the YAML ``raw`` in document order (an
    alias of one at the alias's path too), the path the keys (plain text) and sequence indices from the root,
    ``name`` its key or ``item N``; with None, or with why the document does not parse. One pass over the
    parser's events (libyaml's parser when PyYAML has it), which resolve every spelling of the tag (``!!binary``,
    ``!<tag:yaml.org,2002:binary>``, a ``%TAG`` handle, ``%``-escapes), in time linear in ``raw``: the parsed tree is
    not built again (PyYAML's pure-Python composer took 6 CPU s for a 1 MB ``serveConfigV2``). At most
    :data:`MAX_BINARY_VALUES` values, the first document only."""
    import yaml

    parser_cls = getattr(getattr(yaml, "_yaml", None), "CParser", None) if yaml.__with_libyaml__ else None
    out: list[tuple[tuple[Any, ...], str, str]] = []
    scalars: dict[str, str] = {}  # anchor -> base64 text of an anchored !!binary scalar
    # anchor -> (path, first, end) of an anchored mapping or sequence: its values are out[first:end]
    containers: dict[str, tuple[tuple[Any, ...], int, int]] = {}
    # one frame per open container: [is mapping, path, next key (mapping) / next index (sequence), at a key,
    # anchor, len(out) at its start]; a path is a chain of (parent path, key) pairs, () at the root, made
    # flat (_flat_path) only for a value recorded, so each event costs the same at any depth
    stack: list[list[Any]] = []
    try:
        events = parser_cls(raw) if parser_cls is not None else yaml.SafeLoader(raw)
        while True:
            ev = events.get_event()
            cls = ev.__class__
            if cls is yaml.StreamEndEvent or (cls is yaml.DocumentEndEvent):
                break
            if cls in (yaml.StreamStartEvent, yaml.DocumentStartEvent):
                continue
            top = stack[-1] if stack else None
            if top is not None and top[0] and top[3]:  # a mapping's key
                top[2] = ev.value if cls is yaml.ScalarEvent else None
                top[3] = False
                if cls is yaml.ScalarEvent or cls is yaml.AliasEvent:
                    continue
                # a complex key (a mapping or sequence as key): its contents are no value of the tree
                here: Any = (top[1], _NO_KEY)
            elif top is not None and not top[0]:
                here = (top[1], top[2])
                top[2] += 1
            elif top is not None:
                here = (top[1], top[2])
                top[3] = True
            else:
                here = ()
            if cls is yaml.ScalarEvent:
                if ev.tag == _BINARY_TAG and len(out) < MAX_BINARY_VALUES:
                    flat = _flat_path(here)
                    out.append((flat, _value_name(flat), ev.value))
                    if ev.anchor is not None:
                        scalars[ev.anchor] = ev.value
                        containers.pop(ev.anchor, None)
                elif ev.anchor is not None:
                    scalars.pop(ev.anchor, None)
                    containers.pop(ev.anchor, None)
            elif cls is yaml.AliasEvent:
                if ev.anchor in scalars and len(out) < MAX_BINARY_VALUES:
                    flat = _flat_path(here)
                    out.append((flat, _value_name(flat), scalars[ev.anchor]))
                elif (
                    ev.anchor in containers
                ):  # the loader shares the anchored object; copies get the values too
                    base, first, end = containers[ev.anchor]
                    copied = out[first : min(end, first + MAX_BINARY_VALUES - len(out))]
                    if copied:
                        flat = _flat_path(here)
                        out.extend(((*flat, *p[len(base) :]), name, text) for p, name, text in copied)
            elif cls in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
                if ev.anchor is not None:
                    scalars.pop(ev.anchor, None)
                    containers.pop(ev.anchor, None)
                stack.append([cls is yaml.MappingStartEvent, here, 0, True, ev.anchor, len(out)])
            elif cls in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
                _, base, _, _, anchor, first = stack.pop()
                if anchor is not None:
                    containers[anchor] = (_flat_path(base), first, len(out))
    except (yaml.YAMLError, RecursionError, ValueError):  # the loader read it: nothing of this kind to do
        return [], None
    return out, None


#: The key of a path through a complex (non-scalar) mapping key: no value of the parsed tree is there.
_NO_KEY = object()


def _flat_path(chain: Any) -> tuple[Any, ...]:
    """The keys from the root of a path chain of ``(parent chain, key)`` pairs (``()`` at the root)."""
    keys = []
    while chain:
        chain, key = chain
        keys.append(key)
    return tuple(reversed(keys))


def _value_name(path: tuple[Any, ...]) -> str:
    """A value's key, or ``item N`` for a sequence's item (``item 0`` for the root)."""
    last = path[-1] if path else 0
    return last if isinstance(last, str) else f"item {last}"


def _decode_binary(raw: str, serve: LDict) -> tuple[list[tuple[Loc | None, str]], str | None]:
    """Replace, in the parsed ``serve``, each ``!!binary`` scalar of ``raw`` by the text it decodes to, as
    KubeRay reads ``serveConfigV2`` (ray-project/kuberay ``ray-operator/controllers/ray/rayservice_controller.go``
    ``updateServeDeployment``: ``yaml.Unmarshal`` into a map, then ``json.Marshal`` for Ray's dashboard): Go's
    YAML decoders turn a ``!!binary`` value into the string of its
    base64-decoded bytes, and fail the whole document on invalid base64 ("!!binary value contains invalid
    base64 data": go-yaml ``decode.go`` ``decoder.scalar``); the bytes then go to Ray as JSON, which holds
    invalid UTF-8 as U+FFFD. kvlint's loader keeps such a value as its base64 text (as it keeps every tagged
    string), so the values are found in the parser's events (:func:`_binary_values`) and put at their key path
    in ``serve``. Returns the ``(position, decoded text)`` of each replaced value, and why the document does not
    parse (invalid base64), else None. Never raises."""
    import base64
    import binascii

    values, _ = _binary_values(raw)
    done: list[tuple[Loc | None, str]] = []
    replaced: set[tuple[int, Any]] = set()  # (container, key) already replaced: an alias shares the container
    for path, name, b64 in values:
        parent: Any = serve
        for step in path[:-1]:
            if isinstance(parent, dict) and isinstance(step, str) and step in parent:
                parent = parent[step]
            elif isinstance(parent, list) and isinstance(step, int) and step < len(parent):
                parent = parent[step]
            else:
                parent = None
                break
        key = path[-1] if path else None
        if isinstance(parent, dict) and isinstance(key, str) and key in parent:
            pass
        elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
            pass
        else:
            continue  # not a value of the tree the loader built (a complex key's, a merged map's)
        if (id(parent), key) in replaced:
            continue
        replaced.add((id(parent), key))
        try:
            text = base64.b64decode(_go_base64(b64), validate=True)
        except (binascii.Error, ValueError):
            return done, f"{name}: !!binary value contains invalid base64 data"
        parent[key] = text.decode("utf-8", errors="replace")
        done.append((loc_of(parent, key), parent[key]))
    return done, None


def _is_gpu_device(name: object) -> bool:
    """Whether a container resource gives it a CUDA/ROCm device: a whole GPU (``nvidia.com/gpu``, ``amd.com/gpu``), a
    time-sliced replica (``nvidia.com/gpu.shared``), a MIG slice (``nvidia.com/mig-1g.10gb``) or an AMD compute
    partition under the device plugin's ``mixed`` naming (``amd.com/cpx_nps4``): each is a device the engine's
    workers run on, so the worker group asking it is a GPU group."""
    return isinstance(name, str) and (
        name in WHOLE_GPUS
        or name == NVIDIA_GPU_SHARED
        or name.startswith(MIG_RESOURCE_PREFIX)
        or amd_partition_of(name) is not None
    )


def _has_gpu(container: Any) -> bool:
    res = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(res, dict):
        return False
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, dict) and any(
            _is_gpu_device(r) and v not in (None, 0, "0") for r, v in block.items()
        ):
            return True
    return False


def _ray_container_has_gpu(ps: LDict) -> bool:
    cs = ps.get("containers")
    return isinstance(cs, list) and bool(cs) and _has_gpu(cs[0])


def _ray_gpu_groups(doc: Document) -> list[tuple[LDict, str, int | None]]:
    """The worker groups whose Ray container (its first container) requests a GPU, as :func:`_ray_pod` reads them
    (PodSpec, path, pod count)."""
    return [c for c in _ray_groups(doc) if _ray_container_has_gpu(c[0])]


def _ray_groups(doc: Document) -> list[tuple[LDict, str, int | None]]:
    """Every worker group of the RayService's cluster: its PodSpec, path and pod count (``maxReplicas``, else
    ``replicas`` without the autoscaler, times ``numOfHosts``; None when unknown)."""
    cluster = get_in(doc.data, "spec", "rayClusterConfig")
    groups = get_in(cluster, "workerGroupSpecs")
    candidates: list[tuple[LDict, str, int | None]] = []
    if isinstance(groups, list):
        for i, g in enumerate(groups[:MAX_APPLICATIONS]):
            ps = get_in(g, "template", "spec")
            if isinstance(ps, LDict):
                # KubeRay starts replicas x numOfHosts pods of a group, maxReplicas x numOfHosts at most
                pods = int_or_none(get_in(g, "maxReplicas"))
                if pods is None and get_in(cluster, "enableInTreeAutoscaling") is not True:
                    pods = int_or_none(get_in(g, "replicas"))
                hosts = int_or_none(get_in(g, "numOfHosts")) or 1
                pods = (
                    pods * hosts if pods is not None and 0 <= pods <= 100_000 and 0 < hosts <= 1000 else None
                )
                candidates.append((ps, f"spec.rayClusterConfig.workerGroupSpecs[{i}].template.spec", pods))
    return candidates


def _group_name(doc: Document, path: str) -> str:
    """A worker group's ``groupName`` (else its path), for messages."""
    m = re.search(r"workerGroupSpecs\[(\d+)\]", path)
    groups = get_in(doc.data, "spec", "rayClusterConfig", "workerGroupSpecs")
    if m and isinstance(groups, list) and int(m.group(1)) < len(groups):
        name = get_in(groups[int(m.group(1))], "groupName")
        if isinstance(name, str) and name:
            return name
    return path.removesuffix(".template.spec")


def _ray_pod(doc: Document) -> tuple[LDict | None, str, int | None]:
    """The PodSpec the engine's GPU workers run in: the first worker group whose Ray container (its first
    container) requests a GPU, else the first worker group, else the head group; with its path and the
    group's pod count (``maxReplicas``, else ``replicas`` without the autoscaler, times ``numOfHosts``; None
    when unknown or when several groups request GPUs). An engine may be placed on another of several GPU groups
    (:meth:`_Reader.group_for`)."""
    cluster = get_in(doc.data, "spec", "rayClusterConfig")
    candidates = _ray_groups(doc)
    gpu_groups = [c for c in candidates if _ray_container_has_gpu(c[0])]
    if gpu_groups:
        ps, path, pods = gpu_groups[0]
        # with several GPU groups Ray may place bundles on any of them: the pod count of one says nothing
        return ps, path, pods if len(gpu_groups) == 1 else None
    if candidates:
        return candidates[0]
    head = get_in(cluster, "headGroupSpec", "template", "spec")
    if isinstance(head, LDict):
        return head, "spec.rayClusterConfig.headGroupSpec.template.spec", 1
    return None, "", None


#: What Ray Serve LLM does with an ``engine_kwargs`` key the vLLM release lacks (read at Ray 2.50 - 2.56):
#: ``VLLMEngineConfig.from_llm_config`` keeps only fields of vLLM's ``AsyncEngineArgs`` and ``FrontendArgs``.
_ENGINE_KWARGS_CHECK = (
    "Ray Serve LLM refuses it before vLLM starts: VLLMEngineConfig.from_llm_config raises ValueError('Unknown "
    "engine argument: KEY') for an engine_kwargs key that is not a field of vLLM's AsyncEngineArgs or "
    "FrontendArgs (ray-project/ray python/ray/llm/_internal/serve/engines/vllm/vllm_models.py)"
)


def _kwarg_words(
    key: str, value: Any, kloc: Loc | None, vloc: Loc | None, known: dict[str, tuple[str, str]]
) -> list[tuple[str, Loc | None]]:
    """One ``engine_kwargs`` entry as ``vllm serve`` words: what ``AsyncEngineArgs(key=value)`` sets, written
    as vLLM reads a ``--config`` file (vllm/utils/argparse_utils.py::FlexibleArgumentParser.load_config_file).
    ``false`` is ``--no-KEY`` where the release has that form, nothing for a ``store_true`` option of the
    release (``False`` is its default: ``AsyncEngineArgs(trust_remote_code=False)`` on vLLM 0.8, which has no
    ``--no-trust-remote-code``), and ``--KEY false`` for an option the release lacks (reported as unknown);
    ``known`` is :func:`kvlint.engines.vllm.known_options` of the release."""
    opt = "--" + key
    if value is True:
        return [(opt, kloc)]
    if value is False:
        kind = known.get("--" + key.replace("_", "-"), ("", ""))[1]
        if kind == "flag":
            return []
        if kind or not known:
            return [("--no-" + key, kloc)]
        return [(opt, kloc), ("false", vloc)]
    if value is None:
        return []
    if isinstance(value, list):
        return [(opt, kloc)] + [
            (json.dumps(v) if isinstance(v, (dict, list)) else str(v), vloc) for v in value
        ]
    if isinstance(value, dict):
        return [(opt, kloc), (json.dumps(value, default=str), vloc)]
    return [(opt, kloc), (str(value), vloc)]


def _env_items(runtime_env: Any) -> list[tuple[str, str, Loc | None]]:
    env_vars = get_in(runtime_env, "env_vars")
    if not isinstance(env_vars, dict):
        return []
    return [
        (str(k), "" if v is None else str(v), loc_of(env_vars, k)) for k, v in list(env_vars.items())[:1000]
    ]


def _from_sample_source(runtime_env: Any) -> bool:
    """The application's ``runtime_env.working_dir`` is the archive of a repository of :data:`_SAMPLE_SOURCES`."""
    wd = get_in(runtime_env, "working_dir")
    if not isinstance(wd, str) or len(wd) > 2048:
        return False
    try:
        url = urlsplit(wd.strip())
        host = url.hostname
    except ValueError:  # (an invalid port or IPv6 literal)
        return False
    path = url.path.lower()
    return (
        url.scheme.lower() in ("https", "http")
        and path.endswith(".zip")
        and any(host == h and path.startswith(prefix) for h, prefix in _SAMPLE_SOURCES)
    )


def _pinned_vllm(
    runtime_env: Any, reader: RequirementReader | None = None, image: str = ""
) -> tuple[str | None, Loc | None, str, str]:
    """The vLLM release the ``runtime_env`` installs, where, from which field, and the version range it was taken
    from ("" for a pinned release): a requirement pinning one
    release (:func:`kvlint.engines.requirements.read_requirement`, as pip reads the requirements file Ray writes
    from the list: ``vllm==0.8.5``, ``vLLM[audio] === 0.8.5``, a wheel) in ``pip`` or ``uv``, each a list of requirements or a dict whose
    ``packages`` is one (ray-project/ray ``python/ray/_private/runtime_env/validation.py``
    ``parse_and_validate_pip`` / ``parse_and_validate_uv``); a string there is a requirements file on the driver's
    machine, which kvlint does not see. ``(None, None, "")`` when none pins a release. ``reader`` reads them within
    the budget of the whole object (:class:`kvlint.engines.requirements.RequirementReader`: the applications of
    one object share runtime_env lists and strings through aliases).

    With no pinned release, a version range (``vllm>=0.9,<0.10``: shell55) is read as pip reads it in the environment
    Ray builds: a virtualenv over the image's (ray-project/ray ``python/ray/_private/runtime_env/virtualenv_utils.py``
    ``create_or_get_virtualenv``: ``--system-site-packages``, or a clone of the image's virtualenv), where pip keeps
    the vLLM ``image`` carries when the range admits it ("Requirement already satisfied": no release here, the image's
    stays) and else installs the newest release the range admits, taken as the newest kvlint models in it
    (:func:`kvlint.engines.requirements.newest_admitted`; none when the range admits the newest kvlint models).
    ``uv`` keeps no release of the image's: Ray runs ``uv pip install`` in that virtualenv (ray-project/ray
    ``python/ray/_private/runtime_env/uv.py`` ``UvProcessor._install_uv_packages``), and uv does not look at the
    inherited site packages (astral-sh/uv#4466, #7358: it installs the range's newest release into the virtualenv)."""
    reader = reader or RequirementReader("vllm")
    ranged: tuple[str, Loc | None, str] | None = None
    for field in ("pip", "uv"):
        reqs = get_in(runtime_env, field)
        if isinstance(reqs, dict):
            reqs = reqs.get("packages")
        if not isinstance(reqs, list):
            continue
        for n, req in enumerate(reqs[:1000]):
            pin = reader.read(req) if isinstance(req, str) else None
            if pin is not None and pin.project == "vllm" and pin.release is not None:
                return pin.release, loc_of(reqs, n), f"runtime_env.{field}", ""
            if pin is not None and pin.project == "vllm" and pin.spec and ranged is None:
                ranged = (pin.spec, loc_of(reqs, n), f"runtime_env.{field}")
    if ranged is not None:
        from kvlint.engines.images import engine_release
        from kvlint.engines.requirements import newest_admitted, range_admits
        from kvlint.engines.vllm_flags_data import VERSIONS

        spec, rloc, field = ranged
        carried = engine_release(image, "vllm", None) if image and field == "runtime_env.pip" else None
        if carried is not None and range_admits(spec, carried):
            return None, None, "", ""
        release = newest_admitted(spec, VERSIONS)
        if release is not None:
            return release, rloc, field, spec
    return None, None, "", ""


def _within(spec: str, release: str | None, field: str = "pip") -> str:
    """The words KV504 adds for a release taken from a version range (:func:`_pinned_vllm`); ``field`` the
    runtime_env field it came from (``...uv``: uv installs it, else pip)."""
    if not spec:
        return ""
    installer = "uv" if field.endswith("uv") else "pip"
    return (
        f" (within the range {spec}: {installer} takes the newest release in it on its index the day the pod starts, "
        f"which may be later than {release}, the newest kvlint models in the range)"
    )


def _container_image(w: Workload) -> str:
    """The image of the (one) container of a workload this module builds (:meth:`_Reader.workload`)."""
    cs = w.pod_spec.get("containers") if isinstance(w.pod_spec, dict) else None
    c = cs[0] if isinstance(cs, list) and cs and isinstance(cs[0], dict) else {}
    image = c.get("image")
    return image if isinstance(image, str) else ""


def _llm_runtime_env(app: Any, cfg: Any, j: int) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``pip`` and ``uv`` fields of the runtime_env a Ray Serve LLM config's deployment (its replica and engine
    workers) gets, and the prefix naming where each comes from (``"llm_configs[0]."`` or ``""`` for the
    application's). ray-project/ray ``python/ray/llm/_internal/serve/configs/server_models.py``
    ``LLMConfig.get_serve_options`` builds it as ``{**default, **ray_actor_options.runtime_env,
    **LLMConfig.runtime_env}``, the default being the runtime context's runtime_env (the application's, with which
    Serve builds it): a field is replaced whole, so an LLM config's own ``pip`` list, pinned or not, is the one
    installed and the application's ``vllm==X`` is not. ``app`` is the application, ``cfg`` the ``llm_configs``
    entry, ``j`` its index."""
    layers = (
        (app.get("runtime_env") if isinstance(app, dict) else None, ""),
        (
            get_in(cfg, "deployment_config", "ray_actor_options", "runtime_env"),
            f"llm_configs[{j}].deployment_config.ray_actor_options.",
        ),
        (cfg.get("runtime_env") if isinstance(cfg, dict) else None, f"llm_configs[{j}]."),
    )
    env: dict[str, Any] = {}
    prefixes: dict[str, str] = {}
    for layer, prefix in layers:
        if not isinstance(layer, dict):
            continue
        for field in ("pip", "uv"):
            if field in layer:
                env[field] = layer[field]
                prefixes[field] = prefix
    return env, prefixes


def _container_name(model_id: str, i: int) -> str:
    name = _NAME_RE.sub("-", model_id.lower()).strip("-")[:50].strip("-")
    return name or f"llm-{i}"


class _Reader:
    """State of one RayService read: the worker pod, the findings on the object, the workloads built."""

    def __init__(self, doc: Document, serve: LDict, at: Loc | None) -> None:
        self.doc = doc
        self.serve = serve
        self.at = at
        self.pod, self.pod_path, self.pods = _ray_pod(doc)
        self._gpu_groups: list[tuple[LDict, str, int | None, Any]] | None = None
        self.findings: list[Finding] = []
        self.out: list[Workload] = []
        self.read = 0
        self.capped = False
        self._weight: int | None = None
        self._app_weights: dict[int, int] = {}
        self.copied = 0
        self._known: dict[str, tuple[str, str]] | None = None
        self.requirements = RequirementReader("vllm")

    def note(self, message: str, loc: Loc | None) -> None:
        """A located KV503 (info) for a part kvlint does not read (counted as "not read")."""
        self.findings.append(
            _finding(
                "KV503",
                f"kvlint does not read this RayService's {message}",
                loc or self.at,
                fix="lint the pods the operator creates (kubectl get pod -o yaml | kvlint check -), or check the "
                "engine command separately with kvlint plan -- <command>",
                severity="info",
                mark=Mark.SETTINGS_NOT_READ,
            )
        )

    def wrong(self, message: str, loc: Loc | None) -> None:
        """A KV002 (warning): a value of the wrong type, which Ray Serve's validation refuses."""
        self.findings.append(
            _finding(
                "KV002",
                f"serveConfigV2: {message}; Ray Serve refuses the config and the application does not deploy",
                loc or self.at,
                fix="give the field the type Ray Serve LLM's LLMConfig declares (python/ray/llm/_internal/serve/"
                "core/configs/llm_config.py)",
            )
        )

    def application(self, i: int, app: Any) -> None:
        aloc = loc_of(self.serve.get("applications"), i)
        if not isinstance(app, dict):
            self.wrong(f"applications[{i}] is a {type(app).__name__}, not a mapping", aloc)
            return
        imp = app.get("import_path")
        name = app.get("name")
        label = f"application '{name}'" if isinstance(name, str) and name else f"applications[{i}]"
        iloc = loc_of(app, "import_path") or aloc
        if not isinstance(imp, str):
            if imp is not None:
                self.wrong(f"{label}: import_path is a {type(imp).__name__}, not a string", iloc)
            return
        imp = _builder_path(imp)
        args = app.get("args")
        base = f"spec.serveConfigV2.applications[{i}].args"
        if imp in _OPENAI_BUILDERS:
            configs = get_in(args, "llm_configs")
            cloc = loc_of(args, "llm_configs") if isinstance(args, dict) else loc_of(app, "args") or iloc
            if not isinstance(configs, list):
                what = "missing" if configs is None else f"a {type(configs).__name__}, not a list"
                self.wrong(f"{label}: args.llm_configs of {imp} is {what}", cloc)
                return
            for j, entry in enumerate(configs):
                if not self.take(loc_of(configs, j) or cloc, app):
                    return
                self.entry(app, label, entry, loc_of(configs, j) or cloc, f"{base}.llm_configs[{j}]", j)
        elif imp in _DEPLOYMENT_BUILDERS:
            if not self.take(loc_of(app, "args") or iloc, app):
                return
            self.entry(app, label, args, loc_of(app, "args") or iloc, base, 0)
        elif imp in _SAMPLE_PROGRAMS and _from_sample_source(app.get("runtime_env")):
            if self.take(iloc, app):
                self.program(app, label, imp, iloc, f"spec.serveConfigV2.applications[{i}]")
        elif imp.startswith("ray.serve.llm"):
            self.note(
                f"{label}: its builder {imp} (prefill/decode disaggregation or data-parallel serving) is not "
                "modelled; kvlint reads build_openai_app and build_llm_deployment",
                iloc,
            )
        else:
            self.note(
                f"{label}: its engine is configured by the application's own Python code ({imp}), which kvlint "
                "does not read",
                iloc,
            )

    def program(self, app: dict, label: str, imp: str, loc: Loc | None, path: str) -> None:
        """The engine of a published sample program (:data:`_SAMPLE_PROGRAMS`): its model and options from the
        application's ``runtime_env.env_vars`` as the program reads them, vLLM's defaults for the rest, the
        vLLM release of a ``runtime_env.pip`` pin (:func:`_pinned_vllm`) when there is one."""
        raw = get_in(app.get("runtime_env"), "env_vars")
        if isinstance(raw, dict):
            # Ray refuses the runtime_env before the program runs when a key or value is not a string
            # (ray-project/ray python/ray/_private/runtime_env/validation.py parse_and_validate_env_vars)
            bad = next(
                (
                    (k, v)
                    for k, v in list(raw.items())[:1000]
                    if not (isinstance(k, str) and isinstance(v, str))
                ),
                None,
            )
            if bad is not None:
                what = "key" if not isinstance(bad[0], str) else "value"
                shown = bad[0] if what == "key" else bad[1]
                kind = (
                    "null"
                    if shown is None
                    else "a boolean"
                    if isinstance(shown, bool)
                    else "a number"
                    if isinstance(shown, (int, float))
                    else "a list"
                    if isinstance(shown, list)
                    else "a mapping"
                    if isinstance(shown, dict)
                    else "not a string"
                )
                self.note(
                    f"{label}: runtime_env.env_vars.{str(bad[0])[:100]}: the {what} is {kind}, not a string, and Ray "
                    "refuses the application's runtime_env (TypeError: runtime_env['env_vars'] must be of type "
                    "Dict[str, str]); quote it",
                    loc_of(raw, bad[0]) or loc,
                )
                return
        env = {name: (value, vloc) for name, value, vloc in _env_items(app.get("runtime_env"))}
        missing = [name for name, _ in _SAMPLE_PROGRAMS[imp] if name not in env]
        if missing:
            self.note(
                f"{label}: {imp} reads os.environ[{missing[0]!r}], which its runtime_env.env_vars does not set "
                "(the application stops with KeyError)",
                loc,
            )
            return
        args: list[tuple[Any, Loc | None]] = []
        model = ""
        for name, option in _SAMPLE_PROGRAMS[imp]:
            value, vloc = env[name]
            if not option:
                if value.startswith("-"):
                    # a value, never an option: serve.py passes it as model=..., which no Hub id or path is
                    self.note(
                        f"{label}: {imp} takes runtime_env.env_vars.{name} {value!r} as the model, which is no "
                        "model id or path (the application stops)",
                        vloc or loc,
                    )
                    return
                model = value
                args.insert(0, (value, vloc))
            else:
                # one word, so that a value spelled like an option stays the option's value (KV206 if invalid)
                args.append((f"{option}={value}", vloc))
        cfg = LDict(loc=loc)
        w = self.workload(app, cfg, model, args, loc, path, 0)
        pin, ploc, field, spec = _pinned_vllm(app.get("runtime_env"), self.requirements, _container_image(w))
        notes = [
            _finding(
                "KV504",
                f"{label}: the engine is the one {imp} starts, read from its published code (GoogleCloudPlatform/"
                "kubernetes-engine-samples ai-ml/gke-ray/rayserve/llm, which runtime_env.working_dir downloads): "
                f"{', '.join(n for n, _ in _SAMPLE_PROGRAMS[imp])} from runtime_env.env_vars, vLLM's defaults for "
                "the rest" + (f"; the vLLM release is {pin}, which {field} installs" if pin else ""),
                loc,
                fix="if the working_dir holds other code than the published sample, lint the pods the operator "
                "creates instead",
                severity="info",
            )
        ]
        if pin is not None and ploc is not None:
            notes.append(
                _finding(
                    "KV504",
                    f"vLLM {pin} is read from {field}, which Ray installs for the application over the "
                    "image's Python environment" + _within(spec, pin, field),
                    ploc,
                    severity="info",
                )
            )
        self.out.append(
            replaced(
                w,
                engine_release=pin,
                engine_release_from=(field, ploc) if pin is not None else None,
                findings=(*w.findings, *notes),
            )
        )

    def known_options(self) -> dict[str, tuple[str, str]]:
        """The vLLM options of the release the worker image runs (every release's when it is not known), as
        :func:`kvlint.engines.images.engine_release` reads it from the image. ``--engine-version`` is not
        known here (workloads are built before the run's options apply), so with it the words written for an
        ``engine_kwargs`` key set to false follow the image's release, while the parser reads them with the
        option's."""
        from kvlint.engines.images import engine_release
        from kvlint.engines.vllm import known_options

        cs = self.pod.get("containers") if self.pod is not None else None
        image = cs[0].get("image") if isinstance(cs, list) and cs and isinstance(cs[0], dict) else None
        if self._known is None:
            self._known = known_options(
                engine_release(image, "vllm", None) if isinstance(image, str) else None
            )
        return self._known

    def take(self, loc: Loc | None, app: dict) -> bool:
        """Whether to read one more engine: within :data:`MAX_LLM_CONFIGS` and :data:`MAX_COPIED_VALUES` (the
        worker pod and the application's ``runtime_env`` are copied into each engine), else False with one
        finding saying what was left unread."""
        if self.capped:
            return False
        if self._weight is None:
            self._weight = count_values(self.pod, MAX_COPIED_VALUES)
        if id(app) not in self._app_weights:
            runtime_env = app.get("runtime_env")
            self._app_weights[id(app)] = (
                0 if runtime_env is None else count_values(runtime_env, MAX_COPIED_VALUES)
            )
        weight = self._weight + self._app_weights[id(app)]
        if self.read:
            if self.copied + weight > MAX_COPIED_VALUES:
                self.capped = True
                self.findings.append(
                    _finding(
                        "KV001",
                        "serveConfigV2: too large to read: each llm_configs entry runs in a copy of the Ray worker "
                        f"pod and of its application's runtime_env ({weight:,} values here), and kvlint copies at "
                        f"most {MAX_COPIED_VALUES:,} values beyond the first engine; it read the first "
                        f"{self.read} entries and not the rest",
                        loc,
                        fix="split the applications over several RayServices, or trim the worker pod's env",
                        severity="error",
                    )
                )
                return False
            self.copied += weight
        if self.read >= MAX_LLM_CONFIGS:
            if not self.capped:
                self.capped = True
                self.wrong(
                    f"more than {MAX_LLM_CONFIGS} llm_configs entries; kvlint read the first {MAX_LLM_CONFIGS} "
                    "and left the rest unread",
                    loc,
                )
            return False
        self.read += 1
        return True

    def entry(self, app: dict, label: str, cfg: Any, loc: Loc | None, path: str, j: int) -> None:
        if isinstance(cfg, str):
            self.note(
                f"{label}: llm_configs[{j}] is the path of a YAML file inside the cluster ({cfg}), which kvlint "
                "does not see; lint it with its LLMConfig written inline",
                loc,
            )
            return
        if not isinstance(cfg, dict):
            self.wrong(f"{label}: llm_configs[{j}] is a {type(cfg).__name__}, not an LLMConfig mapping", loc)
            return
        mlc = cfg.get("model_loading_config")
        model_id = get_in(mlc, "model_id")
        if (
            not isinstance(mlc, dict)
            or not isinstance(model_id, (str, int, float))
            or isinstance(model_id, bool)
        ):
            self.wrong(
                f"{label}: llm_configs[{j}].model_loading_config.model_id is missing or not a string "
                "(LLMConfig requires it)",
                loc_of(mlc, "model_id")
                if isinstance(mlc, dict)
                else loc_of(cfg, "model_loading_config") or loc,
            )
            return
        model_id = str(model_id)
        engine = cfg.get("llm_engine", "vLLM")
        if engine != "vLLM":
            self.note(
                f"{label}: llm_configs[{j}] runs llm_engine {engine!r}, which kvlint does not model", loc
            )
            return
        kwargs = cfg.get("engine_kwargs")
        if kwargs is not None and not isinstance(kwargs, dict):
            self.wrong(
                f"{label}: llm_configs[{j}].engine_kwargs is a {type(kwargs).__name__}, not a mapping",
                loc_of(cfg, "engine_kwargs"),
            )
            return
        self.build(app, label, cfg, mlc, model_id, kwargs or {}, loc, path, j)

    def build(
        self,
        app: dict,
        label: str,
        cfg: dict,
        mlc: dict,
        model_id: str,
        kwargs: dict,
        loc: Loc | None,
        path: str,
        j: int,
    ) -> None:
        source = mlc.get("model_source")
        mloc = loc_of(mlc, "model_id")
        if isinstance(source, str) and source:
            model, model_loc = source, loc_of(mlc, "model_source")
        elif isinstance(source, dict) and isinstance(source.get("bucket_uri"), str):
            # a CloudMirrorConfig: Ray downloads the bucket first and serves the local copy
            model, model_loc = str(source["bucket_uri"]), loc_of(source, "bucket_uri")
        else:
            model, model_loc = model_id, mloc
        args: list[tuple[Any, Loc | None]] = [
            (model, model_loc),
            ("--served-model-name", mloc),
            (model_id, mloc),
            ("--distributed-executor-backend", loc),
            ("ray", loc),
        ]
        key_locs = getattr(kwargs, "key_locs", {})
        known = self.known_options()
        for k, v in list(kwargs.items())[:4096]:
            key = str(k)
            kloc = key_locs.get(k) or loc_of(kwargs, k)
            if key in ("model", "served_model_name"):
                self.wrong(
                    f"{label}: engine_kwargs.{key} is not allowed (Ray Serve LLM sets it from "
                    "model_loading_config: VLLMEngineConfig.get_initialization_kwargs raises ValueError)",
                    kloc,
                )
                continue
            if key == "distributed_executor_backend":
                if v != "ray":
                    self.wrong(
                        f"{label}: engine_kwargs.distributed_executor_backend={v!r}: Ray Serve LLM allows only "
                        "'ray' on GPUs (VLLMEngineConfig.get_initialization_kwargs raises ValueError)",
                        kloc,
                    )
                continue
            args += _kwarg_words(key, v, kloc, loc_of(kwargs, k), known)
        w = self.workload(app, cfg, model_id, args, loc, path, j)
        # the vLLM release a runtime_env pins, which Ray installs over the image's Python environment
        # (jimmyshah83/gpt-oss-k8s-gpu-inferencing: pip ["vllm==0.10.1+gptoss"] in the LLM config, "vllm" unpinned
        # in the application's; KV208 said the release was the Ray image's and assumed the newest): read from the
        # runtime_env the LLM's deployment gets (:func:`_llm_runtime_env`)
        env, prefixes = _llm_runtime_env(app, cfg, j)
        pin, ploc, field, spec = _pinned_vllm(env, self.requirements, _container_image(w))
        if pin is not None:
            field = prefixes[field.rsplit(".", 1)[-1]] + field
            note = _finding(
                "KV504",
                f"vLLM {pin} is read from {field}, which Ray installs for the LLM's deployment and engine workers "
                "over the image's Python environment" + _within(spec, pin, field),
                ploc,
                severity="info",
            )
            w = replaced(
                w,
                engine_release=pin,
                engine_release_from=(field, ploc),
                image_source=None,
                findings=(*w.findings, note),
            )
        self.out.append(w)

    def gpu_groups(self) -> list[tuple[LDict, str, int | None, Any]]:
        """The GPU worker groups with the GPU each one's own scheduling names (``nodeSelector``, required node
        affinity: :func:`kvlint.accelerators.placement.resolve_placement`), or None; read once per object."""
        if self._gpu_groups is None:
            from kvlint.accelerators.placement import resolve_placement

            out = []
            for ps, path, pods in _ray_gpu_groups(self.doc):
                cs = ps.get("containers")
                acc = resolve_placement(ps, cs[0], {}).accelerator if isinstance(cs, list) and cs else None
                out.append((ps, path, pods, acc))
            self._gpu_groups = out
        return self._gpu_groups

    def group_for(
        self, cfg: dict, derived: DerivedAccelerator | None, loc: Loc | None
    ) -> tuple[LDict | None, int | None, Finding | None]:
        """The worker group whose pod one engine runs in, its pod count, and a KV504 note saying which group was
        planned when several GPU groups name different GPUs. Ray Serve LLM asks Ray for one ``{"GPU": 1}`` bundle
        per TP x PP worker, strategy ``PACK`` (``VLLMEngineConfig.placement_bundles``), which Ray fills on any node
        with free GPUs, whatever worker group it belongs to; an ``accelerator_type`` adds the node resource
        ``accelerator_type:<name>`` to each bundle, which only nodes of that GPU have (Ray's GPU detection,
        ``ray/_private/accelerators/nvidia_gpu.py``). So: with ``accelerator_type`` the group whose nodes carry
        that GPU (``derived``); without it the group of the GPU with the least memory (the engine may run there,
        and KV403 and the plan then hold for the worst case), named in the note."""
        groups = self.gpu_groups()
        named = [g for g in groups if g[3] is not None]
        if derived is not None and named and len(named) == len(groups):
            label = _ray_label(cfg)
            if not any(g[3].id == derived.accelerator or ray_label_matches(label, g[3]) for g in named):
                return self.pod, self.pods, self.unplaced_note(cfg, label, named, loc)
        if len({g[3].id for g in named}) < 2:
            return self.pod, self.pods, None
        if derived is not None:
            label = _ray_label(cfg)
            match = [g for g in named if g[3].id == derived.accelerator or ray_label_matches(label, g[3])]
            if match:
                # the bundles go to nodes of that label: one group's pod count says how many there are; of
                # several (an A100 label on 40 GB and 80 GB groups), the GPU with the least memory holds
                best = min(match, key=lambda g: (g[3].memory_bytes, groups.index(g)))
                return best[0], best[2] if len(match) == 1 else None, None
            return self.pod, self.pods, None
        smallest = min(named, key=lambda g: (g[3].memory_bytes, groups.index(g)))
        shown = self.groups_shown(named)
        note = _finding(
            "KV504",
            f"several worker groups request GPUs of different types ({shown}) and this engine names no "
            "accelerator_type, so Ray may place its GPU bundles on any of them (strategy PACK: on whichever nodes "
            "have free GPUs, possibly several groups at once); kvlint plans it on the GPU with the least memory, "
            f"{smallest[3].name} of group {_group_name(self.doc, smallest[1])}",
            loc,
            fix="set accelerator_type in the LLM config to the GPU the engine is meant for (Ray then places its "
            "bundles only on nodes of that GPU), or give each model its own GPU type's group",
            severity="info",
        )
        return smallest[0], None, note

    def groups_shown(self, named: list) -> str:
        """The GPU worker groups ``named`` (of :meth:`gpu_groups`) as a KV504 note lists them: each group's name and
        GPU, the first four, then how many more."""
        return ", ".join(f"{_group_name(self.doc, g[1])}: {g[3].name}" for g in named[:4]) + (
            f" and {len(named) - 4:,} more" if len(named) > 4 else ""
        )

    def unplaced_note(self, cfg: dict, label: str, named: list, loc: Loc | None) -> Finding:
        """KV504 (info) for an ``accelerator_type`` whose node resource no worker group's GPU carries (every GPU
        group names its GPU, :func:`ray_label_matches` holds for none): each placement bundle asks for
        ``accelerator_type:<label>`` (ray-project/ray ``VLLMEngineConfig.placement_bundles``), which Ray puts only
        on nodes whose NVML device name gives that label (``nvidia_gpu.py``); ``A10`` is asked as ``A10G``
        (``LLMConfig.validate_accelerator_type``), which no NVIDIA A10 node carries. kvlint still plans the engine
        on the label's GPU, assuming nodes of it join the cluster."""
        asked = cfg.get("accelerator_type")
        shown = self.groups_shown(named)
        rewrite = f" (Ray Serve LLM asks {asked} as {label})" if asked != label else ""
        return _finding(
            "KV504",
            f"accelerator_type {asked}{rewrite}: each GPU bundle of this engine needs Ray's accelerator_type:{label} "
            f"node resource, which Ray gives only nodes whose GPU it labels {label}, and no worker group's GPU is "
            f"one ({shown}); as written the placement group stays pending and the engine does not start. kvlint "
            f"plans it on the GPU accelerator_type names, assuming nodes of it join the cluster",
            loc_of(cfg, "accelerator_type") or loc,
            fix="set accelerator_type to the label Ray gives the worker group's GPU (the model word of its NVML name, "
            "A100, H100, L4...), or remove it, or add a worker group of that GPU",
            severity="info",
        )

    def workload(
        self, app: dict, cfg: dict, model_id: str, args: list, loc: Loc | None, path: str, j: int
    ) -> Workload:
        doc = self.doc
        derived = self.derived(cfg)
        pod, pods, group_note = self.group_for(cfg, derived, loc_of(cfg, "model_loading_config") or loc)
        derived = self.narrowed(cfg, derived, pod)
        ray_c: LDict = LDict(loc=loc)
        if pod is not None:
            cs = pod.get("containers")
            if isinstance(cs, list) and cs and isinstance(cs[0], LDict):
                ray_c = cs[0]
        env_items: list[tuple[Any, Loc | None]] = []
        old_env = ray_c.get("env")
        names: dict[str, int] = {}
        if isinstance(old_env, list):
            for n, e in enumerate(old_env[:4096]):
                env_items.append((e, loc_of(old_env, n)))
                if isinstance(e, dict) and isinstance(e.get("name"), str):
                    names[e["name"]] = len(env_items) - 1
        for name, value, vloc in _env_items(app.get("runtime_env")) + _env_items(cfg.get("runtime_env")):
            item = ldict(vloc, [("name", name, vloc), ("value", value, vloc)])
            if name in names:
                env_items[names[name]] = (item, vloc)
            else:
                names[name] = len(env_items)
                env_items.append((item, vloc))
        image = ray_c.get("image")
        items: list[tuple[str, Any, Loc | None]] = [
            ("name", _container_name(model_id, j), loc),
            ("image", image if isinstance(image, str) else "", loc_of(ray_c, "image") or loc),
            ("command", llist(loc, [("vllm", loc), ("serve", loc)]), loc),
            ("args", llist(loc, args), loc),
        ]
        if env_items:
            items.append(("env", llist(loc_of(ray_c, "env") or loc, env_items), loc_of(ray_c, "env") or loc))
        for key in ("resources", "volumeMounts"):
            if key in ray_c:
                items.append((key, ray_c[key], loc_of(ray_c, key)))
        container = ldict(loc, items)
        if pod is not None:
            ps = located_copy(pod)
        else:
            ps = LDict(loc=loc_of(doc.data, "spec") or doc.loc)
        ps["containers"] = llist(loc, [(container, loc)])
        ps.locs["containers"] = loc or doc.loc
        image_source: str | None = None
        if isinstance(image, str) and image:
            from kvlint.engines.images import engine_version, image_placeholder

            if engine_version(image) is None and image_placeholder(image) is None:
                image_source = (
                    f"the Python environment of the Ray image {image} (kvlint knows the vLLM release of "
                    "rayproject/ray-llm images only)"
                )
        notes = self.assumptions(cfg, image, loc_of(ray_c, "image"))
        if group_note is not None:
            notes.append(group_note)
        dc = cfg.get("deployment_config")
        replicas = int_or_none(get_in(dc, "num_replicas")) if isinstance(dc, dict) else None
        w = synthetic_workload(
            doc,
            ps,
            path,
            replicas=replicas,
            derived_accelerator=derived,
            image_source=image_source,
            engine_kwargs_refusal=_ENGINE_KWARGS_CHECK,
        )
        # the pods of the worker group among which Ray places the engine's GPU bundles (KV403 counts their GPUs)
        return replaced(w, group_size=pods or w.group_size, findings=(*w.findings, *notes))

    def derived(self, cfg: dict) -> DerivedAccelerator | None:
        """The GPU an LLM config's ``accelerator_type`` names (:data:`RAY_ACCELERATORS`), or None."""
        acc = cfg.get("accelerator_type")
        if not isinstance(acc, str) or not acc:
            return None
        name = _ray_label(cfg)
        mapped = RAY_ACCELERATORS.get(name)
        if mapped is None:
            return None
        acc_id, assumed = mapped
        return DerivedAccelerator(
            acc_id,
            f"Ray Serve LLM accelerator_type={acc} (each placement bundle needs Ray's "
            f"accelerator_type:{name} node resource; {assumed or acc_id})",
            loc_of(cfg, "accelerator_type") or self.doc.loc,
        )

    def narrowed(
        self, cfg: dict, derived: DerivedAccelerator | None, pod: LDict | None
    ) -> DerivedAccelerator | None:
        """``derived`` made exact by the worker group the engine runs in: when the group's own scheduling names
        a GPU that bears the ``accelerator_type`` label (:func:`ray_label_matches`: an ``A100`` group of
        A100-SXM4-80GB nodes), that GPU, not the one :data:`RAY_ACCELERATORS` assumes for the label (the 40 GB
        part); else ``derived`` unchanged."""
        if derived is None or pod is None:
            return derived
        group = next((g for g in self.gpu_groups() if g[0] is pod and g[3] is not None), None)
        label = _ray_label(cfg)
        if group is None or group[3].id == derived.accelerator or not ray_label_matches(label, group[3]):
            return derived
        own = group[3]
        return DerivedAccelerator(
            own.id,
            f"Ray Serve LLM accelerator_type={cfg.get('accelerator_type')} (each placement bundle needs Ray's "
            f"accelerator_type:{label} node resource, which nodes of the {own.name} of the worker group "
            f"{_group_name(self.doc, group[1])} carry)",
            derived.loc,
        )

    def assumptions(self, cfg: dict, image: Any, image_loc: Loc | None) -> list[Finding]:
        """KV504 (info) for what the engine was read on an assumption: the vLLM release of a Ray wheel that
        requires ``>=`` one, and custom placement group bundles (not modelled)."""
        from kvlint.engines.images import RAY_LLM_PINNED, RAY_LLM_VLLM, ray_llm_release

        out: list[Finding] = []
        release = ray_llm_release(image) if isinstance(image, str) else None
        if release is not None and release not in RAY_LLM_PINNED:
            out.append(
                _finding(
                    "KV504",
                    f"the vLLM release of {image} is taken as {RAY_LLM_VLLM[release]}, the lowest that Ray "
                    f"{release} requires (its wheel's llm extra asks vllm>={RAY_LLM_VLLM[release]}); the image "
                    "may hold a later one",
                    image_loc,
                    fix="pass --engine-version with the vLLM release of the image (python -c 'import vllm; "
                    "print(vllm.__version__)' in it) if it differs",
                    severity="info",
                )
            )
        pg = cfg.get("placement_group_config")
        if pg is not None:
            out.append(
                _finding(
                    "KV504",
                    "placement_group_config is not modelled: kvlint assumed one whole GPU per tensor x pipeline "
                    "parallel worker, Ray Serve LLM's default bundles (a bundle of a GPU fraction shares the GPU: "
                    "VLLMEngineConfig sets VLLM_RAY_PER_WORKER_GPUS)",
                    getattr(cfg, "key_locs", {}).get("placement_group_config")
                    or loc_of(cfg, "placement_group_config"),
                    severity="info",
                )
            )
        return out


def rayservice_workloads(doc: Document) -> list[Workload]:
    """KubeRay ``RayService`` whose ``spec.serveConfigV2`` holds Ray Serve LLM applications -> one synthetic
    workload per ``LLMConfig`` (see the module docstring for what is restated and from where); empty when the
    object has no ``serveConfigV2`` or none of its applications is read (the caller then lists the head and
    worker pods with the "not read" note, as before). Findings about the parts not read (KV503) and the
    values of the wrong type (KV002) ride on the first workload; never raises on odd shapes."""
    spec = get_in(doc.data, "spec")
    raw = get_in(spec, "serveConfigV2")
    if not isinstance(raw, str):
        return []
    # KubeRay reads serveConfigV2 as YAML, so a double-quoted import_path may spell ``ray.serve.llm`` with
    # escapes ("ray.serve\x2ellm:build_openai_app"): such a config is parsed too, and read when the decoded
    # path names Ray Serve LLM (it was left unread, an engine kvlint never saw passing as checked)
    # A !!binary value is decoded too (as KubeRay's Go YAML reader does: _decode_binary), so an import_path
    # written ``!!binary cmF5LnNlcnZlLmxsbTpidWlsZF9vcGVuYWlfYXBw`` is read as the ray.serve.llm builder it names
    literal = "ray.serve.llm" in raw or any(program.split(":")[0] in raw for program in _SAMPLE_PROGRAMS)
    # every spelling of a tag starts with "!" (``!!bin%61ry`` and a %TAG handle do not spell "binary")
    binary = "!" in raw
    if not literal and not binary and "\\" not in raw:
        return []
    at = loc_of(spec, "serveConfigV2")
    serve, why = _parse(raw, at, doc.path)
    decoded: list[tuple[Loc | None, str]] = []
    bad_base64 = False  # (said by the decoding, not read back from its message)
    if serve is not None and binary:
        decoded, bad = _decode_binary(raw, serve)
        if bad is not None:
            serve, why, bad_base64 = None, f"it does not parse as KubeRay reads it: {bad}", True
    if bad_base64:
        # KubeRay cannot read the config at all, whatever its applications are
        return [_empty(doc, at, [_finding("KV002", f"serveConfigV2 cannot be read: {why}", at)])]
    if not literal and (serve is None or not _names_serve_llm(serve.get("applications"))):
        return []
    if serve is None:
        return [_empty(doc, at, [_finding("KV002", f"serveConfigV2 cannot be read: {why}", at)])]
    apps = serve.get("applications")
    reader = _Reader(doc, serve, at)
    for loc, text in decoded[:_MAX_BINARY_NOTES]:
        reader.findings.append(
            _finding(
                "KV504",
                f"serveConfigV2: a !!binary value, which KubeRay's YAML reader (Go) decodes to the text "
                f"{text[:_MAX_BINARY_CHARS]!r}{'...' if len(text) > _MAX_BINARY_CHARS else ''}; "
                "kvlint read it so",
                loc or at,
                fix="write the value as plain text: Ray Serve gets the decoded text, and readers of the manifest "
                "see only base64",
                severity="info",
            )
        )
    if not isinstance(apps, list):
        reader.wrong("applications is missing or not a list", loc_of(serve, "applications") or at)
        return [_empty(doc, at, reader.findings)]
    for i, app in enumerate(apps[:MAX_APPLICATIONS]):
        reader.application(i, app)
    if len(apps) > MAX_APPLICATIONS:
        reader.wrong(
            f"more than {MAX_APPLICATIONS} applications; kvlint read the first {MAX_APPLICATIONS}",
            loc_of(apps, MAX_APPLICATIONS),
        )
    if not reader.out:
        return [_empty(doc, at, reader.findings)] if reader.findings else []
    first = reader.out[0]
    return [replaced(first, findings=(*first.findings, *reader.findings)), *reader.out[1:]]


def _ray_label(cfg: dict) -> str:
    """The node resource label an LLM config's ``accelerator_type`` asks for (``accelerator_type:<label>``):
    ``A10`` is read as ``A10G`` (ray-project/ray ``LLMConfig.validate_accelerator_type``, Ray 2.56.0), the rest
    as written (``VLLMEngineConfig.ray_accelerator_type``, which the bundles use; an older
    ``LLMConfig.ray_accelerator_type`` wrote ``_`` as ``-``, not followed here); "" when not a string."""
    acc = cfg.get("accelerator_type")
    if not isinstance(acc, str):
        return ""
    return "A10G" if acc == "A10" else acc


def _empty(doc: Document, at: Loc | None, findings: list[Finding]) -> Workload:
    """A workload with no containers carrying ``findings`` (nothing could be built)."""
    ps = LDict(loc=at or doc.loc)
    ps["containers"] = LList([], loc=ps.loc)
    return Workload(doc, doc.kind, doc.name, doc.namespace, ps, SERVE_PATH, findings=tuple(findings))
