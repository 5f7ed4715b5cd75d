"""Helm and Kustomize inputs: render charts and kustomizations, map rendered positions back to sources.

:func:`load_inputs` is a drop-in replacement for :func:`kvlint.load.load_paths` (same arguments plus the
Helm options) that understands three more kinds of input:

* **Helm chart directories** (a directory holding ``Chart.yaml``, named as an argument): rendered with
  ``helm template [--values=VALUES]... [--set=K=V]... [--set-file=K=PATH]... -- RELEASE CHART`` when the ``helm`` binary is on
  ``PATH`` (paths starting with ``-`` get a ``./`` prefix: no argument can turn into a helm option).
  A chart holding a symbolic link out of its directory, or a ``values.schema.json`` ``$ref`` that is not a
  fragment of the schema, is not rendered: one KV001 each (:func:`chart_escapes`), as helm would read or fetch
  what they name. A chart holding ``.git`` (a repository whose root is the chart) is rendered without it
  (:func:`_link_without_git`): helm loads every file of the directory into ``.Files``, and a CI checkout keeps its token in
  ``.git/config``. Without helm, :class:`RenderError` is raised (the CLI turns it into exit code 2): kvlint cannot lint a
  chart it cannot render, and reporting the raw templates would only produce KV002 noise.
* **Kustomize directories** (a directory holding ``kustomization.yaml``/``.yml``/``Kustomization``, named
  as an argument): rendered with ``kustomize build DIR``, else ``kubectl kustomize DIR``; neither on
  ``PATH`` raises :class:`RenderError`. A tree naming a remote base, resource, patch or generator file (a URL,
  ``github.com/...``, ``git@host:...``) is not built: one KV001 at each such reference
  (:func:`remote_references`), as kvlint fetches nothing a manifest names; so is one naming a path into
  ``.git``. Rendered objects are mapped back to the files of the kustomization
  tree that define the same ``kind`` and ``metadata.name`` (ignoring ``namePrefix``/``nameSuffix``): the
  resource and any strategic-merge patches, walked in parallel along the same key path (containers paired
  by name). A value goes to the file holding that same value (the patch that set it), else to the
  resource's value it replaced (JSON 6902 patches are not read), else to its nearest ancestor.
* **``# Source: PATH`` comments** (what ``helm template`` writes before each document), in any input:
  a file, standard input (``helm template ... | kvlint check -``) or the output kvlint rendered itself.
  Every location of a document that follows such a comment is rewritten to name that template file
  whenever the file can be found and matches the rendered document (a file of the same name from another
  chart is not taken): for a chart kvlint rendered itself, in the chart; for a rendered file on disk,
  below its directory or a parent of it, or the ``charts/`` directory of one of those (the usual
  repository layout), or the cwd; for stdin, below the cwd, its ``charts/`` or its parent (piping from
  inside the chart). The line is the **template's own line**, found by aligning the rendered document
  with the template text (:mod:`kvlint.template_lines`): a literal line maps to itself, a value written
  by an action (``{{- toYaml .Values.args | nindent 4 }}``, ``include``) to that action's line; a value a
  named template's ``include`` line wrote goes on to the values line that set it, where its text traces back to
  one place of the ``.Values`` that line names (:func:`trace_helper_values`). When no
  matching template is found, locations stay where they are (the rendered file, or ``-`` and the line
  of the piped stream): true positions rather than a template name with a line that is not its own.

Raw **Helm values files** are recognised and reported instead of being silently ignored: a document
with neither ``apiVersion`` nor ``kind`` that has the shape of chart values (vLLM production-stack
``servingEngineSpec``/``routerSpec``/``modelSpec``, ``replicaCount`` next to ``image`` as in ``helm
create`` charts), a serving chart's top-level ``model`` (a Hugging Face id) or ``resources.limits``
GPU with ``env``/``nodeSelector``/... (substratusai/helm's vllm chart), or any such document in a file named
``values*.yaml`` beside a ``Chart.yaml``, gets one KV002 finding per file: "... is a Helm values file: render the
chart first". Values of a chart kvlint reads itself (:mod:`kvlint.chart_values`: KubeAI's models catalogue,
vLLM production-stack's ``servingEngineSpec``, :mod:`kvlint.workloads.stack_values`) get that reader's note
instead (none, or a KV002 saying why no pod could be built), and their workloads are checked.

Both renderers run with fetching cut off (:func:`_render_env`: every proxy variable points at a closed local
port, git refuses every transport), for what the checks above do not see (a chart's ``values.schema.json``
``$ref`` to a URL, which helm fetches while it validates the values).

Everything else is delegated to :func:`kvlint.load.load_paths`, so directories are still walked, files
still deduplicated and bad YAML still reported as KV001.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import re
import shutil
import subprocess
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, TextIO

from kvlint import filecache
from kvlint.chart_values import reader_of
from kvlint.gpu_resources import MIG_RESOURCE_PREFIX, WHOLE_GPUS, amd_partition_of
from kvlint.kustomize_patch import kustomization_built, kustomizations_built, strategic_merge_patch_finding
from kvlint.load import (
    DEFAULT_MAX_FILE_BYTES,
    KUSTOMIZATION_FILES,
    MANIFEST_EXTENSIONS,
    WalkSkip,
    _excluded,
    _values_file_name,
    directories_to_repository_root,
    helm_first,
    is_kustomize_dir,
    link_chain,
    load_paths,
    load_text,
    outermost_chart,
    parent_charts,
    repository_chart,
    repository_root,
    values_chart,
)
from kvlint.paths import missing_path, real_inside, real_path_inside, shown_path, walk_tree
from kvlint.source import LDict, LList, Loc
from kvlint.template_lines import (
    RegionIndex,
    TemplateLine,
    align_document,
    named_templates,
    parse_template,
    regions,
)
from kvlint.types import COULD_NOT_FINISH, Document, Finding, LoadResult, Mark
from kvlint.wording import count, shell_word

__all__ = [
    "KUSTOMIZATION_FILES",
    "chart_escapes",
    "RENDER_TIMEOUT_S",
    "RenderError",
    "clear_file_cache",
    "find_sources",
    "helm_values_reason",
    "kustomization_file_finding",
    "unrendered_file_finding",
    "unrendered_or_error",
    "internal_error_finding",
    "COULD_NOT_FINISH",
    "EMPTY_RENDER",
    "CheckedSetFiles",
    "Inputs",
    "sort_inputs",
    "unreachable_finding",
    "empty_render_finding",
    "is_chart_dir",
    "is_kustomize_dir",
    "kustomize_overlays_of",
    "subchart_plan",
    "kustomize_command",
    "load_inputs",
    "map_sources",
    "plan_walk",
    "WalkedDir",
    "values_note",
    "walk_notes",
    "render_helm",
    "remote_references",
    "confinement_root",
    "render_kustomize",
]

#: Seconds a ``helm template`` / ``kustomize build`` may take before the run gives up.
RENDER_TIMEOUT_S = 120
_SOURCE_PREFIX = "# Source: "
# Top-level keys of vLLM production-stack chart values (helm/values.yaml of vllm-project/production-stack).
_STACK_KEYS = ("servingEngineSpec", "routerSpec", "cacheserverSpec", "loraControllerSpec")
_RENDER_FIX = "helm template RELEASE CHART -f values.yaml | kvlint check -"


class RenderError(Exception):
    """A chart or kustomization named on the command line cannot be rendered at all.

    Raised when the needed binary (``helm``; ``kustomize`` or ``kubectl``) is not on ``PATH``, when
    ``--helm-values``/``--helm-set``/``--helm-set-file`` are given without any chart directory, or when a
    ``--helm-set-file`` is refused (:func:`set_file_args`). The message says what to install or run instead. The CLI should exit 2 with
    ``kvlint: <message>``. (A chart that helm itself rejects is not an error of this kind: that becomes a
    KV001 finding at ``Chart.yaml`` and the other inputs are still linted.)
    """


# --------------------------------------------------------------------------------------------------
# public API


def load_inputs(
    paths: Sequence[str],
    *,
    stdin: TextIO | BinaryIO | None = None,
    helm_values: Sequence[str] = (),
    helm_set: Sequence[str] = (),
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    exclude: Sequence[str] = (),
    helm_set_file: Sequence[str] = (),
) -> LoadResult:
    """Read every input named by ``paths``, rendering charts and kustomizations first.

    Args:
        paths: as for :func:`kvlint.load.load_paths` (files, directories, ``-``); a directory with a
            ``Chart.yaml`` is rendered with helm, one with a kustomization file with kustomize.
        stdin: stream read for ``-``; defaults to ``sys.stdin``.
        helm_values: values files passed to every ``helm template`` as ``-f FILE`` (in order).
        helm_set: ``KEY=VALUE`` overrides passed as ``--set KEY=VALUE``.
        helm_set_file: ``KEY=PATH`` pairs passed as ``--set-file`` (checked by :func:`set_file_args`).
        max_file_bytes: per-file (and per-rendered-output) limit in bytes; larger inputs are KV001.
        exclude: ``fnmatch`` globs of paths not to read (as ``load_paths``).

    Returns:
        LoadResult: documents in input order (plain inputs first, then rendered ones), with locations
        rewritten from ``# Source:`` comments; findings (KV001, KV002 including Helm values files);
        ``files`` counts plain files read plus one per rendered chart/kustomization.

    Raises:
        FileNotFoundError: a path or ``--helm-values`` file does not exist (before anything is read).
        RenderError: a chart/kustomization cannot be rendered because its tool is missing, or Helm
            options were given without a chart.
    """
    clear_file_cache()
    inputs = sort_inputs(paths, helm_values, helm_set, helm_set_file, max_file_bytes, exclude)
    result = load_paths(
        inputs.plain, stdin=stdin, max_file_bytes=max_file_bytes, exclude=exclude, skip=inputs.skip
    )
    _map_loaded_sources(result)
    for part in render_inputs(inputs, helm_values, helm_set, max_file_bytes):
        _merge(result, part)
    result.findings.extend(_values_findings(result.documents, result.findings))
    for p in inputs.unreachable:
        result.files += 1
        result.findings.append(unreachable_finding(p))
    return result


def render_inputs(
    inputs: Inputs, helm_values: Sequence[str], helm_set: Sequence[str], max_bytes: int
) -> Iterator[LoadResult]:
    """What :func:`load_inputs` (and :func:`kvlint.stream.stream_check`'s plan) renders, in order: one result of
    the notes on the charts and kustomizations (:meth:`Inputs.render_plan`), when there are any, then each chart
    (a named one with the Helm options, one met in a walk with its own values only), then each kustomization.

    Raises:
        RenderError: a named chart or kustomization whose tool is not on ``PATH`` (one met in a walk without its
            tool is not rendered at all: :func:`plan_walk`).
    """

    for loaded in _render_inputs(inputs, helm_values, helm_set, max_bytes):
        _shown_finding_paths(loaded)
        yield loaded


def _shown_finding_paths(loaded: LoadResult) -> None:
    """The files the findings of a render name (``CHART/Chart.yaml``, a template helm's error names, a
    kustomization file) as reports name files (:func:`kvlint.paths.shown_path`), in place: ``kvlint check .`` in a
    chart's directory said ``./templates/x.yaml`` where the rendered files are ``templates/x.yaml``."""
    for i, f in enumerate(loaded.findings):
        if f.loc is not None and f.loc.file != shown_path(f.loc.file):
            loaded.findings[i] = dataclasses.replace(f, loc=f.loc._replace(file=shown_path(f.loc.file)))


def _render_inputs(
    inputs: Inputs, helm_values: Sequence[str], helm_set: Sequence[str], max_bytes: int
) -> Iterator[LoadResult]:
    """Body of :func:`render_inputs`."""
    charts, kustomizations, notes = inputs.render_plan()
    # a patch a kustomization lists, named too, is linted through its build: each is recorded as it builds (one
    # that fails, is refused or is left out by the walk's budget lints no patch)
    kustomizations_built(())
    if notes:
        yield LoadResult(findings=notes)
    # what the renders of walks have spent: in this call, or in the run this call is part of (:func:`shared_walk_budget`)
    spent = _BUDGET_SCOPES[-1] if _BUDGET_SCOPES else _WalkBudget()

    def walk_timeout() -> float | str:
        return _budget_timeout(spent, max_bytes)

    for chart, named in charts:
        timeout = float(RENDER_TIMEOUT_S) if named else walk_timeout()
        if isinstance(timeout, str):
            yield walk_budget_finding(chart, "helm", timeout, max_bytes)
            continue
        loaded = render_helm(
            chart,
            values=helm_values if named else (),
            set_values=helm_set if named else (),
            set_files=inputs.set_files if named else CheckedSetFiles(),
            max_bytes=max_bytes,
            timeout=timeout,
            sizes=None if named else spent.sizes,
        )
        if not named:  # met in a walk, rendered with its own values: helm's failure may be values it lacks
            loaded.findings[:] = walk_values_hint(loaded.findings, chart)
            note = values_note(chart)
            if note is not None and not any(f.rule == "KV001" for f in loaded.findings):
                loaded.findings.append(note)
        yield _rendered_by(loaded, chart)
    for kdir in kustomizations:
        walked = isinstance(kdir, WalkedDir)
        timeout = walk_timeout() if walked else float(RENDER_TIMEOUT_S)
        if isinstance(timeout, str):
            yield walk_budget_finding(kdir, "kustomize", timeout, max_bytes)
            continue
        loaded = _rendered_by(
            render_kustomize(
                kdir, max_bytes=max_bytes, timeout=timeout, sizes=spent.sizes if walked else None
            ),
            str(kdir),
        )
        # a failed or refused build is a KV001 and no document; a build that printed nothing is still a build
        if loaded.documents or not any(f.rule == "KV001" for f in loaded.findings):
            kustomization_built(kdir)
        yield loaded


def _rendered_by(loaded: LoadResult, directory: str) -> LoadResult:
    """``loaded``, a render of the chart or kustomization ``directory``, with each document's
    :attr:`Document.render` set to it (in place): the objects one render prints are applied together, which the
    paths they map back to do not say (every overlay of a base maps its objects to the base's files)."""
    loaded.documents[:] = [dataclasses.replace(d, render=str(directory)) for d in loaded.documents]
    return loaded


#: Most wall-clock seconds the charts and overlays met in the directory walks of one run (:func:`plan_walk`) render
#: for together (each render its :data:`RENDER_TIMEOUT_S` at most, cut to what is left); the ones left when it is
#: spent are not started, each a KV001 (:func:`walk_budget_finding`). Counted from the first such render of a run
#: (:func:`shared_walk_budget`; the renders run in the main process, whatever ``--jobs``). [assumed] a
#: repository's tens of charts render in a second or two each; without it, the 200 renders a walk allows
#: (:data:`MAX_WALK_RENDERS`) of a pull request's charts each looping for just under the timeout held a CI runner
#: for six and a half hours.
WALK_RENDER_BUDGET_S = 600
#: Most output the charts and overlays met in the walks of one run render together, in multiples of
#: ``--max-file-bytes`` (each render's own limit, 16 MiB by default: 64 MiB together): past it, the ones left are
#: not started, each a KV001. kvlint holds what a run renders until its report, about 36 times the YAML's size
#: (measured: 15.6 MB of ConfigMaps from one chart kept 560 MB, in 41 s), so the fourteen such charts that fit in
#: the time budget would hold about 8 GB, more than a 7 GB CI runner has. [assumed] a repository's charts render
#: tens of kilobytes each; a few print megabytes of CRDs.
WALK_RENDER_BYTES = 4


@dataclasses.dataclass
class _WalkBudget:
    """What the renders of walks have spent: when the first started (``time.monotonic``), the bytes each printed."""

    started: float | None = None
    sizes: list[int] = dataclasses.field(default_factory=list)

    @property
    def rendered(self) -> int:
        return sum(self.sizes)


#: The clocks of the :func:`shared_walk_budget` scopes open, innermost last (each empty until a walk's first render)
_BUDGET_SCOPES: list[_WalkBudget] = []


def _budget_timeout(spent: _WalkBudget, max_bytes: int) -> float | str:
    """The timeout of the next render ``spent`` is the budget of: what is left of :data:`WALK_RENDER_BUDGET_S`, at
    most :data:`RENDER_TIMEOUT_S`; or, when nothing is left of it or of :data:`WALK_RENDER_BYTES` times
    ``max_bytes``, which (``"time"``, ``"bytes"``). The clock starts at the first render asked for."""
    import time

    if spent.started is None:
        spent.started = time.monotonic()
    if spent.rendered >= WALK_RENDER_BYTES * max_bytes:
        return "bytes"
    left = WALK_RENDER_BUDGET_S - (time.monotonic() - spent.started)
    return "time" if left <= 0 else min(float(RENDER_TIMEOUT_S), left)


def gitops_render_budget(max_bytes: int) -> tuple[float | str, list[int] | None]:
    """``(timeout, sizes)`` of the next render of a chart of the checkout that an Argo CD/Flux object deploys
    (:func:`kvlint.workloads.gitops_local.render_local_chart`): within a run's :func:`shared_walk_budget`, the
    budget the walks' renders spend (:func:`_budget_timeout`: seconds, or ``"time"``/``"bytes"`` when it is spent)
    and the list its output sizes go to; outside any, :data:`RENDER_TIMEOUT_S` and None. Such charts are chosen by
    the files linted, not named by the user: a pull request's file of 64 Applications deploying a looping chart held
    a CI runner for 64 times the timeout, and every such file for as long again."""
    if not _BUDGET_SCOPES:
        return float(RENDER_TIMEOUT_S), None
    spent = _BUDGET_SCOPES[-1]
    return _budget_timeout(spent, max_bytes), spent.sizes


@contextlib.contextmanager
def shared_walk_budget() -> Iterator[None]:
    """Within it, every :func:`render_inputs` call shares one :data:`WALK_RENDER_BUDGET_S` (a run whose walk is split
    by nested ``.kvlint.yaml`` files renders each part in its own call: a pull request adding one per chart must not
    get a budget per chart); outside any, each call has its own."""
    _BUDGET_SCOPES.append(_WalkBudget())
    try:
        yield
    finally:
        _BUDGET_SCOPES.pop()


def walk_budget_finding(directory: str, tool: str, spent: str = "time", max_bytes: int = 0) -> LoadResult:
    """The KV001 (at its ``Chart.yaml`` or kustomization file) of the chart (``tool`` ``"helm"``) or kustomization
    met in a walk that was not rendered because the walk's renders had spent :data:`WALK_RENDER_BUDGET_S`
    (``spent`` ``"time"``) or printed :data:`WALK_RENDER_BYTES` times ``max_bytes`` (``"bytes"``)."""
    name = "Chart.yaml" if tool == "helm" else _kustomization_name(directory)
    how = (
        f"helm template RELEASE {shell_word(directory)}"
        if tool == "helm"
        else f"kubectl kustomize {shell_word(_safe_path(directory))}"
    )
    return LoadResult(
        findings=[
            Finding(
                "KV001",
                (
                    f"not rendered: the charts and overlays met in this directory walk had rendered for "
                    f"{WALK_RENDER_BUDGET_S} s together, the most kvlint spends on the renders of one run's walks"
                    if spent == "time"
                    else f"not rendered: the charts and overlays met in this directory walk had printed "
                    f"{WALK_RENDER_BYTES * max_bytes} bytes together, the most kvlint reads from the renders of one "
                    f"run's walks ({WALK_RENDER_BYTES} times the {max_bytes}-byte limit, --max-file-bytes)"
                ),
                Loc(os.path.join(directory, name), 1, 1),
                fix=f"name the charts and overlays you deploy (kvlint check DIR ...), or render this one and pipe it: "
                f"{how} | kvlint check -",
            )
        ],
        files=1,
    )


def subchart_plan(charts: list[str]) -> tuple[list[str], list[Finding]]:
    """The chart directories to render, and KV002 notes on the subcharts among ``charts``
    (:func:`kvlint.load.parent_charts`): one whose parent chart is also given is not rendered alone (helm renders
    it through the parent, with the values the parent sets for it: rendering it alone too would lint it a second
    time with its own defaults, which the parent overrides); one given without its parent is rendered, and the
    note says its own values.yaml stood in for the parent's."""
    given = {os.path.realpath(c) for c in charts}
    keep: list[str] = []
    notes: list[Finding] = []
    for chart in charts:
        parents = parent_charts(chart)
        if not parents:
            keep.append(chart)
            continue
        at = Loc(os.path.join(chart, "Chart.yaml"), 1, 1)
        by = next((p for p in parents if os.path.realpath(p) in given), None)
        if by is not None:
            notes.append(
                Finding(
                    "KV002",
                    f"this chart is a subchart of {by}, which is also linted: helm renders it through {by}, with "
                    f"the values {by} sets for it, so kvlint does not render it alone",
                    at,
                    fix=f"nothing to do: its workloads are linted as {by} renders them",
                    severity="info",
                )
            )
            continue
        keep.append(chart)
        top = parents[-1]
        notes.append(
            Finding(
                "KV002",
                f"this chart is a subchart of {top}: kvlint rendered it alone, with its own values.yaml, where helm "
                f"renders it through {top}, whose values for it override these",
                at,
                fix=f"lint what is deployed: kvlint check {shell_word(top)}",
                severity="info",
            )
        )
    return keep, notes


def is_chart_dir(path: str) -> bool:
    """True when ``path`` is a directory holding a ``Chart.yaml`` (a Helm chart)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "Chart.yaml"))


def rendered_through(path: str) -> str | None:
    """The Helm chart or kustomization directory whose render stands for the file ``path`` in a directory walk
    (:func:`plan_walk`: a chart's files are not read, a kustomization owns the files of its directory and of the
    plain folders below it): the nearest of the file's directory and its parents, up to the root of its git
    repository (outside one, up to the working directory), that holds a ``Chart.yaml`` or a kustomization file;
    else None, as for ``-`` and directories. ``kvlint check --skip-rendered`` leaves such files to the run over
    their directory (the ``kvlint-dirs`` pre-commit hook), which lints what they render. Never raises."""
    if path == "-" or not os.path.isfile(path):
        return None
    climbed, in_repository = directories_to_repository_root(os.path.dirname(os.path.abspath(path)))
    if not in_repository:
        cwd = os.path.abspath(".")
        climbed = [d for d in climbed if real_inside(d, cwd)]
    for d in climbed:
        if is_chart_dir(d) or is_kustomize_dir(d):
            return d
    return None


#: Directories :func:`kustomize_overlays_of` looks through for overlays of a base (the base's parent, its
#: subdirectories and theirs). [assumed] a kustomize tree keeps its overlays beside the base (``base/`` and
#: ``overlays/NAME/``, or sibling directories); more directories than this are not read.
MAX_OVERLAY_SEARCH = 64
#: Entries of those kustomizations (``resources``/``bases``/``components``, each distinct one once) resolved to a
#: real path in one search: past it the search stops. [assumed] an overlay lists a few bases; 63 directories of
#: 64 KiB kustomizations (8,000 entries each) made one search resolve 500,000 paths (9 s), and a tree of such
#: bases one search each.
MAX_OVERLAY_ENTRIES = 4096
_KEYS_OF_BASES = ("resources", "bases", "components")


def kustomize_overlays_of(path: str) -> tuple[str, tuple[str, ...]] | None:
    """For the file ``path`` of a kustomization directory (a resource its kustomization lists, as in a kustomize
    base): ``(that directory, the overlays beside it that build on it)``, the overlays as paths shown like
    ``path`` (relative when it is). Overlays are the kustomization directories among the base's parent, its
    subdirectories and theirs (:data:`MAX_OVERLAY_SEARCH` directories at most, hidden ones skipped) whose
    ``resources``, ``bases`` or ``components`` name the base's directory. None when ``path`` is not listed by a
    kustomization in its own directory. Read once a run (:mod:`kvlint.filecache`). Never raises."""
    try:
        directory = os.path.dirname(path) or "."
        key = os.path.realpath(directory)
        if key in _OVERLAYS:
            found = _OVERLAYS[key]
        else:
            found = _OVERLAYS[key] = _overlays(directory)
        if found is None or os.path.basename(path) not in found[0]:
            return None
        return directory, found[1]
    except (OSError, ValueError):
        return None


_OVERLAYS: dict[str, tuple[frozenset[str], tuple[str, ...]] | None] = {}
filecache.register(_OVERLAYS.clear)


def _listed(directory: str) -> list[str]:
    """The local entries of ``resources``/``bases``/``components`` of ``directory``'s kustomization, read once a
    run per directory (each base's overlay search reads its neighbours' kustomizations: once per base, a tree of
    bases beside large kustomizations parsed each of them again for every base)."""
    key = os.path.realpath(directory)
    found = _LISTED.get(key)
    if found is None:
        found = _LISTED[key] = _read_listed(directory)
    return found


_LISTED: dict[str, list[str]] = {}
filecache.register(_LISTED.clear)


def _read_listed(directory: str) -> list[str]:
    name = next((n for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(directory, n))), None)
    if name is None:
        return []
    spec = _read_kustomization(os.path.join(directory, name), _MAX_CHART_BYTES)[0]
    out = []
    for k in _KEYS_OF_BASES:
        entries = spec.get(k) if isinstance(spec, dict) else None
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, str) and "\n" not in e and not _REMOTE_REF.match(e):
                out.append(e)
    return out


def _overlays(directory: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """``(file names the kustomization of directory lists, overlays of it)``; None when it has none."""
    if not is_kustomize_dir(directory):
        return None
    listed = frozenset(os.path.basename(os.path.normpath(e)) for e in _listed(directory))
    real = os.path.realpath(directory)
    parent = os.path.dirname(os.path.normpath(os.path.abspath(directory)))
    shown_parent = os.path.dirname(os.path.normpath(directory))
    todo = [(parent, shown_parent, 0)]
    top = repository_root(directory, resolve=True)
    if top is not None and not real_path_inside(parent, top, resolved=True):
        # a base at the top of its git repository: its parent and siblings are not the checkout's (the CI runner's
        # disk); only the base's own subdirectories are searched, nothing outside the repository is read
        todo = [(os.path.abspath(directory), os.path.normpath(directory), 1)]
    seen = 0
    budget = MAX_OVERLAY_ENTRIES
    overlays = []
    while todo and seen < MAX_OVERLAY_SEARCH and budget > 0:
        d, shown, depth = todo.pop(0)
        seen += 1
        if os.path.realpath(d) != real:
            entries = list(dict.fromkeys(_listed(d)))[:budget]
            budget -= len(entries)
            if any(os.path.realpath(os.path.join(d, e)) == real for e in entries):
                overlays.append(shown or ".")
        if depth < 2:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            for n in names:
                sub = os.path.join(d, n)
                if not n.startswith(".") and os.path.isdir(sub) and not os.path.islink(sub):
                    todo.append((sub, os.path.join(shown, n) if shown else n, depth + 1))
    return listed, tuple(overlays)


def find_sources(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` of every ``# Source: path`` comment line in ``text`` (1-based line, in order).

    Only comments at the start of a line count (helm writes them at column 1, right after ``---``), and only
    paths helm can write: relative, inside the chart (``CHART/templates/FILE``). A path that is absolute,
    climbs with ``..``, or holds a NUL or a backslash is ignored, so a comment in a manifest never makes kvlint
    read (or quote, in SARIF snippets) a file outside the chart it names.
    """
    out: list[tuple[int, str]] = []
    if _SOURCE_PREFIX not in text:
        return out
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith(_SOURCE_PREFIX):
            src = line[len(_SOURCE_PREFIX) :].strip()
            if src and _chart_relative(src):
                out.append((i, src))
    return out


def _chart_relative(src: str) -> bool:
    """Whether a ``# Source:`` path is one helm writes: relative, without ``..``, NUL or backslash."""
    if src.startswith(("/", "~")) or "\x00" in src or "\\" in src or re.match(r"^[A-Za-z]:", src):
        return False
    return ".." not in src.split("/")


def map_sources(
    result: LoadResult,
    path: str,
    sources: Sequence[tuple[int, str]],
    root: str = "",
    text: str | None = None,
    strip_chart: bool = False,
) -> None:
    """Rewrite, in place, every location in ``result`` that lies in file ``path`` after a Source comment.

    Args:
        result: documents and findings loaded from ``path`` (others are left alone).
        path: the file name the locations carry now (``-`` for stdin).
        sources: from :func:`find_sources` on that file's text.
        root: directory joined in front of each Source path (the directory holding ``<chart>/templates``,
            or with ``strip_chart`` the chart itself), so the path names the real template file; empty to
            keep the paths as written.
        text: the rendered text itself; with it, and when the template file can be read, lines are
            mapped to the template's own lines (:func:`kvlint.template_lines.align_document`).
        strip_chart: ``root`` is the chart directory itself: the first component of each Source path (the
            chart's name, which helm prints whatever the directory is called) is replaced by it.

    A location at line ``L`` after the comment at line ``S`` becomes ``Loc(root/source, T, column)``: ``T``
    is the template line that wrote rendered line ``L`` when the template could be read and aligned,
    else ``L - S`` (the line within the rendered document). Locations before the first comment are kept.
    Shared (aliased) containers are rewritten once.
    """
    if not sources:
        return
    lines = [s[0] for s in sources]

    def name_of(src: str) -> str:
        if strip_chart:
            rest = src.split("/", 1)[1] if "/" in src else src
            return os.path.normpath(os.path.join(root, rest)) if root else os.path.normpath(rest)
        return os.path.normpath(os.path.join(root, src)) if root else src

    names = [name_of(s[1]) for s in sources]
    rendered = text.split("\n") if text is not None else None
    templates: dict[str, RegionIndex | None] = {}
    sections: dict[int, list[tuple[int, int | None] | None]] = {}
    if rendered is not None:
        # in order: a template's documents are written in order, which picks among look-alike regions
        last_region: dict[str, int] = {}
        for i, name in enumerate(names):
            if name not in templates:  # parsed and indexed once for all the documents it wrote
                parsed = _read_template(name)
                templates[name] = RegionIndex(parsed) if parsed else None
            index = templates[name]
            end = lines[i + 1] - 1 if i + 1 < len(lines) else len(rendered)
            if index is not None:
                sections[i], last_region[name] = align_document(
                    rendered[lines[i] : end],
                    index.template,
                    last_region.get(name, -1),
                    _chart_helpers(name),
                    index,
                )
            else:
                sections[i] = []

    def section_map(i: int) -> list[tuple[int, int | None] | None] | None:
        return sections.get(i)

    def remap(loc: Loc | None) -> Loc | None:
        if loc is None or loc.file != path:
            return loc
        i = bisect_left(lines, loc.line) - 1
        if i < 0:
            return loc
        offset = loc.line - lines[i]
        table = section_map(i)
        entry = table[offset - 1] if table and 0 < offset <= len(table) else None
        if entry is not None:
            line, column = entry
            return Loc(names[i], line, loc.column if column is None else column)
        return Loc(names[i], offset, loc.column)

    seen: set[int] = set()
    for k, doc in enumerate(result.documents):
        if doc.path != path:
            continue
        _walk_locs(doc.data, remap, seen)
        new_loc = remap(doc.loc) or doc.loc
        result.documents[k] = dataclasses.replace(doc, path=new_loc.file, loc=new_loc)
    for k, f in enumerate(result.findings):
        if f.loc is not None and f.loc.file == path:
            new = remap(f.loc)
            message = f.message
            m = _FIRST_AT.search(message) if f.rule == "KV004" else None
            if m is not None and new is not None:  # the other occurrence's line, in the same terms
                first = remap(Loc(path, int(m.group(1)), 1))
                if first is not None:
                    where = f"line {first.line}" if first.file == new.file else f"{first.file}:{first.line}"
                    message = message[: m.start()] + f"(first at {where})" + message[m.end() :]
            result.findings[k] = dataclasses.replace(f, loc=new, message=message)


_FIRST_AT = re.compile(r"\(first at line (\d+)\)")


def helm_values_reason(doc: Document) -> str | None:
    """Why ``doc`` looks like raw Helm chart values rather than a Kubernetes object, or None.

    A document qualifies only if it is a mapping without ``apiVersion`` and ``kind``, and then when it
    has vLLM production-stack keys (``servingEngineSpec``, ``routerSpec``, ... or ``modelSpec`` under
    ``servingEngineSpec``), or both ``replicaCount`` and ``image`` (the ``helm create`` values shape), or an
    ``image.repository`` mapping at the top or under a top-level (subchart) key (:func:`_image_repository_key`),
    or llm-d-modelservice's ``modelArtifacts`` with ``decode``/``prefill`` containers
    (:func:`_llm_d_modelservice_reason`), or the llm-d chart's ``sampleApplication.model.modelArtifactURI``
    (:func:`_llm_d_sample_reason`), or a chart's engine chooser (:func:`_engine_framework_key`), or its file is named ``values*.yaml``/``.yml`` and sits beside a ``Chart.yaml``, or it has a serving chart's
    top-level keys: a GPU limit or a Hugging Face model id with another key of a pod's shape
    (:func:`_serving_values_reason`).
    """
    found = _values_reason(doc)
    return found[0] if found is not None else None


def _values_reason(doc: Document) -> tuple[str, tuple[str, ...], bool] | None:
    """``(reason, set_keys, serving)``: :func:`helm_values_reason`'s reason, the dotted keys the values leave empty
    for ``helm install --set`` when that is the reason (:func:`_engine_framework_key`; empty otherwise), which
    :func:`values_file_finding` gives a value each in its fix, and whether the reason names what only a serving
    chart's values hold (a GPU limit, the llm-d chart's model URI, or keys left for ``--set``:
    :attr:`kvlint.types.Mark.SERVING_VALUES`); None when the document is not chart values."""
    data = doc.data
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    stack = [k for k in _STACK_KEYS if k in data]
    if stack:
        spec = data.get("servingEngineSpec")
        if isinstance(spec, dict) and "modelSpec" in spec:
            return "it has servingEngineSpec.modelSpec (vLLM production-stack chart values)", (), False
        return f"it has {stack[0]} (vLLM production-stack chart values)", (), False
    if "modelSpec" in data:
        return "it has modelSpec (chart values)", (), False
    if "replicaCount" in data and "image" in data:
        return "it has replicaCount and image but no apiVersion/kind (chart values)", (), False
    image_at = _image_repository_key(data)
    if image_at is not None:
        return f"it has {image_at} but no apiVersion/kind (chart values)", (), False
    llmd = _llm_d_modelservice_reason(data)
    if llmd is not None:
        return llmd, (), False
    llmd = _llm_d_sample_reason(data)
    if llmd is not None:
        return llmd, (), True
    framework = _engine_framework_key(data)
    if framework is not None:
        return framework[0], framework[1], bool(framework[1])
    if _values_file_name(doc.path):
        if os.path.isfile(os.path.join(os.path.dirname(doc.path) or ".", "Chart.yaml")):
            return "it is a values file beside a Chart.yaml", (), False
    serving = _serving_values_reason(data)
    return (serving[0], (), serving[1]) if serving is not None else None


#: A serving engine as the value of a chart's engine chooser (``framework: sglang``), in lower case
_FRAMEWORK_VALUE = re.compile(r"^(vllm|sglang|tgi|text-generation-inference)$")


def _engine_framework_key(data: dict) -> tuple[str, tuple[str, ...]] | None:
    """Why a document without apiVersion/kind reads as the values of a chart that picks its engine by name, with
    the keys it leaves empty for ``helm install --set`` when its chooser is empty (:func:`install_set_keys`; else
    none), or None: a top-level mapping with a ``framework`` or ``engine`` key naming vLLM, SGLang or TGI beside an
    ``image`` key (AI-Hypercomputer/gpu-recipes' ``workload: {framework: sglang, image: ..., model: ...}``,
    which its inference charts turn into the engine command). An engine's own config file has no ``image``; a
    Compose file's services sit one level deeper, under ``services``."""
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, dict) or "image" not in value:
            continue
        for chooser in ("framework", "engine"):
            name = value.get(chooser)
            if isinstance(name, str) and _FRAMEWORK_VALUE.match(name.strip().lower()):
                return (
                    f"it has {key}.{chooser}: {name.strip()} and {key}.image but no apiVersion/kind (chart values)",
                    (),
                )
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, dict):
            continue
        for chooser in ("framework", "engine"):
            if chooser in value and _blank(value[chooser]) and "image" in value:
                empty = install_set_keys(key, value)
                if not empty:  # a key no --set can name (a hostile file's "$(...)")
                    continue
                listed = ", ".join(empty[:-1]) + " and " + empty[-1] if len(empty) > 1 else empty[0]
                return (
                    f"it leaves {listed} empty, for helm install --set to fill (chart values that name no engine, "
                    "image or model yet)",
                    tuple(empty),
                )
    return None


def _blank(value: object) -> bool:
    """A values leaf left for ``--set``: null (``framework:``) or an empty or blank string."""
    return value is None or (isinstance(value, str) and not value.strip())


#: Most keys :func:`install_set_keys` lists (a values file of thousands of empty keys gave a message and a fix
#: command of thousands of ``--set`` options).
MAX_SET_KEYS = 12
#: A values key :func:`install_set_keys` lists: one ``--set`` path segment Helm reads as written (no ``.``, ``,``,
#: ``=``, ``[`` or ``\\``, which ``--set`` parses) and one shell word (no ``$(...)``, quote, ``;`` or blank: the
#: fix is a command to copy, and a hostile file's key ``$(curl ...)`` was written into it as is).
_SET_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def install_set_keys(key: str, value: dict) -> list[str]:
    """The dotted keys under the top-level mapping ``key`` of a chart's values (``value``) left empty for
    ``helm install --set``, to two levels down (AI-Hypercomputer/gpu-recipes' ``workload: {framework:, image:,
    model: {name:}}``, whose READMEs set ``workload.framework``, ``workload.image`` and ``workload.model.name``
    on the command line); in the file's order, at most :data:`MAX_SET_KEYS`, only keys of the
    :data:`_SET_KEY` form (``key`` itself is a top-level key of that form or the caller's)."""
    out: list[str] = []
    if not _SET_KEY.fullmatch(key):
        return out
    for k, v in value.items():
        if not isinstance(k, str) or not _SET_KEY.fullmatch(k):
            continue
        if _blank(v):
            out.append(f"{key}.{k}")
        elif isinstance(v, dict):
            out.extend(
                f"{key}.{k}.{k2}"
                for k2, v2 in v.items()
                if isinstance(k2, str) and _SET_KEY.fullmatch(k2) and _blank(v2)
            )
        if len(out) >= MAX_SET_KEYS:
            return out[:MAX_SET_KEYS]
    return out


def _llm_d_modelservice_reason(data: dict) -> str | None:
    """Why a document reads as the values of llm-d's ``llm-d-modelservice`` chart, or None: a top-level
    ``modelArtifacts`` mapping (the model the chart passes to vLLM, ``name``/``uri``) beside a ``decode`` or
    ``prefill`` mapping holding ``containers`` (whose ``modelCommand: vllmServe`` the chart's templates turn into
    ``vllm serve`` with the model of ``modelArtifacts``, the port and the parallelism;
    llm-d-incubation/llm-d-modelservice charts/llm-d-modelservice templates/_helpers.tpl
    ``vllmServeModelCommand``). Read as pods, those containers name no model and got KV503."""
    artifacts = data.get("modelArtifacts")
    if not isinstance(artifacts, dict) or not ({"name", "uri"} & set(artifacts)):
        return None
    roles = [
        r
        for r in ("decode", "prefill")
        if isinstance(data.get(r), dict) and isinstance(data[r].get("containers"), list)
    ]
    if not roles:
        return None
    return f"it has modelArtifacts and {'/'.join(roles)}.containers (llm-d-modelservice chart values)"


def _llm_d_sample_reason(data: dict) -> str | None:
    """Why a document reads as the values of llm-d's umbrella ``llm-d`` chart (llm-d/llm-d-deployer), or None: a
    top-level mapping whose ``model`` mapping has a ``modelArtifactURI`` string (``sampleApplication: {model:
    {modelArtifactURI: hf://meta-llama/Llama-3.2-1B-Instruct, modelName: ...}}``), the model the chart's sample
    application serves with vLLM. Such a file names no engine and no GPU, so it was read as nothing at all."""
    for key, value in data.items():
        model = value.get("model") if isinstance(value, dict) else None
        uri = model.get("modelArtifactURI") if isinstance(model, dict) else None
        if isinstance(key, str) and isinstance(uri, str) and uri.strip():
            return f"it has {key}.model.modelArtifactURI {uri.strip()} but no apiVersion/kind (llm-d chart values)"
    return None


#: A Hugging Face repository id (``org/name``), as charts take ``model: meta-llama/Meta-Llama-3-70B-Instruct``.
_HF_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
#: Top-level keys that name the served model in serving charts' values (substratusai/helm vllm and
#: text-generation-inference charts: ``model``; others ``modelName``/``modelId``).
_MODEL_KEYS = ("model", "modelName", "modelId", "modelID")


def _serving_values_reason(data: dict) -> tuple[str, bool] | None:
    """Why a document without apiVersion/kind reads as a serving chart's values, and whether a GPU limit is among
    the reasons, or None: a GPU in its
    top-level ``resources.limits``/``requests`` (:data:`kvlint.gpu_resources.WHOLE_GPUS`, ``nvidia.com/mig-*``,
    ``amd.com/cpx_nps4``...)
    or a Hugging Face repository id in a top-level model key (:data:`_MODEL_KEYS`), together with at least one
    other top-level key in the shape a Kubernetes pod takes it (``resources`` with ``limits``/``requests``, a ``nodeSelector``
    mapping, ``tolerations`` a list of mappings, ``affinity`` with a node/pod affinity, ``env`` a list of
    ``name`` mappings): the values of substratusai/helm's vllm chart (``model``, ``resources.limits
    nvidia.com/gpu: 8``, ``env``). A Compose file (``services``), a GitHub workflow (``env`` a mapping), an
    engine's own config file (``model`` and flags, no pod keys) or a kustomization (``resources`` a list) has
    neither pair."""
    gpu = None
    resources = data.get("resources")
    shaped: list[str] = []
    if isinstance(resources, dict):
        for part in ("limits", "requests"):
            quantities = resources.get(part)
            if not isinstance(quantities, dict):
                continue
            if not shaped:
                shaped.append(f"resources.{part}")
            for name in quantities:
                if (
                    gpu is None
                    and isinstance(name, str)
                    and (
                        name in WHOLE_GPUS
                        or name.startswith(MIG_RESOURCE_PREFIX)
                        or amd_partition_of(name) is not None
                    )
                ):
                    gpu = f"resources.{part} {name}"
    model = None
    for key in _MODEL_KEYS:
        value = data.get(key)
        if isinstance(value, str) and _HF_REPO_ID.fullmatch(value.strip()):
            model = f"{key} {value.strip()}"
            break
    if gpu is None and model is None:
        return None
    node_selector = data.get("nodeSelector")
    if isinstance(node_selector, dict) and node_selector:
        shaped.append("nodeSelector")
    tolerations = data.get("tolerations")
    if isinstance(tolerations, list) and tolerations and all(isinstance(t, dict) for t in tolerations):
        shaped.append("tolerations")
    affinity = data.get("affinity")
    if isinstance(affinity, dict) and any(
        k in affinity for k in ("nodeAffinity", "podAffinity", "podAntiAffinity")
    ):
        shaped.append("affinity")
    env = data.get("env")
    if isinstance(env, list) and env and all(isinstance(e, dict) and "name" in e for e in env):
        shaped.append("env")
    signals = [s for s in (gpu, model) if s is not None]
    signals += [s for s in shaped if gpu is None or not s.startswith("resources.")]
    if len(signals) < 2:  # a GPU or a model, and another key of a pod's shape
        return None
    listed = ", ".join(signals[:-1]) + " and " + signals[-1]
    return f"it has {listed} but no apiVersion/kind (a serving chart's values)", gpu is not None


def _image_repository_key(data: dict) -> str | None:
    """``image.repository`` or ``KEY.image.repository`` when ``data`` (a document without apiVersion/kind) or
    one of its top-level mappings holds an ``image`` mapping with a ``repository`` string -- the image shape
    ``helm create`` writes into a chart's values, and an umbrella chart's values for a subchart under the
    subchart's key (OPEA's ``tgi: {image: {repository: ...text-generation-inference}}``); None otherwise.
    The ``repository`` may be left empty (null) beside a ``tag`` key, to be set at install.
    No Kubernetes object lacks a kind, and a Compose file's ``image`` is a string."""

    def has(node: object) -> bool:
        image = node.get("image") if isinstance(node, dict) else None
        if not isinstance(image, dict):
            return False
        repository = image.get("repository")
        # left empty for ``--set`` at install (AI-Hypercomputer/gpu-recipes ``job.image: {repository:, tag:}``)
        return isinstance(repository, str) or (
            repository is None and "repository" in image and "tag" in image
        )

    if has(data):
        return "image.repository"
    for key, value in data.items():
        if isinstance(key, str) and has(value):
            return f"{key}.image.repository"
    return None


class WalkedDir(str):
    """A Helm chart or kustomization directory met in a directory walk (:func:`plan_walk`), as the walk joins its
    path. A ``str`` (the path), so it can stand among the paths of a run (:func:`kvlint.checkrun.config_groups`
    hands them on so), with what the walk learnt of it:

    * ``tool``: ``"helm"`` or ``"kustomize"``, or ``"component"`` for a kustomize ``Component`` no kustomization of
      the walk lists (never built, :func:`walk_notes` says so);
    * ``rendered``: False when that tool is not on ``PATH`` (or, ``limited``, the walk holds more than
      :data:`MAX_WALK_RENDERS` charts and overlays): the directory's files are then read as plain files, as before
      kvlint rendered what a walk meets, and :func:`walk_notes` says so once;
    * ``bases``: for a kustomization, the kustomizations of the same walk it builds on (directly or through
      another), which are not rendered alone;
    * ``values``: for a chart, the other values files beside it (``values-prod.yaml``, ``ci/*.yaml``,
      ``examples/basic/values.yaml``), not applied;
    * ``deployed_by``: for a chart, the files of the same walk holding an Argo CD ``Application``/``ApplicationSet``
      or Flux ``HelmRelease`` that renders it from this checkout with its values
      (:mod:`kvlint.workloads.gitops_local`): the chart is linted only through them, not alone too;
    * ``top``: the directory walked (as the walk was given it), to which a kustomization outside any git
      repository confines its references (:func:`confinement_root`);
    * ``unbuilt``: for a kustomization with ``bases``, that kvlint does not build its tree (a remote reference or a
      path outside the repository, :func:`tree_refusal`; or a path that does not exist, on which kustomize fails,
      :func:`missing_paths`: the build's KV001 says which), so its bases are not linted through it
      (:func:`walk_notes` says so).
    """

    tool: str
    rendered: bool
    bases: tuple[str, ...]
    values: tuple[str, ...]
    limited: bool
    deployed_by: tuple[str, ...]
    top: str
    unbuilt: bool

    def __new__(
        cls,
        path: str,
        tool: str,
        *,
        rendered: bool = True,
        bases: tuple[str, ...] = (),
        values: tuple[str, ...] = (),
        limited: bool = False,
        deployed_by: tuple[str, ...] = (),
        top: str = "",
        unbuilt: bool = False,
    ) -> WalkedDir:
        self = super().__new__(cls, path)
        self.top = top
        self.unbuilt = unbuilt
        self.tool = tool
        self.rendered = rendered
        self.bases = bases
        self.values = values
        self.limited = limited
        self.deployed_by = deployed_by
        return self

    def __reduce__(self) -> Any:  # (a str subclass with attributes: pickled with them)
        return (
            _walked_dir,
            (
                str(self),
                self.tool,
                self.rendered,
                self.bases,
                self.values,
                self.limited,
                self.deployed_by,
                self.top,
                self.unbuilt,
            ),
        )


def _walked_dir(
    path: str,
    tool: str,
    rendered: bool,
    bases: tuple[str, ...],
    values: tuple[str, ...],
    limited: bool,
    deployed_by: tuple[str, ...] = (),
    top: str = "",
    unbuilt: bool = False,
) -> WalkedDir:
    return WalkedDir(
        path,
        tool,
        rendered=rendered,
        bases=bases,
        values=values,
        limited=limited,
        deployed_by=deployed_by,
        top=top,
        unbuilt=unbuilt,
    )


#: Most directories :func:`plan_walk` looks at in one walk for charts and kustomizations; past it the rest of the
#: walk is read as plain files (as before kvlint rendered what a walk meets). [assumed] an infra repository has
#: far fewer; the file walk itself lists every directory anyway.
MAX_WALK_DIRS = 20_000
#: Most charts and overlays one walk renders (each a ``helm template`` or ``kustomize build`` of up to
#: :data:`RENDER_TIMEOUT_S`); a walk holding more renders none of them and reads them as plain files, with one
#: warning. [assumed] an infra repository holds tens; a pull request adding thousands of ``Chart.yaml`` files must
#: not make a CI run start thousands of renderers.
MAX_WALK_RENDERS = 200
#: Most kustomizations of one walk whose references :func:`plan_walk` reads to find the overlays (the roots of
#: their reference graph); past it the rest are rendered each (no base left out). [assumed] a repository's
#: overlays and bases number in the tens.
MAX_WALK_KUSTOMIZATIONS = 512
#: Most path components the references of one walk's kustomizations are looked up by (:func:`_kustomize_roots`:
#: each path's real path asks the file system once a component); past it the references left are not read (the
#: kustomizations they would make bases are rendered each, the files they name read as plain files too).
#: [assumed] a repository's overlays name tens of bases and files a few components deep; 512 kustomizations of
#: 64 KiB each listing paths 200 components deep were 17 million lookups, 34 CPU s, before anything rendered.
MAX_WALK_REFERENCE_PARTS = 1_000_000


#: Most bytes of a chart's ``values.yaml``, and of each other YAML file beside its ``Chart.yaml``, that
#: :func:`_chart_values_files` reads to tell a values file by its keys. [assumed] a chart's values are far smaller.
_VALUES_SCAN_BYTES = 1 << 20
#: The files beside a chart's ``Chart.yaml`` that :func:`_chart_values_files` never names as other values files:
#: those helm reads as something other than values (Helm v3 ``pkg/chart/loader`` ``LoadFiles``: ``Chart.yaml``,
#: ``Chart.lock``, Helm v2's ``requirements.yaml``/``requirements.lock``), and ``values.yaml``, the chart's own
_CHART_FILES = frozenset(
    {"Chart.yaml", "Chart.lock", "requirements.yaml", "requirements.lock", "values.yaml"}
)


#: Most bytes one walk reads, over all its charts, to tell values files by their keys (:func:`_top_keys`), and most
#: files beside one chart's ``Chart.yaml`` read so: the others are not named as values files. [assumed] kvlint's
#: loader parses about 2 MB of YAML a second; a chart directory holding hundreds of 1 MiB YAML files took minutes
#: to plan before any render (helm reads such files without parsing them).
_VALUES_SCAN_WALK_BYTES = 8 << 20
_VALUES_SCAN_FILES = 32


def _top_keys(path: str, real_chart: str, budget: list[int]) -> frozenset[str] | None:
    """The top-level keys of the YAML mapping in the file ``path`` of the chart directory whose real path is
    ``real_chart`` (its first document, read by kvlint's bounded loader, at most :data:`_VALUES_SCAN_BYTES`), or
    None when it holds no mapping of string keys, cannot be read, is a symbolic link resolving outside the chart
    (:func:`chart_escapes` refuses the chart then; a link to a runner's file is not read), or is larger than what
    is left of ``budget`` (a one-item list: the bytes the walk may still read so, :data:`_VALUES_SCAN_WALK_BYTES`;
    its size is taken from it)."""
    try:
        if os.path.islink(path) and not real_path_inside(path, real_chart, below=True, resolved=True):
            return None
        size = os.stat(path).st_size
        if size > budget[0]:
            return None
        budget[0] -= size
        data = _read_kustomization(path, _VALUES_SCAN_BYTES)[0]
    except Exception:  # noqa: BLE001 (a file the loader refuses is no values file here; the walk reports it)
        return None
    if not isinstance(data, dict) or not data or not all(isinstance(k, str) for k in data):
        return None
    return frozenset(data)


#: The directories of a chart that hold example values files (neuralmagic/helm-charts' ``charts/nm-vllm/examples/
#: basic/values.yaml``, substratusai/helm's ``charts/vllm/examples/*.yaml``), searched by :func:`_example_dirs`.
_EXAMPLE_DIRS = ("examples", "example")
#: How deep below an examples directory :func:`_example_dirs` looks (``examples/basic/``: 1), and how many of its
#: directories it lists at most. [assumed] a chart's examples are a few files, one level deep.
_EXAMPLE_DEPTH = 2
_EXAMPLE_DIRS_MAX = 64


def _example_dirs(chart: str) -> list[str]:
    """The examples directories of the chart directory ``chart`` (:data:`_EXAMPLE_DIRS`) and the directories below
    them down to :data:`_EXAMPLE_DEPTH` levels, relative to ``chart``, sorted, at most :data:`_EXAMPLE_DIRS_MAX`;
    hidden directories and links to directories are not entered (a link could lead out of the chart). Only the
    directories of a listing are queued (told by the directory entry, no ``stat`` of each file), first in first out:
    an examples directory of many files costs one listing, not a pass over the queue per file."""
    out: list[str] = []
    todo = collections.deque((sub, 0) for sub in _EXAMPLE_DIRS)
    while todo and len(out) < _EXAMPLE_DIRS_MAX:
        rel, depth = todo.popleft()
        path = os.path.join(chart, rel)
        if os.path.islink(path) or not os.path.isdir(path):
            continue
        out.append(rel)
        if depth >= _EXAMPLE_DEPTH:
            continue
        try:
            with os.scandir(path) as entries:
                subs = sorted(
                    e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
                )
        except OSError:
            continue
        todo.extend((os.path.join(rel, n), depth + 1) for n in subs)
    return out


def _chart_values_files(chart: str, budget: list[int] | None = None) -> tuple[str, ...]:
    """The values files of the chart directory ``chart`` other than its ``values.yaml`` (helm applies none of them
    unless given with ``-f``), as paths joined to ``chart``, sorted: beside ``Chart.yaml``, ``values*.yaml``/
    ``.yml`` and any other YAML file whose top-level keys are all keys of the chart's ``values.yaml`` (told by what
    it holds, not by its name: vllm-project/aibrix's ``dist/chart/stable.yaml`` and ``vke.yaml``), chart-testing's
    ``ci/*.yaml``, and the same two kinds in the chart's examples directories (:func:`_example_dirs`:
    ``examples/basic/values.yaml``; a manifest kept there, whose keys are not values keys, is not one). Told by keys: at most :data:`_VALUES_SCAN_FILES` files of the chart, within
    ``budget`` (a one-item list of the bytes the walk may still read so, shared by its charts; None: a budget of
    :data:`_VALUES_SCAN_WALK_BYTES` for this chart), never through a link out of it (:func:`_top_keys`)."""
    out: list[str] = []
    values_keys: frozenset[str] | None = None
    if budget is None:
        budget = [_VALUES_SCAN_WALK_BYTES]
    scans = _VALUES_SCAN_FILES
    try:
        real_chart = os.path.realpath(chart)
    except ValueError:
        return ()
    for sub in ("", "ci", *_example_dirs(chart)):
        d = os.path.join(chart, sub) if sub else chart
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            low = n.lower()
            if n.startswith(".") or not low.endswith((".yaml", ".yml")) or (not sub and n in _CHART_FILES):
                continue
            path = os.path.join(d, n)
            if not os.path.isfile(path):
                continue
            if sub == "ci" or low.startswith("values"):
                out.append(path)
                continue
            if values_keys is None:
                values_keys = _top_keys(os.path.join(chart, "values.yaml"), real_chart, budget) or frozenset()
            if not values_keys or scans <= 0:
                continue
            scans -= 1
            keys = _top_keys(path, real_chart, budget)
            if keys is not None and keys <= values_keys:
                out.append(path)
    return tuple(out)


#: The charts among a walk's charts (by real path) that an Argo CD/Flux object of the walk's plain files deploys from
#: the checkout, each with those objects' files: :func:`kvlint.workloads.gitops_walk.gitops_deployed`, set when that
#: module is imported (``kvlint.workloads`` imports it, and so do :mod:`kvlint.checkrun` and :mod:`kvlint.stream`
#: before they plan a walk; the workloads stage reads those objects and imports this module, so this one cannot
#: import it back). None (a library caller of :func:`plan_walk` that never imported ``kvlint.workloads``): every
#: chart of a walk is rendered alone, as before.
GITOPS_DEPLOYED: Callable[[Sequence[str], Sequence[str], str, int], dict[str, tuple[str, ...]]] | None = None


#: For a file of the given path and size that a streaming run analyses in batches, the line each batch starts at
#: and how many charts each batch's GitOps objects may render; None for a file read whole:
#: :func:`kvlint.stream.render_batches`, set when that module is imported (it imports this one). None (a run that
#: does not stream, :func:`kvlint.pipeline.run_check`, which renders per file): every file counts as one.
STREAM_BATCHES: Callable[[str, int], tuple[list[int], int] | None] | None = None


def plan_walk(
    directory: str, exclude: Sequence[str] = (), max_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> tuple[list[WalkedDir], WalkSkip]:
    """The Helm charts and kustomizations met walking ``directory`` (a plain directory, neither a chart nor a
    kustomization itself), and what the walk leaves to them (:class:`kvlint.load.WalkSkip`), as kube-linter lints
    what the charts and kustomize directories it meets render (``pkg/lintcontext`` ``CreateContexts``: a
    directory holding a ``Chart.yaml`` or a kustomization is rendered, and not walked further).

    The walk is the file walk's (:func:`kvlint.load._expand`: sorted, hidden and ``exclude``-d directories and
    links to directories skipped). A directory holding ``Chart.yaml`` is a chart: rendered whole with its own
    ``values.yaml``, its subcharts (its ``charts/``) through it, and not entered. A directory holding a
    kustomization file is a kustomization; it owns the files of its directory and of the plain folders below it
    (a deeper kustomization or chart owns its own). The kustomizations rendered are the roots of the walk's
    reference graph (``resources``/``bases``/``components`` naming another kustomization's directory): an
    overlay is rendered, a base an overlay of the walk builds on is linted only through it (its ``bases`` say
    which), so its findings are not doubled and a base that leaves the GPUs to its overlays gets no KV405 they
    fix; a kustomization only reachable through a cycle is rendered too (kustomize reports the cycle). A file
    (outside those directories) that a kustomization of the walk names is left to it too.

    A chart is rendered only when ``helm`` is on ``PATH``, a kustomization only when ``kustomize`` or ``kubectl``
    is (:func:`kustomize_command`): otherwise its :class:`WalkedDir` has ``rendered`` False and its files stay in
    the walk, read as plain files (:func:`walk_notes` says so). Never raises; at most :data:`MAX_WALK_DIRS`
    directories are looked at (then the rest is plain files). Walked once a run per directory
    (:mod:`kvlint.filecache`): the run's plan and the sources attached to its findings
    (:func:`kvlint.origins.attach_sources`) ask alike."""
    key = (
        directory,
        tuple(exclude),
        max_bytes,
        shutil.which("helm") is not None,
        kustomize_command(".") is not None,
        GITOPS_DEPLOYED is not None,
        STREAM_BATCHES is not None,
    )
    got = _WALKS.get(key)
    if got is None:
        got = _WALKS[key] = _plan_walk(directory, exclude, max_bytes)
    return list(got[0]), got[1]


_WALKS: dict[tuple[Any, ...], tuple[list[WalkedDir], WalkSkip]] = {}
filecache.register(_WALKS.clear)


def _plan_walk(directory: str, exclude: Sequence[str], max_bytes: int) -> tuple[list[WalkedDir], WalkSkip]:
    """Body of :func:`plan_walk`."""
    charts: list[str] = []
    kdirs: list[str] = []
    owner: dict[str, str | None] = {}
    owned: dict[str, list[str]] = {}  # a kustomization's directory -> the directories whose files it owns
    top = os.path.normpath(directory)
    real_top = os.path.realpath(directory)
    plain_files: list[str] = []  # the walk's manifest files outside its charts (where a GitOps object may be)
    seen = 0
    for root, dirs, files in walk_tree(directory):
        seen += 1
        if seen > MAX_WALK_DIRS:
            break
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not _excluded(os.path.join(root, d), exclude)
        )
        norm = os.path.normpath(root)
        names = set(files)
        if norm != top and "Chart.yaml" in names and os.path.isfile(os.path.join(root, "Chart.yaml")):
            charts.append(shown_path(root))
            dirs[:] = []
            continue
        plain_files += [
            shown_path(os.path.join(root, n))
            for n in sorted(files)
            if not n.startswith(".")
            and n.lower().endswith(MANIFEST_EXTENSIONS)
            and not _excluded(os.path.join(root, n), exclude)
        ]
        if norm != top and any(
            n in names and _walked_file(os.path.join(root, n), real_top) for n in KUSTOMIZATION_FILES
        ):
            kdirs.append(shown_path(root))
            here: str | None = norm
        else:
            here = owner.get(os.path.dirname(norm)) if norm != top else None
        owner[norm] = here
        if here is not None:
            owned.setdefault(here, []).append(norm)
    helm = shutil.which("helm") is not None
    kustomize = kustomize_command(".") is not None
    roots, bases, named_files, unused_components = _kustomize_roots(kdirs, max_bytes, real_top)
    limited = len(charts) * helm + len(roots) * kustomize > MAX_WALK_RENDERS
    if limited:
        helm = kustomize = False
    found: list[WalkedDir] = []
    prune: set[str] = set()
    files_in: set[str] = set()
    left_files: set[str] = set()
    # (the files the walk reads as plain files: not those a built kustomization owns or names, whose objects are
    # what kustomize builds of them)
    read_plain = [
        f
        for f in plain_files
        if not kustomize
        or (
            owner.get(os.path.dirname(os.path.normpath(f))) is None and os.path.normpath(f) not in named_files
        )
    ]
    scan = GITOPS_DEPLOYED
    deployed = scan(charts, read_plain, real_top, max_bytes) if helm and scan is not None else {}
    values_budget = [_VALUES_SCAN_WALK_BYTES]  # (shared by the walk's charts, in walk order)
    for c in charts:
        found.append(
            WalkedDir(
                c,
                "helm",
                rendered=helm,
                values=_chart_values_files(c, values_budget) if helm else (),
                limited=limited,
                deployed_by=deployed.get(os.path.realpath(c), ()),
            )
        )
        if helm:
            prune.add(os.path.normpath(c))
    for k in roots:
        walked = WalkedDir(
            k, "kustomize", rendered=kustomize, bases=bases.get(k, ()), limited=limited, top=directory
        )
        if (
            kustomize
            and walked.bases
            and (tree_refusal(walked, max_bytes) or missing_paths(walked, max_bytes))
        ):
            # its bases are not linted through it (the build says why; tree_refusal is asked once a run)
            walked = WalkedDir(
                k, "kustomize", bases=walked.bases, limited=limited, top=directory, unbuilt=True
            )
        found.append(walked)
    if kustomize:  # (without the tool every kustomization is read as plain files, as the note on it says)
        for k in unused_components:  # never built (walk_notes says so); its files are its own, as a base's
            found.append(WalkedDir(k, "component", rendered=False))
    if kustomize:
        for k in kdirs:
            files_in.update(owned.get(os.path.normpath(k), ()))
        left_files.update(named_files)
    # (in walk order: a chart or kustomization where the walk met it)
    order = {os.path.normpath(p): i for i, p in enumerate(charts + kdirs)}
    found.sort(key=lambda w: (order.get(os.path.normpath(w), 0), w.tool))
    return found, WalkSkip(frozenset(prune), frozenset(files_in), frozenset(left_files))


def _walked_file(path: str, real_top: str) -> bool:
    """``path`` is a regular file the walk of the directory whose real path is ``real_top`` reads: not a symbolic
    link out of it (:func:`kvlint.load._expand` does not read those, and a kustomization linked to a file of the
    runner must not be built)."""
    try:
        return os.path.isfile(path) and (
            not os.path.islink(path) or real_path_inside(path, real_top, below=True, resolved=True)
        )
    except ValueError:
        return False


def _kustomize_roots(
    kdirs: Sequence[str], max_bytes: int, real_top: str = ""
) -> tuple[list[str], dict[str, tuple[str, ...]], set[str], list[str]]:
    """``(roots, bases of each root, files named, unused components)`` of the kustomizations ``kdirs`` of one walk
    (:func:`plan_walk`): the roots are those no other of them builds on (``resources``, ``bases`` or
    ``components`` naming the directory, compared by real path, as kustomize loads it), plus those only reachable
    through a cycle, never a kustomize ``Component`` (``kind: Component``: kustomize applies one only to the
    kustomization listing it under ``components``; built alone, its patches have no target); each root's bases
    are the kustomizations of ``kdirs`` it builds on, directly or through another, in walk order; the files are
    the local files (normalised paths) any of them names, a ``resources`` entry only in or below its own directory
    (compared by real path, as kustomize's default load restrictor requires: sigs.k8s.io/kustomize
    ``api/internal/loader`` ``RestrictionRootOnly``, "security; file ... is not in or below ..."; the build refuses
    a file above it, as GKE's Gemma overlays list ``../vllm-7b.yaml``, which the walk then reads as a plain file
    rather than leave it to a build that never holds it; a patch or a generator's file above it is no whole object
    and stays named); the unused components are the Components no root reaches, in walk order (built by nothing in
    this walk). A kustomization file that is a symbolic link out of the walked directory whose real path is
    ``real_top`` (when given) is not read (its build says why)."""
    real_of = {k: os.path.realpath(k) for k in kdirs}
    real = {r: k for k, r in real_of.items()}
    edges: dict[str, list[str]] = {k: [] for k in kdirs}
    named: set[str] = set()
    components: set[str] = set()
    resolved: dict[str, str] = {}  # a path as joined -> its real path (each looked up once)
    parts_left = MAX_WALK_REFERENCE_PARTS
    for k in kdirs[:MAX_WALK_KUSTOMIZATIONS]:
        name = next((n for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(k, n))), None)
        if name is None or (real_top and not _walked_file(os.path.join(k, name), real_top)):
            continue
        spec = _read_kustomization(os.path.join(k, name), min(max_bytes, _MAX_CHART_BYTES))[0]
        if not isinstance(spec, LDict):
            continue
        if spec.get("kind") == "Component":
            components.add(k)
        for field, value, _ in _kustomization_paths(spec):
            value = value.strip()
            # (a NUL names no file, and os.path.realpath raises on one: remote_references makes it the KV001)
            if not value or "\0" in value or _REMOTE_REF.match(value):
                continue
            target = os.path.join(k, value)
            if target not in resolved:
                # os.path.realpath asks the file system once per component of the path: a walk's references are
                # looked up up to MAX_WALK_REFERENCE_PARTS components together, the rest left unread
                parts_left -= target.count(os.sep) + 1
                if parts_left < 0:
                    break
                resolved[target] = os.path.realpath(target)
            if field in _KEYS_OF_BASES:
                other = real.get(resolved[target])
                if other is not None and other != k:
                    edges[k].append(other)
                    continue
            if os.path.isfile(target) and (
                field != "resources" or real_inside(resolved[target], real_of[k], below=True)
            ):
                # (only a resources entry is a whole object the walk can read alone: a patch, a generator's
                # file or a transformer's configuration above the kustomization stays with its refused build)
                named.add(os.path.normpath(target))
    into = {o for outs in edges.values() for o in outs}
    # a kustomize Component (kind: Component) is built only through a kustomization listing it under components:
    # never a root (built alone, its patches find no target and kustomize fails)
    roots = [k for k in kdirs if k not in into and k not in components]

    def reach(start: str) -> list[str]:
        out: list[str] = []
        todo, met = [start], {start}
        while todo:
            for o in edges[todo.pop()]:
                if o not in met:
                    met.add(o)
                    out.append(o)
                    todo.append(o)
        return out

    bases = {r: reach(r) for r in roots}
    reached = set(roots).union(*bases.values()) if bases else set(roots)
    for k in kdirs:  # a cycle no root leads into: rendered (kustomize says what is wrong)
        if k not in reached and k not in components:
            roots.append(k)
            bases[k] = reach(k)
            reached.update([k, *bases[k]])
    position = {k: i for i, k in enumerate(kdirs)}
    roots.sort(key=position.__getitem__)
    unused = [k for k in kdirs if k in components and k not in reached]
    return (
        roots,
        {r: tuple(sorted(b, key=position.__getitem__)) for r, b in bases.items()},
        named,
        unused,
    )


def _kustomization_name(directory: str) -> str:
    """The kustomization file's name in ``directory`` (the first of :data:`KUSTOMIZATION_FILES` there)."""
    return next(
        (n for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(directory, n))), KUSTOMIZATION_FILES[0]
    )


def values_note(chart: str) -> Finding | None:
    """For a chart met in a directory walk (a :class:`WalkedDir`) with other values files beside it
    (:attr:`WalkedDir.values`), the info that kvlint rendered it with its own ``values.yaml`` only, naming them and
    the command that applies one; None for any other chart. Added to the chart's render when it rendered
    (:func:`render_inputs`): a chart helm refused has its KV001 (whose fix names the first of them), not this
    note too."""
    values = getattr(chart, "values", ())
    if not values:
        return None
    names = _first_of([os.path.relpath(v, chart) for v in values], 5)
    return Finding(
        "KV002",
        f"kvlint rendered this chart, met in a directory walk, with its own values.yaml only; the other "
        f"values files beside it were not applied: {names}",
        Loc(os.path.join(chart, "Chart.yaml"), 1, 1),
        fix=f"lint the chart as deployed with one of them: kvlint check {shell_word(chart)} --helm-values "
        f"{shell_word(values[0])}",
        severity="info",
        mark=Mark.WALK_NOTE,
    )


def walk_notes(walked: Sequence[WalkedDir]) -> list[Finding]:
    """The notes on the charts and kustomizations a directory walk met (:func:`plan_walk`): one loud warning per
    tool missing from ``PATH`` (what was not rendered, why, what was done instead, and the fix); for a chart an
    Argo CD/Flux object of the walk deploys, an info naming the objects' files; for a kustomize Component no
    overlay lists, an info; for the bases the overlays of a walk build on (each linted only through them), one
    info per walk naming them and their overlays (:func:`_bases_notes`). The info on a chart's other values files
    comes with its render (:func:`values_note`)."""
    out: list[Finding] = []
    limited = [w for w in walked if w.limited]
    if limited:
        first = limited[0]
        name = "Chart.yaml" if first.tool == "helm" else _kustomization_name(first)
        out.append(
            Finding(
                "KV002",
                f"{len(limited)} Helm charts and kustomize overlays met in this walk, more than the "
                f"{MAX_WALK_RENDERS} kvlint renders in one walk: none was rendered; their files were read as plain "
                "files instead, so their serving containers are not sized as deployed",
                Loc(os.path.join(first, name), 1, 1),
                fix="name the charts and overlays you deploy (kvlint check DIR ...), or walk a smaller directory",
                mark=Mark.WALK_NOTE,
            )
        )
    for tool in ("helm", "kustomize"):
        missing = [w for w in walked if w.tool == tool and not w.rendered and not w.limited]
        if not missing:
            continue
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        if tool == "helm":
            at = Loc(os.path.join(missing[0], "Chart.yaml"), 1, 1)
            what = (
                f"{count(len(missing), 'Helm chart')} met in this walk ({shown}) "
                f"{'was' if len(missing) == 1 else 'were'} not rendered: helm is not on PATH"
            )
            fix = (
                "install helm (https://helm.sh/docs/intro/install/; in GitHub Actions azure/setup-helm) and run "
                "again, or render each chart and pipe it: helm template RELEASE CHART | kvlint check -"
            )
        else:
            at = Loc(os.path.join(missing[0], _kustomization_name(missing[0])), 1, 1)
            what = (
                f"{count(len(missing), 'kustomization')} met in this walk ({shown}) "
                f"{'was' if len(missing) == 1 else 'were'} not built: neither kustomize nor kubectl is on PATH"
            )
            fix = (
                "install kustomize or kubectl and run again, or build each overlay and pipe it: kustomize build DIR "
                "| kvlint check -"
            )
        out.append(
            Finding(
                "KV002",
                f"{what}; their files were read as plain files instead, so their serving containers are not sized "
                "as deployed (the containers of their templates are not read; templates, values and kustomizations get "
                "KV002)",
                at,
                fix=fix,
                mark=Mark.WALK_NOTE,
            )
        )
    bases: dict[str, dict[str, list[str]]] = {}  # walk -> base -> the overlays building on it, in walk order
    unbuilt: dict[str, dict[str, list[str]]] = {}  # the same for the overlays kvlint does not build
    for w in walked:
        if w.tool == "helm" and w.rendered and w.deployed_by:
            shown = _first_of(w.deployed_by, 5)
            out.append(
                Finding(
                    "KV002",
                    f"this chart is deployed by the Argo CD/Flux object{'s' if len(w.deployed_by) > 1 else ''} of "
                    f"{shown} in this walk: kvlint linted it only through {'them' if len(w.deployed_by) > 1 else 'it'}, "
                    "with the values it passes, not alone with its own values.yaml (its findings would not be "
                    "those of what is deployed)",
                    Loc(os.path.join(w, "Chart.yaml"), 1, 1),
                    fix=f"nothing to do; to lint the chart with its own values: kvlint check {shell_word(w)}",
                    severity="info",
                    mark=Mark.WALK_NOTE,
                )
            )
            continue
        if w.tool == "kustomize" and w.rendered and not w.unbuilt:
            for b in w.bases:
                bases.setdefault(w.top, {}).setdefault(b, []).append(w)
        elif w.tool == "kustomize" and w.rendered:
            for b in w.bases:
                unbuilt.setdefault(w.top, {}).setdefault(b, []).append(w)
    for w in walked:
        if w.tool == "component":
            out.append(
                Finding(
                    "KV002",
                    "this kustomization is a kustomize Component that no kustomization of this walk lists under "
                    "components: kvlint did not build it (kustomize applies a Component only to a kustomization "
                    "listing it; built alone, its patches have nothing to patch)",
                    Loc(os.path.join(w, _kustomization_name(w)), 1, 1),
                    fix="nothing to do; lint the overlay that lists it under components: kvlint check OVERLAY",
                    severity="info",
                    mark=Mark.WALK_NOTE,
                )
            )
    out += _bases_notes(bases)
    out += _unbuilt_bases_notes(unbuilt, bases)
    return out


def _unbuilt_bases_notes(
    unbuilt: dict[str, dict[str, list[str]]], built: dict[str, dict[str, list[str]]]
) -> list[Finding]:
    """One info per walk on the kustomize bases met in it that only overlays kvlint does not build build on
    (``unbuilt``: walk -> base -> those overlays; :attr:`WalkedDir.unbuilt`, whose build's KV001 says why): such a
    base is neither built alone nor linted through an overlay (vllm-project/aibrix's ``config/dependency``, a base
    only of ``config/overlays/vke/dependency``, whose tree names a remote release manifest). A base another,
    built, overlay of the walk builds on is in that note (``built``) and not here."""
    out: list[Finding] = []
    for top, of_walk in unbuilt.items():
        alone = {b: o for b, o in of_walk.items() if b not in built.get(top, {})}
        if not alone:
            continue
        order = sorted(alone, key=lambda b: os.path.normpath(b).split(os.sep))
        first = order[0]
        one = len(order) == 1
        # the fix names a base that builds alone; a base whose own tree kvlint refuses or names a missing file (a
        # KV001 of its own says which) fails alone as its overlays do (GCP's inference bases name the env files a
        # script writes; aibrix's config/dependency a remote release)
        alone_builds = next((b for b in order if not _fails_alone(b)), None)
        if alone_builds is not None:
            fix = (
                "make the overlays buildable (their KV001 says what stops the build), or lint a base as it builds "
                f"alone: kvlint check {shell_word(alone_builds)}"
            )
        else:
            fix = "make the overlays buildable (their KV001 says what stops the build); " + (
                "this base does not build alone either (kustomize fails on it as on its overlays)"
                if one
                else "none of these bases builds alone either (kustomize fails on each as on its overlays)"
            )
        out.append(
            Finding(
                "KV002",
                f"{len(order)} kustomization{'' if one else 's'} met in this walk {'is a base' if one else 'are bases'} "
                "only of overlays kvlint does not build (the KV001 of each overlay says why), so kvlint did not lint "
                f"{'it' if one else 'them'}: a base is linted through its overlays, not alone; "
                + _listed_bases(alone, top),
                Loc(os.path.join(first, _kustomization_name(first)), 1, 1),
                fix=fix,
                severity="info",
                mark=Mark.WALK_NOTE,
            )
        )
    return out


def _fails_alone(base: str) -> bool:
    """The kustomization tree at ``base`` is not built alone either: :func:`tree_refusal` refuses it (a remote
    reference, a path outside the repository) or it names a path that does not exist (:func:`missing_paths`);
    both asked once a run per directory. A tree that cannot be read counts as failing."""
    try:
        return bool(tree_refusal(base) or missing_paths(base))
    except OSError:
        return True


#: Most bases one walk's note on its kustomize bases names (:func:`_bases_notes`), and most overlays it names per
#: base; the rest are counted. [assumed] enough to recognise a repository's layout in a terminal.
_NOTE_BASES = 20
_NOTE_OVERLAYS = 3


def _first_of(items: Sequence[str], most: int) -> str:
    """``items`` joined with ", ": the first ``most`` of them, then "and N more" for the rest."""
    more = len(items) - most
    return ", ".join(items[:most]) + (f" and {more} more" if more > 0 else "")


def _listed_bases(of_walk: dict[str, list[str]], top: str) -> str:
    """The kustomize bases of one walk of ``top`` (``of_walk``: each base -> the overlays building on it) as its
    notes list them (:func:`_bases_notes`, :func:`_unbuilt_bases_notes`): in walk order (the walk's directories are
    sorted at each level), as paths relative to ``top``, up to :data:`_NOTE_BASES` each with up to
    :data:`_NOTE_OVERLAYS` overlays; the rest counted."""

    def rel(path: str) -> str:
        return os.path.relpath(path, top) if top else path

    listed = [
        f"{rel(b)} is a base of {_first_of([rel(o) for o in of_walk[b]], _NOTE_OVERLAYS)}"
        for b in sorted(of_walk, key=lambda b: os.path.normpath(b).split(os.sep))
    ]
    return "; ".join(listed[:_NOTE_BASES]) + (
        f"; and {len(listed) - _NOTE_BASES} more bases" if len(listed) > _NOTE_BASES else ""
    )


def _bases_notes(bases: dict[str, dict[str, list[str]]]) -> list[Finding]:
    """The infos on the kustomize bases of each walk (``bases``: the directory walked -> each base the walk's
    rendered overlays build on, in walk order -> those overlays): a base is linted only through its overlays
    (:func:`plan_walk`), and a walk of a kustomize repository holds tens of them (vllm-project/aibrix's
    ``config/``: 33), so a walk with several bases gets one info at the first base's kustomization file naming
    them all (up to :data:`_NOTE_BASES`, each with up to :data:`_NOTE_OVERLAYS` overlays, as paths relative to
    the directory walked), as kustomize names a build's inputs once; a walk with one base gets the info naming its
    overlays in full."""
    out: list[Finding] = []
    for top, of_walk in bases.items():
        first = min(of_walk, key=lambda b: os.path.normpath(b).split(os.sep))
        at = Loc(os.path.join(first, _kustomization_name(first)), 1, 1)
        if len(of_walk) == 1:
            overlays = of_walk[first]
            out.append(
                Finding(
                    "KV002",
                    f"this kustomization is a base of {_first_of(overlays, 5)} in this walk: kvlint linted it only "
                    f"through what {'they build' if len(overlays) > 1 else 'it builds'}, not alone (its findings "
                    "would repeat theirs, and a base may leave to its overlays what they set, such as the GPUs)",
                    at,
                    fix=f"nothing to do; to lint the base as it builds alone: kvlint check {shell_word(first)}",
                    severity="info",
                    mark=Mark.WALK_NOTE,
                )
            )
            continue
        out.append(
            Finding(
                "KV002",
                f"{len(of_walk)} kustomizations met in this walk are bases of its overlays: kvlint linted them only "
                "through what the overlays build, not alone (their findings would repeat the overlays', and a base "
                "may leave to its overlays what they set, such as the GPUs); " + _listed_bases(of_walk, top),
                at,
                fix=f"nothing to do; to lint a base as it builds alone: kvlint check {shell_word(first)}",
                severity="info",
                mark=Mark.WALK_NOTE,
            )
        )
    return out


def kustomize_command(directory: str) -> list[str] | None:
    """The command that renders ``directory``: ``kustomize build DIR``, else ``kubectl kustomize DIR``,
    or None when neither binary is on ``PATH``."""
    if shutil.which("kustomize"):
        return ["kustomize", "build", _safe_path(directory)]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize", _safe_path(directory)]
    return None


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The paths named on a command line, sorted before anything is read (:func:`sort_inputs`): ``plain`` files,
    directories and ``-`` (read by :func:`kvlint.load.load_paths`), ``charts`` (rendered with ``helm template``),
    ``kustomizations`` (built with ``kustomize``), ``unreachable`` ones below a directory the user cannot enter
    (each a KV001, :func:`unreachable_finding`), and the ``--helm-set-file`` words checked once
    (:func:`set_file_args`)."""

    plain: list[str]
    charts: list[str]
    kustomizations: list[str]
    unreachable: list[str]
    set_files: CheckedSetFiles
    #: charts and kustomizations met walking the ``plain`` directories (:func:`plan_walk`), to render (those whose
    #: tool is on ``PATH``) with their own values, after the named ones; and what the walks leave to them
    walked: list[WalkedDir] = dataclasses.field(default_factory=list)
    skip: WalkSkip = dataclasses.field(default_factory=WalkSkip)

    def render_plan(self) -> tuple[list[tuple[str, bool]], list[str], list[Finding]]:
        """``([(chart, named)], kustomizations, notes)``: the charts to render in order (the named ones, rendered
        with the Helm options, then those met in a walk, with their own values only; a subchart through its parent,
        :func:`subchart_plan`), the kustomizations to build (named, then met in a walk), and the notes on them
        (:func:`subchart_plan`'s, then :func:`walk_notes`'). A chart or kustomization both named and met in a
        walk, or met in two walks, is rendered once (as named)."""
        named = {os.path.realpath(c) for c in self.charts}
        walked_charts: list[str] = []
        for w in self.walked:
            key = os.path.realpath(w)
            if w.tool == "helm" and w.rendered and not w.deployed_by and key not in named:
                named.add(key)
                walked_charts.append(w)
        charts, notes = subchart_plan(list(self.charts) + walked_charts)
        given = {os.path.realpath(c) for c in self.charts}
        kinds = {os.path.realpath(k) for k in self.kustomizations}
        kustomizations = list(self.kustomizations)
        for w in self.walked:
            key = os.path.realpath(w)
            if w.tool == "kustomize" and w.rendered and key not in kinds:
                kinds.add(key)
                kustomizations.append(w)
        plan = [(c, os.path.realpath(c) in given) for c in charts]
        # (a chart both named and met in a walk is rendered as named, with the Helm options: no walk note on it)
        walked = [w for w in self.walked if w.tool != "helm" or os.path.realpath(w) not in given]
        return plan, kustomizations, notes + walk_notes(walked)


def sort_inputs(
    paths: Sequence[str],
    helm_values: Sequence[str],
    helm_set: Sequence[str],
    helm_set_file: Sequence[str],
    max_file_bytes: int,
    exclude: Sequence[str] = (),
) -> Inputs:
    """The :class:`Inputs` of a run (:func:`load_inputs`, and :func:`kvlint.stream.stream_check`'s plan), every
    named path and Helm option checked before anything is read or rendered. Each plain directory is walked for
    the charts and kustomizations in it (:func:`plan_walk`, with the ``exclude`` globs); a :class:`WalkedDir`
    among ``paths`` (as :func:`kvlint.checkrun.config_groups` hands on those of a walk it split) is one already.

    Raises:
        FileNotFoundError: a path, ``--helm-values`` or ``--helm-set-file`` file does not exist.
        RenderError: a ``--helm-set-file`` :func:`set_file_args` refuses, or Helm options without a chart.
    """
    unreachable: list[str] = []
    for p in paths:
        if p == "-":
            continue
        try:
            os.stat(p)
        except PermissionError:
            unreachable.append(p)  # below a directory the user cannot enter: KV001, the rest is linted
        except OSError:
            raise FileNotFoundError(missing_path(p)) from None
    paths = [p for p in paths if p not in unreachable]
    for v in helm_values:
        if not os.path.isfile(v):
            raise FileNotFoundError(f"{v}: no such Helm values file (--helm-values)")
    set_files = CheckedSetFiles(set_file_args(helm_set_file, max_file_bytes))
    walked = [p for p in paths if isinstance(p, WalkedDir)]
    paths = [p for p in paths if not isinstance(p, WalkedDir)]
    charts = [p for p in paths if p != "-" and is_chart_dir(p)]
    kustomizations = [p for p in paths if p != "-" and p not in charts and is_kustomize_dir(p)]
    if (helm_values or helm_set or helm_set_file) and not charts:
        raise RenderError(
            "--helm-values/--helm-set/--helm-set-file apply to chart directories (with a Chart.yaml), and none was "
            "given; "
            "name the chart directory, or render it yourself: helm template RELEASE CHART -f VALUES | "
            "kvlint check -"
        )
    plain = [p for p in paths if p not in charts and p not in kustomizations]
    skip = WalkSkip()
    for p in dict.fromkeys(plain):
        if p != "-" and os.path.isdir(p) and not _excluded(p, exclude):
            found, left = plan_walk(p, exclude, max_file_bytes)
            walked += found
            skip |= left
    return Inputs(plain, charts, kustomizations, unreachable, set_files, walked, skip)


def unreachable_finding(path: str) -> Finding:
    """KV001 for a named path below a directory the user cannot enter (:attr:`Inputs.unreachable`)."""
    return Finding(
        "KV001",
        "cannot read: permission denied (a directory on the way cannot be entered); not linted",
        Loc(path, 1, 1),
        fix="give the user running kvlint execute (search) permission on the directories on the path",
    )


class CheckedSetFiles(tuple[str, ...]):
    """The ``KEY=PATH`` words :func:`set_file_args` returned (checked, each path absolute and real), as
    :func:`sort_inputs` keeps them: :func:`render_helm` hands them to helm as they are, without checking them
    again. Made only from :func:`set_file_args`' result."""

    __slots__ = ()


def _safe_path(path: str) -> str:
    """``path`` as a command argument that cannot be read as an option: a relative path starting with
    ``-`` gets a leading ``./`` (the same file)."""
    return os.path.join(".", path) if path.startswith("-") else path


def set_file_args(set_files: Sequence[str], max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[str]:
    """The ``--helm-set-file KEY=PATH`` options as the ``KEY=PATH`` words given to ``helm template --set-file``,
    each path made absolute with its symbolic links resolved, after checking it.

    helm reads the file whole and sets it as the string value of ``KEY`` (helm v3 ``pkg/cli/values/options.go``:
    ``Options.MergeValues`` hands each ``--set-file`` to ``strvals.ParseIntoFile``, whose reader is ``readFile``);
    that reader takes ``-`` as standard input and a path with a URL scheme (``https://...``) as a download, and
    ``strvals`` splits a word at each ``,`` into more ``KEY=PATH`` pairs. So that helm reads exactly the one local
    file kvlint checked, each word must be one ``KEY=PATH`` pair (no ``,``; the key as ``--set`` writes it) naming
    an existing regular file of at most ``max_bytes`` bytes, and helm is given its absolute real path.

    A path that leads out of the git repository holding it through a symbolic link (``configs/args.yaml ->
    ~/.ssh/id_rsa`` in a pull request's checkout) is refused: the user named a file of the repository, not the
    link's target; naming a file outside any repository, or the target itself, is the user's own choice and is
    read (:func:`kvlint.load.repository_root`).

    Raises:
        FileNotFoundError: a path names no file.
        RenderError: a word that is not one ``KEY=PATH`` pair, a path that is not a regular file, is larger than
            ``max_bytes`` or leads out of its repository.
    """
    import stat

    out: list[str] = []
    for word in set_files:
        key, eq, path = word.partition("=")
        if not eq or not key.strip() or not path or "," in word or "\\" in key:
            raise RenderError(
                f"--helm-set-file {word!r}: expected one KEY=PATH pair (helm template --set-file), with no ',' "
                "(give one --helm-set-file per key)"
            )
        shown = shell_word(path)
        if not os.path.lexists(path):
            raise FileNotFoundError(f"{shown}: no such file (--helm-set-file {key})")
        real = os.path.realpath(path)
        written = os.path.abspath(path)
        root = repository_root(os.path.dirname(written))
        real_root = repository_root(os.path.dirname(written), resolve=True)
        if (
            root is not None
            and real_root is not None
            and not real_path_inside(path, real_root, resolved=True)
        ):
            raise RenderError(
                f"--helm-set-file {key}={shown}: the path leads out of the repository {real_root} through a "
                f"symbolic link (to {shell_word(real)}); kvlint does not hand helm a file out of the repository "
                "the path names: name the file itself if you mean it"
            )
        try:
            st = os.stat(real)
        except OSError as exc:
            raise FileNotFoundError(
                f"{shown}: cannot read ({exc.strerror}) (--helm-set-file {key})"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise RenderError(f"--helm-set-file {key}={shown}: not a regular file")
        if st.st_size > max_bytes:
            raise RenderError(
                f"--helm-set-file {key}={shown}: {st.st_size:,} bytes, larger than the {max_bytes:,} bytes kvlint "
                "reads (--max-file-bytes)"
            )
        out.append(f"{key}={real}")
    return out


def render_helm(
    chart: str,
    *,
    values: Sequence[str] = (),
    set_values: Sequence[str] = (),
    set_strings: Sequence[str] = (),
    set_files: Sequence[str] = (),
    release: str | None = None,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    timeout: float | None = None,
    sizes: list[int] | None = None,
) -> LoadResult:
    """Render a chart with ``helm template`` and load the output with Source mapping.

    Args:
        chart: chart directory (holding ``Chart.yaml``).
        values: ``-f`` values files; set_values: ``--set`` ``KEY=VALUE`` strings; set_strings: ``--set-string``
            ones (after the ``--set`` ones); set_files: ``--set-file`` ``KEY=PATH`` ones, each checked and its
            path resolved by :func:`set_file_args` unless they are its result already (:class:`CheckedSetFiles`)
            (after the others, as helm applies them: helm v3 ``pkg/cli/values/options.go``
            ``Options.MergeValues`` reads ``--set-file`` last).
        release: release name (default: the chart directory's base name).
        max_bytes: output larger than this is a KV001 finding at ``Chart.yaml``.
        timeout: seconds helm may run (default :data:`RENDER_TIMEOUT_S`); past it, a KV001.
        sizes: when given, the bytes helm printed are appended to it (a rendered chart only).

    Returns:
        LoadResult (``files == 1``) whose locations name the chart's template files (paths joined to the
        chart's parent directory). A chart that helm rejects gives a KV001 finding at ``CHART/Chart.yaml``
        with helm's message.

    Raises:
        RenderError: ``helm`` is not on ``PATH``.
    """
    helm = shutil.which("helm")
    if helm is None:
        raise RenderError(
            f"{chart} is a Helm chart (it has a Chart.yaml) but the helm binary is not on PATH; install helm "
            f"(https://helm.sh/docs/intro/install/) or render it elsewhere and pipe the output: "
            f"helm template RELEASE {shell_word(chart)} | kvlint check -"
        )
    refused, has_git = _chart_scan(chart, max_bytes)
    if refused:
        return LoadResult(findings=refused, files=1)
    name = release or _release_name(chart)
    label = os.path.join(chart, "Chart.yaml")
    import tempfile

    workdir = tempfile.mkdtemp(prefix="kvlint-chart-") if has_git else None
    target = chart
    try:
        if workdir is not None:
            # helm loads every file of a chart directory into .Files: a chart at a repository's root would
            # hand its templates .git/config (a CI checkout's token); helm renders the chart without .git.
            target = os.path.join(workdir, os.path.basename(os.path.abspath(chart)) or "chart")
            why = (
                _link_without_git(chart, target)
                if has_git == "top"
                else _copy_without_git(chart, target, _memory_limit(max_bytes))
            )
            if why is not None:
                return LoadResult(
                    findings=[Finding("KV001", why, Loc(label, 1, 1), fix=_SELF_CONTAINED_FIX)], files=1
                )
        # Options first, each as one --name=value word, then ``--`` and the positional arguments: no path or
        # value from the command line (a directory named ``--post-renderer=sh``, say) can become a helm flag.
        cmd = [helm, "template"]
        cmd += [f"--values={_safe_path(v)}" for v in values]
        cmd += [f"--set={s}" for s in set_values]
        cmd += [f"--set-string={s}" for s in set_strings]
        checked = set_files if isinstance(set_files, CheckedSetFiles) else set_file_args(set_files, max_bytes)
        cmd += [f"--set-file={s}" for s in checked]
        cmd += ["--", name, _safe_path(target)]
        out = _run(
            cmd,
            label,
            "helm template",
            max_bytes,
            timeout,
            sizes,
            shown=_helm_shown(
                chart,
                values,
                release,
                [("--set", set_values), ("--set-string", set_strings), ("--set-file", set_files)],
            ),
        )
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    if isinstance(out, LoadResult):
        # the absolute paths helm's error quotes, relative to the repository (the chart's copy without .git read as
        # the chart), any other as a neutral word: as a kustomize error's (:func:`_neutral_paths`)
        whole = os.path.abspath(chart)
        roots = (confinement_root(chart), _repository_or(chart))
        out.findings[:] = [
            dataclasses.replace(
                f,
                message=_neutral_paths(
                    f.message.replace(target, whole) if target != chart else f.message,
                    roots,
                    keep=[v for v in values if os.path.isabs(v)] + [p.partition("=")[2] for p in checked],
                ),
                fix=f.fix.replace(target, chart),
            )
            for f in out.findings
        ]
        out.findings[:] = [_helm_failure(f, chart, max_bytes) for f in out.findings]
        return out
    result = load_text(out, label)
    root = os.path.normpath(chart)
    map_sources(
        result, label, find_sources(out), root="" if root == "." else root, text=out, strip_chart=True
    )
    if not result.documents and not result.findings:
        result.findings.append(empty_render_finding(chart, values))
    trace_helper_values(result, chart, values)
    return result


def _helm_shown(
    chart: str, values: Sequence[str], release: str | None, sets: Sequence[tuple[str, Sequence[str]]] = ()
) -> str:
    """The ``helm template`` command a failure's fix tells the user to run, as they would type it: the chart
    directory as they named it (``./`` before a name helm would take for an option), the values files as ``-f``,
    and the release name only when the manifest gave one (an Argo CD or Flux object's): the name kvlint makes up
    from the directory (:func:`_release_name`) and the ``--`` that keeps a path from being read as a flag are
    the run's safeguards, not part of what to type (``helm template -- c c`` read as a command with an odd
    release name). ``sets``: ``(flag, KEY=VALUE words)`` for ``--set``, ``--set-string``, ``--set-file``.
    Reference: helm v3 ``cmd/helm/template.go`` (``helm template [NAME] [CHART] [flags]``; without NAME the
    release is ``release-name``)."""
    words = ["helm", "template", *([release] if release else []), _safe_path(chart)]
    for v in values:
        words += ["-f", _safe_path(v)]
    for flag, given in sets:
        for word in given:
            words += [flag, word]
    return " ".join(shell_word(w) for w in words)


def trace_helper_values(result: LoadResult, chart: str, values: Sequence[str] = ()) -> None:
    """Move, in place, the positions of rendered values that a chart's helper call wrote to the values line that
    set them, where the rendered text traces back to one.

    A value written by a named template (``{{- include "chart.container" (dict "container" . ...) | nindent 8 }}``
    inside ``{{- with .Values.decode.containers }}``: llm-d-modelservice's Deployments) is placed by the line
    mapping (:mod:`kvlint.template_lines`) at that ``include`` line, whatever the container holds; every finding on
    the container then pointed at the one line calling the helper. Here each scalar (a mapping value or list
    item; not a boolean) positioned on an ``include`` line is looked up among the values below the ``.Values``
    paths that line and its enclosing ``with``/``range`` blocks name (:func:`kvlint.origins.values_refs`): in the
    ``--helm-values`` files, last first (helm's later ``-f`` wins), then the chart's ``values.yaml``, a string
    matching a string and a number a number (:func:`_text_key`). The first file holding that text there decides: one place holding it moves the value there (its key too, when the
    values key has the same name; and a mapping whose first key moved, to that key: a container to its values
    entry), several leave it where it was, as does a text no such file holds (a value the helper computed or
    defaulted). Values on literal template lines, or written by ``toYaml``, keep their template positions."""
    from kvlint.origins import ValuesRefTable, read_yaml_tree

    root = os.path.normpath(chart)
    trees = [
        t for t in (read_yaml_tree(f) for f in [os.path.join(chart, "values.yaml"), *values]) if t is not None
    ]
    if not trees:
        return
    templates: dict[str, tuple[tuple[str, ...], dict[int, TemplateLine], ValuesRefTable | None]] = {}
    refs_at: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    in_chart: dict[str, bool] = {}
    indexes: dict[tuple[str, ...], list[dict[str, list[_Place]]]] = {}

    def include_refs(loc: Loc) -> list[tuple[str, ...]]:
        key = (loc.file, loc.line)
        if key in refs_at:
            return refs_at[key]
        refs: list[tuple[str, ...]] = []
        if loc.file not in in_chart:
            # a template of this chart (by real paths: ./chart/templates/x.yaml, or a chart named through a link);
            # once a file, not once a line
            try:
                in_chart[loc.file] = real_path_inside(loc.file, root, below=True)
            except ValueError:  # a NUL in the path: no file of the chart
                in_chart[loc.file] = False
        if in_chart[loc.file]:
            if loc.file not in templates:
                whole = _template_text(loc.file)  # read once: parsed, and its lines kept for the helper test
                parsed = parse_template(whole) if whole is not None else []
                text = tuple(whole.split("\n")) if whole is not None else ()
                templates[loc.file] = (text, {t.number: t for t in parsed}, None)
            text, by_line, table = templates[loc.file]
            tl = by_line.get(loc.line)
            if tl is not None and tl.output and _HELPER_CALL.search(text[loc.line - 1]) is not None:
                if table is None:  # read once per template, when a helper call first needs it
                    table = ValuesRefTable(text)
                    templates[loc.file] = (text, by_line, table)
                refs = table.refs(loc.line, _MAX_TRACED_REFS) or []
        refs_at[key] = refs
        return refs

    def traced(loc: Loc | None, value: Any) -> _Place | None:
        if loc is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None
        refs = include_refs(loc)
        if not refs:
            return None
        for ref in refs:  # one index per values path, shared by every line naming it
            if ref not in indexes:
                indexes[ref] = _values_index(trees, [ref])
        return _values_place([indexes[ref] for ref in refs], _text_key(value))

    seen: set[int] = set()
    for doc in result.documents:
        stack: list[Any] = [doc.data]
        while stack:
            n = stack.pop()
            if not isinstance(n, (LDict, LList)) or id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, LDict):
                first = True
                for k, v in n.items():
                    if isinstance(v, (LDict, LList)):
                        stack.append(v)
                    else:
                        hit = traced(n.locs.get(k), v)
                        if hit is not None:
                            n.locs[k] = hit[0]
                            if hit[1] is not None and hit[2] == k and k in n.key_locs:
                                if first and n.loc == n.key_locs[k]:
                                    n.loc = hit[1]
                                n.key_locs[k] = hit[1]
                    first = False
            else:
                for i, v in enumerate(n):
                    if isinstance(v, (LDict, LList)):
                        stack.append(v)
                    elif i < len(n.locs):
                        hit = traced(n.locs[i], v)
                        if hit is not None:
                            n.locs[i] = hit[0]


#: Most ``.Values`` paths a helper call's line and its enclosing blocks may name for its values to be traced (each
#: value is looked up under every path; real charts name one to three): a line inside more keeps its template line.
_MAX_TRACED_REFS = 64

#: A named template's call in an action (``include "x" .``, ``(include "x" (dict ...))``, ``template "x"``)
_HELPER_CALL = re.compile(r'{{-?\s*\(?\s*(?:include|template)\s+"')


_Place = tuple[Loc, "Loc | None", Any]


def _values_index(trees: Sequence[Any], refs: Sequence[tuple[str, ...]]) -> list[dict[str, list[_Place]]]:
    """Per values tree (in order), the scalars below the values paths ``refs`` by their text: ``text -> [(value
    position, key position or None, key)]``, each position once (booleans and nulls left out):
    :func:`trace_helper_values` reads it, one pass over those values for every value of the same lines."""
    out: list[dict[str, list[_Place]]] = []
    for tree in trees:
        by_text: dict[str, list[_Place]] = {}
        seen: set[Loc] = set()
        for ref in refs:
            node: Any = tree
            for k in ref:
                node = node.get(k) if isinstance(node, LDict) else None
            stack = [node]
            while stack:
                n = stack.pop()
                if isinstance(n, LDict):
                    items: list[tuple[Any, Any, Loc | None, Loc | None]] = [
                        (k, v, n.locs.get(k), n.key_locs.get(k)) for k, v in n.items()
                    ]
                elif isinstance(n, LList):
                    items = [(None, v, n.locs[i] if i < len(n.locs) else None, None) for i, v in enumerate(n)]
                else:
                    continue
                for k, v, vloc, kloc in items:
                    if isinstance(v, (LDict, LList)):
                        stack.append(v)
                    elif vloc is not None and v is not None and not isinstance(v, bool) and vloc not in seen:
                        seen.add(vloc)
                        by_text.setdefault(_text_key(v), []).append((vloc, kloc, k))
        out.append(by_text)
    return out


def _text_key(value: Any) -> str:
    """How :func:`trace_helper_values` compares a rendered scalar with a values scalar: its text, marked string or
    number, so that an argument ``"8200"`` is not traced to a ``containerPort: 8200``."""
    return ("s:" if isinstance(value, str) else "n:") + str(value)


def _values_place(indexes: Sequence[Sequence[dict[str, list[_Place]]]], text: str) -> _Place | None:
    """The one place of ``text`` in the last values tree holding it below any of the values paths (one
    :func:`_values_index` per path, in the order the paths are named), or None (none holds it, or that tree holds
    it in more than one place). A place found under two paths (one inside the other) is one place. Stops at the
    second place: the work does not grow with how often a text repeats."""
    trees = len(indexes[0]) if indexes else 0
    for t in reversed(range(trees)):
        found: _Place | None = None
        for index in indexes:
            for place in index[t].get(text, ()):
                if found is None:
                    found = place
                elif place[0] != found[0]:
                    return None
        if found is not None:
            return found
    return None


#: The start of :func:`empty_render_finding`'s message (:func:`kvlint.sizing.unread` counts such a chart as not read,
#: by its :attr:`~kvlint.types.Mark.EMPTY_RENDER`)
EMPTY_RENDER = "helm template rendered no Kubernetes object from this chart"


def empty_render_finding(chart: str, values: Sequence[str] = ()) -> Finding:
    """KV002 at ``CHART/Chart.yaml`` for a chart whose ``helm template`` output holds no object: nothing of it was
    linted, which a clean pass would hide. The usual causes, said in the message: the chart has no ``templates/``
    directory (a ``Chart.yaml`` beside values meant for another chart, installed by name from a repository, as
    freechat-fun/freechat-vllm's ``configs/helm`` for ``arktec-quant-helm-charts/vllm``), or every template is
    turned off by the values given (``enabled: false``). helm itself renders such a chart without a word
    (``helm template`` prints nothing and exits 0; helm v3.17 ``pkg/action/install.go``)."""
    if not os.path.isdir(os.path.join(chart, "templates")):
        why = "it has no templates/ directory"
        fix = (
            "if its values are for a chart installed from a repository, render that chart with them: helm template "
            f"RELEASE CHART -f {shell_word(os.path.join(chart, 'values.yaml'))} | kvlint check -"
        )
    else:
        why = f"its templates render nothing with {', '.join(values) if values else 'its default values'}"
        fix = f"name the values you deploy with: kvlint check {shell_word(chart)} --helm-values FILE"
    return Finding(
        "KV002",
        f"{EMPTY_RENDER} ({why}): nothing of it was linted",
        Loc(os.path.join(chart, "Chart.yaml"), 1, 1),
        fix=fix,
        mark=Mark.EMPTY_RENDER,
    )


#: Where helm's error names a template position: ``execution error at (CHART/templates/x.yaml:11:29): ...`` (a
#: ``required``/``fail``), ``template: CHART/templates/x.yaml:2:8: executing ...`` (a nil pointer, a bad call),
#: ``parse error at (CHART/templates/x.yaml:3): ...`` (a template that does not parse), as helm v3.17 prints them
#: (``pkg/engine/engine.go`` rewrites Go ``text/template`` errors, whose ``parse.Tree.ErrorContext`` gives the
#: line, 1-based, and the byte offset in it, 0-based; checked with helm v3.17.3, tests/test_helm_failures.py).
_HELM_ERROR_AT = re.compile(
    r"(?:execution error at \(|template: |parse error at \()"
    r"(?P<path>[^\s():]+):(?P<line>\d+)(?::(?P<col>\d+))?"
)
#: helm's refusal of a chart whose ``dependencies`` are not all in its ``charts/`` directory (helm v3
#: ``pkg/action/install.go::CheckDependencies``: "found in Chart.yaml, but missing in charts/ directory: a, b", the
#: dependencies' ``name``s).
_HELM_MISSING_DEPS = re.compile(r"found in Chart\.yaml, but missing in charts/ directory: (?P<names>[^;]+)")


def walk_values_hint(findings: Sequence[Finding], chart: str) -> list[Finding]:
    """``findings`` of ``chart``'s render, met in a directory walk and rendered with the chart's own values only,
    with the ``--helm-values`` hint added to the fix of each ``helm template`` failure
    (:attr:`~kvlint.types.Mark.HELM_FAILED`: helm's failure may be values the chart lacks); the rest (dependencies
    missing from ``charts/``, a chart refused before helm ran) as they are. Chosen by the finding's mark, not by
    the wording of its fix. The hint names the first of the chart's other values files (:func:`values_note`), else
    ``FILE``."""
    values = getattr(chart, "values", ())
    hint = (
        f"; or lint it with the values it is deployed with: kvlint check {shell_word(chart)} --helm-values "
        f"{shell_word(values[0]) if values else 'FILE'}"
    )
    return [
        dataclasses.replace(f, fix=(f.fix or "") + hint)
        if f.rule == "KV001" and f.mark is Mark.HELM_FAILED
        else f
        for f in findings
    ]


def _helm_failure(finding: Finding, chart: str, max_bytes: int) -> Finding:
    """A KV001 of a failed ``helm template`` placed where helm says the problem is, marked
    :attr:`~kvlint.types.Mark.HELM_FAILED` (:attr:`~kvlint.types.Mark.HELM_MISSING_DEPS` for missing dependencies).

    * a template error (``required``, ``fail``, a nil pointer, a parse error): at that line of the chart's template
      file (``CHART/templates/x.yaml``, or a subchart's under ``CHART/charts/``), when the file is there;
    * missing dependencies: at the ``dependencies`` entry of ``Chart.yaml`` naming the first of them, with a fix
      that says what to run (kvlint fetches nothing; helm needs a dependency even when its condition turns it off).

    Anything else keeps its position (``Chart.yaml`` line 1)."""
    finding = dataclasses.replace(finding, mark=Mark.HELM_FAILED)
    m = _HELM_ERROR_AT.search(finding.message)
    if m is not None:
        where = _chart_file(chart, m.group("path").split("/"))
        if where is not None:
            col = int(m.group("col")) + 1 if m.group("col") else 1
            line = int(m.group("line"))
            key = _required_value(where, line, max_bytes) if "execution error at (" in m.group(0) else None
            if key and key != "global" and not key.startswith("global."):
                key = ".".join([*_subchart_names(m.group("path").split("/")), key])
            fix = (
                f"the chart requires the value {key} (its template's `required`): give it with `kvlint check "
                f"{shell_word(chart)} --helm-set {shell_word(key + '=VALUE')}`, or in the values file it is deployed "
                "with (--helm-values FILE)"
                if key
                else finding.fix
            )
            return dataclasses.replace(finding, loc=Loc(where, line, col), fix=fix)
        return finding
    m = _HELM_MISSING_DEPS.search(finding.message)
    if m is None:
        return finding
    names = [n.strip() for n in m.group("names").split(",") if n.strip()]
    loc = _dependency_loc(chart, names, max_bytes) or finding.loc
    label = "dependency" if len(names) == 1 else "dependencies"
    fix = (
        f"the chart's {label} {', '.join(names)} must be in {os.path.join(chart, 'charts')}/ (helm refuses the chart "
        "without it, even when its condition turns it off) and kvlint fetches nothing: run `helm dependency build "
        f"{chart}` where the chart repositories are reachable (or copy the dependency's .tgz into charts/), then run "
        "kvlint again"
    )
    return dataclasses.replace(finding, loc=loc, fix=fix, mark=Mark.HELM_MISSING_DEPS)


#: A template's ``required`` of a value: ``.Values.a.b | required "..."`` or ``required "..." .Values.a.b`` (Helm's
#: ``required`` function, helm v3 ``pkg/engine/funcs.go``: "execution error at (FILE:LINE:COL): MESSAGE" when the
#: value is empty). Keys of letters, digits, ``_`` and ``-`` only: another expression is not named.
_REQUIRED_PIPE = re.compile(r"\.Values((?:\.[A-Za-z_][\w-]*)+)\s*\|\s*required\b")
_REQUIRED_CALL = re.compile(
    r"\brequired\s+(?:\"(?:[^\"\\]|\\.)*\"|`[^`]*`)\s+\.Values((?:\.[A-Za-z_][\w-]*)+)"
)


def _required_value(path: str, line: int, max_bytes: int) -> str | None:
    """The values key (``secret.encodedToken``) the ``required`` on line ``line`` of the template ``path`` asks for,
    when that line holds exactly one; None otherwise (the file unreadable or larger than ``max_bytes``, no such
    call, or several)."""
    try:
        if os.path.getsize(path) > max_bytes:
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = next((t for i, t in enumerate(fh, 1) if i == line), "")
    except (OSError, ValueError):
        return None
    keys = {m.group(1)[1:] for m in _REQUIRED_PIPE.finditer(text)} | {
        m.group(1)[1:] for m in _REQUIRED_CALL.finditer(text)
    }
    return keys.pop() if len(keys) == 1 else None


def _subchart_names(parts: Sequence[str]) -> list[str]:
    """The subcharts, outermost first, of the template helm names ``parts`` (``NAME/charts/SUB/charts/SUB2/
    templates/x.yaml`` -> ``[SUB, SUB2]``): the keys under which the parent's values reach that subchart's
    ``.Values`` (Helm v3 ``pkg/chartutil/coalesce.go``: a subchart's values are the parent's ``values[NAME]``, NAME
    its ``alias`` when it has one, as the path helm prints names it; ``global`` is shared by all)."""
    names, i = [], 1
    while i + 2 < len(parts) and parts[i] == "charts":
        names.append(parts[i + 1])
        i += 2
    return names


def _chart_file(chart: str, parts: Sequence[str]) -> str | None:
    """The file of ``chart`` that helm names ``parts`` (``NAME/templates/x.yaml``, ``NAME/charts/SUB/templates/
    x.yaml``: helm names a chart and each subchart by its ``Chart.yaml`` ``name``, which a subchart's directory
    under ``charts/`` need not have), or None when it is not a regular file of the chart's directory (a packed
    subchart, a name with ``..``)."""
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
        return None
    here, i = chart, 1
    while i + 2 < len(parts) and parts[i] == "charts":
        subs = os.path.join(here, "charts")
        try:
            names = sorted(os.listdir(subs))
        except OSError:
            return None
        dirs = [os.path.join(subs, n) for n in names if os.path.isdir(os.path.join(subs, n))]
        # helm names a dependency by its alias when it has one (Chart.yaml ``dependencies[].alias``)
        wanted = _aliased(here).get(parts[i + 1], parts[i + 1])
        match = [d for d in dirs if os.path.basename(d) == parts[i + 1]] or [
            d for d in dirs if _chart_name(d) == wanted
        ]
        if not match:
            return None
        here, i = match[0], i + 2
    where = os.path.join(here, *parts[i:])
    return where if os.path.isfile(where) and not os.path.islink(where) else None


def _aliased(chart: str) -> dict[str, str]:
    """``{alias: name}`` of the ``dependencies`` of ``chart/Chart.yaml`` that have an ``alias`` (helm v3 renames
    such a subchart to its alias, in the paths it prints and as the key of its values); empty when the file
    cannot be read."""
    spec, _problem = _read_kustomization(os.path.join(chart, "Chart.yaml"), _MAX_CHART_BYTES)
    deps = spec.get("dependencies") if isinstance(spec, LDict) else None
    out: dict[str, str] = {}
    for entry in deps if isinstance(deps, LList) else ():
        if (
            isinstance(entry, LDict)
            and isinstance(entry.get("alias"), str)
            and isinstance(entry.get("name"), str)
        ):
            out.setdefault(entry["alias"], entry["name"])
    return out


def _dependency_loc(chart: str, names: Sequence[str], max_bytes: int) -> Loc | None:
    """The position of the ``name`` of the first ``dependencies`` entry of ``chart/Chart.yaml`` whose ``name`` is
    among ``names``; None when the file cannot be read or names none of them."""
    path = os.path.join(chart, "Chart.yaml")
    spec, _problem = _read_kustomization(path, min(max_bytes, _MAX_CHART_BYTES))
    deps = spec.get("dependencies") if isinstance(spec, LDict) else None
    for entry in deps if isinstance(deps, LList) else ():
        if isinstance(entry, LDict) and entry.get("name") in names:
            return entry.locs.get("name") or entry.loc
    return None


def render_kustomize(
    directory: str,
    *,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    timeout: float | None = None,
    sizes: list[int] | None = None,
) -> LoadResult:
    """Render a kustomization with ``kustomize build`` (or ``kubectl kustomize``) and load the output.

    Each rendered object is mapped back to the file in ``directory`` (or the local files and directories
    its kustomization tree names) holding an object of the same ``kind`` whose ``metadata.name`` is
    contained in the rendered name (``namePrefix``/``nameSuffix``); values are located along the same key
    path there, else at their nearest located ancestor. Objects with no such source keep positions in a
    virtual file named ``DIR/kustomization.yaml (kustomize build)``. ``timeout``: seconds the build may run
    (default :data:`RENDER_TIMEOUT_S`); past it, a KV001. ``sizes``: when given, the bytes the build printed are
    appended to it (a build that succeeded only).

    Returns:
        LoadResult with ``files == 1``; a failed build is a KV001 finding at the kustomization file.

    Raises:
        RenderError: neither ``kustomize`` nor ``kubectl`` is on ``PATH``.
    """
    cmd = kustomize_command(directory)
    kfile = next(
        (
            os.path.join(directory, f)
            for f in KUSTOMIZATION_FILES
            if os.path.isfile(os.path.join(directory, f))
        ),
        os.path.join(directory, "kustomization.yaml"),
    )
    if cmd is None:
        raise RenderError(
            f"{directory} is a kustomization but neither kustomize nor kubectl is on PATH; install one, or "
            f"render it elsewhere and pipe the output: kustomize build {shell_word(directory)} | kvlint check -"
        )
    # the tree's kustomization files, each read once (bounded) for the three walks below
    reads: _KustomizationReads = {}
    refused = tree_refusal(directory, max_bytes, reads)
    root = confinement_root(directory)
    if refused:
        return LoadResult(findings=refused, files=1)
    out = _run(
        cmd, kfile, " ".join(cmd[:2]), max_bytes, timeout, sizes, roots=(root, _repository_or(directory))
    )
    if isinstance(out, LoadResult):
        # kustomize failed: on a path of the tree that does not exist, its error is said at that entry, not at the
        # kustomization file's first line (and any other missing path at its own)
        missing = missing_paths(directory, max_bytes, reads)
        if missing:
            out.findings[:] = _at_missing_entry(out.findings, missing, directory)
        return out
    label = f"{kfile} (kustomize build)"
    result = load_text(out, label)
    sources = _kustomize_sources(directory, max_bytes, reads)
    images = _kustomize_images(directory, max_bytes, reads)
    for k, doc in enumerate(result.documents):
        matched = _match_sources(doc, sources)
        if not matched:
            continue
        primary = matched[0][0]
        _graft_locs(doc.data, [(d.data, p) for d, p in matched], primary.loc, images)
        result.documents[k] = dataclasses.replace(doc, path=primary.path, loc=primary.loc)
    return result


#: Most files and directories :func:`chart_escapes` looks at in a chart (a larger tree is refused).
MAX_CHART_ENTRIES = 100_000


def chart_escapes(chart: str, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[Finding]:
    """KV001 for everything in the chart directory ``chart`` that would make ``helm template`` read or fetch
    something outside the chart; [] when there is nothing.

    * a **symbolic link resolving outside the chart** (helm follows links when it loads a chart directory, so
      ``{{ .Files.Get "leak" }}`` with ``leak -> /proc/self/environ`` put the runner's environment into a
      rendered value, and kvlint's findings quote values: a pull request could print the CI runner's files
      in its log), or **into a ``.git`` directory** (``leak -> .git/config``: a CI checkout's credentials);
    * a **``$ref`` of a ``values.schema.json``** that is not a fragment of the schema itself (``#/...``): helm
      validates the values against the schema and fetches ``https://`` references, reads ``file://`` ones.

    The walk does not follow links (each is checked where it is), does not enter ``.git`` (which
    :func:`render_helm` keeps from helm), looks at most at :data:`MAX_CHART_ENTRIES` entries and reads schema
    files of at most ``max_bytes`` (regular files only). Subchart archives (``charts/*.tgz``) are not opened:
    what they fetch is cut off by the renderer's environment (:func:`_render_env`).
    """
    return _chart_scan(chart, max_bytes)[0]


_SELF_CONTAINED_FIX = (
    "keep the chart self-contained: copy the file into the chart, or render it yourself and pipe the output"
)


def _is_git(name: str) -> bool:
    """``name`` is git's metadata entry (the repository directory, or a worktree's/submodule's ``.git`` file), in
    any letter case (a case-insensitive file system opens ``.GIT`` as ``.git``)."""
    return name.casefold() == ".git"


def _chart_scan(chart: str, max_bytes: int) -> tuple[list[Finding], str | None]:
    """:func:`chart_escapes`'s findings, and where the chart directory holds a ``.git`` entry: ``"top"`` in the
    chart directory only (a chart at a repository's root), ``"deep"`` below it too, None nowhere
    (:func:`render_helm` renders such a chart without them)."""
    from kvlint.config import _shown

    out: list[Finding] = []
    root = os.path.realpath(chart)
    fix = _SELF_CONTAINED_FIX
    entries = 0
    has_git: str | None = None
    for here, dirs, files in walk_tree(chart):
        git = [d for d in dirs if _is_git(d)]
        if git or any(_is_git(f) for f in files):
            has_git = "deep" if has_git or os.path.normpath(here) != os.path.normpath(chart) else "top"
            dirs[:] = [d for d in dirs if not _is_git(d)]
            files = [f for f in files if not _is_git(f)]
        dirs.sort()
        entries += len(dirs) + len(files)
        if entries > MAX_CHART_ENTRIES:
            return [
                Finding(
                    "KV001",
                    f"chart of more than {MAX_CHART_ENTRIES} files and directories; not rendered",
                    Loc(os.path.join(chart, "Chart.yaml"), 1, 1),
                    fix=fix,
                )
            ], has_git
        for name in sorted(dirs + files):
            full = os.path.join(here, name)
            if not os.path.islink(full):
                continue
            real = os.path.realpath(full)
            if not real_path_inside(full, root, below=True, resolved=True):
                out.append(
                    Finding(
                        "KV001",
                        f"symbolic link to a path outside the chart ({_shown(link_chain(full), 400)}); helm would "
                        "read it into the chart, so the chart was not rendered",
                        Loc(full, 1, 1),
                        fix=fix,
                    )
                )
            elif any(_is_git(p) for p in os.path.relpath(real, root).split(os.sep)):
                out.append(
                    Finding(
                        "KV001",
                        f"symbolic link into a .git directory ({_shown(link_chain(full), 400)}); helm would read "
                        "git's files (a checkout's credentials) into the chart, so the chart was not rendered",
                        Loc(full, 1, 1),
                        fix=fix,
                    )
                )
        schema = os.path.join(here, "values.schema.json")
        # (a link inside the chart: helm reads its target; a link out is flagged above and not read)
        if "values.schema.json" in files and real_path_inside(schema, root, below=True, resolved=True):
            out += _schema_refs(schema, max_bytes, fix)
    return out, has_git


def _link_without_git(chart: str, target: str) -> str | None:
    """Make ``target`` a directory holding a symbolic link to each entry of the chart directory ``chart`` but
    ``.git`` (helm follows the links, and applies the chart's ``.helmignore`` to the paths as in the chart: an
    ignored directory, however large, is not read, where a copy would have to read it); None, or why not."""
    try:
        os.mkdir(target)
        for name in os.listdir(chart):
            if not _is_git(name):
                os.symlink(os.path.abspath(os.path.join(chart, name)), os.path.join(target, name))
    except OSError as e:
        return f"chart holding a .git entry could not be prepared to render without it: {e.strerror or e}"
    return None


def _copy_without_git(chart: str, target: str, max_bytes: int) -> str | None:
    """Copy the chart directory ``chart`` to ``target`` without its ``.git`` entries (links copied as links,
    files hard-linked where the file system allows, else copied); None, or why it was not copied (more than
    ``max_bytes`` of files, an error). Called only after :func:`_chart_scan` found no link out of the chart, and
    only when a ``.git`` lies below the chart directory (a repository nested in it): :func:`_link_without_git`
    serves a ``.git`` at the top."""
    total = 0

    def ignore(_dir: str, names: list[str]) -> list[str]:
        return [n for n in names if _is_git(n)]

    def copy(src: str, dst: str) -> str:
        nonlocal total
        total += os.lstat(src).st_size
        if total > max_bytes:
            raise _TooLarge
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
        return dst

    try:
        shutil.copytree(chart, target, symlinks=True, ignore=ignore, copy_function=copy)
    except _TooLarge:
        return (
            f"chart holding a .git entry and more than {max_bytes >> 20} MiB of files: kvlint renders such a chart "
            "from a copy without .git, and does not copy that much; not rendered"
        )
    except (OSError, shutil.Error) as e:
        return f"chart holding a .git entry could not be copied without it to render: {str(e)[:200]}"
    return None


class _TooLarge(Exception):
    """Raised by :func:`_copy_without_git`'s copy past its byte limit."""


def _schema_refs(path: str, max_bytes: int, fix: str) -> list[Finding]:
    """KV001 for each ``$ref`` of the JSON schema at ``path`` that is not a fragment (``#...``)."""
    import json
    import stat

    from kvlint.config import _shown
    from kvlint.load import read_file

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return []
        schema = json.loads(read_file(path, st.st_size, max_bytes))
    except (OSError, ValueError, RecursionError):
        return []  # helm reports a schema it cannot read
    out: list[Finding] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                out.append(
                    Finding(
                        "KV001",
                        f"values.schema.json refers to {_shown(ref, 80)} ($ref), which helm would fetch or read "
                        "while it validates the values; the chart was not rendered",
                        Loc(path, 1, 1),
                        fix="inline the referenced schema (a $ref of the form #/definitions/NAME), or " + fix,
                    )
                )
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return out


#: Fields of a kustomization holding a list of paths kustomize loads, each of which may be a URL
#: (kustomize ``api/types/kustomization.go``; ``generators``/``transformers``/``validators`` and
#: ``patchesStrategicMerge`` entries may also be inline YAML, which is not a path).
_KUSTOMIZE_PATH_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
#: Fields holding a list of mappings whose ``path`` kustomize loads.
_KUSTOMIZE_PATH_ENTRIES = ("patches", "patchesJson6902", "replacements")
#: Fields of a kustomization that kustomize inflates with helm, only when built with ``--enable-helm``
#: (sigs.k8s.io/kustomize ``api/types/kustomization.go`` ``HelmCharts``/``HelmChartInflationGenerator``;
#: ``api/krusty`` fails without the flag: "must specify --enable-helm"): kvlint never passes it.
_KUSTOMIZE_HELM_FIELDS = ("helmCharts", "helmChartInflationGenerator")
#: Fields of a kustomization listing plugin configurations (inline, or files): builtin generators and transformers
#: whose own fields name files kustomize loads from the kustomization's directory (``ConfigMapGenerator`` ``files``,
#: ``PatchTransformer`` ``path``...; sigs.k8s.io/kustomize ``api/types/kustomization.go``), which kustomize confines
#: to that directory by real path (``loader.RestrictionRootOnly``) but which kvlint does not read: at a repository's
#: top, that directory holds ``.git`` (:func:`remote_references` refuses them there).
_KUSTOMIZE_PLUGIN_FIELDS = ("generators", "transformers", "validators")
#: Generators whose ``files`` (``[KEY=]PATH``), ``envs`` and ``env`` name files kustomize loads.
_KUSTOMIZE_GENERATORS = ("configMapGenerator", "secretGenerator")
#: Most kustomization directories :func:`remote_references` reads (a tree larger than this is refused).
MAX_KUSTOMIZATIONS = 1000
#: Most paths (``resources`` entries, patch and generator files...) :func:`remote_references` looks at in a tree's
#: kustomization files together (a tree naming more is refused): each costs a few file-system lookups, and a
#: thousand directories linking one 30 KB kustomization of three thousand ``../dN`` entries was minutes of CPU.
#: [assumed] 100 a directory on average at the largest tree.
MAX_KUSTOMIZATION_PATHS = 100 * MAX_KUSTOMIZATIONS
#: Most characters of those paths together: resolving a path costs a file-system lookup a component
#: (``os.path.realpath``), so a few paths of great depth cost what a count bound lets through (a 12 MB
#: kustomization of deep paths, under the count, took about 15 CPU s a walk, once per overlay naming it).
#: [assumed] about 10 characters a path at the count bound; real trees name a few KB of paths.
MAX_KUSTOMIZATION_PATH_CHARS = 2**20
#: How kustomize recognises a remote reference (``kustomize@v5.5.0:api/internal/git/repospec.go``
#: ``NewRepoSpecFromURL``, ``api/loader/fileloader.go`` ``IsRemoteFile``): a URL with a scheme (http(s) files,
#: ``https``/``ssh``/``file`` repositories), git's forced protocol ``git::``, the ``gh:`` shorthand, a ``user@``
#: before the host (``git@github.com:org/repo``), a bare ``github.com`` host, or Azure's ``_git/``.
_REMOTE_REF = re.compile(
    r"(?i:[a-z][a-z0-9+.-]*://|git::|gh:|github\.com[:/]|[\w.-]+@[\w.-]+[:/])|.*_git/", re.DOTALL
)


def _repository_or(directory: str) -> str:
    """The git work tree holding ``directory`` as written (:func:`kvlint.load.repository_root`), else the absolute
    path of the directory walked when a walk met it (:attr:`WalkedDir.top`), else of ``directory``: the spelling of
    :func:`confinement_root` a renderer's error may quote."""
    return repository_root(directory) or os.path.abspath(getattr(directory, "top", "") or directory)


def confinement_root(directory: str) -> str:
    """The real path of the directory a kustomization at ``directory`` may reference files and bases in: the git
    work tree holding it (the nearest directory at or above it holding ``.git``, as ``git rev-parse
    --show-toplevel`` finds it: :func:`kvlint.load.repository_root`), else, outside any repository, the directory
    walked when a walk met it (:attr:`WalkedDir.top`), else ``directory`` itself (named on the command line).

    A pull request's checkout is hostile input: ``resources: [../../../../outside]`` would make kustomize build a
    kustomization of the CI runner's disk, whose values (``replacements`` into ``--model``) kvlint's findings
    quote. kustomize itself (``api/krusty``, ``LoadRestrictionsRootOnly``) confines files to a kustomization's
    root but loads bases from anywhere."""
    top = repository_root(directory, resolve=True)
    if top is not None:
        return top
    return os.path.realpath(getattr(directory, "top", "") or directory)


_REFUSALS: dict[tuple[str, int, str, bool], list[Finding]] = {}
filecache.register(_REFUSALS.clear)


def tree_refusal(
    directory: str,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    reads: _KustomizationReads | None = None,
    *,
    missing: bool = False,
) -> list[Finding]:
    """:func:`remote_references` of the kustomization tree at ``directory``, confined to its
    :func:`confinement_root`: why kvlint does not build it ([] when it builds it); with ``missing``, also the
    paths it names that do not exist (:func:`missing_paths`). Asked once a run per directory (its real path), file
    size bound, root and ``missing``: a directory walk asks it of an overlay to say whether its bases are linted
    through it (:func:`walk_notes`), and the build asks it again (``reads``: the build's reads of the
    kustomization files, filled when it is asked first there)."""
    root = confinement_root(directory)
    key = (os.path.realpath(directory), max_bytes, root, missing)
    got = _REFUSALS.get(key)
    if got is None:
        got = _REFUSALS[key] = remote_references(directory, max_bytes, reads=reads, top=root, missing=missing)
    return list(got)


#: How :func:`remote_references` words a path that does not exist: ``{field} names {path}{_MISSING}``.
_MISSING = ", which does not exist: kustomize build fails on it (no such file or directory), so this kustomization was not built"


def _at_missing_entry(failed: list[Finding], missing: list[Finding], directory: str) -> list[Finding]:
    """The findings of a failed kustomize build of ``directory`` (``failed``: its KV001, at the kustomization
    file's first line) with the missing paths of its tree (:func:`missing_paths`): kustomize's error moved to the
    entry naming the missing path it quotes when that entry is in ``directory``'s own kustomization file (the first
    missing path of that file when it quotes none); a missing path of a base is said at its entry beside the
    error, which stays at the kustomization built (its "in the base ..." says which base failed), as is any other
    missing path (kustomize stops at the first). Those KV001s are marked :attr:`Mark.KUSTOMIZE_MISSING`."""
    marked = [dataclasses.replace(m, mark=Mark.KUSTOMIZE_MISSING) for m in missing]
    if not failed:
        return marked
    error = failed[0]
    here = os.path.realpath(directory)

    def path_of(f: Finding) -> str:
        return f.message.split(" names ", 1)[-1].rsplit(_MISSING, 1)[0].strip()

    def own(f: Finding) -> bool:
        return f.loc is not None and os.path.realpath(os.path.dirname(f.loc.file) or ".") == here

    quoted = [m for m in marked if path_of(m) and path_of(m) in error.message]
    at = quoted[0] if quoted else next((m for m in marked if own(m)), None)
    if at is None or not own(at):
        return [*failed, *marked]
    return [dataclasses.replace(error, loc=at.loc), *failed[1:], *(m for m in marked if m is not at)]


def missing_paths(
    directory: str, max_bytes: int = DEFAULT_MAX_FILE_BYTES, reads: _KustomizationReads | None = None
) -> list[Finding]:
    """KV001 at each entry of the kustomization tree at ``directory`` naming a path that does not exist (a
    ``resources`` file, a patch, a generator's file: kustomize's build fails on it, "no such file or directory"),
    for a tree :func:`tree_refusal` does not refuse otherwise. Asked when kustomize failed, whose error was placed
    at the kustomization file's first line, and by a walk to tell an overlay whose bases are not linted through it
    (:attr:`WalkedDir.unbuilt`)."""
    if tree_refusal(directory, max_bytes, reads):
        return []
    return tree_refusal(directory, max_bytes, reads, missing=True)


def remote_references(
    directory: str,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    *,
    reads: _KustomizationReads | None = None,
    top: str | None = None,
    missing: bool = False,
) -> list[Finding]:
    """KV001 for every reference of the kustomization tree at ``directory`` that kustomize would fetch (a remote
    base, resource, patch or generator file: :data:`_REMOTE_REF`), that names a path whose real path is outside
    ``top`` (default :func:`confinement_root` of ``directory``: the git work tree holding it), or, with
    ``missing``, a path that does not exist (kustomize's build fails on it: :func:`missing_paths`), in the
    kustomization file and the local bases it names, or that kustomize inflates with helm (``helmCharts``:
    :data:`_KUSTOMIZE_HELM_FIELDS`); [] when it names none. A path outside is not looked at
    further (nor built): no base of the runner's disk is read, and the finding says the same whether it exists.

    ``kustomize build`` fetches such references itself, over HTTP or by running ``git`` with the URL written in
    the file: on a CI runner, whoever opened the pull request would choose what the runner fetches and runs.
    kvlint builds only self-contained trees; a remote base is vendored, or built where fetching it is intended
    and piped (``kubectl kustomize DIR | kvlint check -``). Files are read with kvlint's own bounded loader (at
    most ``max_bytes``, regular files only); a tree of more than :data:`MAX_KUSTOMIZATIONS` directories, or
    whose kustomization files name more than :data:`MAX_KUSTOMIZATION_PATHS` paths or more than
    :data:`MAX_KUSTOMIZATION_PATH_CHARS` characters of paths, is refused with one finding. A base's paths are resolved from its real directory, as kustomize loads it. ``reads``: the files read so far for the same build, shared with its other walks
    (:func:`_read_in`).
    """
    from kvlint.config import _shown

    out: list[Finding] = []
    fix = (
        f"vendor the remote base into the repository, or build it where fetching it is intended and lint the "
        f"output: kubectl kustomize {shell_word(_safe_path(directory))} | kvlint check -"
    )
    seen: set[str] = set()
    git_refs: set[tuple[str, str, Loc | None]] = set()
    root = confinement_root(directory) if top is None else os.path.realpath(top)
    outside_fix = (
        "keep the kustomization's bases and files inside the repository (copy the base in); outside a git "
        "repository, name the directory holding both (kvlint check DIR); or build it on a trusted tree and lint "
        "the output: kustomize build DIR | kvlint check -"
    )
    # (directory as the walk spells it, its real path): a base is queued once, by its real path (what kustomize
    # loads it as), and its own paths are joined to that real path, so no path the walk resolves grows with the
    # depth of the tree (a chain of bases spelled a/../b/../c/..., each resolved anew, was quadratic)
    todo = [(directory, os.path.realpath(directory))]
    queued = {todo[0][1]}
    paths = chars = 0

    def too_large(what: str) -> list[Finding]:
        return [
            Finding(
                "KV001",
                f"kustomization tree of more than {what}; not built",
                Loc(os.path.join(directory, KUSTOMIZATION_FILES[0]), 1, 1),
                fix=fix,
            )
        ]

    while todo:
        d, real = todo.pop()
        if real in seen:
            continue
        if len(seen) >= MAX_KUSTOMIZATIONS:
            return too_large(f"{MAX_KUSTOMIZATIONS} directories")
        seen.add(real)
        for name in KUSTOMIZATION_FILES:
            kfile = os.path.join(d, name)
            here = os.path.join(real, name)  # (from the real directory: no path grows with the tree's depth)
            linked = os.path.realpath(here) if os.path.islink(here) else None
            if linked is not None and (
                not real_inside(linked, root, below=True) or _names_git(real, name, linked)
            ):
                # the kustomization file itself linked out of the repository (or into git's metadata): what it
                # says is the runner's file, quoted by the findings on its paths; not read
                out.append(
                    Finding(
                        "KV001",
                        "this kustomization file is a symbolic link to a file outside the repository (or into its "
                        ".git metadata): kvlint reads only what the repository holds, so it was not read nor built",
                        Loc(kfile, 1, 1),
                        fix=outside_fix,
                    )
                )
                continue
            spec, problem = _read_in(d, name, max_bytes, reads)
            if problem is not None:
                out.append(
                    Finding("KV001", f"kustomization file {problem}; not built", Loc(kfile, 1, 1), fix=fix)
                )
            if not isinstance(spec, LDict):
                continue
            if os.path.isdir(os.path.join(real, ".git")):
                for field in _KUSTOMIZE_PLUGIN_FIELDS:
                    if spec.get(field):
                        out.append(
                            Finding(
                                "KV001",
                                f"this kustomization is at the top of a git repository, beside its .git, and lists "
                                f"{field}: kustomize lets their configurations read any file of this directory, "
                                ".git/config too (where a CI checkout keeps its credentials), and kvlint does not "
                                "look into them, so it was not built",
                                spec.key_locs.get(field) or Loc(kfile, 1, 1),
                                fix="move the kustomization into a subdirectory of the repository (kustomize then "
                                "keeps .git out of its reach), or build it on a trusted tree and lint the output: "
                                "kustomize build DIR | kvlint check -",
                            )
                        )
            for field in _KUSTOMIZE_HELM_FIELDS:
                if field in spec:
                    out.append(
                        Finding(
                            "KV001",
                            f"kvlint does not inflate a kustomization's {field} (it runs no helm for kustomize "
                            "and fetches nothing a manifest names, and kustomize builds them only with "
                            "--enable-helm), so this kustomization was not built",
                            spec.key_locs.get(field) or Loc(kfile, 1, 1),
                            fix="render the chart yourself and lint it (kvlint check CHART_DIR, or helm template "
                            f"... | kvlint check -), or on a trusted tree: kustomize build --enable-helm "
                            f"{shell_word(_safe_path(d))} | kvlint check -",
                        )
                    )
            for field, value, loc in _kustomization_paths(spec):
                paths += 1
                chars += len(value)
                if paths > MAX_KUSTOMIZATION_PATHS:
                    return too_large(f"{MAX_KUSTOMIZATION_PATHS:,} paths in its kustomization files")
                if chars > MAX_KUSTOMIZATION_PATH_CHARS:
                    return too_large(
                        f"{MAX_KUSTOMIZATION_PATH_CHARS:,} characters of paths in its kustomization files"
                    )
                if _REMOTE_REF.match(value.strip()):
                    out.append(
                        Finding(
                            "KV001",
                            f"{field} names a remote reference ({_shown(value, 80)}) that kustomize would fetch; "
                            "kvlint fetches nothing a manifest names, so this kustomization was not built",
                            loc or Loc(kfile, 1, 1),
                            fix=fix,
                        )
                    )
                    continue
                if "\0" in value:
                    # no file has a NUL in its name (and os.path.realpath raises on one)
                    out.append(
                        Finding(
                            "KV001",
                            f"{field} names a path holding a NUL character ({_shown(value, 80)}), which no file "
                            "has: kustomize cannot read it, so this kustomization was not built",
                            loc or Loc(kfile, 1, 1),
                            fix="write the file's path without the NUL (a \\0 escape in a quoted YAML string)",
                        )
                    )
                    continue
                # the path as kustomize resolves it from this base's real directory (asked once a path)
                target = os.path.realpath(os.path.join(real, value.strip()))
                if not real_inside(target, root):  # (both real paths)
                    if (kfile, field, loc) not in git_refs:
                        git_refs.add((kfile, field, loc))  # (a KEY=PATH item comes whole, then as its PATH)
                        out.append(
                            Finding(
                                "KV001",
                                f"{field} names a path outside the repository ({_shown(value, 80)}); kvlint builds "
                                "only what the repository holds (a pull request's kustomization could build the "
                                "runner's files into its findings), so this kustomization was not built",
                                loc or Loc(kfile, 1, 1),
                                fix=outside_fix,
                            )
                        )
                    continue
                if _names_git(real, value, target) and (kfile, field, loc) not in git_refs:
                    git_refs.add((kfile, field, loc))  # (a KEY=PATH item comes whole, then as its PATH)
                    out.append(
                        Finding(
                            "KV001",
                            f"{field} names a path into git's metadata ({_shown(value, 80)}); kustomize would "
                            "read git's files (a CI checkout keeps its credentials in .git/config) into what it "
                            "builds, so this kustomization was not built",
                            loc or Loc(kfile, 1, 1),
                            fix="name files of the checkout, not of its .git directory",
                        )
                    )
                elif (
                    missing and not os.path.exists(target) and not (field.endswith(" files") and "=" in value)
                ):
                    # (a generator's KEY=PATH item is looked up as its PATH, which comes next)
                    out.append(
                        Finding(
                            "KV001",
                            f"{field} names {_shown(value, 80)}{_MISSING}",
                            loc or Loc(kfile, 1, 1),
                            fix="add the file, or correct or remove the entry",
                        )
                    )
                elif (
                    field in ("resources", "bases", "components")
                    and target not in queued
                    and os.path.isdir(target)
                ):
                    queued.add(target)
                    # (spelt normalised, as the image and source walks spell it, when that names the same directory:
                    # a finding in the base names config/dependency/x, not config/overlays/vke/../../dependency/x)
                    spelt = os.path.normpath(os.path.join(d, value.strip()))
                    todo.append((spelt if _same_dir(spelt, target) else os.path.join(d, value), target))
    return out


def _same_dir(path: str, other: str) -> bool:
    """``path`` and ``other`` name the same directory (:func:`os.path.samefile`: two ``stat`` calls, no link
    resolved component by component); False when either cannot be looked at."""
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def _names_git(base: str, path: str, real: str) -> bool:
    """The path ``path`` of a kustomization in the directory whose real path is ``base`` names a ``.git`` entry or
    something below one, as written or once its links are resolved (``leak -> .git/config``); ``real`` is the
    real path of ``path`` there."""
    if any(_is_git(p) for p in path.replace("\\", "/").split("/")):
        return True
    try:
        rel = os.path.relpath(real, os.path.commonpath([base, real]))
    except ValueError:  # pragma: no cover - two drives (Windows)
        return False
    return any(_is_git(p) for p in rel.split(os.sep))


#: The kustomization files one build has read, by their path as the walks spell it: what
#: :func:`_read_kustomization` answered for each (see :func:`_read_in`).
_KustomizationReads = dict[str, tuple[Any, str | None]]


def _read_in(
    directory: str, name: str, max_bytes: int, reads: _KustomizationReads | None
) -> tuple[Any, str | None]:
    """:func:`_read_kustomization` of the file ``name`` in ``directory``, read once for all the walks of one build
    that share ``reads`` (None: read now). The key is the path as written (not its real path): the positions of
    what is read name the file so, and a base the walks spell alike (the tree's own kustomization, a base named
    as ``base`` by the image and source walks, which normalise it) is read once."""
    path = os.path.join(directory, name)
    if reads is None:
        return _read_kustomization(path, max_bytes)
    got = reads.get(path)
    if got is None:
        got = reads[path] = _read_kustomization(path, max_bytes)
    return got


def _read_kustomization(path: str, max_bytes: int) -> tuple[Any, str | None]:
    """``(first document, problem)`` of the kustomization file at ``path``: the document with positions (None
    when there is no file or it holds no document), and why the file cannot be checked when it is there but is
    not a regular file of at most ``max_bytes`` (kustomize would read a named pipe for ever, and a file kvlint
    does not read could name what kustomize fetches)."""
    import errno
    import stat

    from kvlint.load import read_file

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if st.st_size > max_bytes:
            return None, f"of {st.st_size} bytes is more than the {max_bytes}-byte limit (--max-file-bytes)"
        data = read_file(path, st.st_size, max_bytes)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, None  # no such file: the next name kustomize accepts is tried
        return None, f"cannot be read: {e.strerror or e}"
    if len(data) > max_bytes:
        return None, f"is more than the {max_bytes}-byte limit (--max-file-bytes)"
    docs = load_text(data, path).documents
    return (docs[0].data if docs else None), None


def _kustomization_paths(spec: LDict) -> Iterable[tuple[str, str, Loc | None]]:
    """``(field, path, location)`` of every one-line string in the path-bearing fields of one kustomization."""

    def strings(field: str, node: Any) -> Iterable[tuple[str, str, Loc | None]]:
        if isinstance(node, str):
            if "\n" not in node.strip():  # inline YAML (a patch, a generator's configuration) is not a path
                yield field, node, None
        elif isinstance(node, LList):
            for i, item in enumerate(node):
                if isinstance(item, str) and "\n" not in item.strip():
                    yield field, item, node.locs[i] if i < len(node.locs) else node.loc

    def at(node: Any, key: str) -> Loc | None:
        return node.locs.get(key) if isinstance(node, LDict) else None

    for field in _KUSTOMIZE_PATH_LISTS:
        yield from strings(field, spec.get(field))
    for field in _KUSTOMIZE_PATH_ENTRIES:
        entries = spec.get(field)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, LDict) and isinstance(entry.get("path"), str):
                yield f"{field} path", entry["path"], at(entry, "path")
    openapi = spec.get("openapi")
    if isinstance(openapi, LDict) and isinstance(openapi.get("path"), str):
        yield "openapi path", openapi["path"], at(openapi, "path")
    for field in _KUSTOMIZE_GENERATORS:
        entries = spec.get(field)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, LDict):
                continue
            for key in ("files", "envs"):
                for f, value, loc in strings(f"{field} {key}", entry.get(key)):
                    yield f, value, loc
                    if key == "files" and "=" in value:  # KEY=PATH
                        yield f, value.split("=", 1)[1], loc
            if isinstance(entry.get("env"), str):
                yield f"{field} env", entry["env"], at(entry, "env")


# --------------------------------------------------------------------------------------------------
# internals


def _merge(into: LoadResult, part: LoadResult) -> None:
    into.documents.extend(part.documents)
    into.findings.extend(part.findings)
    into.files += part.files
    into.source_texts.update(part.source_texts)
    into.read_paths.update(part.read_paths)
    into.engine_named.update(part.engine_named)
    into.unparsed_configmaps.extend(part.unparsed_configmaps)


#: Helm's rule for a release name (``helm template NAME``, pkg/chartutil ``ValidateReleaseName``, Helm 3):
#: at most 53 characters of this pattern.
_RELEASE_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _release_name(chart: str) -> str:
    """The release name kvlint renders ``chart`` under when none is given: the chart directory's base name,
    lower-cased, every character other than an ASCII letter, digit or ``-`` made ``-``, cut to Helm's 53
    characters, and only then stripped of leading and trailing ``-`` (a cut that ends on ``-`` would
    otherwise make ``helm template`` refuse the name, :data:`_RELEASE_NAME_RE`); ``release`` when nothing is
    left."""
    base = os.path.basename(os.path.normpath(os.path.abspath(chart))).lower()
    cleaned = "".join(c if ("a" <= c <= "z" or "0" <= c <= "9" or c == "-") else "-" for c in base)
    return cleaned[:53].strip("-") or "release"


#: The header klog puts before a logged line (``Lmmdd hh:mm:ss.uuuuuu threadid file:line] ``, as kubectl's
#: ``E1205 02:05:38.420623   12890 run.go:72] "command failed" err=...``): its time and process id differ
#: in every run, so a finding quoting it would never be the same twice (baselines, SARIF results).
_KLOG_HEADER = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^\]\s]+\] ")


#: The proxy a renderer is given: a closed port on the loopback interface, so an HTTP(S) request it would make
#: (a ``$ref`` of a chart's ``values.schema.json``, which helm fetches; a kustomize remote
#: :func:`remote_references` did not recognise) fails at once. (Go's HTTP client does not proxy requests to
#: loopback addresses, which stay possible.)
_NO_FETCH_PROXY = "http://127.0.0.1:1"


def _render_env() -> dict[str, str]:
    """The environment ``helm template`` and ``kustomize build`` run in: the user's, with every proxy variable
    set to :data:`_NO_FETCH_PROXY` (``NO_PROXY`` removed) and git refused every transport
    (``GIT_ALLOW_PROTOCOL`` naming none: a clone kustomize starts for a remote base fails before connecting)."""
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = _NO_FETCH_PROXY
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    env["GIT_ALLOW_PROTOCOL"] = "none"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _run(
    cmd: list[str],
    label: str,
    what: str,
    max_bytes: int,
    timeout: float | None = None,
    sizes: list[int] | None = None,
    roots: Sequence[str] = (),
    shown: str | None = None,
) -> str | LoadResult:
    """Run a renderer for at most ``timeout`` seconds (default :data:`RENDER_TIMEOUT_S`); its stdout text (its size
    in bytes appended to ``sizes`` when given), or a LoadResult holding one KV001 finding at ``label``, whose fix
    says to run ``shown`` (the command as a user types it), else ``cmd`` with the program's base name. ``roots``:
    when given, the spellings of the directory the renderer's inputs are confined to (:func:`confinement_root`),
    and the absolute paths its error quotes are shown relative to it, or as a neutral word outside it
    (:func:`_neutral_paths`)."""
    limit = float(RENDER_TIMEOUT_S) if timeout is None else timeout

    def fail(message: str, fix: str | None = None) -> LoadResult:
        return LoadResult(
            findings=[
                Finding(
                    "KV001",
                    message,
                    Loc(label, 1, 1),
                    fix=fix
                    or f"run `{shown or ' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))}` "
                    "and fix what it reports",
                )
            ],
            files=1,
        )

    try:
        code, out, err = _communicate(cmd, max_bytes, limit)
    except subprocess.TimeoutExpired:
        if limit < RENDER_TIMEOUT_S:
            return fail(
                f"{what} did not finish within the {limit:.0f} s left of the {WALK_RENDER_BUDGET_S} s the charts "
                "and overlays kvlint renders on its own (met in directory walks, deployed from the checkout by Argo CD/Flux "
                "objects) render for together"
            )
        return fail(f"{what} did not finish within {RENDER_TIMEOUT_S} s")
    except OSError as e:
        return fail(f"cannot run {what}: {e.strerror or e}")
    except ValueError:  # Popen refuses an argument holding NUL (a parameter value "a\0b" of an Application)
        return fail(
            f"cannot run {what}: an argument (a value, name or path passed to it) holds a NUL character"
        )
    if code is None:
        return fail(f"{what} output of more than {max_bytes} bytes is more than the {max_bytes}-byte limit")
    if code != 0 and "out of memory" in err:
        return fail(
            f"{what} ran out of memory: it may use {_memory_limit(max_bytes) >> 20} MiB "
            f"(128 times --max-file-bytes, at least {RENDER_MEMORY_FLOOR >> 30} GiB)"
        )
    if code != 0:
        # (helm's warning that it followed a link, which it prints for the links kvlint makes to render a chart
        # without its .git: not the error, and it quotes the checkout's absolute path)
        lines = [
            line for line in _klog_lines(err.strip().splitlines()) if not _HELM_LINK_WARNING.search(line)
        ]
        detail = (
            "; ".join(
                _clip(_neutral_paths(_innermost(_KLOG_HEADER.sub("", line.strip())), roots))
                for line in lines[-3:]
                if line.strip()
            )
            or f"exit status {code}"
        )
        return fail(
            f"{what} failed: {detail}", _OUT_OF_ROOT_FIX if _KUSTOMIZE_OUT_OF_ROOT.search(err) else None
        )
    if len(out) > max_bytes:  # (not reached: _communicate stops at max_bytes + 1)
        return fail(f"{what} output of {len(out)} bytes is more than the {max_bytes}-byte limit")
    if sizes is not None:
        sizes.append(len(out))
    return out.decode("utf-8", "replace")


#: kustomize's refusal of a file outside the kustomization's directory under its default load restrictor
#: (sigs.k8s.io/kustomize ``api/internal/loader`` ``RestrictionRootOnly`` and ``fileLoader.loadOutOfBounds``:
#: ``security; file '%s' is not in or below '%s'``): a ``resources`` entry naming a file (not a directory) above
#: the kustomization, as GKE's ``llm-serving-gemma/vllm/*/kustomization.yaml`` overlays name ``../vllm-7b.yaml``.
_KUSTOMIZE_OUT_OF_ROOT = re.compile(r"security; file '[^']*' is not in or below '")
#: KV001's fix for :data:`_KUSTOMIZE_OUT_OF_ROOT`: kustomize loads a base (a directory with its own kustomization
#: file) from anywhere, a plain file only from within the root; kvlint builds with the default restrictor only.
_OUT_OF_ROOT_FIX = (
    "kustomize's default load restrictor (LoadRestrictionsRootOnly) loads files only from the kustomization's own "
    "directory and below: put the file in a directory with a kustomization.yaml listing it and name that directory "
    "in resources (kustomize loads a base from anywhere), or build with `kubectl kustomize --load-restrictor "
    "LoadRestrictionsNone` where that is intended (kvlint builds with the default only)"
)

#: The warning helm logs for each symbolic link it follows loading a chart (helm v3 ``internal/sympath/walk.go``:
#: ``found symbolic link in path: %s resolves to %s. Contents of linked file included and used``, after the
#: ``walk.go:75:`` its logger puts first); :func:`_run` leaves it out of a failure's text.
_HELM_LINK_WARNING = re.compile(
    r"found symbolic link in path: .* resolves to .*\. Contents of linked file included"
)


def _klog_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` (a renderer's error output) with each multi-line value klog logs joined into its line: kubectl
    prints an error of several lines as ``"command failed" err=<``, the error's lines each after a tab, then `` >``
    (k8s.io/klog/v2 ``textlogger``'s multi-line quoting), and a KV001 quoting the last three lines quoted a piece
    of it (kserve's ``config/overlays/dev-image-config``: "path: inferenceservice_patch.yaml", "`: failed to get
    the patch file ...", ">"). The value is joined with spaces and quoted, as klog quotes a one-line one."""
    out: list[str] = []
    block: list[str] | None = None
    for line in lines:
        if block is not None:
            if line.startswith("\t"):
                block.append(line.strip())
                continue
            out[-1] += '"' + " ".join(block) + '"'
            block = None
            if line.strip() == ">":
                continue
        if line.rstrip().endswith("=<"):
            out.append(line.rstrip()[:-1])
            block = []
        else:
            out.append(line)
    if block is not None:
        out[-1] += '"' + " ".join(block) + '"'
    return out


#: Most characters of one line of a renderer's error output a KV001 message quotes: kubectl kustomize quotes
#: the offending value, five times, so a 2 MB resource name in a kustomization made a 10 MB report.
RENDER_LINE_CHARS = 1000


#: How kustomize wraps the error of a base it builds for a kustomization naming it: once per level, the base's error
#: last (sigs.k8s.io/kustomize api/internal/target/kusttarget.go ``accumulateDirectory``: "recursed accumulation of
#: path '%s'")
_RECURSED = "recursed accumulation of path '"


def _innermost(line: str) -> str:
    """A kustomize error ``line`` with the error of the innermost base first: ``loading KV pairs: env source files:
    [deployment.env]: ... no such file or directory (in the base /x/base, which this kustomization builds on)``
    instead of two ``accumulating resources ... recursed accumulation of path`` levels before it. Any other line
    as it is."""
    at = line.rfind(_RECURSED)
    if at < 0:
        return line
    end = line.find("': ", at + len(_RECURSED))
    if end < 0:
        return line
    base, cause = line[at + len(_RECURSED) : end], line[end + 3 :]
    head = line[: line.find("accumulating resources")] if "accumulating resources" in line else ""
    return f"{head}{cause} (in the base {base}, which this kustomization builds on)"


#: An absolute path in a renderer's error text: a ``/`` that does not follow a word, a dot, a colon or another
#: ``/`` (not ``apps/v1``, not ``https://...``), up to a space, a quote, a colon, a comma or a bracket.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/[^\s'\"`,;:()\[\]{}<>]+")
#: What an absolute path outside the repository reads as in a renderer's error (:func:`_neutral_paths`).
OUTSIDE_PATH_WORD = "<a path outside the repository>"


def _neutral_paths(text: str, roots: Sequence[str], keep: Sequence[str] = ()) -> str:
    """``text`` (a line of kustomize's or kubectl's error output) with each absolute path it quotes inside one of
    ``roots`` (the same directory spelt as written and as its real path) made relative to the working directory
    when it is in or below it (as the finding's own file is named), else to the root (``.`` for the root itself),
    and each other absolute path replaced by :data:`OUTSIDE_PATH_WORD`: kustomize quotes the
    runner's paths and whether they exist (``lstat /tmp/x: no such file or directory``), so a pull request could
    probe the CI runner's disk through the findings. Compared as text (nothing is looked up on disk). ``keep``:
    absolute paths outside ``roots`` the user named (``--helm-values`` files), shown as they are. ``roots`` empty: ``text`` as it
    is."""
    if not roots:
        return text
    stems = sorted({r.rstrip(os.sep) or os.sep for r in roots}, key=len, reverse=True)
    try:
        here = os.getcwd()
        cwds = sorted({here, os.path.realpath(here)}, key=len, reverse=True)
    except OSError:
        cwds = []

    def shown(m: re.Match[str]) -> str:
        path = m.group(0)
        for stem in stems:
            if path == stem or path.startswith(stem.rstrip(os.sep) + os.sep):
                # inside the root: named as the finding's own file is, from the working directory when it is
                # below it (kvlint.paths.shown_path), else from the root
                for cwd in cwds:
                    if path == cwd:
                        return "."
                    if path.startswith(cwd.rstrip(os.sep) + os.sep):
                        return path[len(cwd.rstrip(os.sep)) + 1 :]
                return path[len(stem.rstrip(os.sep)) + 1 :] or "."
        return path if path in keep else OUTSIDE_PATH_WORD

    return _ABSOLUTE_PATH.sub(shown, text)


#: Of a cut line (:func:`_clip`), the characters kept from its start; the rest of :data:`RENDER_LINE_CHARS` comes
#: from its end
_CLIP_HEAD = 300


def _clip(line: str) -> str:
    """``line`` cut to :data:`RENDER_LINE_CHARS` characters, saying so: its start and its end, which holds the cause
    of a nested error (kustomize writes ``accumulating resources: ... recursed accumulation of path 'BASE': ...``
    once per base, the error itself last: ``env source files: [deployment.env]: ... no such file or directory``
    for a ``configMapGenerator`` file a script writes; kept from the start only, it was cut off)."""
    if len(line) <= RENDER_LINE_CHARS:
        return line
    tail = RENDER_LINE_CHARS - _CLIP_HEAD
    return f"{line[:_CLIP_HEAD]} [...] {line[-tail:]} (cut to {RENDER_LINE_CHARS} characters)"


#: Least address space a renderer may use (bytes); see :func:`_memory_limit`.
RENDER_MEMORY_FLOOR = 2 << 30


def _memory_limit(max_bytes: int) -> int:
    """Address space (``RLIMIT_AS``, bytes) a renderer may use: 128 times the output it may write, at least
    :data:`RENDER_MEMORY_FLOOR`. helm holds a chart's whole output and more until it writes it: 25 MB of
    output took it 0.3 GB; 180 MB, 4 GB, so a twenty-line chart looping over ``until 3000000`` drove a CI
    runner towards its memory's end before the timeout. [heuristic] factor, from those two measurements
    (helm v3.17.3)."""
    return max(RENDER_MEMORY_FLOOR, 128 * max_bytes)


#: The program a renderer is started through, run as ``python -I -S -c`` (isolated: no ``PYTHON*``
#: variable, no user or site directory, so nothing on the renderer's side of the start can be replaced)
#: with these arguments: the address-space limit (``RLIMIT_AS``, bytes), the CPU-time limit (``RLIMIT_CPU``,
#: seconds), the renderer's ``LC_CTYPE`` (``0`` when unset, else ``1`` and its value) and the renderer's
#: argv. It sets both limits on itself and ``execvp``s the renderer (a bare name looked up on the ``PATH``
#: of :func:`_render_env`, as ``subprocess`` looks it up), which so runs under them from its first
#: instruction (they were set with ``prlimit`` on its pid once it had started: milliseconds in which it ran
#: unlimited), without a ``preexec_fn``, which is unsafe in a process with threads. A limit that cannot be
#: set (kvlint's own hard limit is lower: the renderer inherits that one) is left as it is. ``LC_CTYPE`` is
#: put back because Python's start-up rewrites it under a C locale (PEP 538 locale coercion), and
#: ``SIGPIPE``/``SIGXFSZ``, which Python's start-up ignores, are reset as ``subprocess`` resets them
#: (``restore_signals``): the renderer gets exactly :func:`_render_env` and the signal actions it got before.
#: An ``execvp`` that fails is reported on stderr as ``kvlint-exec-failed ERRNO`` with exit status 127
#: (:func:`_communicate` raises it as the OSError that starting the renderer directly raised). Added
#: start-up: about 9 ms of CPU per renderer, the interpreter's own start (best of 20, against ``/bin/true``
#: and ``kubectl version --client`` started directly).
_LIMITED_EXEC = (
    "import os,signal,sys\n"
    "from resource import RLIMIT_AS,RLIMIT_CPU,setrlimit\n"
    "for s in (signal.SIGPIPE,signal.SIGXFSZ):signal.signal(s,signal.SIG_DFL)\n"
    "for r,v in ((RLIMIT_AS,sys.argv[1]),(RLIMIT_CPU,sys.argv[2])):\n"
    " try:setrlimit(r,(int(v),int(v)))\n"
    " except (OSError,ValueError):pass\n"
    "c=sys.argv[3]\n"
    "if c[0]=='1':os.environ['LC_CTYPE']=c[1:]\n"
    "else:os.environ.pop('LC_CTYPE',None)\n"
    "try:os.execvp(sys.argv[4],sys.argv[4:])\n"
    "except OSError as e:os.write(2,b'kvlint-exec-failed %d\\n'%e.errno);os._exit(127)\n"
)
_EXEC_FAILED = re.compile(r"kvlint-exec-failed (\d+)")


def _cpu_limit(timeout: float) -> int:
    """CPU seconds (``RLIMIT_CPU``) a renderer may use: what it could use on every core of the machine within
    ``timeout`` seconds, plus one, so the limit never stops a render the timeout would let finish; it stops a
    renderer left running when kvlint itself is killed before its timeout (the kernel stops it there:
    ``SIGXCPU``, then ``SIGKILL``)."""
    return int(timeout) * (os.cpu_count() or 1) + 1


def _limited_command(cmd: list[str], env: dict[str, str], max_bytes: int, timeout: float) -> list[str]:
    """The argv that starts ``cmd`` under the address-space limit :func:`_memory_limit` of ``max_bytes`` and
    the CPU-time limit :func:`_cpu_limit` of ``timeout`` from its first instruction (:data:`_LIMITED_EXEC`),
    with ``env``'s ``LC_CTYPE``; ``cmd`` itself where that cannot be done (no ``resource`` module, no Python
    executable to start: a frozen kvlint)."""
    if os.name != "posix" or not sys.executable or getattr(sys, "frozen", False):
        return cmd
    ctype = env.get("LC_CTYPE")
    return [
        sys.executable, "-I", "-S", "-c", _LIMITED_EXEC,
        str(_memory_limit(max_bytes)), str(_cpu_limit(timeout)), "0" if ctype is None else "1" + ctype,
        *cmd,
    ]  # fmt: skip


class _ErrorTail:
    """The last non-blank lines of a renderer's error output, each kept to its first
    :data:`_LINE_BYTES` bytes, fed chunk by chunk: what the KV001 message quotes (its last three lines, cut
    by :func:`_clip`), in bounded memory whatever the renderer writes."""

    #: Bytes kept of one line: more than :data:`RENDER_LINE_CHARS` characters of any UTF-8 text.
    _LINE_BYTES = 4 * RENDER_LINE_CHARS + 4
    #: Lines kept (split at ``\n`` only: the message's own split, ``str.splitlines``, may cut one in more).
    _LINES = 8

    def __init__(self) -> None:
        from collections import deque

        self.lines: deque[bytes] = deque(maxlen=self._LINES)
        self.part = bytearray()
        self.out_of_memory = False

    def feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = self._LINE_BYTES - len(self.part)
            if room > 0:
                self.part += piece[:room]
            if end < 0:
                return
            self._end_line()
            start = end + 1

    #: What a Go program prints when the address-space limit stops it, before its stack trace: "fatal error:
    #: out of memory" (an allocation), "runtime: failed to create new OS thread (have N already; errno=12)"
    #: then "fatal error: newosproc" (a thread's stack: ENOMEM is errno 12), or an mmap's "cannot allocate
    #: memory" (Go runtime ``mallocgc``/``sysMap``, ``newosproc`` in os_linux.go).
    _OUT_OF_MEMORY = (b"out of memory", b"errno=12", b"cannot allocate memory")

    def _end_line(self) -> None:
        if any(m in self.part for m in self._OUT_OF_MEMORY):
            self.out_of_memory = True
        if self.part.strip():
            self.lines.append(bytes(self.part))
        self.part = bytearray()

    def text(self) -> str:
        """The kept lines, decoded (UTF-8, undecodable bytes replaced); ``out of memory`` alone when a line
        said the process ran out of memory."""
        self._end_line()
        if self.out_of_memory:
            return "out of memory"
        return b"\n".join(self.lines).decode("utf-8", "replace")


def _communicate(cmd: list[str], max_bytes: int, timeout: float) -> tuple[int | None, bytes, str]:
    """Run ``cmd`` (no standard input, :func:`_render_env`, address space :func:`_memory_limit` and CPU time
    :func:`_cpu_limit` from its first instruction, :func:`_limited_command`) and read its output as it comes: ``(exit status,
    stdout, the last lines of stderr`` (:class:`_ErrorTail`) ``)``; the status is None when stdout passed
    ``max_bytes`` (the process is killed there: a chart rendering gigabytes is not held in memory whole, as
    ``subprocess.run(capture_output=True)`` held it before the size check). Raises
    ``subprocess.TimeoutExpired`` (the process killed) after ``timeout`` seconds, OSError when it cannot start."""
    import selectors
    import time

    env = _render_env()
    proc = subprocess.Popen(
        _limited_command(cmd, env, max_bytes, timeout),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    out = bytearray()
    err = _ErrorTail()
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None and proc.stderr is not None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(cmd, timeout)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                    elif key.fileobj is proc.stdout:
                        out += chunk
                        if len(out) > max_bytes:
                            return None, bytes(out), err.text()
                    else:
                        err.feed(chunk)
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(cmd, timeout)
            code = proc.wait(left)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    text = err.text()
    if code == 127 and (failed := _EXEC_FAILED.fullmatch(text)) is not None:  # the renderer did not start
        errno = int(failed.group(1))
        raise OSError(errno, os.strerror(errno))
    return code, bytes(out), text


def _walk_locs(node: Any, remap: Any, seen: set[int]) -> None:
    """Apply ``remap`` to every Loc stored in LDict/LList containers below ``node`` (iteratively)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, (LDict, LList)) or id(n) in seen:
            continue
        seen.add(id(n))
        n.loc = remap(n.loc)
        if isinstance(n, LDict):
            for k, v in n.locs.items():
                n.locs[k] = remap(v)
            for k, v in n.key_locs.items():
                n.key_locs[k] = remap(v)
            stack.extend(n.values())
        else:
            n.locs = [remap(v) for v in n.locs]
            stack.extend(n)


def _map_loaded_sources(result: LoadResult) -> None:
    """Rewrite the locations of every loaded file (and stdin) that has ``# Source:`` comments; the loader
    kept those texts (``LoadResult.source_texts``), so nothing is read twice.

    Only when the templates the comments name are found (:func:`_template_root`) and match the rendered
    documents: otherwise a committed rendered file, or piped output, keeps its own file and line, which
    are true positions, rather than a template path with a line that is not that file's.
    """
    loaded = {doc.path for doc in result.documents}
    for path, text in list(result.source_texts.items()):
        if path not in loaded:
            continue
        sources = find_sources(text)
        if not sources:
            continue
        found = _template_root(path, sources, text)
        if found is not None:
            map_sources(result, path, sources, root=found[0], text=text, strip_chart=found[1])


#: Where a chart is looked for, below each candidate directory: the directory itself, and ``charts/``
#: (the usual home of a repository's charts, e.g. KubeAI's ``charts/models`` beside ``manifests/``).
_CHART_HOMES = ("", "charts")
#: How many distinct templates are checked against the rendered text before a directory is accepted.
_TEMPLATES_CHECKED = 3


def _template_root(
    path: str, sources: Sequence[tuple[int, str]], text: str | Callable[[], str]
) -> tuple[str, bool] | None:
    """Where the ``# Source:`` template paths of ``path`` are found and match the rendered text:
    ``(directory, strip_chart)`` for :func:`map_sources` (``""`` is the cwd), or None.

    Places looked at, nearest first (:func:`_search_places`): for a file, its directory and each parent up
    to the first that holds ``.git`` (or the filesystem root), then the cwd; for stdin
    (``-``), the cwd and its parent. At each place: the place itself when it is the chart (its
    ``Chart.yaml`` ``name`` is the first component of the Source paths, as when ``helm template x . |
    kvlint check -`` runs inside the chart, whatever the directory is called), the place holding
    ``<chart>/templates/...``, and its ``charts/`` subdirectory (:data:`_CHART_HOMES`). A place is accepted
    only when the templates found there match the rendered documents (:func:`_template_matches`): a file
    of the same name that belongs to another chart is not taken.

    ``text`` may be a function giving it: it is then read only when a template file is found (the
    streaming run does not hold a large file's text, :mod:`kvlint.stream`).
    """
    places = _search_places(path)
    chart_names = {src.split("/", 1)[0] for _, src in sources if "/" in src}
    got: list[list[str]] = []

    def rendered() -> list[str]:
        if not got:
            got.append((text if isinstance(text, str) else text()).split("\n"))
        return got[0]

    ends: list[int] = [line for line, _ in sources[1:]] + [0]  # the last end: the line count, when needed
    seen: set[tuple[str, bool]] = set()
    for place in places:
        candidates: list[tuple[str, bool]] = []
        if _chart_name(place) in chart_names:
            candidates.append((place, True))
        candidates += [(os.path.join(place, home) if home else place, False) for home in _CHART_HOMES]
        for base, strip in candidates:
            key = (os.path.abspath(base), strip)
            if key in seen:
                continue
            seen.add(key)
            checked: set[str] = set()
            ok = True
            for (line, name), end in zip(sources, ends, strict=True):
                if name in checked or len(checked) >= _TEMPLATES_CHECKED:
                    continue
                rel = name.split("/", 1)[1] if strip and "/" in name else name
                full = os.path.join(base, rel)
                if not _is_file(full):
                    continue
                checked.add(name)
                lines = rendered()
                if not end:
                    end = len(lines) + 1
                if not _template_matches(full, lines[line : end - 1]):
                    ok = False
                    break
            if ok and checked:
                rel_base = os.path.relpath(base)
                return ("" if rel_base == "." else rel_base), strip
    return None


#: File-system answers of :func:`_template_root` in this run, by path: the files of one directory ask the same
#: questions (its parents, their ``Chart.yaml``, the same template paths below them), ~20 stat calls a file.
#: Emptied by :func:`clear_file_cache` at the start of every run (files change between the runs of a
#: long-lived process), never kept from one run to the next.
_IS_FILE: dict[str, bool] = {}
_PLACES: dict[str, list[str]] = {}
_CHART_NAMES: dict[str, str | None] = {}


def clear_file_cache() -> None:
    """Forget what the previous run read from files: the file-system answers (:data:`_IS_FILE`,
    :data:`_PLACES`, :data:`_CHART_NAMES`) and the file lines and scalar positions kept by path for finding
    positions (the functions registered with :mod:`kvlint.filecache`), so a
    file edited between two runs of one process is read again. Called where a run starts reading its inputs
    (:func:`load_inputs`, the streaming run's context pass)."""
    _IS_FILE.clear()
    _PLACES.clear()
    _CHART_NAMES.clear()
    filecache.clear()


def _is_file(path: str) -> bool:
    """``os.path.isfile(path)``, asked once a run."""
    found = _IS_FILE.get(path)
    if found is None:
        found = _IS_FILE[path] = os.path.isfile(path)
    return found


def _search_places(path: str) -> list[str]:
    """Directories where :func:`_template_root` looks for a rendered file's chart, nearest first: for a file,
    its directory and each parent, stopping at the first that holds ``.git`` (a repository's root: a chart
    above it is not the repository's; before, the walk went on to ``/``), then the cwd; for stdin (``-``),
    the cwd and its parent. The same for every file of a directory: found once a run (:data:`_PLACES`)."""
    if path == "-":
        return [os.getcwd(), os.path.dirname(os.getcwd())]
    directory = os.path.dirname(path)
    places = _PLACES.get(directory)
    if places is None:
        places = _PLACES[directory] = _walk_places(path)
    return places


def _walk_places(path: str) -> list[str]:
    """:func:`_search_places` of a file, read from the file system (the climb of
    :func:`kvlint.load.directories_to_repository_root`)."""
    climbed, _ = directories_to_repository_root(os.path.dirname(os.path.abspath(path)))
    return [*climbed, os.getcwd()]


#: Largest ``Chart.yaml`` read for its ``name`` (bytes): real ones are a few KB; a larger file is skipped
#: unread (a 4 MB one above a rendered file took minutes to parse, once per directory searched).
_MAX_CHART_BYTES = 64 * 1024


def chart_name(directory: str) -> str | None:
    """``name`` in ``directory/Chart.yaml``, or None: :func:`_chart_name` (bounded, read once a run)."""
    return _chart_name(directory)


def _chart_name(directory: str) -> str | None:
    """``name`` in ``directory/Chart.yaml``, or None (no such regular file, larger than
    :data:`_MAX_CHART_BYTES`, unreadable or not a YAML mapping). Read with kvlint's bounded loader, once a
    run (:data:`_CHART_NAMES`)."""
    if directory not in _CHART_NAMES:
        _CHART_NAMES[directory] = _read_chart_name(directory)
    return _CHART_NAMES[directory]


def _read_chart_name(directory: str) -> str | None:
    """:func:`_chart_name` read from the file system."""
    from kvlint.load import read_upto

    chart = os.path.join(directory, "Chart.yaml")
    try:
        if not os.path.isfile(chart):
            return None
        with open(chart, "rb") as fh:
            data = read_upto(fh, os.fstat(fh.fileno()).st_size, _MAX_CHART_BYTES)
    except OSError:
        return None
    if len(data) > _MAX_CHART_BYTES:
        return None
    docs = load_text(data, chart).documents
    root = docs[0].data if docs else None
    name = root.get("name") if isinstance(root, dict) else None
    return str(name) if name else None


def _template_matches(template_path: str, rendered: Sequence[str]) -> bool:
    """True when the template at ``template_path`` plausibly wrote ``rendered`` (one document's lines).

    Aligned literally (:func:`kvlint.template_lines.align_document`): at least three rendered lines (or
    all, when fewer) match template lines, including the ``kind:`` line when there is one; and the
    template's unconditional literal lines (outside any ``if``/``with``/``range``) between the first and
    the last matched line are in the rendered document (at most one in ten missing, none below ten):
    lines that must render are there. Another chart's look-alike template (a ``helm create`` Deployment beside a
    vLLM one) fails the second test.
    """
    tpl = _read_template(template_path)
    if not tpl:
        return False
    table, region = align_document(rendered, tpl)
    texts = [r for r in rendered if r.strip()]
    matched = [rendered[i] for i, e in enumerate(table) if e is not None and e[1] is None]
    if len(matched) < min(3, len(texts)):
        return False
    kind_lines = [r for r in texts if r.startswith("kind:")]
    if kind_lines and not any(m.startswith("kind:") for m in matched):
        return False
    used = {e[0] for e in table if e is not None and e[1] is None}
    lo, hi = min(used), max(used)
    a, b = regions(tpl)[region]
    must = [
        t
        for t in tpl[a:b]
        if t.pattern is not None and t.depth == 0 and not t.separator and lo <= t.number <= hi
    ]
    missing = [t for t in must if t.number not in used]
    return len(missing) <= len(must) // 10


_HELPERS: dict[str, dict[str, list[Any]]] = {}


def _chart_helpers(template_path: str) -> dict[str, list[Any]]:
    """The named templates (``define`` blocks) of the files beside ``template_path`` (a chart's
    ``templates/`` directory, where ``_helpers.tpl`` lives), for :func:`kvlint.template_lines.align`;
    cached per directory, files up to :data:`_MAX_TEMPLATE_BYTES`."""
    directory = os.path.dirname(template_path) or "."
    if directory not in _HELPERS:
        found: dict[str, list[Any]] = {}
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        for n in names:
            full = os.path.join(directory, n)
            if not n.endswith((".tpl", ".yaml", ".yml", ".txt")) or not os.path.isfile(full):
                continue
            try:
                if os.path.getsize(full) > _MAX_TEMPLATE_BYTES:
                    continue
                with open(full, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
            if "define" in text:
                found.update(named_templates(text))
        if len(_HELPERS) > 64:
            _HELPERS.clear()
        _HELPERS[directory] = found
    return _HELPERS[directory]


#: Largest template file (bytes) kvlint reads to map rendered lines to template lines.
_MAX_TEMPLATE_BYTES = 1 << 20


def _read_template(path: str) -> list[TemplateLine] | None:
    """The parsed template at ``path``, or None when it is not a readable text file of at most
    :data:`_MAX_TEMPLATE_BYTES` (mapping then falls back to rendered-document lines)."""
    text = _template_text(path)
    return parse_template(text) if text is not None else None


def _template_text(path: str) -> str | None:
    """The text of the template at ``path``, or None when it is not a readable UTF-8 file of at most
    :data:`_MAX_TEMPLATE_BYTES` (:func:`_read_template` parses it)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_TEMPLATE_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def internal_error_finding(loc: Loc | None, exc: Exception, what: str) -> Finding:
    """A KV503 at ``loc`` (a document's or a file's first line) when kvlint raised ``exc`` while reading that
    ``what`` (``document``, ``file``) outside the per-workload net of :func:`kvlint.pipeline._analyse_workloads`:
    the other inputs' findings are still reported, never a traceback."""
    return Finding(
        "KV503",
        f"{COULD_NOT_FINISH} this {what} ({type(exc).__name__}: {exc}); other {what}s are unaffected",
        loc,
        fix=f"check that this {what} is the YAML of Kubernetes objects (lists, mappings, numbers where Kubernetes "
        "expects them); if it is, please report it",
    )


def unrendered_or_error(doc: Document) -> Finding | None:
    """:func:`unrendered_file_finding` of ``doc``, or the KV503 of :func:`internal_error_finding` at the
    document when it raised (a shape no recogniser expected must not end the run)."""
    try:
        return unrendered_file_finding(doc)
    except Exception as exc:
        return internal_error_finding(doc.loc, exc, "document")


def _values_findings(documents: Iterable[Document], existing: Sequence[Finding]) -> list[Finding]:
    """One KV002 per file whose documents look like Helm chart values or a kustomization
    (:func:`unrendered_file_finding`; and that has no KV002 yet; or a KV503, :func:`unrendered_or_error`)."""
    flagged = {f.loc.file for f in existing if f.rule == "KV002" and f.loc is not None}
    out: list[Finding] = []
    for doc in documents:
        if doc.path in flagged:
            continue
        found = unrendered_or_error(doc)
        if found is None:
            continue
        flagged.add(doc.path)
        out.append(found)
    return out


def unrendered_file_finding(doc: Document) -> Finding | None:
    """KV002 for a document of a file that is an input of a renderer rather than a Kubernetes manifest, linted as
    a plain file: Helm chart values (:func:`helm_values_reason`, :func:`values_file_finding`) or a kustomization
    (:func:`kustomization_file_finding`); None for anything else."""
    values = reader_of(doc)
    if values is not None:  # chart values kvlint reads (kvlint.chart_values): its note, not KV002
        return values.note(doc)
    found = _values_reason(doc)
    if found is not None:
        return values_file_finding(doc.path, found[0], doc.loc, set_keys=found[1], serving=found[2])
    return kustomization_file_finding(doc) or strategic_merge_patch_finding(doc)


def kustomization_file_finding(doc: Document) -> Finding | None:
    """KV002 for a kustomization file (:data:`KUSTOMIZATION_FILES`, or a ``kind: Kustomization`` of
    ``kustomize.config.k8s.io``) linted as a plain file, as in a directory walk: the files of its tree are linted
    as written, so what it builds (its resources with its patches, images and replicas applied) was not
    checked; the fix names its directory, which kvlint builds with ``kubectl kustomize``. None otherwise."""
    data = doc.data
    # kustomize reads a kustomization file's apiVersion and kind as optional (AIBrix's config/ trees write only
    # ``kind: Kustomization``): such a file, under one of the names kustomize reads, is one too
    named = os.path.basename(doc.path) in KUSTOMIZATION_FILES
    typed = (
        isinstance(data, dict)
        and data.get("kind") == "Kustomization"
        and (
            str(data.get("apiVersion", "")).startswith("kustomize.config.k8s.io/")
            or (named and "apiVersion" not in data)
        )
    )
    if not typed and isinstance(data, dict) and "kind" in data:
        return None  # an object of another kind (nearly every document), whatever its file is named
    if not typed and not named:
        return None
    directory = os.path.dirname(doc.path) or "."
    return Finding(
        "KV002",
        "this is a kustomization linted as a plain file: kvlint read the files of its tree as written, not what "
        "it builds with its patches, images and replicas applied",
        doc.loc,
        fix=f"name its directory to lint what it builds: kvlint check {shell_word(directory)} (built with kubectl kustomize), "
        f"or kubectl kustomize {shell_word(directory)} | kvlint check -",
        mark=Mark.KUSTOMIZATION,
    )


def values_file_finding(
    path: str, reason: str, loc: Loc | None, *, set_keys: Sequence[str] = (), serving: bool = False
) -> Finding:
    """KV002 for the Helm values file at ``path`` (``reason``: what makes it values, e.g. "it has replicaCount
    and image but no apiVersion/kind"); the fix is the ``helm template`` command with that file, and, for a file
    of a chart directory (:func:`values_chart`: ``CHART/values.yaml``, ``CHART/examples/x.yaml``), the ``kvlint
    check`` of that chart with it first. ``set_keys``: the dotted keys the file leaves empty for ``helm install
    --set`` (:func:`install_set_keys`), each given a value in the fix of a file outside any chart directory.
    Marked :attr:`~kvlint.types.Mark.SERVING_VALUES` when ``serving`` (the reason names a serving chart's GPU,
    model URI or keys left for ``--set``), else :attr:`~kvlint.types.Mark.HELM_VALUES`."""
    chart = values_chart(path)
    top = outermost_chart(chart) if chart is not None else None
    apart = repository_chart(path) if chart is None else None
    if chart is None and set_keys:
        # each key given a value on the command line, as the chart's users do
        if apart is not None:
            sets = " ".join(f"--helm-set {k}=VALUE" for k in set_keys)
            fix = (
                f"lint what the chart of this repository renders from it, with a value for each: kvlint check "
                f"{shell_word(apart)} --helm-values {shell_word(path)} {sets}"
            )
        else:
            sets = " ".join(f"--set {k}=VALUE" for k in set_keys)
            fix = f"helm template RELEASE CHART -f {shell_word(path)} {sets} | kvlint check - (CHART: the chart these values are for)"
    elif apart is not None:
        fix = (
            f"lint what the chart of this repository renders from it: kvlint check {shell_word(apart)} --helm-values {shell_word(path)} "
            "(its templates read these values)"
        )
    elif chart is None:
        fix = _RENDER_FIX.replace("values.yaml", shell_word(path))
    elif top is not None and top != chart:
        fix = (
            f"lint what the chart renders from it: kvlint check {shell_word(top)} ({chart} is a subchart of it: helm "
            f"renders it through {top}, whose values for it override these)"
        )
    elif os.path.normpath(path) == os.path.normpath(os.path.join(chart, "values.yaml")):
        fix = (
            f"lint what the chart renders from it: kvlint check {shell_word(chart)} (helm template reads its "
            "values.yaml)"
        )
    else:
        fix = (
            f"lint what the chart renders from it: kvlint check {shell_word(chart)} --helm-values {shell_word(path)}, or helm template "
            f"RELEASE {shell_word(chart)} -f {shell_word(path)} | kvlint check -"
        )
    return Finding(
        "KV002",
        f"this is a Helm values file ({reason}), not a Kubernetes manifest: kvlint lints the manifests a chart "
        "renders from it, not raw values",
        loc,
        fix=helm_first(fix),
        mark=Mark.SERVING_VALUES if serving else Mark.HELM_VALUES,
    )


def _kustomize_sources(
    directory: str, max_bytes: int, reads: _KustomizationReads | None = None
) -> list[tuple[Document, bool]]:
    """``(document, is_patch)`` for the YAML files in ``directory`` and the local resources its kustomization
    tree names; ``is_patch`` marks files a kustomization names as a strategic-merge patch (``patches``
    ``path``, ``patchesStrategicMerge``). Each directory's kustomization is the first of
    :data:`KUSTOMIZATION_FILES` that is a regular file, read with the bounded loader (its first document; nothing
    when it is over ``max_bytes`` or unreadable), through ``reads`` (:func:`_read_in`); each directory once (by
    its real path), at most :data:`MAX_KUSTOMIZATIONS` of them. (They were read with PyYAML's pure-Python loader:
    2.6 CPU s for a kustomization of 12 MB of comments, which ``kubectl kustomize`` builds in 0.3 s.)"""
    dirs: list[str] = []
    seen: set[str] = set()
    files: list[str] = []
    patch_files: set[str] = set()
    # the directories still to read, by real path, each as last spelled; newest last (read first): a base is
    # queued once, and one named again before it is read moves to the top, where a stack of every naming
    # would have read it first
    todo: dict[str, str] = {os.path.realpath(directory): directory}
    paths = chars = 0
    while (
        todo
        and len(seen) < MAX_KUSTOMIZATIONS
        and paths <= MAX_KUSTOMIZATION_PATHS
        and chars <= MAX_KUSTOMIZATION_PATH_CHARS
    ):
        real, d = todo.popitem()
        seen.add(real)
        dirs.append(d)
        for name in KUSTOMIZATION_FILES:
            if not os.path.isfile(os.path.join(d, name)):
                continue
            spec = _read_in(d, name, max_bytes, reads)[0] or {}
            for key in ("patches", "patchesStrategicMerge"):
                val = spec.get(key) if isinstance(spec, dict) else None
                for e in val if isinstance(val, list) else []:
                    rel = e.get("path") if isinstance(e, dict) else e
                    paths += 1
                    chars += len(rel) if isinstance(rel, str) else 0
                    # as remote_references bounds the tree's paths
                    if paths > MAX_KUSTOMIZATION_PATHS or chars > MAX_KUSTOMIZATION_PATH_CHARS:
                        break
                    if isinstance(rel, str) and "\n" not in rel:
                        patch_files.add(os.path.realpath(os.path.join(d, rel)))
            entries: list[Any] = []
            for key in ("resources", "bases", "components"):
                val = spec.get(key) if isinstance(spec, dict) else None
                if isinstance(val, list):
                    entries.extend(val)
            for e in entries:
                paths += 1
                chars += len(e) if isinstance(e, str) else 0
                if paths > MAX_KUSTOMIZATION_PATHS or chars > MAX_KUSTOMIZATION_PATH_CHARS:
                    break
                if not isinstance(e, str) or "://" in e:
                    continue
                full = os.path.normpath(os.path.join(d, e))
                if os.path.isdir(full):
                    base = os.path.realpath(full)
                    if base not in seen:
                        todo.pop(base, None)
                        todo[base] = full
                elif os.path.isfile(full):
                    files.append(full)
            break
    loaded = load_paths(dirs, max_file_bytes=max_bytes)
    # a file inside a directory already loaded is not loaded again: its real path's ancestors looked up in the
    # set of the directories' real paths (one lookup a level, not one comparison a directory)
    real_dirs = {os.path.realpath(d) for d in dirs} - {os.sep}
    extra = [f for f in files if not _has_ancestor_in(os.path.realpath(f), real_dirs)]
    if extra:
        _merge(loaded, load_paths(extra, max_file_bytes=max_bytes))
    return [
        (d, os.path.realpath(d.path) in patch_files)
        for d in loaded.documents
        if isinstance(d.data, LDict) and d.kind
    ]


def _has_ancestor_in(path: str, directories: set[str]) -> bool:
    """Some directory above the real path ``path`` (not ``path`` itself) is in ``directories`` (real paths)."""
    parent = os.path.dirname(path)
    while parent and parent != path:
        if parent in directories:
            return True
        path, parent = parent, os.path.dirname(parent)
    return False


def _kustomize_images(
    directory: str, max_bytes: int, reads: _KustomizationReads | None = None
) -> list[LDict]:
    """The ``images`` entries (``name`` with ``newName``/``newTag``/``digest``) of the kustomizations of the tree
    at ``directory``, with their positions: the directory's own first, then those of the local directories its
    ``resources``/``bases``/``components`` name, breadth first. An overlay's entries come before its bases',
    since kustomize applies a base's images transformer to the base's resources first and the overlay's to the
    result: the first entry that explains a rendered image is the one that set it (:func:`_image_entry_loc`).
    Files are read through ``reads`` (:func:`_read_in`)."""
    out: list[LDict] = []
    # breadth first, a base queued once by its real path; at most MAX_KUSTOMIZATIONS directories and
    # MAX_KUSTOMIZATION_PATHS paths of MAX_KUSTOMIZATION_PATH_CHARS characters, as remote_references bounds the
    # tree before it is built
    todo = collections.deque([directory])
    queued = {os.path.realpath(directory)}
    paths = chars = 0
    read = 0
    while todo and read < MAX_KUSTOMIZATIONS:
        d = todo.popleft()
        read += 1
        for name in KUSTOMIZATION_FILES:
            spec, _problem = _read_in(d, name, max_bytes, reads)
            if spec is None:
                continue
            if isinstance(spec, LDict):
                entries = spec.get("images")
                out.extend(e for e in (entries if isinstance(entries, list) else ()) if isinstance(e, LDict))
                for key in ("resources", "bases", "components"):
                    val = spec.get(key)
                    for e in val if isinstance(val, list) else ():
                        paths += 1
                        chars += len(e) if isinstance(e, str) else 0
                        if paths > MAX_KUSTOMIZATION_PATHS or chars > MAX_KUSTOMIZATION_PATH_CHARS:
                            return out
                        if isinstance(e, str) and "://" not in e and os.path.isdir(os.path.join(d, e)):
                            full = os.path.normpath(os.path.join(d, e))
                            base = os.path.realpath(full)
                            if base not in queued:
                                queued.add(base)
                                todo.append(full)
            break
    return out


def _image_entry_loc(value: str, images: Sequence[LDict]) -> Loc | None:
    """Where a kustomization's ``images`` entry sets the rendered image reference ``value``: the ``newTag`` (else
    ``digest``, else ``newName``) of the first entry that produces it. kustomize's images transformer
    (kubernetes-sigs/kustomize ``api/filters/imagetag/updater.go::imageTagUpdater.SetImageValue``, kustomize
    v5) rewrites an image whose name (without tag and digest) is the entry's ``name``: the name becomes
    ``newName`` when given; ``newTag`` and ``digest`` replace both the tag and the digest (either one alone clears
    the other). So ``value`` comes from an entry when its name is the entry's ``newName`` (or ``name``), its tag
    is ``newTag`` when one is given and its digest is ``digest`` when one is given. None when no entry does."""
    from kvlint.engines.images import split_image

    name, tag, digest = split_image(value)
    for e in images:
        new_name, new_tag, new_digest = (e.get(k) for k in ("newName", "newTag", "digest"))
        if not isinstance(e.get("name"), str) or not (new_name or new_tag or new_digest):
            continue
        if name != str(new_name or e["name"]):
            continue
        if new_tag and tag != str(new_tag):
            continue
        if new_digest and digest != str(new_digest):
            continue
        for key in ("newTag", "digest", "newName"):
            if e.get(key):
                return e.locs.get(key) or e.loc
    return None


def _match_sources(doc: Document, sources: Sequence[tuple[Document, bool]]) -> list[tuple[Document, bool]]:
    """The source documents of a rendered one: same kind, and the longest name contained in the rendered
    name (``namePrefix``/``nameSuffix``); resources first, then patches, each in file order."""
    if not isinstance(doc.data, LDict) or not doc.kind:
        return []
    hits = [(d, p) for d, p in sources if d.kind == doc.kind and d.name and d.name in doc.name]
    if not hits:
        return []
    longest = max(len(d.name) for d, _ in hits)
    hits = [(d, p) for d, p in hits if len(d.name) == longest]
    return [h for h in hits if not h[1]] + [h for h in hits if h[1]]


def _graft_locs(
    rendered: Any, sources: Sequence[tuple[Any, bool]], fallback: Loc, images: Sequence[LDict] = ()
) -> None:
    """Give each container/value in ``rendered`` a location in its ``sources`` (``(node, is_patch)``, the
    resource first), walking them in parallel along the same key path; list items that are mappings with
    a ``name`` are paired by name, as strategic-merge patches pair containers, others by index.

    A scalar goes to a source holding the same value (a patch before the resource: the patch is what set
    it), else to the resource that has the key (a value changed by something kvlint does not read, such as
    a JSON 6902 patch, points at the value it replaced); a key no source has gets its nearest located
    ancestor (``fallback`` for the root). An ``image`` no source holds goes to the kustomization ``images``
    entry that produced it (``images``, :func:`_image_entry_loc`), when one did.
    """
    stack: list[tuple[Any, list[tuple[Any, bool]], Loc]] = [(rendered, list(sources), fallback)]
    while stack:
        r, srcs, here = stack.pop()
        if isinstance(r, LDict):
            ds = [(sd, p) for sd, p in srcs if isinstance(sd, LDict)]
            base: Loc = next((sd.loc for sd, _ in ds if sd.loc is not None), None) or here
            r.loc = base
            for k in list(r.keys()):
                have = [(sd, p) for sd, p in ds if k in sd]
                loc = _pick([(sd.locs.get(k), sd[k], p) for sd, p in have], r[k]) or base
                if (
                    k == "image"
                    and images
                    and isinstance(r[k], str)
                    and all(str(sd[k]) != r[k] for sd, _ in have)
                ):
                    loc = _image_entry_loc(r[k], images) or loc
                r.locs[k] = loc
                r.key_locs[k] = next((sd.key_locs[k] for sd, _ in have if k in sd.key_locs), None) or loc
                stack.append((r[k], [(sd[k], p) for sd, p in have], loc))
        elif isinstance(r, LList):
            ls = [(sl, p) for sl, p in srcs if isinstance(sl, LList)]
            lbase: Loc = next((sl.loc for sl, _ in ls if sl.loc is not None), None) or here
            r.loc = lbase
            new_locs: list[Loc] = []
            for i, item in enumerate(r):
                pairs: list[tuple[Any, Loc | None, bool]] = []
                for sl, p in ls:
                    j = _pair_item(item, sl, i)
                    if j is not None:
                        pairs.append((sl[j], sl.locs[j] if j < len(sl.locs) else None, p))
                new_locs.append(_pick([(loc, v, p) for v, loc, p in pairs], item) or lbase)
                stack.append((item, [(v, p) for v, _, p in pairs], new_locs[-1]))
            r.locs = new_locs


def _pair_item(item: Any, source: LList, index: int) -> int | None:
    """Index in ``source`` of the item matching ``item``: the same ``name`` for named mappings, else the
    same index."""
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        for j, cand in enumerate(source):
            if isinstance(cand, dict) and cand.get("name") == item["name"]:
                return j
        return None
    return index if index < len(source) else None


def _pick(candidates: Sequence[tuple[Loc | None, Any, bool]], value: Any) -> Loc | None:
    """Location for ``value`` among ``(loc, source value, is_patch)``: a source holding the same scalar
    (patches first), else the first resource, else the first patch."""
    located = [(loc, v, p) for loc, v, p in candidates if loc is not None]
    if not located:
        return None
    if not isinstance(value, (dict, list)):
        same = [c for c in located if not isinstance(c[1], (dict, list)) and str(c[1]) == str(value)]
        if same:
            return sorted(same, key=lambda c: not c[2])[0][0]
    return sorted(located, key=lambda c: c[2])[0][0]
