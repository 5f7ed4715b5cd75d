"""A bound on how many findings of one rule one container reports (issue 19).

A finding can come from every few bytes of a manifest: 200,000 ``--$(X)`` arguments (2 MB, under the API
server's 3 MiB request limit) made 200,000 KV503 infos ("contains a variable kvlint cannot resolve"), 200,000
``--$(X)`` with ``X=max-model-len`` 200,000 KV206 errors: a report of tens of megabytes, and as many objects held
by the run and, in the admission webhook, sent from the review worker to the server. As linters do (ESLint's
``--max-warnings``, compilers' ``-fmax-errors``), each rule's findings in one container (or, for an object's own
findings, one object) are reported one by one up to :data:`MAX_PER_RULE`, in the order of their positions, and
the rest as one finding of the same rule at the first of them: "N more KV503 findings ...", with ``stands_for`` the
findings it stands for (what the webhook counts when it matches an UPDATE's errors with its old object's,
:func:`kvlint.types.findings_stood_for`). When the rest are of more than one severity, one such finding
per severity, at the first of its severity ("1 more KV206 error ...", "69 more KV206 warnings ..."): every summary
counts each finding at its own severity (one finding at the most severe counted 1 error and 69 warnings as 70
errors, in the summary line, ``--statistics``, the JSON and SARIF ``summary`` and the Action's ``errors``).
The bound applies to what suppressions leave: a workload's ``kvlint.io/ignore`` annotation is applied before
the cap, and the findings a ``# kvlint: ignore`` comment suppresses later in the run are not counted
(:func:`kvlint.suppress.comment_suppresses`).

The bound is above the most any manifest of the corpus and the fixtures reports (8 of one rule in one container)
and above KV205's own bound on unknown options (:data:`kvlint.engines.options.MAX_UNKNOWN_OPTIONS`, 32 and one
finding for the rest, per command line), so it changes no report of theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kvlint.statement import clip_words
from kvlint.types import Diagnostic, Loc, findings_stood_for

__all__ = ["MAX_PER_RULE", "FileCap", "cap_per_rule"]

#: Findings of one rule one container (or one object, for findings of no container) reports one by one.
MAX_PER_RULE = 50

#: where a finding of no position sorts (first, as at line 0 of no file)
_NOWHERE = Loc("", 0, 0)


def cap_per_rule(
    diags: Sequence[Diagnostic],
    suppressed: Callable[[Diagnostic], bool] | None = None,
    *,
    file: str | None = None,
) -> list[Diagnostic]:
    """``diags`` (one workload's) with each rule's findings in one container past the first :data:`MAX_PER_RULE`
    (by position) replaced by one finding at the first of them (see the module docstring); the others kept, in
    order. ``diags`` as a list when no rule is past the bound (a length check for nearly every workload).

    ``suppressed`` says which of ``diags`` a ``# kvlint: ignore`` comment will suppress later in the run
    (:func:`kvlint.suppress.comment_suppresses`, whose answer depends only on a finding's file, line, rule and
    message: it is asked once for each): those are kept as they are and not counted, so that the bound
    applies to what suppressions leave (a comment on one of the first findings leaves :data:`MAX_PER_RULE` shown,
    not one fewer and the next one folded into the finding for the rest). ``kvlint.io/ignore`` annotations are
    applied before the cap (:func:`kvlint.pipeline._analyse_workloads`).

    ``file``: ``diags`` are the findings of one file (a ``# kvlint: ignore`` comment's KV003, of no object), and
    the finding for the rest says so ("in file F", "of a rule in a file")."""
    if len(diags) <= MAX_PER_RULE:
        return list(diags)
    # each rule's findings in each container, by index in order: one pass, no count before it (a ``Counter`` of
    # the same keys first was 33 M of 133 M instructions for 20,000 findings of one shell word: perf53)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, d in enumerate(diags):
        key = (d.object, d.container, d.rule)
        at = groups.get(key)
        if at is None:
            groups[key] = [i]
        else:
            at.append(i)
    members = {key: at for key, at in groups.items() if len(at) > MAX_PER_RULE}
    if not members:
        return list(diags)
    if suppressed is not None:
        # ``suppressed`` asked once per file, line, rule and message, what its answer depends on (20,000 findings
        # of one shell word at one position asked it 20,000 times: perf52)
        answers: dict[tuple[str, int, str, str] | None, bool] = {}
        for key, at in members.items():
            kept: list[int] = []
            for i in at:
                d = diags[i]
                where_at = (loc.file, loc.line, d.rule, d.message) if (loc := d.loc) else None
                hidden = answers.get(where_at)
                if hidden is None:
                    hidden = answers[where_at] = suppressed(d)
                if not hidden:
                    kept.append(i)
            members[key] = kept
        members = {key: at for key, at in members.items() if len(at) > MAX_PER_RULE}
    dropped: set[int] = set()
    standing: dict[int, Diagnostic] = {}
    for (_, container, rule), indexes in members.items():
        # by position (a Loc is the tuple (file, line, column)), ties in list order (a stable sort), with no
        # Python call nor tuple built per finding (perf52: 20,000 findings of one shell word)
        locs = [diags[i].loc or _NOWHERE for i in indexes]
        indexes = [indexes[j] for j in sorted(range(len(locs)), key=locs.__getitem__)]
        past = indexes[MAX_PER_RULE:]
        # one finding for the rest per severity among them: each counts at its own severity, so that 1 error and
        # 69 warnings past the bound are summed as 1 error and 69 warnings, not 70 errors
        severities = [diags[i].severity for i in past]
        kinds = set(severities)
        by_severity: dict[str, list[int]] = (
            {severities[0]: past} if len(kinds) == 1 else {s: [] for s in dict.fromkeys(severities)}
        )
        if len(kinds) > 1:
            for i, s in zip(past, severities, strict=True):
                by_severity[s].append(i)
        where = (
            f"file {file}" if file is not None else f"container {container}" if container else "this object"
        )
        for severity, at in by_severity.items():
            rest = [diags[i] for i in at]
            first = rest[0]
            what = (
                f"{len(rest):,} more {rule} finding{'' if len(rest) == 1 else 's'}"
                if len(by_severity) == 1
                else f"{len(rest):,} more {rule} {severity}{'' if len(rest) == 1 else 's'}"
            )
            fixes = {d.fix for d in rest}
            settings = {d.setting for d in rest}
            stands_for = sum(findings_stood_for(d) for d in rest)
            standing[at[0]] = Diagnostic(
                rule=rule,
                severity=first.severity,
                message=clip_words(
                    f"{what} in {where}, the first: {first.statement} (kvlint reports the first {MAX_PER_RULE} "
                    f"findings of a rule in a {'file' if file is not None else 'container'} one by one)"
                ),
                loc=first.loc,
                fix=first.fix if len(fixes) == 1 else "",
                object=first.object,
                container=container,
                setting=first.setting if len(settings) == 1 else "",
                stands_for=stands_for,
            )
            dropped.update(at[1:])
    return [standing.get(i, d) for i, d in enumerate(diags) if i not in dropped]


class _Rest:
    """The findings of one rule and severity in one file past the bound, as :class:`FileCap` keeps them: the first
    (by position), how many findings they stand for, and whether they share one remedy, setting, object and mark
    (each kept while they do)."""

    __slots__ = ("first", "count", "fix", "setting", "object", "mark")

    def __init__(self, d: Diagnostic) -> None:
        self.first = d
        self.count = findings_stood_for(d)
        self.fix: str | None = d.fix
        self.setting: str | None = d.setting
        self.object: str | None = d.object
        self.mark = d.mark

    def add(self, d: Diagnostic) -> None:
        self.count += findings_stood_for(d)
        if (d.loc or _NOWHERE) < (self.first.loc or _NOWHERE):
            self.first = d
        if d.fix != self.fix:
            self.fix = None
        if d.setting != self.setting:
            self.setting = None
        if d.object != self.object:
            self.object = None
        if d.mark is not self.mark:
            self.mark = None


class FileCap:
    """A bound on the loader's findings of one rule in one file (``kvlint check`` on a file of 20,000 documents
    without an ``apiVersion`` made 20,000 KV001 errors, 60,000 lines of report): the first :data:`MAX_PER_RULE` of
    each rule in each file, in the order they are given (the loader's: the file's), are kept; the rest of each
    rule and severity in a file are counted and reported by :meth:`rest` as one finding at the first of them ("19,950
    more KV001 findings in file F, the first: ..."), which stands for them all (``stands_for``), so the summary
    line, every report's counts and the exit status are those of the findings one by one, as ruff and kube-linter
    count what they do not list. Memory is bounded by the findings kept, not by those counted: the streaming run
    (:mod:`kvlint.stream`) gives each unit's findings to :meth:`take` as they come, a large file's batches in turn.

    ``suppressed`` (:func:`kvlint.suppress.comment_suppresses`): findings a ``# kvlint: ignore`` comment will
    suppress later in the run are passed through and not counted, as :func:`cap_per_rule` does."""

    def __init__(self, suppressed: Callable[[Diagnostic], bool] | None = None) -> None:
        self._suppressed = suppressed
        self._shown: dict[tuple[str, str], int] = {}
        self._rest: dict[tuple[str, str, str], _Rest] = {}

    def take(self, diags: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Those of ``diags`` (the next load findings of the run, in order) to report one by one; the others are
        counted for :meth:`rest`."""
        out: list[Diagnostic] = []
        shown = self._shown
        suppressed = self._suppressed
        for d in diags:
            if suppressed is not None and suppressed(d):
                out.append(d)  # suppressed later in the run: not counted, as cap_per_rule does
                continue
            key = (d.loc.file if d.loc is not None else "", d.rule)
            n = shown.get(key, 0)
            if n < MAX_PER_RULE:
                shown[key] = n + 1
                out.append(d)
                continue
            rest_key = (key[0], d.rule, d.severity)
            rest = self._rest.get(rest_key)
            if rest is None:
                self._rest[rest_key] = _Rest(d)
            else:
                rest.add(d)
        return out

    def rest(self) -> list[Diagnostic]:
        """One finding for each rule and severity of a file past the bound (none when no file went past it), each
        at the first of those it stands for; in the order the rules first went past it."""
        per_rule: dict[tuple[str, str], int] = {}
        for file, rule, _ in self._rest:
            per_rule[(file, rule)] = per_rule.get((file, rule), 0) + 1
        out: list[Diagnostic] = []
        for (file, rule, severity), rest in self._rest.items():
            n = rest.count
            what = (
                f"{n:,} more {rule} finding{'' if n == 1 else 's'}"
                if per_rule[(file, rule)] == 1
                else f"{n:,} more {rule} {severity}{'' if n == 1 else 's'}"
            )
            first = rest.first
            out.append(
                Diagnostic(
                    rule=rule,
                    severity=first.severity,
                    message=clip_words(
                        f"{what} in file {file}, the first: {first.statement} (kvlint reports the first "
                        f"{MAX_PER_RULE} findings of a rule in a file one by one)"
                    ),
                    loc=first.loc,
                    fix=rest.fix or "",
                    object=rest.object or "",
                    setting=rest.setting or "",
                    mark=rest.mark,
                    stands_for=n,
                )
            )
        return out
