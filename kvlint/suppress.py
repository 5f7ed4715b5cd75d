"""Suppressions: ``kvlint.io/ignore`` annotations on an object and ``# kvlint: ignore`` comments in YAML.

Both take ``RULE=reason`` entries (a reason is required: an entry without one is KV003 and suppresses
nothing). The pipeline applies annotations per workload, then comments over all diagnostics; a
suppressed diagnostic is kept with its reason (:class:`~kvlint.types.SuppressedDiagnostic`) so reports
can count and show it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from kvlint.findcap import MAX_PER_RULE, cap_per_rule
from kvlint.load import holds_suppression_marker
from kvlint.options import Options
from kvlint.rules.catalog import load_catalog, severity_of
from kvlint.source import LDict, Loc
from kvlint.statement import clip_words
from kvlint.types import Diagnostic, LoadResult, SuppressedDiagnostic, Workload, is_internal_error, object_ref
from kvlint.values import digits

__all__ = [
    "IGNORE_ANNOTATION",
    "Exemption",
    "annotation_loc",
    "apply_comment_suppressions",
    "apply_suppressions",
    "comment_suppresses",
    "parse_ignore_annotation",
]


IGNORE_ANNOTATION = "kvlint.io/ignore"
#: Longest ``kvlint.io/ignore`` value read (64 KiB; an entry per rule kvlint has, each with a sentence of reason,
#: is a few kilobytes). A custom resource's pod template may hold an annotation of megabytes (the API server's
#: 256 KiB total applies to an object's own metadata only): 170,000 entries in 1 MB cost the webhook worker
#: 0.9 s of CPU (a parse, a rule lookup and a KV003 note each), 3 MB past the 2 s review budget, which admits
#: the object unchecked (failure mode open). A longer value suppresses nothing and gets one KV003.
MAX_IGNORE_CHARS = 64 << 10


@dataclass(frozen=True)
class Exemption:
    """One entry of a ``kvlint.io/ignore`` annotation: ``rule`` (id or prefix, upper-case) and ``reason``
    (empty when none was given)."""

    rule: str
    reason: str


def parse_ignore_annotation(value: str) -> tuple[list[Exemption], list[str]]:
    """Parse ``"KV104=short reason, KV202=other reason"`` (or ``"KV104=a; KV202=b"``).

    Entries are separated by a comma or a semicolon that is followed by a rule selector (``KV``, optional
    digits, then ``=``, ``,``, ``;``, ``:`` or the end), so a reason may itself contain commas and
    semicolons. An entry is ``SEL`` or ``SEL=reason`` where ``SEL`` is a full rule id (``KV103``) or a
    prefix with at least one digit (``KV1``, ``KV10``); a bare ``KV`` would silence every rule and is
    rejected. Returns the exemptions (rule upper-cased, reason stripped) and the entries that are not of
    that form, as written. Never raises.
    """
    split = re.compile(r"[,;]\s*(?=KV[0-9]{0,3}\s*(?:[=,;:]|$))", re.I)
    entry = re.compile(r"^\s*(KV[0-9]{1,3})\s*(?:=(.*))?$", re.S | re.I)
    exemptions: list[Exemption] = []
    bad: list[str] = []
    for part in split.split(value or ""):
        if not part.strip():
            continue
        m = entry.match(part)
        if not m:
            bad.append(part.strip())
            continue
        exemptions.append(Exemption(m.group(1).upper(), (m.group(2) or "").strip()))
    return exemptions, bad


def annotation_loc(w: Workload, key: str = IGNORE_ANNOTATION) -> Loc | None:
    """Where the value of the workload's annotation ``key`` (default ``kvlint.io/ignore``) stands: the pod
    template's metadata, else the object's, else where the workload's annotation says it was written
    (:attr:`LDict.locs`), else the workload's position."""
    # a list index is ASCII digits: a mapping key of other digits ("²", which int() refuses, as it does 5,000
    # digits; a DynamoGraphDeployment service of that name made the whole file a KV503) stays a key
    parts: list[Any] = [p if digits(p) is None else int(p) for p in re.findall(r"[^.\[\]]+", w.path)]
    candidates: list[Any] = []
    if len(parts) >= 2:
        node: Any = w.doc.data
        for p in parts[:-1]:
            node = node[p] if isinstance(node, (dict, list)) and _has(node, p) else None
            if node is None:
                break
        if isinstance(node, dict):
            candidates.append(node.get("metadata"))
    if isinstance(w.doc.data, dict):
        candidates.append(w.doc.data.get("metadata"))
    for meta in candidates:
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(ann, LDict) and key in ann:
            return ann.locs.get(key) or ann.loc
    # an annotation the workload was given from elsewhere (an Argo CD Application's, for the pods built from its
    # values) keeps its own position
    given = w.annotations.locs.get(key) if isinstance(w.annotations, LDict) else None
    return given or w.loc


def _has(node: Any, key: Any) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(key, int) and 0 <= key < len(node)


def apply_suppressions(
    w: Workload, diags: list[Diagnostic], options: Options
) -> tuple[list[Diagnostic], list[SuppressedDiagnostic], list[Diagnostic]]:
    """Apply the workload's ``kvlint.io/ignore`` annotation to its diagnostics.

    Returns ``(kept, suppressed, notes)``: ``notes`` are KV003 warnings, located at the annotation, for
    entries without a reason (such an entry suppresses nothing), for unknown rule ids, for malformed
    entries (including a bare ``KV`` selector, which would match every rule), and for an empty annotation
    value. Entries are parsed by :func:`parse_ignore_annotation` (comma- or semicolon-separated). KV003
    itself cannot be suppressed by the annotation, nor kvlint's own failure to check part of the input
    (:func:`kvlint.types.is_internal_error`: a ``KV503=`` entry admitted such an object in silence). With ``options.exemptions_allowed`` False the
    annotation is not read at all and every diagnostic is kept.
    """
    value = w.annotations.get(IGNORE_ANNOTATION)
    if value is None or not options.exemptions_allowed:
        return diags, [], []
    value = str(value)

    loc = annotation_loc(w)
    obj = object_ref(w.kind, w.namespace, w.name)
    ids = set(load_catalog())
    notes: list[Diagnostic] = []

    def note(message: str, fix: str) -> None:
        notes.append(Diagnostic("KV003", severity_of("KV003"), clip_words(message), loc, fix=fix, object=obj))

    if len(value) > MAX_IGNORE_CHARS:
        note(
            f"{IGNORE_ANNOTATION} is {len(value):,} characters long; kvlint reads one of at most "
            f"{MAX_IGNORE_CHARS:,} (one entry per rule with its reason), so it suppresses nothing",
            'keep one entry per accepted rule: "KV104=why this is acceptable, KV202=..."',
        )
        return diags, [], notes
    exemptions, bad = parse_ignore_annotation(value)
    if not value.strip():
        note(
            f"{IGNORE_ANNOTATION} is empty; it suppresses nothing",
            'remove the annotation or write "KV104=why this is acceptable, KV202=..."',
        )
    for entry in bad:
        if re.match(r"^\s*KV\s*(?:[=:]|$)", entry, re.I):
            note(
                f"{IGNORE_ANNOTATION} entry {entry!r} has no rule number; a selector must be a rule id or a"
                " prefix with at least one digit (KV1, KV10, KV103); it suppresses nothing",
                "name each rule being accepted, e.g. KV202=why this is acceptable",
            )
            continue
        named = _named_entry(entry)
        note(
            f"{IGNORE_ANNOTATION} entry {entry!r} is not of the form RULE=reason"
            + (f" ({named[0]}); " if named else "; ")
            + "it suppresses nothing",
            f'write "{named[1]}"'
            if named
            else 'write entries as "KV104=why this is acceptable, KV202=..." (separated by "," or ";")',
        )
    active: list[Exemption] = []
    for e in exemptions:
        if not any(i.startswith(e.rule) for i in ids):
            note(
                f"{IGNORE_ANNOTATION} names unknown rule {e.rule}; it suppresses nothing",
                "use an id listed by `kvlint rules` (e.g. KV104)",
            )
        elif not e.reason:
            note(
                f"{IGNORE_ANNOTATION} suppresses {e.rule} without a reason; the suppression is not applied",
                f'give the reason after "=": {e.rule}=why this finding is acceptable here',
            )
        else:
            active.append(e)
    kept: list[Diagnostic] = []
    suppressed: list[SuppressedDiagnostic] = []
    for d in diags:
        hit = (
            None
            if d.rule == "KV003" or is_internal_error(d.rule, d.message)
            else next((e for e in active if d.rule.startswith(e.rule)), None)
        )
        if hit is None:
            kept.append(d)
        else:
            suppressed.append(SuppressedDiagnostic(d, hit.reason, loc))
    return kept, suppressed, notes


# --------------------------------------------------------------------------------------------------
# suppressions: inline comments

#: ``# kvlint: ignore KV202=reason, KV104=reason`` (a trailing comment on the finding's line, or a comment
#: line directly above it).
_COMMENT_RE = re.compile(r"#\s*kvlint:\s*ignore\b[ \t=:]*(.*)$")
#: A suppression directive however ``kvlint`` and its word are spelled. After ``# kvlint:``, another linter's word
#: (yamllint's ``disable`` / ``disable-line``, ESLint's ``disable-next-line``, Checkov's ``skip``, flake8's ``noqa``,
#: golangci-lint's ``nolint``): kvlint's word is ``ignore``, and such a comment, read as none, suppressed nothing
#: without a word (:func:`_foreign_comment`). The word ends the comment or is followed by a separator (``off-by-one``
#: is prose); :func:`_is_directive` reads what follows. Or another spelling: ``# KVLINT: disable=KV202``,
#: ``# Kvlint: ignore KV202=...``, ``# kvlint: IGNORE ...``, ``# kvlint ignore ...``, ``# kvlint-ignore ...``. kvlint reads
#: only ``# kvlint: ignore`` (:data:`_COMMENT_RE`: lower case, a colon after kvlint); any other spelling, read as no
#: comment, suppressed nothing without a word: KV003 names the form kvlint reads (:func:`_misspelt_comment`).
#: The spellings of ``kvlint`` matched are those :func:`kvlint.load.holds_suppression_marker` keeps a file's text
#: for, so that whether a comment is flagged does not depend on what else its file holds: ``kvlint:`` after any
#: blanks, ``kvlint`` without the colon after one space or none (``# kvlint``, ``#kvlint``), and the capitalised
#: spellings of :data:`kvlint.load.SUPPRESSION_VARIANTS`. (``#  kvlint ignore`` with two spaces, or ``kVlint``, is
#: not flagged: a wider scan would keep the text of every file with a ``kvlint.io/`` annotation.)
_ANY_SPELLING_RE = re.compile(
    # ``\s*(?:[:=_-]\s*)?``, not ``\s*[:=_-]?\s*``: the same text, but the latter split a run of blanks between its
    # two ``\s*`` every way (quadratic: ``# kvlint`` and 8,000 blanks took 8 s of a ``kvlint check``)
    r"#(?:\s*(?-i:kvlint)(?=:)| ?(?-i:kvlint)|\s*(?-i:KVLINT|Kvlint|KvLint|KVLint))(?![a-z0-9])\s*(?:[:=_-]\s*)?"
    r"(ignore|disable(?:-next-line|-line|-file)?|enable|skip|noqa|nolint|suppress|off|exclude)"
    r"(?=[ \t=:,;]|$)[ \t=:,;]*(.*)$",
    re.IGNORECASE,
)
#: The start of a comment kvlint reads, up to the word (the word itself may be another linter's: :func:`_foreign_comment`).
_READ_MARKER_RE = re.compile(r"#\s*kvlint:\s*")
#: A directive's rule list may start as yamllint's does (``disable rule:KV202``) or Checkov's (``skip=CKV_1``).
_RULE_PREFIX_RE = re.compile(r"rules?\s*[:=]\s*", re.IGNORECASE)


def _is_directive(m: re.Match[str]) -> bool:
    """Whether a :data:`_ANY_SPELLING_RE` match is a suppression directive rather than prose that starts with
    ``kvlint:`` (``# kvlint: exclude this from the index``, ``# kvlint: skip the GPU check upstream``): the word
    ends the comment (or a second comment follows), or the next word names a rule (``KV202``, its number, its name
    ``max-model-len-unset``) or ``all``, as the other linters' directives do (flake8 ``# noqa: E501``, yamllint
    ``# yamllint disable rule:line-length``, ``# nolint:errcheck``)."""
    from kvlint.rules.catalog import rule_id_of

    rest = _RULE_PREFIX_RE.sub("", m.group(2).strip(), count=1)
    if not rest or rest.startswith("#"):
        return True
    first = re.split(r"[\s,;=:]+", rest, maxsplit=1)[0]
    if re.fullmatch(r"KV\d{1,3}|all", first, re.IGNORECASE):
        return True
    return len(first) <= 80 and not first.isdigit() and rule_id_of(first) is not None


#: Largest file read from disk to look for inline suppressions (a template the Helm mapping named).
_MAX_COMMENT_FILE_BYTES = 1 << 20


def may_have_comments(path: str, loaded: LoadResult, options: Options) -> bool:
    """Whether :func:`apply_comment_suppressions` can find a ``kvlint:`` comment in ``path``: exemptions are
    allowed and the file is not JSON, and its text was kept by the loader (``loaded.source_texts``) or it is
    a file the loader did not read (which it then reads from disk). For every other path it keeps each
    diagnostic as it is, so a caller may leave those out (:func:`kvlint.diagstore.finish`)."""
    if not options.exemptions_allowed or not path or path.endswith(".json"):
        return False
    return path in loaded.source_texts or (path not in loaded.read_paths and path != "-")


def _named_entry(entry: str) -> tuple[str, str] | None:
    """For an entry written with a rule's name (``max-model-len-unset=short prompts``, the name the GitHub
    annotation's title and SARIF show): ``("'max-model-len-unset' is the name of KV202", "KV202=short prompts")``,
    else None."""
    from kvlint.rules.catalog import rule_id_of

    head, sep, reason = entry.partition("=")
    word = head.strip()
    if not word or word.isdigit() or len(word) > 80:
        return None
    rule = rule_id_of(word)
    if rule is None:
        return None
    return f"{word!r} is the name of {rule}", f"{rule}={reason.strip() or 'why this is acceptable'}"


def _named_rules(m: re.Match[str]) -> str:
    """The ``RULE=why this is acceptable`` entries for the rules a directive (:data:`_ANY_SPELLING_RE`) names, by id
    or name (``KV104=...`` when it names none)."""
    from kvlint.rules.catalog import rule_id_of

    rules: list[str] = []
    for word in re.split(r"[\s,;=:]+", _RULE_PREFIX_RE.sub("", m.group(2).split("#", 1)[0])):
        rule = word.upper() if re.fullmatch(r"KV\d{1,3}", word, re.IGNORECASE) else None
        if rule is None and word and len(word) <= 80 and not word.isdigit():
            rule = rule_id_of(word)  # the rule's name, as annotations and SARIF show it
        if rule is not None and rule not in rules:
            rules.append(rule)
    return ", ".join(f"{r}=why this is acceptable" for r in rules) or "KV104=why this is acceptable"


def _foreign_comment(m: re.Match[str], loc: Loc) -> Diagnostic:
    """KV003 for a ``# kvlint: disable ...`` comment (:data:`_ANY_SPELLING_RE`): what kvlint reads instead, with the
    rules the comment names."""
    entries = _named_rules(m)
    return Diagnostic(
        "KV003",
        severity_of("KV003"),
        clip_words(
            f"kvlint: {m.group(1)} is not a kvlint comment, so it suppresses nothing: kvlint's inline suppression is "
            "'# kvlint: ignore RULE=reason'"
        ),
        loc,
        fix=clip_words(
            f'write "# kvlint: ignore {entries}" (a reason after "=", entries separated by commas)'
        ),
    )


def _misspelt_comment(m: re.Match[str], loc: Loc) -> Diagnostic:
    """KV003 for a suppression comment kvlint does not read because of how it is spelled
    (:data:`_ANY_SPELLING_RE`: ``# KVLINT: disable=KV202``, ``# kvlint: IGNORE KV202=...``): what was written, and
    the comment kvlint reads, with the rules the comment names (and their reasons, when ``ignore`` entries give
    them)."""
    written = m.string[m.start() : m.end(1)]
    rest = m.group(2).split("#", 1)[0].strip()
    entries = ""
    if m.group(1).lower() == "ignore" and rest:
        exemptions, bad = parse_ignore_annotation(rest)
        ids = load_catalog()
        if (
            exemptions
            and not bad
            and all(e.reason and any(i.startswith(e.rule) for i in ids) for e in exemptions)
        ):
            entries = ", ".join(f"{e.rule.upper()}={e.reason}" for e in exemptions)
    if not entries:
        entries = _named_rules(m)
    return Diagnostic(
        "KV003",
        severity_of("KV003"),
        clip_words(
            f"'{written}' is not spelled as kvlint reads its comments, so it suppresses nothing: kvlint reads "
            "'# kvlint: ignore RULE=reason' only (kvlint and ignore in lower case, a colon after kvlint)"
        ),
        loc,
        fix=clip_words(
            f'write "# kvlint: ignore {entries}" (a reason after "=", entries separated by commas)'
        ),
    )


def _line_reader(loaded: LoadResult) -> Callable[[str], list[str] | None]:
    """The lines of a file that holds a ``kvlint:`` comment (None for any other, and for JSON, which has no
    comments: an AdmissionReview, a .json manifest), from ``loaded.source_texts`` or, for a file the loader did
    not read (a Helm template a finding was mapped to), from disk up to :data:`_MAX_COMMENT_FILE_BYTES`; each
    file read once."""
    lines_of: dict[str, list[str] | None] = {}

    def lines(path: str) -> list[str] | None:
        if path.endswith(".json"):
            return None
        if path not in lines_of:
            text = loaded.source_texts.get(path)
            if text is None and path not in loaded.read_paths and path != "-":
                try:
                    if os.path.isfile(path) and os.path.getsize(path) <= _MAX_COMMENT_FILE_BYTES:
                        with open(path, encoding="utf-8", errors="replace") as fh:
                            text = fh.read()
                except OSError:
                    text = None
            lines_of[path] = (
                text.splitlines() if text is not None and holds_suppression_marker(text) else None
            )
        return lines_of[path]

    return lines


#: The rule ids :func:`_rule_prefixes` last answered for, and its answer.
_PREFIXES: tuple[tuple[str, ...], frozenset[str]] = ((), frozenset())


def _rule_prefixes() -> frozenset[str]:
    """Every prefix of every rule id (``""``, ``K``... ``KV003``): an entry's rule is known when it is one (as
    ``any(i.startswith(rule) for i in ids)``, in one lookup: 100,000 comment lines tested each against every id).
    Made once for the catalogue's ids (made again when they change): it was made for every file linted and
    every webhook review (about 0.33 M instructions each: 3.4% of a corpus check, 6.9% of a review), though only
    a file with a ``kvlint:`` comment reads it."""
    global _PREFIXES
    ids = tuple(load_catalog())
    held_ids, held = _PREFIXES
    if ids == held_ids:
        return held
    made = frozenset(i[:k] for i in ids for k in range(len(i) + 1))
    _PREFIXES = (ids, made)
    return made


def _comment_rules(line: str, whole_line: bool, ids: Collection[str]) -> list[Exemption] | None:
    """The entries of the ``# kvlint: ignore`` comment on ``line`` that suppress (a known rule and a reason), or
    None when the line holds no such comment (``whole_line``: only a comment that is the whole line counts, for
    the line below it)."""
    m = _COMMENT_RE.search(line)
    if m is None or (whole_line and not line.lstrip().startswith("#")):
        return None
    exemptions, _ = parse_ignore_annotation(m.group(1).strip())
    return [e for e in exemptions if e.reason and e.rule in ids]


def comment_suppresses(loaded: LoadResult, options: Options) -> Callable[[Diagnostic], bool] | None:
    """Whether :func:`apply_comment_suppressions` will suppress a diagnostic (the same comments, lines and
    exemptions, without its KV003 notes), for a stage that must count only what suppressions leave (the findings
    cap, :func:`kvlint.findcap.cap_per_rule`); None when exemptions are not allowed (no diagnostic can be)."""
    if not options.exemptions_allowed:
        return None
    lines = _line_reader(loaded)
    found: dict[tuple[str, int, bool], list[Exemption] | None] = {}
    ids: frozenset[str] | None = None  # (asked for only when a line of a file with a comment is read)

    def suppressed(d: Diagnostic) -> bool:
        nonlocal ids
        if not d.loc or not d.loc.file:
            return False
        text = lines(d.loc.file)  # (first: None for a file with no comment, a review's JSON, at once)
        if text is None or d.rule == "KV003" or is_internal_error(d.rule, d.message):
            return False
        for number, whole in ((d.loc.line, False), (d.loc.line - 1, True)):
            if not 1 <= number <= len(text):
                continue
            key = (d.loc.file, number, whole)
            if key not in found:
                if ids is None:
                    ids = _rule_prefixes()  # (a rule is known when it is a prefix of a rule id)
                found[key] = _comment_rules(text[number - 1], whole, ids)
            rules = found[key]
            if rules is not None and any(d.rule.startswith(e.rule) for e in rules):
                return True
        return False

    return suppressed


def apply_comment_suppressions(
    diags: list[Diagnostic], loaded: LoadResult, options: Options
) -> tuple[list[Diagnostic], list[SuppressedDiagnostic], list[Diagnostic]]:
    """Apply inline ``# kvlint: ignore RULE=reason`` comments to ``diags``.

    A comment suppresses the diagnostics located on its own line (a trailing comment) or, when it is the
    whole line, on the line directly below it; entries are written as in the ``kvlint.io/ignore``
    annotation (:func:`parse_ignore_annotation`), a reason is required, and a comment without one (or
    with an unknown rule or a malformed entry) is reported as KV003 at the comment and suppresses nothing
    (every comment of the files kvlint read is checked, wherever it stands). KV003 and kvlint's own failures
    (:func:`kvlint.types.is_internal_error`) are never suppressed.
    This is where YAML comments are the natural place (a Helm template line, one flag of a long ``args``
    list); comments are not in the object the API server stores, so the admission webhook sees none.

    Texts come from ``loaded.source_texts`` (the loader keeps every file with a ``kvlint:`` comment);
    a location in a file the loader did not read (a Helm template a finding was mapped to) is read from
    disk, up to 1 MiB. Returns ``(kept, suppressed, notes)``. With ``options.exemptions_allowed`` False
    nothing is read and everything is kept.
    """
    if not options.exemptions_allowed:
        return diags, [], []

    lines = _line_reader(loaded)
    ids = _rule_prefixes()  # (a rule is known when it is a prefix of a rule id)
    parsed: dict[tuple[str, int], tuple[list[Exemption], Loc]] = {}
    notes: list[Diagnostic] = []

    def comment(path: str, number: int, whole_line: bool) -> tuple[list[Exemption], Loc] | None:
        text = lines(path)
        if text is None or not 1 <= number <= len(text):
            return None
        line = text[number - 1]
        m = _COMMENT_RE.search(line)
        if m is None or (whole_line and not line.lstrip().startswith("#")):
            return None
        key = (path, number)
        if key not in parsed:
            loc = Loc(path, number, m.start() + 1)
            exemptions, bad = parse_ignore_annotation(m.group(1).strip())
            active: list[Exemption] = []
            named = [n for n in map(_named_entry, bad) if n is not None]
            problems = [
                f"entry {b!r} is not of the form RULE=reason" + (f" ({n[0]})" if n else "")
                for b, n in ((b, _named_entry(b)) for b in bad)
            ]
            reasonless: list[str] = []  # the fix's example names the first rule left without a reason
            for e in exemptions:
                if e.rule not in ids:
                    problems.append(f"{e.rule} is not a rule id")
                elif not e.reason:
                    problems.append(f"{e.rule} has no reason")
                    reasonless.append(e.rule)
                else:
                    active.append(e)
            if not exemptions and not bad:
                problems.append("it names no rule")
            if problems:
                example = reasonless[0] if reasonless else "KV104"
                fix = (
                    f'write "# kvlint: ignore {named[0][1]}"'
                    if named
                    else f'write "# kvlint: ignore {example}=why this is acceptable" (a reason after "=", '
                    "entries separated by commas)"
                )
                notes.append(
                    Diagnostic(
                        "KV003",
                        severity_of("KV003"),
                        clip_words(
                            f"kvlint: ignore comment: {'; '.join(problems)}; those entries suppress nothing"
                        ),
                        loc,
                        fix=fix,
                    )
                )
            parsed[key] = (active, loc)
        return parsed[key]

    # every comment of the files read is checked, not only those next to a finding (a broken comment
    # should say so before the finding it is meant for appears)
    for path, text in loaded.source_texts.items():
        if path.endswith(".json") or not holds_suppression_marker(text):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            m = _COMMENT_RE.search(line)
            if m is not None:
                comment(path, number, line.lstrip().startswith("#"))
            elif "kvlint" in line.lower():
                # another linter's word after "# kvlint:" (the comment to write instead), or a spelling kvlint does
                # not read (KVLINT, IGNORE, no colon: the spelling it reads)
                spelt = _ANY_SPELLING_RE.search(line)
                if spelt is not None and _is_directive(spelt):
                    loc = Loc(path, number, spelt.start() + 1)
                    marker = line[spelt.start() : spelt.start(1)]
                    if _READ_MARKER_RE.fullmatch(marker) and spelt.group(1).lower() != "ignore":
                        notes.append(_foreign_comment(spelt, loc))
                    else:
                        notes.append(_misspelt_comment(spelt, loc))
    kept: list[Diagnostic] = []
    suppressed: list[SuppressedDiagnostic] = []
    for d in diags:
        hit = None
        if (
            d.loc is not None
            and d.loc.file
            and d.rule != "KV003"
            and not is_internal_error(d.rule, d.message)
        ):
            for number, whole in ((d.loc.line, False), (d.loc.line - 1, True)):
                found = comment(d.loc.file, number, whole)
                if found is None:
                    continue
                e = next((x for x in found[0] if d.rule.startswith(x.rule)), None)
                if e is not None:
                    hit = (e, found[1])
                    break
        if hit is None:
            kept.append(d)
        else:
            suppressed.append(SuppressedDiagnostic(d, hit[0].reason, hit[1], by="# kvlint: ignore"))
    # (capped once every note is made: a file read from disk for the comments beside its findings, a Helm
    # template the loader did not read, has its notes made in the loop above)
    if len(notes) > MAX_PER_RULE:
        notes = _capped_notes(notes)
    return kept, suppressed, notes


def _capped_notes(notes: list[Diagnostic]) -> list[Diagnostic]:
    """The KV003 notes of each file past the first :data:`~kvlint.findcap.MAX_PER_RULE` as one finding, as every
    rule's findings in a container are (:func:`kvlint.findcap.cap_per_rule`): 100,000 ``# kvlint: ignore KV999=x``
    lines (1.9 MB) made 100,000 KV003 findings, a report growing with the file (perf52). The others as they were,
    in their order."""
    by_file: dict[str, list[Diagnostic]] = {}
    for d in notes:
        by_file.setdefault(d.loc.file if d.loc else "", []).append(d)
    over = {path: cap_per_rule(some, file=path) for path, some in by_file.items() if len(some) > MAX_PER_RULE}
    if not over:
        return notes
    out: list[Diagnostic] = []
    for d in notes:
        path = d.loc.file if d.loc else ""
        capped = over.get(path)
        if capped is None:
            out.append(d)
        elif capped:
            out.extend(capped)  # (the file's notes, capped, where its first one stood)
            over[path] = []
    return out
