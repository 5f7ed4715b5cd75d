"""The charts of a directory walk that an Argo CD ``Application``/``ApplicationSet`` or Flux ``HelmRelease`` of the
same walk deploys from the checkout (:func:`gitops_deployed`): :func:`kvlint.render.plan_walk` renders those only
through the object (with its values), not a second time alone. Registered with :mod:`kvlint.render` on import
(:data:`kvlint.render.GITOPS_DEPLOYED`): it reads the objects as the workloads stage does, and that stage imports
:mod:`kvlint.render`."""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence

from kvlint import render
from kvlint.load import load_text
from kvlint.workloads.find import _names_engine
from kvlint.workloads.gitops import gitops_names_engine
from kvlint.workloads.gitops_local import MAX_LOCAL_RENDERS, chart_names_engine, local_charts
from kvlint.workloads.operators import is_gitops

#: The words an Argo CD/Flux object's ``apiVersion`` holds (:data:`kvlint.workloads.operators.GITOPS_KINDS`)
_GITOPS_WORDS = (b"argoproj.io/", b"fluxcd.io/")


def gitops_deployed(
    charts: Sequence[str], files: Sequence[str], real_top: str, max_bytes: int
) -> dict[str, tuple[str, ...]]:
    """The charts among ``charts`` (by real path) that an Argo CD ``Application``/``ApplicationSet`` or Flux
    ``HelmRelease`` of the walk's ``files`` renders from this checkout with its own values -- as
    :func:`kvlint.workloads.gitops._local_workloads` would (:func:`kvlint.workloads.gitops_local.local_charts`;
    the object or the chart names a serving engine; at most
    :data:`kvlint.workloads.gitops_local.MAX_LOCAL_RENDERS` charts per file) -- each with the files of those
    objects, in walk order. A file is read up to ``max_bytes`` (the loader's limit: a larger one is a KV001 and
    renders nothing); a file a streaming run analyses in batches (:data:`kvlint.render.STREAM_BATCHES`, set when
    :mod:`kvlint.stream` is imported: a file over ``kvlint.stream.SEGMENT_BYTES``) counts its renders per batch,
    each its share, as :func:`kvlint.workloads.gitops_local.render_scope` does. Never raises: a file that cannot
    be read or parsed deploys nothing."""

    if not charts:
        return {}
    wanted = {os.path.realpath(c) for c in charts}
    out: dict[str, list[str]] = {}
    for f in files:
        if not render._walked_file(f, real_top):
            continue
        try:
            size = os.path.getsize(f)
            if size > max_bytes:
                continue
            with open(f, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError:
            continue
        if not any(w in data for w in _GITOPS_WORDS):
            continue
        try:
            docs = load_text(data, f).documents
        except Exception:  # noqa: BLE001 (a file the loader refuses deploys nothing here; the walk reports it)
            continue
        # (the run renders at most MAX_LOCAL_RENDERS charts a file, or for a file it analyses in batches, each
        # batch its share: kvlint.stream's render_scope)
        batches = render.STREAM_BATCHES(f, len(data)) if render.STREAM_BATCHES is not None else None
        firsts, allowed = batches if batches is not None else (None, MAX_LOCAL_RENDERS)
        renders: dict[int, int] = {}
        for doc in docs:
            if not is_gitops(doc):
                continue
            batch = 0 if firsts is None else bisect.bisect_right(firsts, doc.loc.line - 1) - 1
            try:
                local = local_charts(doc)[0]
                named = gitops_names_engine(doc, _names_engine)
            except Exception:  # noqa: BLE001 (never raises: the object's own check reports what is wrong)
                continue
            for lc in local:
                if renders.get(batch, 0) >= allowed:
                    break
                if not (named or chart_names_engine(lc.chart, _names_engine)):
                    continue
                renders[batch] = renders.get(batch, 0) + 1
                key = os.path.realpath(lc.chart)
                if key in wanted and f not in out.setdefault(key, []):
                    out[key].append(f)
    return {k: tuple(v) for k, v in out.items()}


render.GITOPS_DEPLOYED = gitops_deployed
