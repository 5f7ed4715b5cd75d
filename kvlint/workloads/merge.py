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

__all__ = ["MERGE_KEYS", "patch_with_directives", "relocate", "strategic_merge"]

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


_new_dict = dict.__new__
_new_list = list.__new__


def _copy(value: Any) -> Any:
    """A deep copy of a loaded value that keeps positions.

    Positions the loader still holds packed (:class:`kvlint.source.Packing`: ``locs``/``key_locs`` never read)
    are copied packed, so the copy builds its :class:`~kvlint.source.Loc` objects only if they are read (most
    copied values' positions never are); the containers are made without their Python ``__init__`` (the
    loader's way). Either way the copy's ``loc``, ``locs`` and ``key_locs`` read as those of ``value`` (for its
    keys, in its order; a list's as many as its items, else each item's ``loc_of`` as a fallback)."""
    if isinstance(value, dict):
        out = _new_dict(LDict)
        out.loc = getattr(value, "loc", None)  # loc_of(value)
        for k, v in value.items():
            out[k] = _copy(v) if isinstance(v, (dict, list)) else v
        if isinstance(value, LDict):
            if value._locs is None:
                plocs = value._plocs
                out._plocs = {k: plocs[k] for k in value if k in plocs}
                out._locs = None
                out._packing = value._packing
            else:
                locs = value._locs
                out._locs = {k: locs[k] for k in value if k in locs}
            if value._key_locs is None:
                pkey_locs = value._pkey_locs
                out._pkey_locs = {k: pkey_locs[k] for k in value if k in pkey_locs}
                out._key_locs = None
                out._packing = value._packing
            else:
                key_locs = value._key_locs
                out._key_locs = {k: key_locs[k] for k in value if k in key_locs}
        else:
            out._locs = {}
            out._key_locs = {}
        return out
    if isinstance(value, list):
        out_l = _new_list(LList)
        out_l.extend([_copy(v) if isinstance(v, (dict, list)) else v for v in value])
        out_l.loc = getattr(value, "loc", None)  # loc_of(value)
        if isinstance(value, LList) and value._locs is None and len(value._plocs) == len(out_l):
            out_l._plocs = list(value._plocs)
            out_l._locs = None
            out_l._packing = value._packing
            return out_l
        out_l._locs = list(value.locs) if isinstance(value, LList) else []
        if len(out_l._locs) != len(out_l):
            out_l._locs = [loc_of(value, i) or out_l.loc or Loc("-") for i in range(len(out_l))]
        return out_l
    return value


def strategic_merge(
    base: Any,
    patch: Any,
    field: str = "",
    *,
    reuse_base: bool = False,
    reuse_patch: bool = False,
    directives: bool = False,
) -> Any:
    """``patch`` merged over ``base`` (new objects; neither input is modified).

    Args:
        base: the template (a runtime's container, a preset's spec).
        patch: what overrides it (the user's object).
        field: the name of the field holding these values (selects the list merge key).
        reuse_base: ``base`` is a tree the caller owns and gives away (a previous merge's result, a
            :func:`relocate` copy): its values are put in the result as they are instead of copied, so the
            result shares them and ``base`` must not be used (or edited) afterwards.
        reuse_patch: the same for ``patch``.
        directives: ``patch`` is a raw patch that may hold strategic merge patch directives, applied as
            :func:`patch_with_directives` applies them (an operator's free-form patch field, which the API
            server passes through as written); ``reuse_base`` and ``reuse_patch`` are then ignored.

    Returns:
        The merged value; positions come from whichever side supplied each value. Never raises.

    Each value of either side is copied once: a key of ``base`` that ``patch`` also sets is merged, not
    copied and then merged again (which copied a deep base once per level above it). A key ``patch`` removes
    (``null``) keeps its position in the result's ``locs``, as a copy of ``base`` with the key popped did.
    """
    if directives:
        return patch_with_directives(base, patch, field)
    if isinstance(base, dict) and isinstance(patch, dict):
        out = LDict(loc=loc_of(base))
        out_locs, out_key_locs = out.locs, out.key_locs
        if isinstance(base, LDict):
            locs, key_locs = base.locs, base.key_locs
        else:
            locs = key_locs = {}
        for k, v in base.items():
            if k in patch:
                pv = patch[k]
                if pv is not None:
                    out[k] = strategic_merge(v, pv, str(k), reuse_base=reuse_base, reuse_patch=reuse_patch)
            else:
                out[k] = _copy(v) if not reuse_base and isinstance(v, (dict, list)) else v
            if k in locs:
                out_locs[k] = locs[k]
            if k in key_locs:
                out_key_locs[k] = key_locs[k]
        patch_key_locs = patch.key_locs if isinstance(patch, LDict) else {}
        for k, v in patch.items():
            if v is None:
                continue
            if k not in base:
                out[k] = v if reuse_patch else _copy(v)
            loc = loc_of(patch, k)
            if loc is not None:
                out_locs[k] = loc
            if k in patch_key_locs:
                out_key_locs[k] = patch_key_locs[k]
        return out
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        if all(isinstance(x, dict) and key in x for x in patch) and all(
            isinstance(x, dict) and key in x for x in base
        ):
            # items are copied (or merged) once, at the end: an item that a patch item merges into is the
            # base item itself until then (merging never changes its inputs)
            merged = LList(loc=loc_of(base))
            items: list[Any] = list(base)
            merged.locs = list(base.locs) if isinstance(base, LList) else []
            if len(merged.locs) != len(items):
                merged.locs = [loc_of(base, i) or merged.loc or Loc("-") for i in range(len(items))]
            done = [False] * len(items)
            index = {str(x[key]): i for i, x in enumerate(items)}
            for j, item in enumerate(patch):
                i = index.get(str(item[key]))
                if i is None:
                    items.append(item if reuse_patch else _copy(item))
                    done.append(True)
                    merged.locs.append(loc_of(patch, j) or merged.loc or Loc("-"))
                    index[str(item[key])] = len(items) - 1
                else:
                    items[i] = strategic_merge(
                        items[i], item, "", reuse_base=reuse_base, reuse_patch=reuse_patch
                    )
                    done[i] = True
            merged.extend(x if d or reuse_base else _copy(x) for x, d in zip(items, done, strict=True))
            return merged
    return patch if reuse_patch else _copy(patch)


#: Strategic merge patch directives (k8s.io/apimachinery/pkg/util/strategicpatch, patch.go).
_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_LIST = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"


def _is_directive_key(k: Any) -> bool:
    return isinstance(k, str) and (
        k in (_DIRECTIVE, _RETAIN_KEYS) or k.startswith(_DELETE_FROM_LIST) or k.startswith(_SET_ORDER)
    )


def _without_directives(value: Any) -> tuple[Any, bool]:
    """``(copy, keep)``: ``value`` as strategicpatch ``removeDirectives`` leaves a patch value with nothing under
    it in the original: a mapping holding ``$patch`` is dropped (``keep`` False), and so is such a mapping in
    a list; everything else is copied (positions kept)."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        out = LDict(loc=loc_of(value))
        for k, v in value.items():
            v2, keep = _without_directives(v)
            if keep:
                out[k] = v2
                if loc_of(value, k) is not None:
                    out.locs[k] = loc_of(value, k)  # type: ignore[assignment]
        return out, True
    if isinstance(value, list):
        kept = [
            (v2, loc_of(value, i))
            for i, v in enumerate(value)
            for v2, keep in [_without_directives(v)]
            if keep
        ]
        out_l = LList([v for v, _ in kept], loc=loc_of(value))
        out_l.locs = [il or out_l.loc or Loc("-") for _, il in kept]
        return out_l, True
    return value, True


def patch_with_directives(base: Any, patch: Any, field: str = "") -> Any:
    """``patch`` applied to ``base`` as ``strategicpatch.StrategicMergePatch`` applies it to a ``core/v1`` object
    (k8s.io/apimachinery/pkg/util/strategicpatch/patch.go ``mergeMap``, ``mergeSliceHandler``,
    ``mergeSliceWithSpecialElements``), directives included: an operator applying a free-form patch with it
    (RBG's ``templateRef.patch`` and leader/worker template patches, ``applyStrategicMergePatch``) obeys
    them, so a patch can remove what the template sets.

    * ``$patch: replace`` in a mapping: the patch's mapping, the base's dropped; ``$patch: delete``: empty;
    * ``$retainKeys: [...]``: the base's keys not listed are dropped before merging;
    * ``$deleteFromPrimitiveList/<key>: [...]``: those values are removed from the merged list ``<key>``;
    * in a list merged on a key (:data:`MERGE_KEYS`), an item ``{$patch: delete, <key>: v}`` removes the base
      items of that key and ``{$patch: replace}`` makes the list the patch's other items;
    * ``$setElementOrder/<key>`` only orders a list and is dropped; a patch value with nothing under it in the
      base loses the mappings that hold ``$patch`` (``removeDirectives``).

    Otherwise as :func:`strategic_merge` (``null`` removes a key; other lists and scalars are replaced). A patch
    the Go code refuses (an unknown ``$patch`` value, an item without its merge key) is merged as far as it
    goes: the operator then creates nothing, and kvlint reads more than runs, never less. Positions come
    from whichever side supplied each value. Never raises; neither input is modified."""
    if isinstance(base, dict) and isinstance(patch, dict):
        directive = patch.get(_DIRECTIVE)
        if directive == "replace":
            out_r = LDict(loc=loc_of(patch))
            for k, v in patch.items():
                if k != _DIRECTIVE:
                    out_r[k] = _copy(v)
                    if loc_of(patch, k) is not None:
                        out_r.locs[k] = loc_of(patch, k)  # type: ignore[assignment]
            return out_r
        if directive == "delete":
            return LDict(loc=loc_of(patch))
        retain = patch.get(_RETAIN_KEYS)
        keep_keys = {str(k) for k in retain if isinstance(k, str)} if isinstance(retain, list) else None
        out = LDict(loc=loc_of(base))
        for k, v in base.items():
            if keep_keys is not None and k not in keep_keys:
                continue
            if k in patch:
                pv = patch[k]
                if pv is None:
                    continue
                if isinstance(v, dict) == isinstance(pv, dict) and isinstance(v, list) == isinstance(
                    pv, list
                ):
                    merged = patch_with_directives(v, pv, str(k))
                else:
                    merged, keep = _without_directives(pv)
                    if not keep:
                        continue
                out[k] = merged
                loc = loc_of(patch, k)
            else:
                out[k] = _copy(v)
                loc = loc_of(base, k)
            if loc is not None:
                out.locs[k] = loc
        for k, v in patch.items():
            if v is None or k in base or _is_directive_key(k):
                continue  # removed, merged above (or dropped by $retainKeys: Go refuses that patch), a directive
            v2, keep = _without_directives(v)
            if keep:
                out[k] = v2
                if loc_of(patch, k) is not None:
                    out.locs[k] = loc_of(patch, k)  # type: ignore[assignment]
        for k, v in patch.items():
            if isinstance(k, str) and k.startswith(_DELETE_FROM_LIST) and isinstance(v, list):
                name = k[len(_DELETE_FROM_LIST) :]
                cur = out.get(name)
                if isinstance(cur, list):
                    gone = {(type(d), d) for d in v if isinstance(d, (str, int, float, bool))}
                    kept = [
                        (x, loc_of(cur, i))
                        for i, x in enumerate(cur)
                        if not isinstance(x, (str, int, float, bool)) or (type(x), x) not in gone
                    ]
                    new = LList([x for x, _ in kept], loc=loc_of(cur))
                    new.locs = [il or new.loc or Loc("-") for _, il in kept]
                    out[name] = new
        return out
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        # base items by the text of their key (a patch item merges into the first, a delete removes all);
        # None marks a deleted item: each patch item costs one lookup, whatever the lists' lengths
        items: list[tuple[Any, Loc | None] | None] = [(x, loc_of(base, i)) for i, x in enumerate(base)]
        index: dict[str, list[int]] = {}
        for i, x in enumerate(base):
            if isinstance(x, dict) and key in x:
                index.setdefault(str(x[key]), []).append(i)
        rest: list[tuple[Any, Loc | None]] = []
        replace = False
        for j, item in enumerate(patch):
            if isinstance(item, dict) and _DIRECTIVE in item:
                if item[_DIRECTIVE] == "delete" and key in item:
                    for i in index.pop(str(item[key]), []):
                        items[i] = None
                elif item[_DIRECTIVE] == "replace":
                    replace = True
                continue
            rest.append((item, loc_of(patch, j)))
        if replace or not all(isinstance(x, dict) and key in x for x, _ in rest):
            kept_items = [(v2, il) for x, il in rest for v2, keep in [_without_directives(x)] if keep]
            out_l = LList([x for x, _ in kept_items], loc=loc_of(patch))
            out_l.locs = [il or out_l.loc or Loc("-") for _, il in kept_items]
            return out_l
        result: list[tuple[Any, Loc | None] | None] = [
            (_copy(e[0]), e[1]) if e is not None else None for e in items
        ]
        for item, il in rest:
            at = index.get(str(item[key]))
            if not at:
                v2, keep = _without_directives(item)
                if keep:
                    index[str(item[key])] = [len(result)]
                    result.append((v2, il))
                    items.append((item, il))
            else:
                entry, cur = items[at[0]], result[at[0]]
                assert entry is not None and cur is not None
                new = patch_with_directives(entry[0], item, "")
                result[at[0]] = (new, cur[1])
                items[at[0]] = (new, cur[1])
        kept = [e for e in result if e is not None]
        out_m = LList([x for x, _ in kept], loc=loc_of(base))
        out_m.locs = [il or out_m.loc or Loc("-") for _, il in kept]
        return out_m
    value, keep = _without_directives(patch)
    return value if keep else LDict(loc=loc_of(patch))


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
