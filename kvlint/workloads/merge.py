"""Strategic merge of PodSpec fragments, the way operators combine a runtime template with the object that
uses it, keeping every value's source position.

KServe merges a ServingRuntime's container with an InferenceService's predictor container, and an
``LLMInferenceService`` with the ``LLMInferenceServiceConfig`` presets it builds on, with Kubernetes'
*strategic merge patch* over the ``core/v1`` types (kserve/kserve ``pkg/utils/container_merge.go``
``MergeContainerWithPatch``, ``pkg/controller/v1beta1/inferenceservice/utils/utils.go`` ``MergePodSpec``,
``pkg/controller/v1alpha2/llmisvc/config_merge.go`` ``MergeSpecs``; all via
``k8s.io/apimachinery/pkg/util/strategicpatch``). The rules restated here:

* mappings merge key by key, the patch winning; a ``null`` in the patch removes the key;
* lists of objects with a *patch merge key* merge item by item on that key: ``containers``,
  ``initContainers``, ``ephemeralContainers``, ``env``, ``volumes``, ``imagePullSecrets`` on ``name``,
  ``volumeMounts`` on ``mountPath``, ``ports`` on ``containerPort`` (the ``patchMergeKey`` tags of
  ``k8s.io/api/core/v1/types.go``); items only in the patch are appended;
* every other list (``command``, ``args``, ``tolerations``...) and every scalar is replaced.

Positions: a value taken from the patch keeps the patch's position, one kept from the base keeps the
base's, so a finding points at the file that set the value.
"""

from __future__ import annotations

from typing import Any

from kvlint.source import LDict, LList, Loc, loc_of

__all__ = ["MERGE_KEYS", "relocate", "strategic_merge"]

#: List field name -> the key its items merge on (k8s.io/api core/v1 ``patchMergeKey`` tags).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
}


def _copy(value: Any) -> Any:
    """A deep copy of a loaded value that keeps positions."""
    if isinstance(value, dict):
        out = LDict(loc=loc_of(value))
        if isinstance(value, LDict):
            locs, key_locs = value.locs, value.key_locs
            out_locs, out_key_locs = out.locs, out.key_locs
            for k, v in value.items():
                out[k] = _copy(v) if isinstance(v, (dict, list)) else v
                if k in locs:
                    out_locs[k] = locs[k]
                if k in key_locs:
                    out_key_locs[k] = key_locs[k]
        else:
            for k, v in value.items():
                out[k] = _copy(v) if isinstance(v, (dict, list)) else v
        return out
    if isinstance(value, list):
        out_l = LList([_copy(v) for v in value], loc=loc_of(value))
        out_l.locs = list(value.locs) if isinstance(value, LList) else []
        if len(out_l.locs) != len(out_l):
            out_l.locs = [loc_of(value, i) or out_l.loc or Loc("-") for i in range(len(out_l))]
        return out_l
    return value


def strategic_merge(base: Any, patch: Any, field: str = "") -> Any:
    """``patch`` merged over ``base`` (new objects; neither input is modified).

    Args:
        base: the template (a runtime's container, a preset's spec).
        patch: what overrides it (the user's object).
        field: the name of the field holding these values (selects the list merge key).

    Returns:
        The merged value; positions come from whichever side supplied each value. Never raises.
    """
    if isinstance(base, dict) and isinstance(patch, dict):
        out = _copy(base)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
                continue
            out[k] = strategic_merge(base.get(k), v, str(k)) if k in base else _copy(v)
            loc = loc_of(patch, k)
            if loc is not None:
                out.locs[k] = loc
            if isinstance(patch, LDict) and k in patch.key_locs:
                out.key_locs[k] = patch.key_locs[k]
        return out
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        if all(isinstance(x, dict) and key in x for x in patch) and all(
            isinstance(x, dict) and key in x for x in base
        ):
            merged = _copy(base)
            index = {str(x[key]): i for i, x in enumerate(merged)}
            for j, item in enumerate(patch):
                i = index.get(str(item[key]))
                if i is None:
                    merged.append(_copy(item))
                    merged.locs.append(loc_of(patch, j) or merged.loc or Loc("-"))
                    index[str(item[key])] = len(merged) - 1
                else:
                    merged[i] = strategic_merge(merged[i], item, "")
            return merged
    return _copy(patch)


def relocate(value: Any, loc: Loc | None) -> Any:
    """A copy of ``value`` with every position replaced by ``loc`` (for built-in templates that are not in
    the user's files: their findings point at the user's object that pulled them in)."""
    if isinstance(value, dict):
        out = LDict(loc=loc)
        for k, v in value.items():
            out[k] = relocate(v, loc)
            if loc is not None:
                out.locs[k] = loc
                out.key_locs[k] = loc
        return out
    if isinstance(value, list):
        out_l = LList([relocate(v, loc) for v in value], loc=loc)
        out_l.locs = [loc or Loc("-")] * len(out_l)
        return out_l
    return value
