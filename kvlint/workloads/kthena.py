"""Kthena ``ModelServing`` (workload.serving.volcano.sh, the volcano-sh/kthena operator): the pods of each role.

A ModelServing runs ``spec.replicas`` serving groups of ``spec.template.roles``; a role runs ``replicas``
instances, each an entry pod (``entryTemplate``) and ``workerReplicas`` worker pods (``workerTemplate``), so an
instance is a group of ``workerReplicas + 1`` pods. The controller puts ``GROUP_SIZE`` (that count),
``ENTRY_ADDRESS`` (the entry pod's address) and ``WORKER_INDEX`` (0 for the entry pod) in every container's
environment (volcano-sh/kthena ``pkg/model-serving-controller/utils/utils.go`` ``createCommonEnvVars``,
``pkg/apis/workload/v1alpha1`` ``servinggroup_types.go``, @3cc057284c34469fcb0ed22a12dac84b1d120719); kvlint adds
``GROUP_SIZE`` and ``WORKER_INDEX`` (the address is only known in the cluster). Entry and worker pods are
paired as a leader and its workers, as for a LeaderWorkerSet.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from kvlint.source import LDict, Loc, loc_of
from kvlint.types import ChartArg, Document, Workload
from kvlint.workloads.base import (
    get_in,
    int_or_none,
    ldict,
    llist,
    make_workload,
    synthetic_workload,
    with_injected_env,
)
from kvlint.workloads.llmisvc import model_from_uri
from kvlint.workloads.stack_values import go_text

__all__ = ["model_booster_workloads", "model_serving_workloads"]


def model_serving_workloads(doc: Document) -> list[Workload]:
    """One workload per pod template of each role of a ModelServing: the entry pod (``role="leader"`` when the
    role has workers) and the worker pod (``role="worker"``, its ``leader`` the entry workload), each with the
    group size; empty when the object has no ``spec.template.roles`` list (the structural search then reads it).
    """
    roles = get_in(doc.data, "spec", "template", "roles")
    if not isinstance(roles, list):
        return []
    out: list[Workload] = []
    for i, role in enumerate(roles):
        if not isinstance(role, dict):
            continue
        base = f"spec.template.roles[{i}]"
        replicas = int_or_none(role.get("replicas"))
        workers = int_or_none(role.get("workerReplicas")) or 0
        worker_tmpl = role.get("workerTemplate")
        has_workers = workers > 0 and isinstance(worker_tmpl, dict)
        size = workers + 1 if has_workers else None
        size_loc = loc_of(role, "workerReplicas")
        leader: Workload | None = None
        for key, role_name, index in (("entryTemplate", "leader", "0"), ("workerTemplate", "worker", None)):
            tmpl = role.get(key)
            ps = get_in(tmpl, "spec")
            if not isinstance(ps, LDict) or (role_name == "worker" and not has_workers):
                continue
            env = [("GROUP_SIZE", str(workers + 1), size_loc)]
            if index is not None:
                env.append(("WORKER_INDEX", index, loc_of(role, key)))
            ps = with_injected_env(ps, env)
            w = make_workload(
                doc,
                ps,
                [],
                path=f"{base}.{key}",
                replicas=replicas,
                role=role_name if has_workers else None,
                group_size=size,
                extra_meta=tmpl.get("metadata") if isinstance(tmpl, dict) else None,
            )
            if role_name == "leader":
                leader = w
            elif leader is not None:
                w = replace(w, leader=leader)
            out.append(w)
    return out


#: Where :func:`model_booster_workloads` restates Kthena's model-booster controller from.
BOOSTER_SOURCE = (
    "volcano-sh/kthena@3cc057284c34469fcb0ed22a12dac84b1d120719 pkg/model-booster-controller/convert/"
    "model_serving.go BuildModelServing, buildCommands, GetCachePath, GetMountPath; utils/template.go "
    "ConvertVLLMArgsFromJson; convert/templates/vllm.yaml, vllm-pd.yaml"
)
#: ModelBooster backend types Kthena's controller converts, -> the worker types that run an engine each
#: (BuildModelServing refuses the others: "not support model backend type")
_BOOSTER_ROLES = {"vLLM": ("server",), "vLLMDisaggregated": ("prefill", "decode")}


def _whole(v: Any) -> str | None:
    """A YAML number that is a whole number, as written (``1000000``); None for anything else."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        if isinstance(v, int):
            return str(v)
        return str(int(v)) if math.isfinite(v) and v.is_integer() else None
    except ValueError:  # more digits than Python prints (sys.set_int_max_str_digits)
        return None


#: how deep :func:`_go_value` writes nested maps and lists (a config value is a scalar in practice)
_GO_VALUE_DEPTH = 16


def _go_value(v: Any) -> str:
    """``fmt.Sprintf("%v", v)`` of a value json.Unmarshal put in ``interface{}`` (string, bool, float64, nil,
    map with sorted keys, slice), as ConvertVLLMArgsFromJson writes a config value
    (:func:`kvlint.workloads.stack_values.go_text` with Go's ``<nil>``); ``...`` below :data:`_GO_VALUE_DEPTH`
    levels of nesting; a number beyond float64 ``<out of range>`` (json.Unmarshal refuses it, and the controller
    with it)."""
    return go_text(v, nil="<nil>", max_depth=_GO_VALUE_DEPTH, out_of_range="<out of range>")


def _cache_path(uri: str) -> str:
    """GetCachePath: ``/`` + host and path of the cache URI, slashes trimmed (``hostpath:///tmp/cache`` ->
    ``/tmp/cache``); empty when the URI has no scheme or no path, or does not parse (``hostpath://[x``: Go's
    ``url.ParseRequestURI`` fails, and GetCachePath returns "")."""
    try:
        parsed = urlsplit(uri)
    except ValueError:  # an unclosed IPv6 bracket in the host, a port that is not a number
        return ""
    if not parsed.scheme:
        return ""
    rest = (parsed.netloc + parsed.path).strip("/")
    return "/" + rest if rest else ""


def model_booster_workloads(doc: Document) -> list[Workload]:
    """Kthena ``ModelBooster`` (workload.serving.volcano.sh): the engine container of each pod the ModelServing
    generated from it runs (:data:`BOOSTER_SOURCE`). For a ``vLLM`` backend, the ``server`` worker; for
    ``vLLMDisaggregated``, the ``prefill`` and ``decode`` workers, each its own role. The container (``engine``)
    runs the worker's ``image`` with ``python3 -m vllm.entrypoints.openai.api_server --model
    <GetCachePath(cacheURI)>/<md5 of modelURI>`` then the worker's ``config`` as ``--key value`` (keys sorted,
    ``_`` written ``-``, values as Go's ``%v``: booleans ``true``/``false``, numbers in exponent form from 10^6, an
    empty string a flag alone; a ``vLLM`` backend uses the first worker's config, as buildCommands does), the
    worker's ``resources`` and the backend's ``env``; ``backend.replicas`` x the worker's ``replicas`` pods. The
    model is the hub id of an ``hf://ORG/NAME`` modelURI (``derived_model``); another URI (``s3://``, ``pvc://``)
    is where Kthena's downloader fetches it from (``model_storage``: the catalogued model its last component
    names, :func:`kvlint.models.resolve.resolve_stored_model`), the engine's path being a digest. Not read
    (empty, and the ModelBooster keeps its KV503 note): other backend types, which the controller refuses, and a
    ``server`` worker of more than one pod (a Ray cluster built by a script). Left out: the runtime sidecar and the downloader init container (no GPU, no engine), and the ``pip install`` of
    NIXL or Mooncake put before the command for a KV connector (it does not change the engine's options)."""
    backend = get_in(doc.data, "spec", "backend")
    if not isinstance(backend, LDict):
        return []
    roles = _BOOSTER_ROLES.get(str(backend.get("type") or ""))
    workers = backend.get("workers")
    if roles is None or not isinstance(workers, list) or not workers:
        return []
    by_type: dict[str, tuple[int, LDict]] = {}
    for i, w in enumerate(workers):
        if isinstance(w, LDict) and str(w.get("type") or "") not in by_type:
            by_type[str(w.get("type") or "")] = (i, w)
    if any(r not in by_type for r in roles):
        return []
    if roles == ("server",) and (int_or_none(by_type["server"][1].get("pods")) or 1) > 1:
        return []
    uri = str(backend.get("modelURI") or "")
    uri_loc = loc_of(backend, "modelURI") or loc_of(doc.data, "spec") or doc.loc
    digest = hashlib.md5(uri.encode(), usedforsecurity=False).hexdigest()  # GetMountPath: a directory name
    path = _cache_path(str(backend.get("cacheURI") or "")) + "/" + digest
    backend_replicas = int_or_none(backend.get("replicas"))
    out: list[Workload] = []
    for role in roles:
        i, worker = by_type[role]
        wloc = loc_of(workers, i) or uri_loc
        # buildVllmModelServing takes the first worker's config, whatever its type
        source = workers[0] if roles == ("server",) else worker
        config = source.get("config") if isinstance(source, dict) else None
        words: list[tuple[Any, Loc | None]] = [
            *((w, wloc) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")),
            ("--model", uri_loc),
            (path, uri_loc),
        ]
        written: list[ChartArg] = []
        if isinstance(config, dict):
            at = f"spec.backend.workers[{0 if roles == ('server',) else i}].config"
            for key in sorted(config, key=str):
                kloc = loc_of(config, key)
                option = "--" + str(key).replace("_", "-")
                words.append((option, kloc))
                raw = config[key]
                value = _go_value(raw)
                if value:
                    words.append((value, kloc))
                # a whole number Go prints in exponent form (1e+06): a string is written as it is
                plain = _whole(raw)
                odd = plain is not None and plain != value and not value.startswith("<")
                written.append(
                    ChartArg(
                        kloc,
                        (option, value) if value else (option,),
                        f"{at}.{key}",
                        True,
                        writer="Kthena",
                        extra=at,
                        as_written=plain if odd else None,
                        why=f"Kthena writes {at}.{key}: {plain} as {value}, as Go prints a JSON number"
                        if odd
                        else None,
                        fix=f'quote the value: {key}: "{plain}" (Kthena writes a string as it is)'
                        if odd
                        else f"correct or remove {key} in {at}: Kthena writes each key as the option {option} "
                        "followed by its value",
                    )
                )
        items: list[tuple[str, Any, Loc | None]] = [
            ("name", "engine", wloc),
            (
                "image",
                image if isinstance(image := worker.get("image"), str) else "",
                loc_of(worker, "image") or wloc,
            ),
            ("command", llist(wloc, words), wloc),
        ]
        env = backend.get("env")
        if isinstance(env, list):
            items.append(("env", env, loc_of(backend, "env")))
        resources = worker.get("resources")
        if isinstance(resources, LDict):
            items.append(("resources", resources, loc_of(worker, "resources")))
        container = ldict(wloc, items)
        ps = ldict(wloc, [("containers", llist(wloc, [(container, wloc)]), wloc)])
        replicas = int_or_none(worker.get("replicas"))
        if replicas is not None and backend_replicas is not None:
            replicas *= backend_replicas
        w = synthetic_workload(
            doc,
            ps,
            f"spec.backend.workers[{i}]",
            replicas=replicas,
            derived_model=model_from_uri(uri),
        )
        if written:
            w = replace(w, chart_args=tuple(written))
        if uri and model_from_uri(uri) is None:
            # downloaded from an object store or a PVC: the models stage takes the model's name from the URI
            w = replace(w, model_storage=uri)
        out.append(w)
    return out
