"""What a change does: new findings against its base, and the capacity of every workload it touches.

Used by ``kvlint diff BASE [HEAD]`` and by the GitHub Action on pull requests. Both run ``kvlint check``
twice (on the base revision and on the head) with the same paths and options, read the two JSON reports
(:mod:`kvlint.report.jsonout`) and compare them here:

* **findings** (:func:`compare_findings`): by :mod:`kvlint.fingerprint` (rule, workload, container,
  setting; not the line), so a finding the base already had is *pre-existing* even when lines moved, and
  a finding only the head has is *new*;
* **capacity** (:func:`capacity_diff`): per serving container (``Kind/namespace/name`` and container, in
  its file), the figures a reviewer needs before and after: the engine release and KV-cache dtype, GPUs
  per pod, replicas (``-`` when the manifest declares none), weights per GPU, KV-cache tokens,
  max-model-len (TGI: max-total-tokens, SGLang: context-length, in the headings), concurrency at that length,
  KV headroom per GPU (KV cache minus one max-model-len
  request; negative means one request does not fit) and the verdict (``fails`` with an error finding,
  ``risky`` with a warning the change introduced or worsened, ``fits`` otherwise, ``unknown`` without a plan; a
  warning both revisions have and the change did not worsen is named ``unchanged``, :func:`carried`). A
  workload is *touched* when
  a figure changed, it was added or removed, or its file is among the changed files.

A revision is materialised with ``git archive`` (:func:`export_tree`), which leaves the repository's work
tree, index and branches alone.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvlint.numbers import times
from kvlint.report.escape import inert_line, printable

__all__ = [
    "CapacityRow",
    "Comparison",
    "capacity_diff",
    "capacity_figures",
    "capacity_values",
    "compare_findings",
    "default_command",
    "export_tree",
    "render_capacity_markdown",
    "render_capacity_text",
    "repository_file",
    "repository_paths",
    "run_check_json",
    "workload_key",
]

GiB = 2**30

#: Columns of the capacity table: (key in :func:`capacity_figures`, heading).
CAPACITY_COLUMNS = (
    ("engine", "engine"),
    ("gpu", "GPU"),
    ("replicas", "replicas"),
    ("weights", "weights/GPU"),
    ("kv_tokens", "KV tokens"),
    ("max_model_len", "max-model-len"),
    ("concurrency", "concurrency at max-model-len"),
    ("headroom", "KV headroom/GPU"),
    ("verdict", "verdict"),
)


#: The request length's option as each engine spells it (vLLM ``--max-model-len``, TGI's launcher
#: ``--max-total-tokens``, SGLang's ``--context-length``), for the columns that name it.
LENGTH_OPTION = {"vllm": "max-model-len", "tgi": "max-total-tokens", "sglang": "context-length"}


def _headings(rows: Sequence[CapacityRow]) -> dict[str, str]:
    """The capacity columns' headings for ``rows``: the request-length columns name the length as the rows'
    engines spell it (:data:`LENGTH_OPTION`, each name once, in the rows' order, vLLM's for an engine kvlint did
    not identify), so a table of TGI workloads reads ``max-total-tokens``."""
    names: dict[str, None] = {}
    for r in rows:
        for side in (r.after_values, r.before_values):
            if side is not None:
                names[LENGTH_OPTION.get(str(side.get("engine") or ""), "max-model-len")] = None
                break
    length = " / ".join(names) or "max-model-len"
    heads = dict(CAPACITY_COLUMNS)
    heads.update(max_model_len=length, concurrency=f"concurrency at {length}")
    return heads


@dataclass
class Comparison:
    """Findings of the head split against the base (JSON diagnostic dicts).

    ``new``: on the head only; ``existing``: on both (pre-existing); ``fixed``: on the base only;
    ``status``: ``"new"`` or ``"pre-existing"`` for each head diagnostic, in the head's order. A diagnostic that
    stands for several findings (``stands_for``: the finding for the rest past the first 50 of a rule in a
    container, :mod:`kvlint.findcap`) counts as those: ``new_units`` gives, for each head diagnostic, how many of
    its findings the base did not have (it is ``new`` when that is above 0), and ``new_count``,
    ``existing_count`` and ``fixed_count`` count findings, as the reports' summaries do."""

    new: list[dict[str, Any]] = field(default_factory=list)
    existing: list[dict[str, Any]] = field(default_factory=list)
    fixed: list[dict[str, Any]] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    new_units: list[int] = field(default_factory=list)
    new_count: int = 0
    existing_count: int = 0
    fixed_count: int = 0


def stood_for(d: Mapping[str, Any]) -> int:
    """The findings a JSON diagnostic counts as: its ``stands_for`` (an integer above 1), else 1."""
    from kvlint.types import findings_stood_for

    return findings_stood_for(d)


def _beyond(diags: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each of ``diags``, how many of the findings it counts ``other`` does not have: findings of one
    :func:`~kvlint.fingerprint.identity` are numbered in order (as :func:`~kvlint.fingerprint.fingerprints`
    numbers them), a diagnostic standing for ``n`` taking the next ``n`` numbers, and a number is matched when
    ``other`` counts that many of the identity. Without ``stands_for`` this is the fingerprint match: 60 KV206
    findings on the base (50 and one for 10) against 120 on the head (50 and one for 70) have the one for the
    rest of the same fingerprint, which counted the 60 the change added as pre-existing."""
    from collections import Counter

    from kvlint.fingerprint import identity

    there: Counter[str] = Counter()
    for d in other:
        there[identity(d)] += stood_for(d)
    seen: Counter[str] = Counter()
    out = []
    for d in diags:
        key, n = identity(d), stood_for(d)
        before = seen[key]
        seen[key] += n
        out.append(max(0, before + n - max(before, there[key])))
    return out


def compare_findings(base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]]) -> Comparison:
    """Split ``head`` diagnostics into new and pre-existing, and find the ``base`` ones that are gone
    (:func:`_beyond`: findings numbered per fingerprint identity, counting what a capped finding stands for)."""
    out = Comparison()
    for d, fresh in zip(head, _beyond(head, base), strict=True):
        (out.new if fresh else out.existing).append(dict(d))
        out.status.append("new" if fresh else "pre-existing")
        out.new_units.append(fresh)
        out.new_count += fresh
        out.existing_count += stood_for(d) - fresh
    for d, gone in zip(base, _beyond(base, head), strict=True):
        if gone:
            out.fixed.append(dict(d))
            out.fixed_count += gone
    return out


def workload_key(w: Mapping[str, Any]) -> str:
    """``Kind/namespace/name [container]`` of a JSON workload entry (the finding's ``object`` + container)."""
    obj = "/".join(str(x) for x in (w.get("kind"), w.get("namespace"), w.get("name")) if x)
    return f"{obj} [{w.get('container') or ''}]"


#: The warnings about the KV capacity itself (KV104 low concurrency, KV105 inside the band, KV202 no length set,
#: KV702 SGLang's pool below its context): one both revisions have is *worse* on the head when the capacity
#: figures went down (:func:`_worse`).
CAPACITY_WARNINGS = frozenset({"KV104", "KV105", "KV202", "KV702"})


@dataclass(frozen=True)
class Carried:
    """The warnings of one workload that both revisions have (matched by rule and setting, as
    :mod:`kvlint.fingerprint` matches findings): ``unchanged`` (rule ids) do not make either side's verdict
    ``risky``, since the change neither introduced nor worsened them; ``worse`` (rule ids) are capacity warnings
    (:data:`CAPACITY_WARNINGS`) whose workload's KV headroom or concurrency went down: they count on both sides
    and the head's verdict says so."""

    unchanged: frozenset[str] = frozenset()
    worse: frozenset[str] = frozenset()


def _mine(w: Mapping[str, Any], diags: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The findings of ``diags`` about workload entry ``w`` (its object, container and file)."""
    obj = workload_key(w).rsplit(" [", 1)[0]
    f = w.get("file")
    return [
        d
        for d in diags
        if d.get("object") == obj
        and d.get("container") == w.get("container")
        and (not f or not d.get("file") or d.get("file") == f)
    ]


def _warning_keys(mine: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, int], str]:
    """``(rule, setting, occurrence) -> rule`` of the warnings in ``mine``."""
    seen: dict[tuple[str, str], int] = {}
    out: dict[tuple[str, str, int], str] = {}
    for d in mine:
        if d.get("severity") != "warning":
            continue
        key = (str(d.get("rule")), str(d.get("setting") or ""))
        seen[key] = seen.get(key, 0) + 1
        out[(key[0], key[1], seen[key])] = key[0]
    return out


def _worse(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether the head's capacity is worse than the base's: less KV headroom per GPU or fewer concurrent
    max-length requests (:func:`capacity_values`); False when either side has no plan."""
    a, b = old.get("plan") or {}, new.get("plan") or {}
    if not a or not b:
        return False

    def figures(plan: Mapping[str, Any]) -> tuple[int, float]:
        mem, kv = plan.get("memory") or {}, plan.get("kv") or {}
        headroom = int(mem.get("kv_cache_bytes", 0)) - int(kv.get("per_request_bytes", 0))
        return headroom, float(kv.get("max_concurrency", 0.0))

    (h0, c0), (h1, c1) = figures(a), figures(b)
    return h1 < h0 or c1 < c0


def carried(
    old: Mapping[str, Any],
    old_diags: Iterable[Mapping[str, Any]],
    new: Mapping[str, Any],
    new_diags: Iterable[Mapping[str, Any]],
) -> Carried:
    """The warnings workload ``new`` (head) shares with ``old`` (its base entry), split into unchanged and worse
    (:class:`Carried`). A rule with a warning only one side has is neither: it counts as that side's."""
    a, b = _warning_keys(_mine(old, old_diags)), _warning_keys(_mine(new, new_diags))
    shared = {rule for key, rule in b.items() if key in a}
    only = {rule for key, rule in b.items() if key not in a} | {
        rule for key, rule in a.items() if key not in b
    }
    worse = {r for r in shared if r in CAPACITY_WARNINGS} if _worse(old, new) else set()
    return Carried(unchanged=frozenset(shared - worse - only), worse=frozenset(worse))


def _verdict(
    w: Mapping[str, Any], diags: Iterable[Mapping[str, Any]], kept: Carried | None = None, head: bool = False
) -> str:
    word, rules = _verdict_parts(w, diags, kept)
    marks = [f"{r} worse" if head and kept is not None and r in kept.worse else r for r in rules]
    same = sorted(kept.unchanged) if kept is not None and word != "fails" else []
    inside = "; ".join(x for x in (", ".join(marks), ", ".join(same) + " unchanged" if same else "") if x)
    return f"{word} ({inside})" if inside else word


def _verdict_parts(
    w: Mapping[str, Any], diags: Iterable[Mapping[str, Any]], kept: Carried | None = None
) -> tuple[str, list[str]]:
    """``("fails", [error rule ids])``, ``("unknown", [])`` without a plan, ``("risky", [warning rule ids])``
    or ``("fits", [])``: the verdict of :func:`capacity_figures` and the rules behind it. With ``kept`` (the
    warnings both revisions have, :func:`carried`), a warning the change neither introduced nor worsened
    (``kept.unchanged``) does not make the verdict ``risky``."""
    mine = _mine(w, diags)
    skip = kept.unchanged if kept is not None else frozenset()
    errors = sorted({str(d["rule"]) for d in mine if d.get("severity") == "error"})
    warnings = sorted(
        {str(d["rule"]) for d in mine if d.get("severity") == "warning" and str(d["rule"]) not in skip}
    )
    if errors:
        return "fails", errors
    if not w.get("plan"):
        return "unknown", []
    if warnings:
        return "risky", warnings
    return "fits", []


def capacity_figures(
    w: Mapping[str, Any], diags: Iterable[Mapping[str, Any]], kept: Carried | None = None, head: bool = False
) -> dict[str, str]:
    """The capacity table's cells for one JSON workload entry (see the module docstring); ``-`` where
    kvlint has no plan (model or GPU unknown). ``kept``: the warnings the other revision shares
    (:func:`carried`): the unchanged ones are named but do not make the verdict ``risky``; on the ``head`` side
    a capacity warning whose figures went down is marked ``worse``."""
    plan = w.get("plan") or {}
    mem, kv = plan.get("memory") or {}, plan.get("kv") or {}
    gpus = w.get("gpus")
    acc = w.get("accelerator") or "unknown GPU"
    engine = " ".join(str(x) for x in (w.get("engine") or "engine unknown", w.get("engine_version")) if x)
    if kv.get("kv_cache_dtype"):
        engine += f", KV cache {kv['kv_cache_dtype']}"
    replicas = w.get("replicas")
    figures = {
        "engine": engine,
        "gpu": f"{gpus} × {acc}" if gpus else str(acc),
        "replicas": "-" if replicas is None else f"{int(replicas):,}",
        "verdict": _verdict(w, diags, kept, head),
    }
    if not plan:
        figures.update(weights="-", kv_tokens="-", max_model_len="-", concurrency="-", headroom="-")
        return figures
    headroom = int(mem.get("kv_cache_bytes", 0)) - int(kv.get("per_request_bytes", 0))
    figures.update(
        weights=f"{int(mem.get('weights_bytes', 0)) / GiB:,.2f} GiB",
        kv_tokens=f"{int(kv.get('capacity_tokens', 0)):,}",
        max_model_len=f"{int(kv.get('max_model_len', 0)):,}",
        concurrency=f"{times(float(kv.get('max_concurrency', 0.0)))}×",
        headroom=f"{headroom / GiB:+,.2f} GiB",
    )
    return figures


def capacity_values(
    w: Mapping[str, Any], diags: Iterable[Mapping[str, Any]], kept: Carried | None = None
) -> dict[str, Any]:
    """The figures of :func:`capacity_figures` as numbers, for ``kvlint diff --format json``; the unit is in the
    key. ``engine``, ``engine_version``, ``kv_cache_dtype``, ``accelerator`` (catalogue id) and ``gpus`` (per pod)
    name what was planned; ``replicas`` (None when the manifest declares none); per GPU ``weights_bytes_per_gpu``,
    ``kv_headroom_bytes_per_gpu`` (KV cache minus one max-model-len request, negative when one does not fit);
    ``kv_tokens`` (the engine's KV-cache size in tokens), ``max_model_len`` (tokens),
    ``concurrency_at_max_model_len`` (requests of that length at once); ``verdict`` (``fits`` | ``risky`` |
    ``fails`` | ``unknown``), ``verdict_rules`` (the error rule ids of ``fails``, the warning ones of ``risky``:
    with ``kept``, those the change introduced or, :data:`CAPACITY_WARNINGS`, worsened) and
    ``unchanged_rules`` (warnings both revisions have that the change did not worsen, :func:`carried`: they do
    not make the verdict ``risky``). The plan figures are None without a plan (model or GPU unknown)."""
    plan = w.get("plan") or {}
    mem, kv = plan.get("memory") or {}, plan.get("kv") or {}
    word, rules = _verdict_parts(w, diags, kept)
    replicas = w.get("replicas")
    out: dict[str, Any] = {
        "engine": w.get("engine"),
        "engine_version": w.get("engine_version"),
        "kv_cache_dtype": kv.get("kv_cache_dtype"),
        "accelerator": w.get("accelerator"),
        "gpus": w.get("gpus"),
        "replicas": None if replicas is None else int(replicas),
        "weights_bytes_per_gpu": None,
        "kv_tokens": None,
        "max_model_len": None,
        "concurrency_at_max_model_len": None,
        "kv_headroom_bytes_per_gpu": None,
        "verdict": word,
        "verdict_rules": rules,
        "unchanged_rules": sorted(kept.unchanged) if kept is not None else [],
    }
    if plan:
        out.update(
            weights_bytes_per_gpu=int(mem.get("weights_bytes", 0)),
            kv_tokens=int(kv.get("capacity_tokens", 0)),
            max_model_len=int(kv.get("max_model_len", 0)),
            concurrency_at_max_model_len=round(float(kv.get("max_concurrency", 0.0)), 4),
            kv_headroom_bytes_per_gpu=int(mem.get("kv_cache_bytes", 0)) - int(kv.get("per_request_bytes", 0)),
        )
    return out


@dataclass
class CapacityRow:
    """One touched workload: its key, file and figures before (None: added) and after (None: removed), as the
    tables show them (:func:`capacity_figures`) and as numbers (``before_values``/``after_values``,
    :func:`capacity_values`)."""

    workload: str
    file: str
    before: dict[str, str] | None
    after: dict[str, str] | None
    before_values: dict[str, Any] | None = None
    after_values: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The row in ``kvlint diff --format json``: workload, file, and the numbers before and after (None:
        added or removed)."""
        return {
            "workload": self.workload,
            "file": self.file,
            "before": self.before_values,
            "after": self.after_values,
        }

    def changed(self) -> bool:
        return self.before != self.after


def capacity_diff(
    base: Mapping[str, Any], head: Mapping[str, Any], changed_files: Iterable[str] = ()
) -> list[CapacityRow]:
    """Touched workloads of two JSON reports, in the head's order (removed ones last)."""
    files = {os.path.normpath(f) for f in changed_files}
    rows: list[CapacityRow] = []
    pairs, removed = _pair_workloads(base.get("workloads", []), head.get("workloads", []))
    b_diags, h_diags = base.get("diagnostics", []), head.get("diagnostics", [])
    for w, old in pairs:
        # a warning both revisions have is the change's only when it got worse: risky on neither side otherwise
        kept = carried(old, b_diags, w, h_diags) if old is not None else None
        after = capacity_figures(w, h_diags, kept, head=True)
        before = capacity_figures(old, b_diags, kept) if old is not None else None
        f = str(w.get("file") or "")
        if before != after or os.path.normpath(f) in files:
            rows.append(
                CapacityRow(
                    workload_key(w),
                    f,
                    before,
                    after,
                    capacity_values(old, b_diags, kept) if old is not None else None,
                    capacity_values(w, h_diags, kept),
                )
            )
    for w in removed:
        diags = base.get("diagnostics", [])
        rows.append(
            CapacityRow(
                workload_key(w),
                str(w.get("file") or ""),
                capacity_figures(w, diags),
                None,
                capacity_values(w, diags),
                None,
            )
        )
    return rows


def _pair_workloads(
    base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[Mapping[str, Any], Mapping[str, Any] | None]], list[Mapping[str, Any]]]:
    """Each head workload with its base entry (None: added), in the head's order, and the removed base ones.

    A workload is matched by :func:`workload_key` and its file (and its rank among equal pairs), so the same
    object in two files (one Deployment per cluster directory) stays two rows instead of the last hiding the
    others; what is left is matched by the key alone when exactly one entry on each side has it (a file
    renamed or moved)."""

    def ident(ws: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, int]]:
        seen: dict[tuple[str, str], int] = {}
        out = []
        for w in ws:
            pair = (workload_key(w), os.path.normpath(str(w.get("file") or "")))
            out.append((*pair, seen.get(pair, 0)))
            seen[pair] = seen.get(pair, 0) + 1
        return out

    b_ids, h_ids = ident(base), ident(head)
    b_index = {i: n for n, i in enumerate(b_ids)}
    match: dict[int, int] = {n: b_index[i] for n, i in enumerate(h_ids) if i in b_index}
    used = set(match.values())
    left_b: dict[str, list[int]] = {}
    for n, i in enumerate(b_ids):
        if n not in used:
            left_b.setdefault(i[0], []).append(n)
    left_h: dict[str, list[int]] = {}
    for n, i in enumerate(h_ids):
        if n not in match:
            left_h.setdefault(i[0], []).append(n)
    for key, hs in left_h.items():
        bs = left_b.get(key, [])
        if len(hs) == 1 and len(bs) == 1:
            match[hs[0]] = bs[0]
            used.add(bs[0])
    pairs = [(w, base[match[n]] if n in match else None) for n, w in enumerate(head)]
    return pairs, [w for n, w in enumerate(base) if n not in used]


def _cell(text: str) -> str:
    """A Markdown table cell of text from the reports (:func:`kvlint.report.escape.markdown_text`: one line,
    control characters visible, no link, image, HTML or new cell)."""
    from kvlint.report.escape import markdown_text

    return markdown_text(text)


def _code(text: str, *, table: bool = True) -> str:
    """A code span (``table``: in a table row) of text from the reports (a workload or finding line: names a pull request
    chose): :func:`kvlint.report.escape.markdown_code`, so no backtick can close it early and let the rest
    render as Markdown (a link, an image)."""
    from kvlint.report.escape import markdown_code

    return markdown_code(text, table=table)


def _change(before: dict[str, str] | None, after: dict[str, str] | None, key: str) -> str:
    if before is None:
        return f"(new) {after[key]}" if after else ""
    if after is None:
        return f"{before[key]} (removed)"
    return before[key] if before[key] == after[key] else f"{before[key]} → {after[key]}"


def render_capacity_markdown(rows: Sequence[CapacityRow]) -> str:
    """The capacity diff as a Markdown table (``before → after`` in each changed cell)."""
    if not rows:
        return "No serving workload's capacity changed.\n"
    heads = _headings(rows)
    head = "| workload | " + " | ".join(heads[k] for k, _ in CAPACITY_COLUMNS) + " |"
    lines = [head, "|---|" + "---|" * len(CAPACITY_COLUMNS)]
    for r in rows:
        cells = [_change(r.before, r.after, k) for k, _ in CAPACITY_COLUMNS]
        lines.append(f"| {_code(r.workload)} | " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def render_capacity_text(rows: Sequence[CapacityRow]) -> str:
    """The capacity diff for a terminal: one block per touched workload, one line per figure; each line's text
    from the inputs (workload and file names, GPU names, releases) shown escaped (:func:`kvlint.report.escape.
    printable`) and no line a GitHub workflow command (:func:`kvlint.report.escape.inert_line`: ``kvlint diff`` runs
    in a pull request's workflow step), as ``kvlint check``'s text report shows it."""
    if not rows:
        return "No serving workload's capacity changed.\n"
    out: list[str] = []
    for r in rows:
        out.append(inert_line(printable(f"{r.workload}  ({r.file})")))
        heads = _headings([r])
        width = max(30, *(len(h) + 1 for h in heads.values()))  # "concurrency at max-total-tokens:" is longer
        for k, _ in CAPACITY_COLUMNS:
            out.append(inert_line(printable(f"  {heads[k] + ':':<{width}} {_change(r.before, r.after, k)}")))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------------
# running kvlint on a revision


def default_command() -> list[str]:
    """How the Action runs kvlint by default: this Python importing the *installed* ``kvlint`` (the current
    directory is taken off ``sys.path`` first, so a base revision that holds a ``kvlint/`` directory,
    such as kvlint's own repository, does not run its own code)."""
    return [
        sys.executable,
        "-c",
        "import sys; sys.path[:1] = [] if sys.path[:1] in ([''], ['.']) else sys.path[:1]; "
        "from kvlint.cli import main; main(prog_name='kvlint')",
    ]


def _git(args: Sequence[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``cwd``. Raises ValueError saying so when git cannot be run (not installed, not on
    ``PATH``): ``kvlint diff`` reads both revisions with it."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise ValueError(
            f"cannot run git ({exc.strerror or exc}): kvlint diff reads both revisions with git; install it or put "
            "it on PATH"
        ) from None


def _revision(rev: str) -> str:
    """``rev`` when it can be given to git as a revision, else ValueError: a word starting with ``-`` is read by git
    as an option wherever it stands among the arguments (``git archive --output=FILE`` writes FILE,
    ``git diff --output=FILE`` too), and no ref name may start with ``-`` (``git check-ref-format``); the
    Action refuses such a base the same way (:func:`kvlint.action._diff_base`)."""
    if rev.startswith("-"):
        raise ValueError(f"not a git revision: {rev!r} (a revision cannot start with '-')")
    return rev


def export_tree(rev: str, cwd: str, dest: str) -> str:
    """Write the files of revision ``rev`` of the repository holding ``cwd`` under ``dest`` (``git archive``);
    returns the directory in ``dest`` that corresponds to ``cwd`` (``cwd`` may be below the root).

    The tree is written as a checkout of ``rev`` would hold it, with an empty ``.git`` directory at its root (where
    kvlint looks for the repository a file is in: :func:`kvlint.load.repository_root`,
    :func:`kvlint.models.resolve.manifest_root`, :func:`kvlint.workloads.gitops_local.repository_root`); symbolic
    links are kept whatever they point
    at (an absolute ``/etc/...`` target or one out of the repository, as in the working tree, where kvlint's
    loader decides what to read), through tarfile's ``tar`` filter where Python has it (3.12+ and the
    backports: no member written outside ``dest``, no setuid bits); the ``data`` filter, Python 3.14's default,
    would refuse such a link and end the run. An empty tree (a base branch that holds no file yet) gives an
    empty directory.

    Raises:
        ValueError: not a git repository, ``rev`` unknown (the message has git's own words) or starting with
            ``-`` (:func:`_revision`), or an archive that cannot be extracted.
    """
    rev = _revision(rev)
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise ValueError(f"not a git repository: {cwd}")
    root = top.stdout.decode().strip()
    rel = os.path.relpath(os.path.realpath(cwd), os.path.realpath(root))
    proc = _git(["archive", "--format=tar", rev], root)
    if proc.returncode != 0:
        raise ValueError(f"cannot read revision {rev!r}: {proc.stderr.decode(errors='replace').strip()}")
    os.makedirs(dest, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            if hasattr(tarfile, "tar_filter"):
                tar.extractall(dest, filter="tar")
            else:  # pragma: no cover - Python before the extraction filters: git's own archive of the repository
                tar.extractall(dest)  # noqa: S202
    except tarfile.ReadError:
        # git writes an archive of only its end-of-archive blocks for an empty tree; tarfile cannot open it
        if _git(["ls-tree", "--name-only", rev], root).stdout.strip():
            raise ValueError(
                f"cannot read revision {rev!r}: git archive gave an unreadable archive"
            ) from None
    except (tarfile.TarError, OSError) as exc:
        raise ValueError(f"cannot write revision {rev!r} under {dest}: {exc}") from None
    try:
        # the tree is a repository's, as the checkout is: an empty .git marks its root (git archive writes none),
        # which holds a discovered .kvlint.yaml's model directories and a manifest's model paths to it and
        # finds an Argo CD Application's chart in it, as in the working tree. Without it a pull request's
        # revision, written under a temporary directory, could read any directory of the runner.
        os.makedirs(os.path.join(dest, ".git"), exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot write revision {rev!r} under {dest}: {exc}") from None
    return os.path.normpath(os.path.join(dest, rel))


def run_check_json(
    command: Sequence[str],
    args: Sequence[str],
    cwd: str,
    json_path: str,
    env: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any] | None, str, str]:
    """Run ``command check --format json=JSON_PATH ARGS`` in ``cwd``; ``(exit status, report or None,
    stdout, stderr)``. The report is None when kvlint failed before writing it (exit 2).

    Raises:
        ValueError: the command could not be started (its message: a command line past ``ARG_MAX``, no such
            program)."""
    cmd = [*command, "check", "--format", f"json={json_path}", *args]
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, env=dict(env or os.environ), check=False
        )
    except OSError as exc:  # E2BIG (a command line past ARG_MAX), ENOENT, EACCES: a sentence, not a traceback
        raise ValueError(
            f"cannot run {command[0] if command else 'kvlint'} check: {exc.strerror or exc}"
        ) from None
    report = None
    if os.path.isfile(json_path):
        with open(json_path, encoding="utf-8") as fh:
            report = json.load(fh)
    return proc.returncode, report, proc.stdout, proc.stderr


def _changed_files(base: str, head: str | None, cwd: str) -> list[str]:
    """Files that differ between ``base`` and ``head`` (the working tree when None), relative to ``cwd``."""
    args = ["-c", "core.quotePath=false", "diff", "--name-only", "--relative", _revision(base)]
    if head:
        args.append(_revision(head))
    proc = _git([*args, "--"], cwd)
    return proc.stdout.decode("utf-8", errors="replace").split("\n") if proc.returncode == 0 else []


def repository_paths(paths: Sequence[str], cwd: str = ".") -> list[str]:
    """The paths ``kvlint diff`` lints, as names inside the git repository holding ``cwd``.

    Both revisions are linted in a copy of the repository (:func:`export_tree`), so a path must name a place
    inside it relative to ``cwd``: an absolute path inside the repository is rewritten relative to ``cwd``
    (as typed it would name the working tree on both sides, and the diff would show nothing), a relative
    path is kept as typed.

    Raises:
        ValueError: ``cwd`` is not in a git repository, or a path lies outside the repository (the message
            names the path and the repository).
    """
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise ValueError(f"not a git repository: {os.path.abspath(cwd)}")
    root = os.path.realpath(top.stdout.decode().strip())
    here = os.path.realpath(cwd)
    out: list[str] = []
    for p in paths:
        full = os.path.realpath(os.path.join(here, p))
        if os.path.commonpath([root, full]) != root:
            raise ValueError(
                f"{p}: outside the git repository {root}; kvlint diff reads both revisions from the repository "
                "of the current directory, so run it there"
            )
        out.append(os.path.relpath(full, here) if os.path.isabs(p) else p)
    return out


def repository_file(path: str, cwd: str = ".") -> str:
    """An option file of ``kvlint diff`` (``--config``, ``--helm-values``) as each revision's lint reads it.

    Each revision is linted in its own copy of the repository with the copy as the current directory
    (:func:`diff_revisions`), so a relative path names that revision's file. An absolute path inside the git
    repository holding ``cwd`` would name the working tree's file on both sides: it is rewritten relative to
    ``cwd``, like an absolute ``-p`` path (:func:`repository_paths`). A path outside the repository, which no
    revision holds, is the same file on both sides: it is returned absolute (``../values.yaml`` typed as is
    would name a place next to the copy). ``cwd`` outside any git repository: ``path`` unchanged
    (:func:`diff_revisions` then says so).
    """
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd)
    except ValueError:  # no git: repository_paths and diff_revisions say so
        return path
    if top.returncode != 0:
        return path
    root = os.path.realpath(top.stdout.decode().strip())
    here = os.path.realpath(cwd)
    full = os.path.realpath(os.path.join(here, path))
    if os.path.commonpath([root, full]) != root:
        return full
    return os.path.relpath(full, here) if os.path.isabs(path) else path


def _fnmatch_literal(path: str) -> str:
    """``path`` as an ``fnmatch`` glob that matches only itself (``*``, ``?`` and ``[`` bracketed)."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in path)


#: Most ignored paths, and bytes of their ``--exclude`` arguments, :func:`ignored_excludes` passes to ``kvlint
#: check`` (Linux refuses a command line past ``ARG_MAX``, 2 MiB with the environment, with E2BIG).
MAX_IGNORED_EXCLUDES = 10_000
MAX_IGNORED_EXCLUDE_BYTES = 1 << 20


def ignored_excludes(cwd: str) -> list[str]:
    """``--exclude`` arguments that keep ``kvlint check`` in the working tree off what git ignores.

    A revision is linted from ``git archive`` (:func:`export_tree`), which holds tracked files only, so the
    working tree's side of ``kvlint diff`` must not read what ``.gitignore`` (or ``.git/info/exclude``, the
    global excludes file) leaves out of the repository either -- a ``build/`` directory that ``pip install .``
    wrote, a virtual environment, generated manifests -- or every finding in them would be *new*. Git lists the
    ignored untracked files and directories (``git ls-files --others --ignored --exclude-standard --directory``,
    a whole ignored directory as one entry); the directories and the ``.yaml``/``.yml``/``.json`` files among
    them are returned as absolute ``fnmatch`` globs matching exactly that path (:func:`kvlint.load._excluded`
    also matches a glob against a base name, which an absolute path never equals). Untracked files that are not
    ignored stay in: they are part of the change. ``cwd`` outside a git repository: no exclusion.

    Raises:
        ValueError: more than :data:`MAX_IGNORED_EXCLUDES` such paths, or more than
            :data:`MAX_IGNORED_EXCLUDE_BYTES` of arguments (the command line of ``kvlint check`` would be
            refused; the message says what to do instead).
    """
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        return []
    root = top.stdout.decode().strip()
    proc = _git(
        ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--full-name"], root
    )
    if proc.returncode != 0:
        return []
    out: list[str] = []
    size = 0
    for name in proc.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        if name.endswith("/") or name.lower().endswith((".yaml", ".yml", ".json")):
            out += ["--exclude", _fnmatch_literal(os.path.join(root, name.rstrip("/")))]
            size += len(os.fsencode(out[-1])) + len("--exclude") + 2
            if len(out) > 2 * MAX_IGNORED_EXCLUDES or size > MAX_IGNORED_EXCLUDE_BYTES:
                raise ValueError(
                    f"git ignores more than {MAX_IGNORED_EXCLUDES:,} directories and manifest files in the working "
                    f"tree of {root} (or their names run past {MAX_IGNORED_EXCLUDE_BYTES >> 10} KiB), too many to "
                    "leave out of its lint one by one: commit the change and compare two revisions (kvlint diff "
                    "BASE HEAD), or ignore their directory as a whole (a .gitignore entry ending in /)"
                )
    return out


def diff_revisions(
    base: str,
    head: str | None,
    check_args: Sequence[str],
    *,
    cwd: str = ".",
    command: Sequence[str] | None = None,
    tmp: str,
    paths: Sequence[str] | None = None,
    option_files: Sequence[tuple[str, str]] = (),
    notes: list[str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], Comparison, list[CapacityRow]]:
    """``kvlint diff``: lint revision ``base`` and ``head`` (the working tree when None) with the same
    ``check_args`` (options of ``kvlint check``, and its paths when ``paths`` is None) and compare them.

    ``paths`` (relative to ``cwd``, see :func:`repository_paths`) are linted where the revision has them: a
    path one revision lacks (a directory the change adds or deletes) is left out on that side, and a
    revision that has none of them gives an empty report (every workload added or removed).

    ``option_files``: ``(option, file)`` pairs (``("--config", ".kvlint.yaml")``, ``("--helm-values", ...)``, each
    file as :func:`repository_file` gives it), passed to each revision that has the file. A revision without it
    (a change that adds or deletes it) is linted without the option -- for ``--config`` that revision's nearest
    ``.kvlint.yaml``, if any, as ``kvlint check`` finds it and as the Action does for its base -- and a sentence
    saying so is appended to ``notes``.

    Returns ``(base report, head report, comparison, capacity rows)``.
    Raises:
        ValueError: not a git repository (or git cannot be run), an unknown revision, a path or option file in
            neither revision, or kvlint failed on one side (its message).
    """
    cmd = list(command or default_command())
    reports: list[dict[str, Any]] = []
    present: list[set[str]] = []
    lacking: list[list[tuple[str, str]]] = []
    for label, rev in (("base", base), ("head", head)):
        where = cwd if rev is None else export_tree(rev, cwd, os.path.join(tmp, label))
        os.makedirs(where, exist_ok=True)
        given: list[str] = []
        lacking.append([])
        for option, file in option_files:
            if os.path.isfile(os.path.join(where, file)):  # an absolute file (outside the repository) as is
                given += [option, file]
            else:
                lacking[-1].append((option, file))
        if rev is None:  # the working tree: what git ignores is in neither revision (ignored_excludes)
            given += ignored_excludes(cwd)
        if paths is None:
            args = [*given, *check_args]
        else:
            here = [p for p in paths if os.path.lexists(os.path.join(where, p))]
            present.append(set(here))
            if not here:
                reports.append({"diagnostics": [], "workloads": []})
                continue
            args = [*given, *check_args, *here]
        # (no --fail-on: each finding's "fails" is then its own configuration's threshold, which kvlint diff
        # fails on by default; the exit status of the check is not read)
        code, report, _, stderr = run_check_json(cmd, args, where, os.path.join(tmp, f"{label}.json"))
        if report is None:
            last = (stderr.strip().splitlines() or [f"exit status {code}"])[-1]
            raise ValueError(f"kvlint check failed on {rev or 'the working tree'}: {last}")
        reports.append(_paths_as_check_prints(report))
    missing = [p for p in paths or () if not any(p in side for side in present)]
    missing += [f"{o} {f}" for o, f in lacking[0] if (o, f) in lacking[1]]
    if missing:
        raise ValueError(f"{missing[0]}: no such file or directory in {base} or {head or 'the working tree'}")
    for (option, file), rev in [(x, base) for x in lacking[0]] + [(x, head) for x in lacking[1]]:
        if notes is not None:
            instead = " (its nearest .kvlint.yaml, if any, as kvlint check finds it)" * (option == "--config")
            where = rev or "the working tree"
            notes.append(f"{file} is not in {where}: that side is linted without {option}{instead}")
    comparison = compare_findings(reports[0].get("diagnostics", []), reports[1].get("diagnostics", []))
    rows = capacity_diff(reports[0], reports[1], _changed_files(base, head, cwd))
    return reports[0], reports[1], comparison, rows


def shown_path(path: str) -> str:
    """A file of a report as ``kvlint diff`` shows it: a relative path normalised (``./deploy/a.yaml`` and
    ``deploy//a.yaml`` -> ``deploy/a.yaml``), so that the default path ``.`` (no ``-p``) names files as
    ``kvlint check deploy/a.yaml`` and ``kvlint diff -p deploy`` do; absolute paths and non-file inputs
    (``<stdin>``) are left as they are."""
    if not path or os.path.isabs(path) or path.startswith("<"):
        return path
    return os.path.normpath(path).replace(os.sep, "/")


def _paths_as_check_prints(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with the ``file`` of every finding and workload through :func:`shown_path` (both revisions
    alike, so fingerprints and the pairing of workloads are unchanged)."""
    for key in ("diagnostics", "suppressed", "workloads"):
        for item in report.get(key) or ():
            if isinstance(item, dict) and isinstance(item.get("file"), str):
                item["file"] = shown_path(item["file"])
    return report


def _finding_line(d: Mapping[str, Any]) -> str:
    """A report's diagnostic as one line, worded as ``kvlint check``'s text report leads with it: the JSON
    ``summary`` (the rule's explicit short statement when it gives one, as KV105's "one max-model-len request needs
    4.00 GiB of KV per GPU against a predicted 3.46 GiB ..."), else the message's first clause (a report without
    it)."""
    from kvlint.statement import statement_of

    where = f"{d.get('file')}:{d.get('line')}:{d.get('column')}" if d.get("file") else "<input>"
    obj = (
        f" [{d['object']}" + (f" container {d['container']}" if d.get("container") else "") + "]"
        if d.get("object")
        else ""
    )
    summary = d.get("summary")
    statement = summary if isinstance(summary, str) and summary else statement_of(str(d.get("message", "")))
    return f"{where}: {d.get('severity')} {d.get('rule')} {statement}{obj}"


def render_diff_text(
    label: str, comparison: Comparison, rows: Sequence[CapacityRow], notes: Sequence[str] = ()
) -> str:
    """``kvlint diff``'s text: the notes (an option file one revision lacks, :func:`diff_revisions`), new,
    pre-existing and gone findings (one line each), then the capacity diff. What the lines quote from the inputs
    is shown escaped (:func:`kvlint.report.escape.printable`: a control character, a line break or a
    bidirectional override in an object name or a message was printed raw, able to recolour a CI log or forge a
    line of its own), and no line is a GitHub workflow command (:func:`kvlint.report.escape.inert_line`; a file a
    pull request named ``::warning title=x::y.yaml`` started a finding line with ``  ::warning``, an object named
    ``x##[error]y`` put the legacy ``##[error]`` on each line naming it: ``kvlint diff`` runs in the pull request's
    workflow step)."""
    out = [printable(f"kvlint diff {label}"), *(printable(f"note: {n}") for n in notes), ""]
    out += [f"New findings: {comparison.new_count}"]
    out += [printable(f"  {_finding_line(d)}") for d in comparison.new]
    out += [f"Pre-existing findings: {comparison.existing_count}"]
    out += [printable(f"  {_finding_line(d)}") for d in comparison.existing]
    out += [f"Findings gone: {comparison.fixed_count}"]
    out += [printable(f"  {_finding_line(d)}") for d in comparison.fixed]
    out = [inert_line(line) for line in out]
    out += ["", "Capacity of the touched workloads:", render_capacity_text(rows).rstrip("\n")]
    return "\n".join(out) + "\n"


def render_diff_markdown(
    label: str, comparison: Comparison, rows: Sequence[CapacityRow], notes: Sequence[str] = ()
) -> str:
    """``kvlint diff --format markdown``: the notes, the capacity table, then the new and gone findings."""
    out = [f"## kvlint diff {_cell(label)}", ""]
    if notes:
        out += [*(f"> Note: {_cell(n)}" for n in notes), ""]
    out += [
        "### Capacity of the touched workloads",
        "",
        render_capacity_markdown(rows),
    ]
    out += [f"### New findings ({comparison.new_count})", ""]
    out += [f"- {_code(_finding_line(d), table=False)}" for d in comparison.new] or ["None."]
    out += [
        "",
        f"Pre-existing findings: {comparison.existing_count}; findings gone: {comparison.fixed_count}.",
    ]
    return "\n".join(out) + "\n"
