"""Values files for vLLM's production-stack Helm chart (``vllm-stack``): the engine Deployments the chart renders
from ``servingEngineSpec.modelSpec[]``, built as kvlint builds the pods of operator objects.

Infra repositories often keep only the values and point ``helm install``, Argo CD or Flux at the published
chart, so the values file is the only declaration there is to lint. The chart's template is restated here for
the fields that decide what the engine runs and on what (image, command, GPUs, placement, ``/dev/shm``, env,
probes, the entry's annotations); everything it renders besides (the chart's own labels, Services, the router,
PVCs, the LoRA sidecar, the RayCluster of ``raySpec`` entries) is not built.

Source: vllm-project/production-stack at :data:`CHART_COMMIT` (chart ``vllm-stack`` :data:`CHART_VERSION`):
``helm/templates/deployment-vllm-multi.yaml`` (one Deployment per ``modelSpec`` entry), its helpers in
``helm/templates/_helpers.tpl`` (``chart.resources``, ``chart.hasLimits``, ``chart.container-port``,
``chart.probes``/``chart.templateProbe``), the chart's defaults in ``helm/values.yaml`` (merged under the
user's values as Helm does: maps merge, lists and scalars replace) and the types ``helm/values.schema.json``
requires (Helm validates the merged values against it before rendering; a value of the wrong type fails
``helm template``).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kvlint.fastinit import replaced
from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import ChartArg, Document, Finding, Mark, ValuesTerm, Workload
from kvlint.wording import shell_word, with_article
from kvlint.workloads.base import MAX_COPIED_VALUES, count_values, ldict, llist, synthetic_workload

__all__ = [
    "CHART_COMMIT",
    "CHART_TEMPLATE",
    "CHART_VERSION",
    "MAX_MODEL_SPECS",
    "go_float",
    "go_text",
    "is_stack_values",
    "stack_values_finding",
    "stack_values_workloads",
    "unbuilt_reason",
]

#: The production-stack commit whose chart this module restates (the corpus's copy of the chart and values).
CHART_COMMIT = "a6c01db05f65f556235413ba8dbcfb0c01132fff"
#: ``helm/Chart.yaml`` ``version`` at :data:`CHART_COMMIT`.
CHART_VERSION = "0.1.12"
#: The template that renders one engine Deployment per ``modelSpec`` entry.
CHART_TEMPLATE = "helm/templates/deployment-vllm-multi.yaml"
#: The Helm release name the built objects carry (the real one is chosen at ``helm install``).
RELEASE = "RELEASE"
#: The most ``modelSpec`` entries read (each becomes a pod analysed in full); beyond, the file is reported as
#: not read. [assumed] a production-stack release serves a few models, not hundreds.
MAX_MODEL_SPECS = 256

#: ``servingEngineSpec`` defaults of the chart's ``helm/values.yaml`` at :data:`CHART_COMMIT` that the engine
#: Deployment reads (``enableEngine``, ``containerPort``, ``runtimeClassName``, the three probes).
_ENGINE_DEFAULTS: dict[str, Any] = {
    "enableEngine": True,
    "containerPort": 8000,
    "runtimeClassName": "nvidia",
    "startupProbe": {
        "initialDelaySeconds": 15,
        "periodSeconds": 10,
        "failureThreshold": 60,
        "httpGet": {"path": "/health", "port": 8000},
    },
    "livenessProbe": {
        "initialDelaySeconds": 15,
        "failureThreshold": 3,
        "periodSeconds": 10,
        "httpGet": {"path": "/health", "port": 8000},
    },
    "readinessProbe": {
        "initialDelaySeconds": 15,
        "failureThreshold": 3,
        "periodSeconds": 5,
        "httpGet": {"path": "/health", "port": 8000},
    },
}


@dataclass(frozen=True)
class _T:
    """What ``helm/values.schema.json`` allows for one value: JSON ``types`` ("number" takes integers too;
    "integer" no booleans), the values of an ``enum``, the ``props`` of an object, the type of an array's
    ``items``."""

    types: tuple[str, ...]
    enum: tuple[str, ...] = ()
    props: dict[str, _T] | None = None
    items: str | None = None


def _t(
    *types: str, enum: tuple[str, ...] = (), props: dict[str, _T] | None = None, items: str | None = None
) -> _T:
    return _T(types, enum, props, items)


_S, _I, _B, _O, _A = _t("string"), _t("integer"), _t("boolean"), _t("object"), _t("array")
_NUMERIC = _t("integer", "number", "string")
_PROBE = _t(
    "object",
    props={
        "initialDelaySeconds": _I,
        "periodSeconds": _I,
        "failureThreshold": _I,
        "httpGet": _t("object", props={"path": _S, "port": _t("integer", "string")}),
    },
)

#: The schema (``helm/values.schema.json`` at :data:`CHART_COMMIT`) of the ``servingEngineSpec`` values this
#: module reads. Helm validates the merged values against it and ``helm template`` fails on a mismatch.
_SE_SCHEMA: dict[str, _T] = {
    "modelSpec": _A,
    "enableEngine": _B,
    "configs": _O,
    "containerPort": _I,
    "runtimeClassName": _S,
    "schedulerName": _S,
    "tolerations": _A,
    "startupProbe": _PROBE,
    "livenessProbe": _PROBE,
    "readinessProbe": _PROBE,
}
#: ... and of a ``modelSpec`` entry.
_MODEL_SCHEMA: dict[str, _T] = {
    "name": _S,
    "enabled": _B,
    "repository": _S,
    "tag": _S,
    "modelURL": _S,
    "modelRevision": _S,
    "replicaCount": _I,
    "requestCPU": _I,
    "requestMemory": _S,
    "requestGPU": _NUMERIC,
    "requestGPUType": _S,
    "requestGPUMem": _S,
    "requestGPUMemPercentage": _S,
    "requestGPUCores": _S,
    "limitCPU": _NUMERIC,
    "limitMemory": _S,
    "limitGPUMem": _S,
    "limitGPUMemPercentage": _S,
    "limitGPUCores": _S,
    "resources": _O,
    "env": _A,
    "envFromSecret": _O,
    "enableLoRA": _B,
    "nodeName": _S,
    "nodeSelectorTerms": _A,
    "affinity": _O,
    "tolerations": _A,
    "tolerationsPolicy": _S,
    "runtimeClassName": _S,
    "priorityClassName": _S,
    "pvcStorage": _S,
    "pvcAccessMode": _t("array", items="string"),
    "shmSize": _S,
    "annotations": _O,
    "podAnnotations": _O,
    "labels": _O,
    "podLabels": _O,
    "extraVolumes": _A,
    "extraVolumeMounts": _A,
    "hf_token": _t("string", "object", props={"secretName": _S, "secretKey": _S}),
    "initContainer": _t(
        "object",
        props={
            "name": _S,
            "image": _S,
            "command": _t("array", items="string"),
            "args": _t("array", items="string"),
            "env": _A,
            "resources": _O,
            "mountPvcStorage": _B,
            "extraVolumeMounts": _A,
        },
    ),
    "vllmConfig": _t(
        "object",
        props={
            "enableChunkedPrefill": _B,
            "enablePrefixCaching": _B,
            "maxModelLen": _I,
            "dtype": _S,
            "tensorParallelSize": _I,
            "maxNumSeqs": _I,
            "gpuMemoryUtilization": _NUMERIC,
            "maxLoras": _I,
            "runner": _t("string", enum=("auto", "pooling")),
            "convert": _t("string", enum=("token_embed", "embed", "token_classify", "classify", "score")),
            "extraArgs": _t("array", items="string"),
            "v0": _S,
        },
    ),
    "lmcacheConfig": _t(
        "object",
        props={
            "enabled": _B,
            "cpuOffloadingBufferSize": _NUMERIC,
            "logLevel": _t("string", enum=("DEBUG", "INFO", "WARNING", "ERROR")),
        },
    ),
    "raySpec": _t("object", props={"enabled": _B, "headNode": _O}),
    "keda": _t("object", props={"enabled": _B, "minReplicaCount": _I, "maxReplicaCount": _I}),
}


#: The keys of a ``modelSpec`` entry the chart's templates read (``$modelSpec.<key>`` and
#: ``hasKey $modelSpec "<key>"`` in ``helm/templates/`` at :data:`CHART_COMMIT`). The chart's schema does not
#: forbid other keys, so helm accepts them and the templates never use their values.
_MODEL_KEYS_READ = frozenset(
    {
        "affinity",
        "annotations",
        "chatTemplate",
        "chatTemplateConfigMap",
        "enableLoRA",
        "enableTool",
        "enabled",
        "env",
        "envFromSecret",
        "extraVolumeMounts",
        "extraVolumes",
        "hf_token",
        "imagePullSecret",
        "initContainer",
        "keda",
        "labels",
        "limitCPU",
        "limitGPUCores",
        "limitGPUMem",
        "limitGPUMemPercentage",
        "limitMemory",
        "lmcacheConfig",
        "modelRevision",
        "modelURL",
        "name",
        "nodeName",
        "nodeSelectorTerms",
        "pdb",
        "podAnnotations",
        "podLabels",
        "priorityClassName",
        "pvcAccessMode",
        "pvcAnnotations",
        "pvcExistingClaimName",
        "pvcLabels",
        "pvcMatchLabels",
        "pvcStorage",
        "raySpec",
        "replicaCount",
        "repository",
        "requestCPU",
        "requestGPU",
        "requestGPUCores",
        "requestGPUMem",
        "requestGPUMemPercentage",
        "requestGPUType",
        "requestMemory",
        "resources",
        "runtimeClassName",
        "serviceAccountName",
        "serviceAnnotations",
        "shmSize",
        "storageClass",
        "tag",
        "tolerations",
        "tolerationsPolicy",
        "toolCallParser",
        "vllmConfig",
    }
)
#: ``vllmConfig`` keys the chart reads (``hasKey . "<key>"``, ``.<key>`` in its ``with`` block).
_VLLM_CONFIG_KEYS_READ = frozenset(
    {
        "enableChunkedPrefill",
        "enablePrefixCaching",
        "maxModelLen",
        "dtype",
        "tensorParallelSize",
        "pipelineParallelSize",
        "maxNumSeqs",
        "gpuMemoryUtilization",
        "maxLoras",
        "runner",
        "convert",
        "extraArgs",
        "v0",
        "v1",
        "prometheusMultiprocDir",
    }
)


def _unread_keys(i: int, m: LDict) -> list[Finding]:
    """KV005 for each key of the ``modelSpec[i]`` entry ``m`` that the chart's templates do not read
    (:data:`_MODEL_KEYS_READ`): helm renders without it, so a setting written there (``extraArgs`` beside
    ``vllmConfig`` instead of inside it, ``nodeSelector`` for ``nodeSelectorTerms``) is silently dropped.
    A ``vllmConfig`` key is pointed to ``vllmConfig``; another near a key the chart reads is named."""
    from kvlint.engines.options import suggest  # (kvlint.engines imports the workload readers)

    out = []
    for k in m:
        key = str(k)
        if key in _MODEL_KEYS_READ:
            continue
        if key in _VLLM_CONFIG_KEYS_READ:
            hint, fix = f"; the chart reads {key} under vllmConfig", f"move '{key}' under vllmConfig"
        elif key.lower() == "vllmapikey":
            # helm/templates/deployment-vllm-multi.yaml at CHART_COMMIT sets every engine's VLLM_API_KEY from
            # $.Values.servingEngineSpec.vllmApiKey (a string, or a map with secretName and secretKey); a
            # modelSpec entry has no key of its own (values.schema.json)
            hint = (
                "; the chart reads the engines' API key once, as servingEngineSpec.vllmApiKey (a string, or "
                "secretName and secretKey of a Secret), and without it there the engines start with no API key"
            )
            fix = "move it to servingEngineSpec.vllmApiKey (spelled vllmApiKey), which every modelSpec entry uses"
        elif key == "nodeSelector":
            hint = "; the chart places the pods with nodeSelectorTerms (required node affinity) or affinity"
            fix = "write the node labels as nodeSelectorTerms (matchExpressions) or affinity"
        else:
            guess = suggest(key, _MODEL_KEYS_READ)
            hint = f"; did you mean '{guess}'?" if guess else ""
            fix = (
                f"rename '{key}' to '{guess}'"
                if guess
                else f"remove '{key}' or move it where the chart reads it"
            )
        out.append(
            Finding(
                "KV005",
                f"'{key}' in {_plain_path(i)} is not a key production-stack's chart reads: helm accepts the "
                f"values and renders without it, so its value is never used{hint}",
                _key_loc(m, key),
                fix=fix,
                severity="warning",
            )
        )
    return out


def _plain_path(i: int) -> str:
    return f"servingEngineSpec.modelSpec[{i}]"


def is_stack_values(data: Any) -> bool:
    """Whether ``data`` (a loaded document) is production-stack chart values: a mapping without ``apiVersion``
    and ``kind`` whose ``servingEngineSpec`` mapping has a ``modelSpec`` key."""
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return False
    spec = data.get("servingEngineSpec")
    return isinstance(spec, dict) and "modelSpec" in spec


def go_text(v: Any, *, nil: str = "", max_depth: int | None = None, out_of_range: str | None = None) -> str:
    """``v`` as Helm's templates print it (``{{ v }}``, sprig ``quote``/``toString``): Helm reads values files
    into JSON types, so every number is a float64, printed as Go's ``%v`` does (shortest digits, exponent form
    from 1e+06 or below 1e-04: ``maxModelLen: 1000000`` renders ``1e+06``); booleans ``true``/``false``; a
    missing value the empty string (sprig's ``quote`` drops nil); lists ``[a b]`` and maps ``map[k:v]``.

    The same for ``fmt.Sprintf("%v", v)`` of a value ``json.Unmarshal`` put in ``interface{}`` (Kthena's
    controller, :mod:`kvlint.workloads.kthena`), with the parameters that differ: ``nil`` for None (Go's
    ``<nil>``; Helm's "" by default); ``max_depth``: nesting below that many levels of maps and lists is written
    ``...`` (None: no limit); ``out_of_range``: every number goes through float64 and one beyond it is written
    so (None: an integer from 2^1023 is written as its digits)."""
    return _go_text(v, nil, max_depth, out_of_range, 0)


def _go_text(v: Any, nil: str, max_depth: int | None, out_of_range: str | None, depth: int) -> str:
    if max_depth is not None and depth > max_depth:
        return "..."
    if v is None:
        return nil
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if out_of_range is None:
            return go_float(float(v)) if not isinstance(v, int) or abs(v) < 2**1023 else str(v)
        try:
            return go_float(float(v))
        except OverflowError:
            return out_of_range
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(_go_text(x, nil, max_depth, out_of_range, depth + 1) for x in v) + "]"
    if isinstance(v, dict):
        inner = (f"{k}:{_go_text(v[k], nil, max_depth, out_of_range, depth + 1)}" for k in sorted(v, key=str))
        return "map[" + " ".join(inner) + "]"
    return str(v)


def go_float(x: float) -> str:
    """Go's ``fmt.Sprint(float64)``: ``strconv.FormatFloat(x, 'g', -1, 64)`` (exponent form when the decimal
    exponent is below -4 or at least 6, two exponent digits at least; ``-0``, ``NaN``, ``+Inf``, ``-Inf``), as
    Helm prints a values number and ``fmt.Sprintf("%v")`` a JSON number decoded into ``interface{}``."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if str(x).startswith("-") else "0"
    sign, digits, exp = decimal.Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits))
    point = len(ds) + exp  # digits before the decimal point
    e = point - 1
    neg = "-" if sign else ""
    if e < -4 or e >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return f"{neg}{ds}{'0' * (point - len(ds))}"
    return f"{neg}{ds[:point]}.{ds[point:]}"


def _key_loc(holder: Any, key: str) -> Loc | None:
    """Where ``key`` itself is written in ``holder`` (the line of ``modelSpec:``, not of its first item)."""
    if isinstance(holder, LDict) and key in holder:
        return holder.key_locs.get(key) or loc_of(holder, key)
    return loc_of(holder, key)


def _truthy(v: Any) -> bool:
    """Go template truth (``if``, ``with``, ``and``/``or``, sprig ``default``): false for nil, false, 0, and
    empty strings, lists and maps."""
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0
    if isinstance(v, (str, list, dict)):
        return len(v) > 0
    return True


def _printed_int(v: Any) -> int | None:
    """The integer a template's bare ``{{ v }}`` leaves in the rendered YAML (``replicas: 2`` from ``2`` or
    ``2.0``, which Helm holds as the same float64), None when it prints no plain integer (a missing value,
    ``1e+06``, a string, a fraction)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    text = go_text(v)
    return int(text) if text.isdigit() else None


def _printed(v: Any) -> Any:
    """A scalar as a template's bare ``{{ v }}`` leaves it in the rendered YAML: numbers printed as Helm prints
    them and read back (``8080`` from ``"8080"`` or ``8080.0``), other strings as written."""
    if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 18 and (v == "0" or v[0] != "0"):
        return int(v)  # a decimal integer (not "0755", an octal to YAML 1.1, nor non-ASCII digits)
    if isinstance(v, float):
        return _printed_int(v) if _printed_int(v) is not None else v
    return v


def _go_int(v: Any) -> int:
    """sprig ``int`` (``cast.ToInt``): numbers truncated, booleans 1/0, strings parsed as integers (base
    prefixes allowed), anything else 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v == v and abs(v) != float("inf") else 0
    if isinstance(v, str):
        try:
            return int(v.strip(), 0)
        except ValueError:
            return 0
    return 0


def _schema_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _type_errors(
    holder: Any, schema: dict[str, _T], path: str, nulls: bool = False
) -> Iterator[tuple[str, Loc | None]]:
    """``(why, position)`` for each value of ``holder`` that the chart's schema refuses (its type, an enum, the
    items of an array, recursively the properties of an object). A missing value is not checked; a null one
    only when ``nulls``: Helm drops the nulls of maps it merges with the chart's defaults
    (``servingEngineSpec``), but a list replaces the chart's whole, so the nulls inside a ``modelSpec`` entry
    reach the schema, which allows null for none of the entry's values (``helm template`` fails with
    "Invalid type. Expected: string, given: null")."""
    if not isinstance(holder, dict):
        return
    refused = f"the values.schema.json of chart vllm-stack {CHART_VERSION} wants"
    for key, t in schema.items():
        value = holder.get(key)
        if value is None and not (nulls and key in holder):
            continue
        got = _schema_type(value)
        where = f"{path}.{key}"
        if got not in t.types and not (got == "integer" and "number" in t.types):
            want = " or ".join(t.types)
            yield (
                f"{where} is {with_article(got)} where {refused} {with_article(want)}, so helm refuses these values",
                loc_of(holder, key),
            )
            continue
        if t.enum and value not in t.enum:
            yield (
                f"{where} is {value!r}, not one of {', '.join(t.enum)} that {refused}, so helm refuses these values",
                loc_of(holder, key),
            )
        if t.items is not None and isinstance(value, list):
            for j, item in enumerate(value):
                it = _schema_type(item)
                if it != t.items and not (it == "integer" and t.items == "number"):
                    yield (
                        f"{where}[{j}] is {with_article(it)} where {refused} {with_article(t.items)}, so helm refuses these values",
                        loc_of(value, j),
                    )
        if t.props is not None and isinstance(value, dict):
            yield from _type_errors(value, t.props, where, nulls)


@dataclass(frozen=True)
class _Plan:
    """What the chart renders from one values document: the engine settings (``spec``, with the chart's
    defaults under the user's), the ``modelSpec`` entries it renders a Deployment for (index, entry), the
    Ray entries it leaves to ``ray-cluster.yaml``, and why nothing can be built (``unbuilt``, with a
    position), if so."""

    spec: dict[str, Any]
    rendered: tuple[tuple[int, LDict], ...] = ()
    ray: tuple[tuple[int, LDict], ...] = ()
    unbuilt: str | None = None
    unbuilt_loc: Loc | None = None


def _plan(data: Any) -> _Plan:
    se = data.get("servingEngineSpec") if isinstance(data, dict) else None
    if not isinstance(se, dict):
        return _Plan({}, unbuilt="servingEngineSpec is not a mapping")
    spec = _merged(_ENGINE_DEFAULTS, se)
    se_loc = loc_of(data, "servingEngineSpec")
    for why, at in _type_errors(se, _SE_SCHEMA, "servingEngineSpec"):
        return _Plan(spec, unbuilt=why, unbuilt_loc=at)
    models = se.get("modelSpec")
    mloc = _key_loc(se, "modelSpec") or se_loc
    if not _truthy(spec.get("enableEngine")):
        return _Plan(
            spec,
            unbuilt="servingEngineSpec.enableEngine is off: the chart renders no engine",
            unbuilt_loc=loc_of(se, "enableEngine"),
        )
    if not isinstance(models, list) or not models:
        return _Plan(spec, unbuilt="servingEngineSpec.modelSpec lists no model", unbuilt_loc=mloc)
    if len(models) > MAX_MODEL_SPECS:
        return _Plan(
            spec,
            unbuilt=f"servingEngineSpec.modelSpec has {len(models):,} entries, more than the {MAX_MODEL_SPECS} "
            "kvlint builds pods for",
            unbuilt_loc=mloc,
        )
    if len(models) > 1:
        # every engine's pod holds servingEngineSpec's shared settings (env, volumes, tolerations, ...)
        shared = count_values([v for k, v in se.items() if k != "modelSpec"], MAX_COPIED_VALUES)
        if (len(models) - 1) * shared > MAX_COPIED_VALUES:
            return _Plan(
                spec,
                unbuilt=f"its {len(models):,} servingEngineSpec.modelSpec entries would each copy servingEngineSpec's "
                f"shared settings ({shared:,} values), more than the {MAX_COPIED_VALUES:,} values kvlint copies "
                "into the engines beyond the first",
                unbuilt_loc=mloc,
            )
    rendered: list[tuple[int, LDict]] = []
    ray: list[tuple[int, LDict]] = []
    for i, m in enumerate(models):
        at = loc_of(models, i) or mloc
        where = f"servingEngineSpec.modelSpec[{i}]"
        if not isinstance(m, LDict):
            return _Plan(
                spec, unbuilt=f"{where} is not a mapping, so helm refuses these values", unbuilt_loc=at
            )
        for why, wat in _type_errors(m, _MODEL_SCHEMA, where, nulls=True):
            return _Plan(spec, unbuilt=why, unbuilt_loc=wat)
        if m.get("enabled") is False:
            continue  # `ne $modelSpec.enabled false`: the template skips the entry
        ray_spec = m.get("raySpec")
        if isinstance(ray_spec, dict) and _truthy(ray_spec.get("enabled")):
            ray.append((i, m))
            continue
        for key, helper in (("repository", "modelSpec.repository"), ("tag", "modelSpec.tag")):
            if not _truthy(m.get(key)):
                return _Plan(
                    spec,
                    unbuilt=f"{where} has no {key}: helm template fails with \"Required value '{helper}' must be "
                    'defined !"',
                    unbuilt_loc=loc_of(m, key) or at,
                )
        if not _truthy(m.get("resources")):
            # `required "..." ($modelSpec.requestMemory | quote)`: sprig's quote turns only a missing (nil) value
            # into the empty string required refuses; 0 and "" print as "0" and `""`
            for key in ("requestMemory", "requestCPU"):
                if m.get(key) is None:
                    return _Plan(
                        spec,
                        unbuilt=f'{where} has neither resources nor {key}: helm template fails with "Value '
                        f"'modelSpec.{key}' must be defined !\"",
                        unbuilt_loc=loc_of(m, key) or at,
                    )
        lmc = m.get("lmcacheConfig")
        if (
            isinstance(lmc, dict)
            and _truthy(lmc)
            and _truthy(lmc.get("enabled"))
            and "enablePD" not in lmc
            and not isinstance(m.get("vllmConfig"), dict)
        ):
            # `hasKey $modelSpec.vllmConfig "v0"` (choosing LMCache's connector) on a missing vllmConfig
            return _Plan(
                spec,
                unbuilt=f"{where} has lmcacheConfig.enabled but no vllmConfig: helm template fails where the "
                'template asks whether vllmConfig has v0 (hasKey of a missing map: "wrong type for value; expected '
                'map[string]interface {}")',
                unbuilt_loc=loc_of(lmc, "enabled") or at,
            )
        shared = data.get("sharedPvcStorage")
        vc = m.get("vllmConfig")
        if (
            isinstance(shared, dict)
            and _truthy(shared.get("enabled"))
            and not any(k in m for k in ("pvcStorage", "chatTemplate", "extraVolumeMounts"))
            and not (_truthy(vc) and isinstance(vc, dict) and "tensorParallelSize" in vc)
        ):
            # the template writes the `volumeMounts:` key only for those four, and the shared PVC's mount
            # under it whatever they are: without them the mount lands under `resources`
            return _Plan(
                spec,
                unbuilt=f"{where} has none of pvcStorage, chatTemplate, extraVolumeMounts or "
                "vllmConfig.tensorParallelSize while sharedPvcStorage.enabled: the chart then writes the shared "
                "PVC's volume mount without its volumeMounts key and helm template fails (\"YAML parse error on "
                'vllm-stack/templates/deployment-vllm-multi.yaml")',
                unbuilt_loc=loc_of(shared, "enabled") or at,
            )
        rendered.append((i, m))
    if rendered and "sharedPvcStorage" in data and not isinstance(data["sharedPvcStorage"], dict):
        # the template reads `.Values.sharedPvcStorage.enabled` for every engine; a null deletes the chart's
        # default map, a scalar replaces it
        return _Plan(
            spec,
            unbuilt="sharedPvcStorage is not a mapping: helm template fails reading sharedPvcStorage.enabled "
            '("nil pointer evaluating interface {}.enabled")',
            unbuilt_loc=_key_loc(data, "sharedPvcStorage"),
        )
    if not rendered:
        if ray:
            names = ", ".join(repr(go_text(m.get("name"))) for _, m in ray)
            return _Plan(
                spec,
                ray=tuple(ray),
                unbuilt=f"its engines ({names}) have raySpec.enabled, which the chart renders as a RayCluster "
                "(helm/templates/ray-cluster.yaml, pipeline parallel across Ray nodes) that kvlint does not model",
                unbuilt_loc=_key_loc(ray[0][1], "raySpec"),
            )
        return _Plan(
            spec, unbuilt="every servingEngineSpec.modelSpec entry has enabled: false", unbuilt_loc=mloc
        )
    return _Plan(spec, tuple(rendered), tuple(ray))


def _merged(defaults: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of user values over the chart's (maps merge key by key, anything else replaces; a null
    deletes the chart's value). Values of the user stay the loaded (located) objects."""
    out: dict[str, Any] = dict(defaults)
    for k, v in user.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(defaults.get(k), dict):
            merged = LDict(loc=loc_of(user, k))
            for dk, dv in defaults[k].items():
                merged[dk] = dv
            for uk, uv in v.items():
                if uv is None:
                    merged.pop(uk, None)
                    continue
                merged[uk] = (
                    _merged(defaults[k][uk], uv)
                    if isinstance(uv, LDict) and isinstance(defaults[k].get(uk), dict)
                    else uv
                )
                at = loc_of(v, uk)
                if at is not None:
                    merged.locs[uk] = at
            out[k] = merged
        else:
            out[k] = v
    return out


def unbuilt_reason(doc: Document) -> tuple[str, Loc | None] | None:
    """Why kvlint builds no engine pod from the production-stack values ``doc`` (``(reason, position)``), or
    None when it builds at least one (:func:`stack_values_workloads`); None too for any other document."""
    if not is_stack_values(doc.data):
        return None
    plan = _plan(doc.data)
    if plan.unbuilt is None:
        return None
    return plan.unbuilt, plan.unbuilt_loc or doc.loc


def stack_values_finding(doc: Document) -> Finding | None:
    """KV002 for production-stack values kvlint builds no pod from (:func:`unbuilt_reason`), located at the
    value that decides it; None when it builds pods or ``doc`` is not such values."""
    found = unbuilt_reason(doc)
    if found is None:
        return None
    why, at = found
    return Finding(
        "KV002",
        "this is a Helm values file for vLLM's production-stack chart (servingEngineSpec.modelSpec), and kvlint "
        f"builds no engine pod from it: {why}",
        at,
        fix=f"helm template RELEASE vllm/vllm-stack -f {shell_word(doc.path)} | kvlint check -",
        mark=Mark.HELM_VALUES,
    )


def stack_values_workloads(doc: Document) -> list[Workload]:
    """The engine Deployments production-stack's chart renders from the values ``doc``, one per
    ``servingEngineSpec.modelSpec`` entry it deploys (not ``enabled: false``, not ``raySpec.enabled``); empty
    when it deploys none or would refuse the values (:func:`unbuilt_reason`: KV002 says why).

    Restates ``helm/templates/deployment-vllm-multi.yaml`` at :data:`CHART_COMMIT` (see the module docstring):

    * workload ``Deployment/RELEASE-<name>-deployment-vllm``, ``replicas`` = ``replicaCount`` (none when
      ``keda.enabled``);
    * container ``vllm``, image ``repository:tag``; command ``vllm serve <modelURL>`` (``/opt/venv/bin/vllm``
      for ``lmcache/vllm-openai``) ``--host 0.0.0.0 --port <containerPort, default 8000>``, then
      ``--enable-lora``, ``--enable-auto-tool-choice``, ``--tool-call-parser``; when ``vllmConfig`` is set:
      ``--enable-chunked-prefill``/``--no-enable-chunked-prefill`` (key present), always
      ``--enable-prefix-caching`` or ``--no-enable-prefix-caching``, ``--max-model-len``, ``--dtype``,
      ``--tensor-parallel-size``, ``--max-num-seqs``, ``--gpu_memory_utilization``, ``--max_loras``,
      ``--runner``, ``--convert`` (key present), ``extraArgs``; then ``--revision``, LMCache's
      ``--kv-transfer-config`` (``lmcacheConfig.enabled``: ``LMCacheConnectorV1``, ``LMCacheConnector`` with
      ``vllmConfig.v0 == "1"``, the PD form with ``enablePD``) and ``--chat-template``. Values print as Helm
      prints them (:func:`go_text`);
    * env: ``PYTHONHASHSEED``, ``HF_HOME``, ``VLLM_USE_V1=0`` (``v0 == "1"``) or ``PROMETHEUS_MULTIPROC_DIR``,
      ``servingEngineSpec.env``, ``modelSpec.env``, and LMCache's (``LMCACHE_USE_EXPERIMENTAL``,
      ``CUDA_VISIBLE_DEVICES``, the PD/NIXL, CPU/disk offloading, controller and P2P variables), ``HF_TOKEN``
      from its secret; ``VLLM_API_KEY`` and ``LMCACHE_REMOTE_URL``/``LMCACHE_REMOTE_SERDE`` (the cache server)
      are not built;
    * envFrom (when ``servingEngineSpec.configs`` or ``envFromSecret`` is set): ``configMapRef``
      ``RELEASE-configs``, the ConfigMap ``helm/templates/configmap.yaml`` writes with the ``configs`` as its
      ``data`` (the workload carries it, :attr:`kvlint.types.Workload.configmaps`, so the engine reads those
      variables as from any ConfigMap among the inputs: before ``env``, which wins), then ``secretRef``
      ``envFromSecret.name`` (not read: a Secret);
    * resources: ``modelSpec.resources`` as written, else ``chart.resources``: requests ``memory``/``cpu``,
      ``requestGPUType`` (default ``nvidia.com/gpu``): ``requestGPU`` when ``int(requestGPU) > 0`` in requests
      and limits, the HAMi ``nvidia.com/gpumem``/``gpumem-percentage``/``gpucores`` keys, ``limitMemory``/
      ``limitCPU``; ``limits`` always written (null when empty: ``chart.hasLimits`` through ``fromYaml`` is
      always true);
    * volumes: the memory-backed ``shm`` emptyDir at ``/dev/shm`` (``sizeLimit`` ``shmSize``, default 20Gi)
      only when ``vllmConfig`` has ``tensorParallelSize``; the model PVC (or ``pvcStorage.emptyDir``) at
      ``/data``, ``extraVolumes``/``extraVolumeMounts``;
    * the init container, startup/liveness/readiness probes (``servingEngineSpec``'s over the chart's
      defaults, rendered by ``chart.templateProbe``), ``runtimeClassName`` (the entry's, else
      ``servingEngineSpec``'s, default ``nvidia``), ``nodeName``, ``affinity`` (else ``nodeSelectorTerms`` as
      required node affinity, unless ``nodeName``), tolerations (global then the entry's, or the entry's alone
      with ``tolerationsPolicy: override``), ``hostIPC``/``hostPID`` (``lmcacheConfig.enablePD``),
      ``priorityClassName``, ``schedulerName``.

    The workload carries the entry's ``annotations`` then ``podAnnotations`` (so ``kvlint.io/accelerator`` or
    ``kvlint.io/ignore`` there apply) and ``labels``/``podLabels``. Every built value is located at the values
    line it comes from (a chart default at its entry). Not built: the chart's own labels, ``hostname`` and
    ``subdomain``, the LoRA sidecar, security contexts, ports, the init container's
    ``RELEASE_NAME`` env and volume mounts. An entry with ``raySpec.enabled`` in a
    file that also deploys others gets a workload without containers and a KV503 note (not read). The first
    workload carries a KV504 note (read on an assumption: that this chart version renders the file) naming the
    chart, template and commit followed.
    """
    if not is_stack_values(doc.data):
        return []
    plan = _plan(doc.data)
    if plan.unbuilt is not None:
        return []
    out = [_entry_workload(doc, plan.spec, i, m) for i, m in plan.rendered]
    for i, m in plan.ray:
        out.append(_ray_workload(doc, i, m))
    se = doc.data["servingEngineSpec"]
    note = Finding(
        "KV504",
        f"built from Helm values: kvlint linted the {_count(len(plan.rendered))} that vLLM's production-stack "
        f"chart renders from this file, restating its {CHART_TEMPLATE} at chart vllm-stack {CHART_VERSION} "
        f"(commit {CHART_COMMIT[:12]}); another chart version may render {_it(len(plan.rendered))} differently",
        _key_loc(se, "modelSpec") or doc.loc,
        fix=f"for certainty, lint what the chart you deploy renders: helm template RELEASE vllm/vllm-stack "
        f"--version VERSION -f {shell_word(doc.path)} | kvlint check -",
        severity="info",
        mark=Mark.BUILT_FROM_VALUES,  # a GitOps source says what rendered them instead (kvlint.workloads.gitops)
    )
    out[0] = replaced(out[0], findings=(note, *out[0].findings))
    return out


def _it(n: int) -> str:
    return "it" if n == 1 else "them"


def _count(n: int) -> str:
    return "engine Deployment" if n == 1 else f"{n} engine Deployments"


def _ray_workload(doc: Document, i: int, m: LDict) -> Workload:
    at = _key_loc(m, "raySpec") or m.loc
    ps = ldict(m.loc, [("containers", LList([], loc=m.loc), m.loc)])
    w = synthetic_workload(doc, ps, f"servingEngineSpec.modelSpec[{i}]", replicas=None)
    name = go_text(m.get("name"))
    return replaced(
        w,
        kind="RayCluster",
        name=f"{RELEASE}-{name}-raycluster",
        findings=(
            Finding(
                "KV503",
                f"kvlint does not read this modelSpec's Ray deployment: '{name}' has raySpec.enabled, which the "
                "chart renders as a RayCluster (helm/templates/ray-cluster.yaml, pipeline parallel across Ray "
                "nodes) instead of a Deployment; kvlint does not model that template",
                at,
                fix="lint the RayCluster the chart renders (helm template RELEASE vllm/vllm-stack -f VALUES | "
                "kvlint check -), or check the engine command with kvlint plan -- <command>",
                severity="info",
                mark=Mark.SETTINGS_NOT_READ,
            ),
        ),
    )


Items = list[tuple[str, Any, Loc | None]]

#: The ``vllmConfig`` keys the template writes as a flag with the key's value, in the template's order.
_KEY_FLAGS = (
    ("maxModelLen", "--max-model-len"),
    ("dtype", "--dtype"),
    ("tensorParallelSize", "--tensor-parallel-size"),
    ("maxNumSeqs", "--max-num-seqs"),
    ("gpuMemoryUtilization", "--gpu_memory_utilization"),
    ("maxLoras", "--max_loras"),
    ("runner", "--runner"),
    ("convert", "--convert"),
)


def _flag_term(flag: str, phrase: str, dashes: str = "--") -> ValuesTerm:
    """The term for ``flag`` as a fix text writes it: ``-`` or ``_`` between words, whole words only, with
    ``dashes`` before it (``(?:--)?``: the bare name too, as in "tensor-parallel-size values up to 8")."""
    words = flag.lstrip("-").replace("_", "-").split("-")
    name = "[-_]".join(map(re.escape, words)) + r"(?![\w-])"
    # the pattern ``(?<![\w-])`` + dashes + name, written to start with a literal (:func:`_literal_first`)
    if dashes == "(?:--)?":
        first = re.escape(words[0])
        return _term(_literal_first("--") + name + "|" + _literal_first(first) + name[len(first) :], phrase)
    assert dashes.startswith("--")
    return _term(_literal_first("--") + dashes[2:] + name, phrase)


def _literal_first(literal: str) -> str:
    r"""``literal`` (a regular expression of plain characters, escaped) not preceded by a word character or a
    dash, written as the literal followed by a fixed-width lookbehind: ``(?<![\w-])--`` matches where
    ``--(?<![\w-]--)`` does, at the same start (at the start of the text the lookbehind has no room and holds,
    as ``(?<![\w-])`` holds there), but a pattern that starts with a literal (or each of whose alternatives
    does) is searched by skipping to that literal, not tried at every character of the fix."""
    return literal + r"(?<![\w-]" + literal + ")"


def _term(pattern: str, phrase: str, only: frozenset[str] | None = None) -> ValuesTerm:
    return ValuesTerm(re.compile(pattern), phrase, only)


def _vllm_options() -> frozenset[str]:
    """Every vLLM option of the releases kvlint knows (not kvlint's own, such as --model-dir)."""
    from kvlint.engines.vllm_flags_data import OPTIONS

    return frozenset(o for o in OPTIONS if o.startswith("--"))


#: What the rules' fixes name (engine flags, PodSpec fields) in the terms of these values, for the workloads
#: built here (:attr:`kvlint.types.Workload.values_terms`; :func:`kvlint.pipeline.in_values_terms` appends the
#: phrases of the terms a fix mentions): the flags the template writes from a key, the GPU and memory
#: resources, the /dev/shm volume (mounted only with ``tensorParallelSize``), the probes (the chart's defaults
#: under ``servingEngineSpec``), placement and the image. Another vLLM flag goes in ``extraArgs``.
VALUES_TERMS: tuple[ValuesTerm, ...] = (
    *(
        _flag_term(flag, f"{flag.replace('_', '-')} is vllmConfig.{key}", "(?:--)?")
        for key, flag in _KEY_FLAGS
    ),
    _flag_term(
        "--enable-chunked-prefill", "chunked prefill is vllmConfig.enableChunkedPrefill", "--(?:no-)?"
    ),
    _flag_term("--enable-prefix-caching", "prefix caching is vllmConfig.enablePrefixCaching", "--(?:no-)?"),
    _term(
        r"(?:startup|liveness|readiness)Probe|probe port",
        "the probes are servingEngineSpec.startupProbe, livenessProbe and readinessProbe, the chart's defaults "
        "filling the fields not set",
    ),
    _flag_term("--port", "--port is servingEngineSpec.containerPort"),
    _term(
        _literal_first("--") + "[a-z][a-z0-9_-]*",  # (?<![\w-])--[a-z][a-z0-9_-]*
        "other vLLM flags go in vllmConfig.extraArgs",
        _vllm_options(),
    ),
    _term(
        r"resources\.limits\.memory|memory limit",
        "the memory limit is limitMemory, when modelSpec.resources is not set",
    ),
    _term(
        r"nvidia\.com/gpu(?![\w.-])|resources\.limits|GPUs per pod",
        "the GPUs are requestGPU, of the resource requestGPUType, when modelSpec.resources is not set",
    ),
    _term(
        r"/dev/shm",
        "the chart mounts a memory-backed /dev/shm of shmSize only when vllmConfig.tensorParallelSize is set, "
        "else add it with extraVolumes and extraVolumeMounts",
    ),
    _term(r"nodeSelector", "node selection is the entry's nodeSelectorTerms or affinity"),
    _term(r"kvlint\.io/accelerator", "annotations go in the entry's podAnnotations"),
    _term(r"release tag", "the image is the entry's repository and tag"),
)


def _entry_workload(doc: Document, spec: dict[str, Any], i: int, m: LDict) -> Workload:
    at = m.loc
    vc = m.get("vllmConfig")
    vcfg: LDict | None = vc if isinstance(vc, LDict) and _truthy(vc) else None
    lm = m.get("lmcacheConfig")
    lmc: LDict | None = lm if isinstance(lm, LDict) and _truthy(lm) else None

    def here(holder: Any, key: str) -> Loc | None:
        return loc_of(holder, key) if isinstance(holder, LDict) and key in holder else at

    repo = go_text(m.get("repository"))
    rloc = here(m, "repository")
    image = f"{repo}:{go_text(m.get('tag'))}"
    uloc = here(m, "modelURL")
    port = (
        go_text(spec["containerPort"]) if _truthy(spec.get("containerPort")) else "8000"
    )  # `default "8000"`
    se = doc.data["servingEngineSpec"]
    ploc = loc_of(se, "containerPort") if "containerPort" in se else uloc
    cmd: list[tuple[Any, Loc | None]] = [
        ("/opt/venv/bin/vllm" if repo == "lmcache/vllm-openai" else "vllm", rloc),
        ("serve", uloc),
        (go_text(m.get("modelURL")), uloc),
    ]
    # the words the template writes from a values key (or always), for findings to name the key: every word of
    # the command but extraArgs'
    made: list[ChartArg] = []

    def write(
        words: list[str], loc: Loc | None, key: str | None, given: bool = True, value: Any = None
    ) -> None:
        cmd.extend((w, loc) for w in words)
        # an integer Helm prints in exponent form (go_text: 1000000 -> 1e+06), which vLLM's int() refuses
        plain = str(value) if isinstance(value, int) and not isinstance(value, bool) else None
        made.append(ChartArg(loc, tuple(words), key, given, as_written=plain if plain != words[-1] else None))

    write(["--host", "0.0.0.0"], uloc, None)
    write(["--port", port], ploc, "servingEngineSpec.containerPort", "containerPort" in se)
    if _truthy(m.get("enableLoRA")):
        write(["--enable-lora"], here(m, "enableLoRA"), "enableLoRA")
    if _truthy(m.get("enableTool")):
        write(["--enable-auto-tool-choice"], here(m, "enableTool"), "enableTool")
    if _truthy(m.get("toolCallParser")):
        write(
            ["--tool-call-parser", go_text(m["toolCallParser"])], here(m, "toolCallParser"), "toolCallParser"
        )
    if vcfg is not None:
        if "enableChunkedPrefill" in vcfg:
            on = _truthy(vcfg["enableChunkedPrefill"])
            write(
                ["--enable-chunked-prefill" if on else "--no-enable-chunked-prefill"],
                here(vcfg, "enableChunkedPrefill"),
                "vllmConfig.enableChunkedPrefill",
            )
        on = _truthy(vcfg.get("enablePrefixCaching"))
        write(
            ["--enable-prefix-caching" if on else "--no-enable-prefix-caching"],
            here(vcfg, "enablePrefixCaching") if "enablePrefixCaching" in vcfg else loc_of(m, "vllmConfig"),
            "vllmConfig.enablePrefixCaching",
            "enablePrefixCaching" in vcfg,
        )
        for key, flag in _KEY_FLAGS:
            if key in vcfg:
                write([flag, go_text(vcfg[key])], here(vcfg, key), f"vllmConfig.{key}", value=vcfg[key])
        extra = vcfg.get("extraArgs")
        if isinstance(extra, list) and extra:
            cmd += [(go_text(a), loc_of(extra, j) or here(vcfg, "extraArgs")) for j, a in enumerate(extra)]
    if _truthy(m.get("modelRevision")):
        write(["--revision", go_text(m["modelRevision"])], here(m, "modelRevision"), "modelRevision")
    kv_role = go_text(lmc.get("kvRole")) if lmc is not None and _truthy(lmc.get("kvRole")) else "kv_both"
    if lmc is not None and _truthy(lmc.get("enabled")):
        ll = here(lmc, "enabled")
        v0 = isinstance(vc, dict) and "v0" in vc and go_text(vc["v0"]) == "1"
        if "enablePD" in lmc:
            rpc = '"' + go_text(lmc.get("nixlRole")) + '"'
            conf = (
                f'{{"kv_connector":"LMCacheConnectorV1","kv_role":"{kv_role}","kv_connector_extra_config":'
                f'{{"discard_partial_chunks": false, "lmcache_rpc_port": {rpc}}}}}'
            )
        elif v0:
            conf = f'{{"kv_connector":"LMCacheConnector","kv_role":"{kv_role}"}}'
        else:
            conf = f'{{"kv_connector":"LMCacheConnectorV1","kv_role":"{kv_role}"}}'
        write(["--kv-transfer-config", conf], ll, "lmcacheConfig.enabled")
    if _truthy(m.get("chatTemplate")):
        write(
            ["--chat-template", f"/templates/{go_text(m['chatTemplate'])}"],
            here(m, "chatTemplate"),
            "chatTemplate",
        )

    env_from, configmaps = _env_from(se, m)
    container: Items = [
        ("name", "vllm", at),
        ("image", image, rloc),
        ("command", llist(uloc, cmd), uloc),
        ("env", _env(doc, m, vcfg, lmc), loc_of(m, "env") or at),
        *([("envFrom", env_from, env_from.loc)] if env_from is not None else []),
        (
            "resources",
            _resources(m),
            loc_of(m, "resources") if _truthy(m.get("resources")) else here(m, "requestGPU"),
        ),
    ]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        p = spec.get(probe)
        if _truthy(p) and isinstance(p, dict):
            container.append((probe, _probe(p, at), loc_of(p) or at))
    mounts, volumes = _storage(m, vcfg, doc.data.get("sharedPvcStorage"), at)
    if mounts:
        container.append(("volumeMounts", llist(at, mounts), at))
    pod: Items = []
    if _truthy(m.get("priorityClassName")):
        pod.append(("priorityClassName", go_text(m["priorityClassName"]), here(m, "priorityClassName")))
    init = m.get("initContainer")
    if "initContainer" in m and isinstance(init, LDict):
        pod.append(
            (
                "initContainers",
                llist(loc_of(m, "initContainer"), [(_init(init, "pvcStorage" in m), init.loc)]),
                loc_of(m, "initContainer"),
            )
        )
    if isinstance(lmc, dict) and _truthy(lmc.get("enablePD")):
        pl = here(lmc, "enablePD")
        pod += [("hostIPC", True, pl), ("hostPID", True, pl)]
    c = ldict(at, container)
    pod.append(("containers", llist(at, [(c, at)]), at))
    if volumes:
        pod.append(("volumes", llist(at, volumes), at))
    tols = _tolerations(spec, se, m)
    if tols is not None:
        pod.append(("tolerations", tols, tols.loc))
    rc, rcl = (
        (m.get("runtimeClassName"), here(m, "runtimeClassName"))
        if "runtimeClassName" in m
        else (spec.get("runtimeClassName"), loc_of(se, "runtimeClassName") or at)
    )
    if _truthy(rc):
        pod.append(("runtimeClassName", go_text(rc), rcl))
    if _truthy(spec.get("schedulerName")):
        pod.append(("schedulerName", go_text(spec["schedulerName"]), loc_of(se, "schedulerName")))
    if _truthy(m.get("nodeName")):
        pod.append(("nodeName", go_text(m["nodeName"]), here(m, "nodeName")))
    placed = False
    if _truthy(m.get("affinity")):
        pod.append(("affinity", m["affinity"], here(m, "affinity")))
        placed = True
    elif _truthy(m.get("nodeSelectorTerms")) and not _truthy(m.get("nodeName")):
        tl = here(m, "nodeSelectorTerms")
        req = ldict(tl, [("nodeSelectorTerms", m["nodeSelectorTerms"], tl)])
        na = ldict(tl, [("requiredDuringSchedulingIgnoredDuringExecution", req, tl)])
        pod.append(("affinity", ldict(tl, [("nodeAffinity", na, tl)]), tl))
        placed = True
    ps = ldict(at, pod)
    keda = m.get("keda")
    replicas = None if isinstance(keda, dict) and _truthy(keda.get("enabled")) else m.get("replicaCount")
    replicas = _printed_int(replicas)
    why = (
        "the production-stack values name no GPU model: requestGPUType names the device-plugin resource, and the "
        "entry has no nodeSelectorTerms or affinity"
    )
    w = synthetic_workload(
        doc,
        ps,
        f"servingEngineSpec.modelSpec[{i}]",
        replicas=replicas,
        accelerator_why=None if placed else why,
    )
    ann = w.annotations if isinstance(w.annotations, LDict) else LDict(w.annotations, loc=doc.loc)
    for key in ("annotations", "podAnnotations"):  # the Deployment's, then the pod template's (which win)
        given = m.get(key)
        if isinstance(given, dict):
            for k, v in given.items():
                ann[str(k)] = "" if v is None else go_text(v)
                at_k = loc_of(given, k)
                if at_k is not None:
                    ann.locs[str(k)] = at_k
    labels = dict(w.labels)
    for key in ("labels", "podLabels"):
        given = m.get(key)
        if isinstance(given, dict):
            labels.update({str(k): go_text(v) for k, v in given.items()})
    return replaced(
        w,
        kind="Deployment",
        name=f"{RELEASE}-{go_text(m.get('name'))}-deployment-vllm",
        annotations=ann,
        labels=labels,
        findings=(*w.findings, *_unread_keys(i, m)),
        chart_args=tuple(made),
        values_terms=VALUES_TERMS,
        configmaps=configmaps,
    )


def _get(holder: Any, key: str) -> Any:
    return holder.get(key) if isinstance(holder, dict) else None


def _env_item(name: str, value: Any, loc: Loc | None) -> tuple[LDict, Loc | None]:
    return ldict(loc, [("name", name, loc), ("value", value, loc)]), loc


def _env(doc: Document, m: LDict, vcfg: LDict | None, lmc: LDict | None) -> LList:
    at = m.loc
    items: list[tuple[Any, Loc | None]] = [_env_item("PYTHONHASHSEED", "123", at)]
    shared = doc.data.get("sharedPvcStorage")
    if isinstance(shared, dict) and _truthy(shared.get("enabled")):
        items.append(_env_item("HF_HOME", "/data/shared-pvc-storage", loc_of(shared, "enabled")))
    elif "pvcStorage" in m:
        items.append(_env_item("HF_HOME", "/data", loc_of(m, "pvcStorage")))
    else:
        items.append(_env_item("HF_HOME", "/tmp", at))
    pod_ip = ldict(at, [("fieldRef", ldict(at, [("fieldPath", "status.podIP", at)]), at)])
    items.append((ldict(at, [("name", "POD_IP", at), ("valueFrom", pod_ip, at)]), at))
    if vcfg is not None:
        if "v0" in vcfg and go_text(vcfg["v0"]) == "1":
            items.append(_env_item("VLLM_USE_V1", "0", loc_of(vcfg, "v0")))
        else:
            d = vcfg.get("prometheusMultiprocDir")
            items.append(
                _env_item(
                    "PROMETHEUS_MULTIPROC_DIR", go_text(d) if _truthy(d) else "/tmp", loc_of(m, "vllmConfig")
                )
            )
    token = m.get("hf_token")
    if _truthy(token):
        tl = loc_of(m, "hf_token")
        ref: Items
        if isinstance(token, str):
            ref = [("name", f"{RELEASE}-secrets", tl), ("key", f"hf_token_{go_text(m.get('name'))}", tl)]
        else:
            ref = [
                ("name", go_text(_get(token, "secretName")) or None, tl),
                ("key", go_text(_get(token, "secretKey")) or None, tl),
            ]
        src = ldict(tl, [("secretKeyRef", ldict(tl, ref), tl)])
        items.append((ldict(tl, [("name", "HF_TOKEN", tl), ("valueFrom", src, tl)]), tl))
    se = doc.data["servingEngineSpec"]
    for holder in (se, m):
        env = holder.get("env")
        if isinstance(env, list):
            items += [(e, loc_of(env, j)) for j, e in enumerate(env)]
    if lmc is not None:

        def add(name: str, key: str, value: str | None = None) -> None:
            items.append(
                _env_item(name, value if value is not None else go_text(lmc.get(key)), loc_of(lmc, key))
            )

        if _truthy(lmc.get("enabled")):
            add("LMCACHE_USE_EXPERIMENTAL", "enabled", "True")
            add("VLLM_RPC_TIMEOUT", "enabled", "1000000")
            level = lmc.get("logLevel")
            add("LMCACHE_LOG_LEVEL", "logLevel", go_text(level) if _truthy(level) else "INFO")
        if "cudaVisibleDevices" in lmc:
            add("CUDA_VISIBLE_DEVICES", "cudaVisibleDevices")
        if _truthy(lmc.get("enablePD")):
            add("LMCACHE_LOCAL_CPU", "enablePD", "False")
            add("LMCACHE_MAX_LOCAL_CPU_SIZE", "enablePD", "0")
            add("LMCACHE_REMOTE_SERDE", "enablePD", "NULL")
            add("UCX_TLS", "enablePD", "cuda_ipc,cuda_copy,tcp")
            if "enableNixl" in lmc:
                add("LMCACHE_ENABLE_NIXL", "enableNixl", "True" if _truthy(lmc["enableNixl"]) else "False")
            for key, name in (
                ("nixlRole", "LMCACHE_NIXL_ROLE"),
                ("nixlPeerHost", "LMCACHE_NIXL_RECEIVER_HOST"),
                ("nixlPeerPort", "LMCACHE_NIXL_RECEIVER_PORT"),
                ("nixlBufferSize", "LMCACHE_NIXL_BUFFER_SIZE"),
                ("nixlBufferDevice", "LMCACHE_NIXL_BUFFER_DEVICE"),
            ):
                if key in lmc:
                    add(name, key)
            if "nixlEnableGc" in lmc:
                add(
                    "LMCACHE_NIXL_ENABLE_GC",
                    "nixlEnableGc",
                    "True" if _truthy(lmc["nixlEnableGc"]) else "False",
                )
        if "cpuOffloadingBufferSize" in lmc and _go_int(lmc["cpuOffloadingBufferSize"]) > 0:
            add("LMCACHE_LOCAL_CPU", "cpuOffloadingBufferSize", "True")
            add("LMCACHE_MAX_LOCAL_CPU_SIZE", "cpuOffloadingBufferSize")
        if "diskOffloadingBufferSize" in lmc:
            add("LMCACHE_MAX_LOCAL_DISK_SIZE", "diskOffloadingBufferSize")
        if "enableController" in lmc:
            add(
                "LMCACHE_ENABLE_CONTROLLER",
                "enableController",
                "True" if _truthy(lmc["enableController"]) else "False",
            )
        if "instanceId" in lmc:
            add("LMCACHE_LMCACHE_INSTANCE_ID", "instanceId")
        else:
            name_ref = ldict(at, [("fieldRef", ldict(at, [("fieldPath", "metadata.name", at)]), at)])
            items.append(
                (ldict(at, [("name", "LMCACHE_LMCACHE_INSTANCE_ID", at), ("valueFrom", name_ref, at)]), at)
            )
        for key, name in (
            ("controllerPort", "LMCACHE_CONTROLLER_PULL_URL"),
            ("controllerReplyPort", "LMCACHE_CONTROLLER_REPLY_URL"),
        ):
            if key in lmc:
                add(name, key, f"{RELEASE}-router-service:{go_text(lmc[key])}")
        for key, name in (
            ("workerPorts", "LMCACHE_LMCACHE_WORKER_PORTS"),
            ("p2pHost", "LMCACHE_P2P_HOST"),
            ("p2pInitPorts", "LMCACHE_P2P_INIT_PORTS"),
            ("workerHeartbeatTime", "LMCACHE_LMCACHE_WORKER_HEARTBEAT_TIME"),
        ):
            if key in lmc:
                add(name, key)
    return llist(loc_of(m, "env") or at, items)


#: The ConfigMap ``helm/templates/configmap.yaml`` writes from ``servingEngineSpec.configs``.
CONFIGS_CONFIGMAP = f"{RELEASE}-configs"


def _env_from(se: LDict, m: LDict) -> tuple[LList | None, dict[tuple[str | None, str], LDict]]:
    """The engine container's ``envFrom`` (deployment-vllm-multi.yaml: when ``servingEngineSpec.configs`` or
    ``envFromSecret`` is set, ``configMapRef`` :data:`CONFIGS_CONFIGMAP` then ``secretRef``
    ``envFromSecret.name``), and the ConfigMap the chart renders from ``configs`` (configmap.yaml: ``data`` is
    ``toYaml`` of ``configs``; each value printed as Helm prints it, located at its key), keyed as
    :func:`kvlint.workloads.configmaps.configmaps` keys ConfigMaps."""
    configs = se.get("configs")
    secret = m.get("envFromSecret")
    sources: list[tuple[Any, Loc | None]] = []
    cms: dict[tuple[str | None, str], LDict] = {}
    if _truthy(configs) and isinstance(configs, dict):
        cl = _key_loc(se, "configs") or loc_of(se, "configs")
        ref = ldict(cl, [("configMapRef", ldict(cl, [("name", CONFIGS_CONFIGMAP, cl)]), cl)])
        sources.append((ref, cl))
        cms[(None, CONFIGS_CONFIGMAP)] = ldict(
            loc_of(se, "configs"), [(str(k), go_text(v), loc_of(configs, k)) for k, v in configs.items()]
        )
    if _truthy(secret) and isinstance(secret, dict):
        sl = loc_of(m, "envFromSecret")
        name = secret.get("name")
        ref = ldict(
            sl, [("secretRef", ldict(sl, [("name", go_text(name) if name is not None else None, sl)]), sl)]
        )
        sources.append((ref, sl))
    if not sources:
        return None, cms
    return llist(sources[0][1], sources), cms


def _resources(m: LDict) -> Any:
    """``modelSpec.resources`` when set, else what ``chart.resources`` writes (see :func:`stack_values_workloads`)."""
    if _truthy(m.get("resources")):
        return m["resources"]
    at = m.loc
    gpus = _go_int(m.get("requestGPU")) > 0
    gtype = go_text(m.get("requestGPUType")) if _truthy(m.get("requestGPUType")) else NVIDIA_GPU
    gl = loc_of(m, "requestGPU")
    req: Items = [
        ("memory", go_text(m.get("requestMemory")), loc_of(m, "requestMemory")),
        ("cpu", go_text(m.get("requestCPU")), loc_of(m, "requestCPU")),
    ]
    if gpus:
        req.append((gtype, go_text(m.get("requestGPU")), gl))
    for key, res in (
        ("requestGPUMem", "nvidia.com/gpumem"),
        ("requestGPUMemPercentage", "nvidia.com/gpumem-percentage"),
        ("requestGPUCores", "nvidia.com/gpucores"),
    ):
        if key in m:
            req.append((res, go_text(m[key]), loc_of(m, key)))
    items: Items = [("requests", ldict(at, req), at)]
    # `if (include "chart.hasLimits" $modelSpec | fromYaml)`: fromYaml of "true"/"false" (not a mapping) is a
    # mapping holding an Error key, always true, so `limits:` is always written, null when nothing fills it
    # (as helm renders values without GPUs or limits)
    lim: Items = []
    for key, res in (("limitMemory", "memory"), ("limitCPU", "cpu")):
        if key in m:
            lim.append((res, go_text(m[key]), loc_of(m, key)))
    if gpus:
        lim.append((gtype, go_text(m.get("requestGPU")), gl))
    for key, res in (
        ("limitGPUMem", "nvidia.com/gpumem"),
        ("limitGPUMemPercentage", "nvidia.com/gpumem-percentage"),
        ("limitGPUCores", "nvidia.com/gpucores"),
    ):
        if key in m:
            lim.append((res, go_text(m[key]), loc_of(m, key)))
    items.append(("limits", ldict(at, lim) if lim else None, at))
    return ldict(at, items)


def _probe(p: dict, at: Loc | None) -> LDict:
    """``chart.templateProbe``: initialDelaySeconds (default 15), periodSeconds (10), failureThreshold (3),
    timeoutSeconds/successThreshold when set, then exec, tcpSocket, grpc or httpGet (path default ``/health``,
    port default 8000)."""
    pl = loc_of(p) or at

    def pos(k: str) -> Loc | None:
        return loc_of(p, k) if isinstance(p, LDict) and k in p.locs else pl

    items: Items = []
    for key, default in (("initialDelaySeconds", 15), ("periodSeconds", 10), ("failureThreshold", 3)):
        v = p.get(key)
        items.append((key, _printed(v) if _truthy(v) else default, pos(key)))
    for key in ("timeoutSeconds", "successThreshold"):
        if _truthy(p.get(key)):
            items.append((key, _printed(p[key]), pos(key)))
    for key in ("exec", "tcpSocket", "grpc"):
        if _truthy(p.get(key)):
            items.append((key, p[key], pos(key)))
            return ldict(pl, items)
    hg = p.get("httpGet")
    hg = hg if isinstance(hg, dict) else {}
    path = hg.get("path")
    port = hg.get("port")
    hl = pos("httpGet")
    items.append(
        (
            "httpGet",
            ldict(
                hl,
                [
                    ("path", path if _truthy(path) else "/health", hl),
                    ("port", _printed(port) if _truthy(port) else 8000, hl),
                ],
            ),
            hl,
        )
    )
    return ldict(pl, items)


def _storage(
    m: LDict, vcfg: LDict | None, shared: Any, at: Loc | None
) -> tuple[list[tuple[Any, Loc | None]], list[tuple[Any, Loc | None]]]:
    """(volumeMounts, volumes) of the engine container and pod, in the template's order: mounts of the model
    storage, ``/dev/shm``, the chat templates, ``extraVolumeMounts``, the shared PVC; volumes of the model
    storage, the shared PVC, ``shm``, the chat templates, ``extraVolumes``. ``shared`` is the top-level
    ``sharedPvcStorage``."""
    mounts: list[tuple[Any, Loc | None]] = []
    volumes: list[tuple[Any, Loc | None]] = []
    name = go_text(m.get("name"))

    def volume(loc: Loc | None, vname: str, key: str, source: Any) -> tuple[LDict, Loc | None]:
        return ldict(loc, [("name", vname, loc), (key, source, loc)]), loc

    def mount(loc: Loc | None, vname: str, path: str) -> tuple[LDict, Loc | None]:
        return ldict(loc, [("name", vname, loc), ("mountPath", path, loc)]), loc

    shared_on = isinstance(shared, dict) and _truthy(shared.get("enabled"))
    shl = loc_of(shared, "enabled") if shared_on else None
    if "pvcStorage" in m:
        sl = loc_of(m, "pvcStorage")
        mounts.append(mount(sl, f"{RELEASE}-storage", "/data"))
        pvc = m.get("pvcStorage")
        if isinstance(pvc, dict) and "emptyDir" in pvc:
            volumes.append(volume(sl, f"{RELEASE}-storage", "emptyDir", pvc["emptyDir"]))
        elif isinstance(pvc, str):
            existing = m.get("pvcExistingClaimName")
            claim_name = go_text(existing) if _truthy(existing) else f"{RELEASE}-{name}-storage-claim"
            volumes.append(
                volume(
                    sl,
                    f"{RELEASE}-storage",
                    "persistentVolumeClaim",
                    ldict(sl, [("claimName", claim_name, sl)]),
                )
            )
    if shared_on:
        shared_claim = ldict(shl, [("claimName", f"{RELEASE}-shared-pvc-storage-claim", shl)])
        volumes.append(volume(shl, f"{RELEASE}-shared-pvc-storage", "persistentVolumeClaim", shared_claim))
    if vcfg is not None and "tensorParallelSize" in vcfg:
        tl = loc_of(vcfg, "tensorParallelSize")
        size = m.get("shmSize")
        zl = loc_of(m, "shmSize") if "shmSize" in m else tl
        mounts.append(mount(tl, "shm", "/dev/shm"))
        ed = ldict(
            zl, [("medium", "Memory", tl), ("sizeLimit", go_text(size) if _truthy(size) else "20Gi", zl)]
        )
        volumes.append(volume(tl, "shm", "emptyDir", ed))
    if _truthy(m.get("chatTemplate")):
        cl = loc_of(m, "chatTemplate")
        if "chatTemplateConfigMap" in m:
            cname = f"{RELEASE}-{name}-chat-templates"
            mounts.append(mount(cl, cname, "/templates"))
            volumes.append(volume(cl, cname, "configMap", ldict(cl, [("name", cname, cl)])))
        else:
            mounts.append(mount(cl, "vllm-templates", "/templates"))
            tclaim = ldict(cl, [("claimName", "vllm-templates-pvc", cl)])
            volumes.append(volume(cl, "vllm-templates", "persistentVolumeClaim", tclaim))
    extra = m.get("extraVolumeMounts")
    if isinstance(extra, list):
        mounts += [(v, loc_of(extra, j)) for j, v in enumerate(extra)]
    if shared_on:
        mounts.append(mount(shl, f"{RELEASE}-shared-pvc-storage", "/data/shared-pvc-storage"))
    extra = m.get("extraVolumes")
    if isinstance(extra, list):
        volumes += [(v, loc_of(extra, j)) for j, v in enumerate(extra)]
    return mounts, volumes


def _tolerations(spec: dict[str, Any], se: LDict, m: LDict) -> LList | None:
    """The pod's tolerations: ``servingEngineSpec.tolerations``, then the entry's (``tolerationsPolicy``
    ``append``, the default), or the entry's alone (``override``)."""
    glob = spec.get("tolerations")
    own = m.get("tolerations")
    glob = glob if isinstance(glob, list) else []
    own = own if isinstance(own, list) else []
    items = [(t, loc_of(glob, j)) for j, t in enumerate(glob)]
    if own:
        mine = [(t, loc_of(own, j)) for j, t in enumerate(own)]
        items = mine if go_text(m.get("tolerationsPolicy")) == "override" else items + mine
    if not items:
        return None
    return llist(loc_of(m, "tolerations") if own else loc_of(se, "tolerations"), items)


def _init(c: LDict, pvc_storage: bool) -> LDict:
    """The pod's init container as the chart's ``deployment-vllm-multi.yaml`` writes it from
    ``modelSpec[].initContainer``: its name, image, command, args, env and resources, and, as the template's
    ``$pvcMountEnabled`` says (``mountPvcStorage`` true and the model spec has ``pvcStorage``), the model storage
    volume mounted at ``/data`` (where the engine container mounts it: a download there is what the engine serves),
    then its ``extraVolumeMounts``. ``pvc_storage``: whether the model spec has ``pvcStorage``."""
    items: Items = [("name", c.get("name"), loc_of(c, "name")), ("image", c.get("image"), loc_of(c, "image"))]
    for key in ("command", "args", "env", "resources"):
        if _truthy(c.get(key)):
            items.append((key, c[key], loc_of(c, key)))
    mounts: list[tuple[Any, Loc | None]] = []
    if pvc_storage and _truthy(c.get("mountPvcStorage")):
        at = loc_of(c, "mountPvcStorage")
        mounts.append((ldict(at, [("name", f"{RELEASE}-storage", at), ("mountPath", "/data", at)]), at))
    extra = c.get("extraVolumeMounts")
    if isinstance(extra, list):
        mounts.extend((v, loc_of(extra)) for v in extra)
    if mounts:
        items.append(("volumeMounts", llist(loc_of(c, "mountPvcStorage") or c.loc, mounts), c.loc))
    return ldict(c.loc, items)
