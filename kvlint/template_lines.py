"""Map lines of ``helm template`` output back to lines of the Go template that wrote them.

``helm template`` prints each rendered document after a ``# Source: CHART/templates/FILE`` comment, but
the rendered lines are not the template's lines: ``{{- range }}``/``{{- if }}`` lines vanish, and one
``{{- toYaml .Values.x | nindent 4 }}`` line becomes many. :func:`align` recovers the correspondence the
way a reader would, from the two texts alone:

1. Every template line with literal text (text outside ``{{ ... }}`` actions) becomes a pattern: its
   literal pieces in order, each action a wildcard (``  name: {{ $name }}`` matches ``  name: llama``).
   Lines that are only actions are not matched; those that write text (``toYaml``, ``include``,
   ``.Values.x``, ``template``) are remembered as *output* lines, control lines (``if``, ``range``,
   ``with``, ``end``, ``define``, comments, ``$x :=`` assignments) are not.
2. The rendered lines and the template's pattern lines are aligned by a longest common subsequence, so
   the order of the template is respected (a rendered ``name:`` matches the template's ``name:`` of the
   same block, not the first one in the file).
3. A rendered line that matched gets its template line. One that did not (text an action wrote) gets the
   first output line between the neighbouring matched lines (the ``toYaml`` line under ``args:``), or
   else the nearest matched line above it.

This is kvlint's own method (helm records no line map); it is exact for templates whose literal lines
render unchanged, and points at the action that wrote a value otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvlint.spans import delimited_spans

__all__ = [
    "MAX_CELLS",
    "RegionIndex",
    "TemplateLine",
    "align",
    "align_document",
    "matched_count",
    "named_templates",
    "parse_template",
    "regions",
]

#: Largest (rendered lines x template pattern lines) table :func:`align` builds; beyond it, no mapping.
MAX_CELLS = 1_000_000

_INCLUDE = re.compile(r'^\{\{-?\s*(?:include|template)\s+"([^"]+)"')
_DEFINE = re.compile(r'\{\{-?\s*define\s+"([^"]+)"')
_KEYWORD = re.compile(r"^\{\{-?\s*(if|with|range|define|block|else|end)(?:\W|$)")
# Actions that write nothing: control structure, comments, variable assignment.
_SILENT = re.compile(
    r"^\{\{-?\s*(?:if|else|end|range|with|define|block|break|continue|/\*|\$[\w.]*\s*:?=)(?:\W|$)"
)


@dataclass(frozen=True)
class TemplateLine:
    """One line of a Go template, as :func:`align` uses it.

    Attributes:
        number: 1-based line number in the template file.
        pattern: full-line regex for the rendered text when the line has literal text; None for a line
            that is only actions (or blank).
        output: True for an action-only line whose action writes text (``{{- toYaml . | nindent 4 }}``).
        column: 1-based column of the line's first non-blank character.
        depth: how many ``if``/``with``/``range``/``define``/``block`` actions enclose the line's start
            (0: the line renders whenever the template does).
        separator: the line is a literal ``---`` document separator.
        include: for an output line that is an ``include``/``template`` call, the named template it writes.
        block: line number of the innermost ``if``/``with``/``range``/``define``/``block`` enclosing the
            line (0: none); ``block_kind`` that keyword.
        fixed: a literal line with no action in it (``- --dtype``): rendered exactly as written.
        enclosing: line numbers of every control block enclosing the line, outermost first (``else``
            branches count as blocks of their own).
        pieces: for a line with literal text, the literal pieces ``pattern`` matches in order, anything without a
            line break between them (:func:`_line_regex`; a first ``""`` when the line starts inside an action);
            a fixed line's one piece is its text. Empty for a line without literal text.
    """

    number: int
    pattern: re.Pattern[str] | None
    output: bool
    column: int
    depth: int = 0
    separator: bool = False
    include: str | None = None
    block: int = 0
    block_kind: str = ""
    fixed: bool = False
    enclosing: tuple[int, ...] = ()
    pieces: tuple[str, ...] = ()


def _line_regex(pieces: Sequence[str]) -> str:
    """A regex whose ``fullmatch`` accepts exactly the lines ``".*?".join(map(re.escape, pieces))`` accepts:
    the literal ``pieces`` (no line breaks) in order, anything without a line break between them.

    That plain join backtracks through every way of placing the pieces: a line of k actions between ``-``
    against a rendered line of n ``-`` took O(n^k) steps (5 actions, 200 characters: 50 s). Here each middle
    piece is placed at its first occurrence and kept there (``(?=(?P<pN>.*?PIECE))(?P=pN)``: a lookahead is not
    re-entered when what follows fails), which loses no match: an earlier end leaves more room for the rest.
    The time is then at most the line's length times the longest piece's."""
    if len(pieces) == 1:
        return re.escape(pieces[0])
    middle = "".join(f"(?=(?P<p{n}>.*?{re.escape(p)}))(?P=p{n})" for n, p in enumerate(pieces[1:-1], 1))
    return re.escape(pieces[0]) + middle + ".*?" + re.escape(pieces[-1])


def parse_template(text: str) -> list[TemplateLine]:
    """Split a Go template (a Helm chart's ``templates/*.yaml``) into :class:`TemplateLine` records.

    Actions spanning several lines (a multi-line ``{{/* comment */}}`` or ``include`` call) are handled:
    every line they cover counts as action text. Never raises; any text is a valid input.
    """
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans = list(delimited_spans(text))  # linear: a lazy ``{{.*?}}`` regex was quadratic on unclosed ``{{``
    out: list[TemplateLine] = []
    k = 0
    depth = 0
    stack: list[tuple[str, int]] = []  # enclosing control actions: (keyword, line number)
    for i, line in enumerate(lines):
        line_depth = depth
        block, block_kind = (stack[-1][1], stack[-1][0]) if stack else (0, "")
        enclosing = tuple(n for _, n in stack)
        lo, hi = starts[i], starts[i] + len(line)
        while k < len(spans) and spans[k][1] <= lo:
            k += 1
        pieces: list[str] = []
        output = False
        include: str | None = None
        pos = lo
        j = k
        while j < len(spans) and spans[j][0] < hi:
            a, b = spans[j]
            if a >= lo:
                pieces.append(text[pos:a])
                action = text[a:b]
                if not _SILENT.match(action):
                    output = True
                    inc = _INCLUDE.match(action)
                    if inc is not None:
                        include = inc.group(1)
                kw = _KEYWORD.match(action)
                if kw is not None and kw.group(1) == "else":
                    # `else` / `else if`: a branch of its own (renders when the one before does not)
                    if stack:
                        stack[-1] = ("else", i + 1)
                elif kw is not None:
                    depth = max(0, depth + (1 if kw.group(1) != "end" else -1))
                    if kw.group(1) == "end":
                        if stack:
                            stack.pop()
                    else:
                        stack.append((kw.group(1), i + 1))
            pos = max(pos, min(b, hi))
            j += 1
        pieces.append(text[pos:hi] if pos < hi else "")
        literal = "".join(pieces).strip()
        stripped = line.lstrip()
        column = len(line) - len(stripped) + 1
        if not literal:
            out.append(
                TemplateLine(
                    i + 1,
                    None,
                    output and bool(stripped),
                    column,
                    line_depth,
                    False,
                    include,
                    block,
                    block_kind,
                    False,
                    enclosing,
                )
            )
            continue
        pieces[-1] = pieces[-1].rstrip()
        sep = literal == "---" and len(pieces) == 1
        if k < len(spans) and spans[k][0] < lo < spans[k][1]:  # starts inside an action begun above
            pieces.insert(0, "")
        regex = _line_regex(pieces)
        fixed = len(pieces) == 1 and not regex.startswith(".*?") and not sep
        out.append(
            TemplateLine(
                i + 1,
                re.compile(regex),
                False,
                column,
                line_depth,
                sep,
                None,
                block,
                block_kind,
                fixed,
                enclosing,
                tuple(pieces),
            )
        )
    return out


def named_templates(text: str) -> dict[str, list[re.Pattern[str]]]:
    """The ``{{ define "NAME" }}`` blocks of a template file (``_helpers.tpl``): NAME -> patterns of its
    literal lines, indentation removed (``nindent`` re-indents what an ``include`` writes)."""
    lines = text.split("\n")
    out: dict[str, list[re.Pattern[str]]] = {}
    parsed = parse_template(text)
    i = 0
    while i < len(parsed):
        m = _DEFINE.search(lines[i])
        if m is None:
            i += 1
            continue
        depth = parsed[i].depth
        body: list[str] = []
        j = i + 1
        while j < len(parsed) and parsed[j].depth > depth:
            body.append(lines[j].lstrip())
            j += 1
        out[m.group(1)] = [t.pattern for t in parse_template("\n".join(body)) if t.pattern is not None]
        i = j
    return out


def regions(template: Sequence[TemplateLine]) -> list[tuple[int, int]]:
    """``[start, end)`` index ranges of ``template`` between ``---`` separator lines: the documents one
    template file writes (two Deployments in one file are two regions; a ``range`` loop writes its one
    region several times)."""
    out: list[tuple[int, int]] = []
    start = 0
    for i, t in enumerate(template):
        if t.separator:
            if i > start:
                out.append((start, i))
            start = i + 1
    if start < len(template):
        out.append((start, len(template)))
    return out or [(0, len(template))]


def matched_count(table: Sequence[tuple[int, int | None] | None]) -> int:
    """Rendered lines an :func:`align` table matched to a literal template line."""
    return sum(1 for e in table if e is not None and e[1] is None)


def _lcs(texts: Sequence[str], pats: Sequence[TemplateLine]) -> dict[int, int]:
    """Heaviest common subsequence of rendered ``texts`` and template pattern lines (a line matches when
    its pattern matches the whole text; a fixed line weighs 2, a line with actions 1); a line inside a
    ``range`` may match consecutive rendered lines (the loop writes its body once per item). Returns
    rendered index -> template line number."""
    n, m = len(texts), len(pats)
    if n == 0 or m == 0:
        return {}
    rng = [p.block_kind == "range" for p in pats]
    # a fixed line (literal text only) is stronger evidence than a line with a wildcard (`- {{ .x }}`
    # matches any list item): it counts double, so `- --tensor-parallel-size` pairs with its own line
    weight = [2 if p.fixed else 1 for p in pats]
    best = [[0] * (m + 1) for _ in range(n + 1)]  # suffix form: matches in texts[a:] x pats[b:]
    hit = [[False] * m for _ in range(n)]
    for a in range(n - 1, -1, -1):
        row, nxt, t = best[a], best[a + 1], texts[a]
        h = hit[a]
        for b in range(m - 1, -1, -1):
            pat = pats[b].pattern
            skip = nxt[b] if nxt[b] >= row[b + 1] else row[b + 1]
            if pat is not None and pat.fullmatch(t):
                h[b] = True
                w = weight[b]
                take = nxt[b + 1] + w
                if rng[b] and nxt[b] + w > take:
                    take = nxt[b] + w
                row[b] = take if take >= skip else skip
            else:
                row[b] = skip
    matched: dict[int, int] = {}
    a = b = 0
    while a < n and b < m:
        if hit[a][b] and rng[b] and best[a][b] == best[a + 1][b] + weight[b]:
            matched[a] = pats[b].number  # another item of the same range
            a += 1
        elif hit[a][b] and best[a][b] == best[a + 1][b + 1] + weight[b]:
            matched[a] = pats[b].number
            a += 1
            b += 1
        elif best[a][b + 1] >= best[a + 1][b]:
            b += 1  # on a tie, pass a template line rather than leave a rendered line unmatched
        else:
            a += 1
    return matched


def _unrendered_blocks(pats: Sequence[TemplateLine], texts: Sequence[str]) -> set[int]:
    """Blocks that did not render in this document, known before aligning: ``define`` bodies (written
    where they are included, not here), and ``if``/``else``/``with``/``range`` blocks one of whose fixed
    lines (literal text, no action, directly in the block) no rendered line matches: a block writes all
    of those or none."""
    out: set[int] = set()
    fixed: dict[int, list[TemplateLine]] = {}
    for p in pats:
        if p.block_kind in ("define", "block"):
            out.add(p.block)
        elif p.block and p.fixed:
            fixed.setdefault(p.block, []).append(p)
    present = set(texts)
    for number, lines in fixed.items():
        for p in lines:
            assert p.pattern is not None
            if not any(p.pattern.fullmatch(t) for t in present):
                out.add(number)
                break
    return out


def _dead_blocks(pats: Sequence[TemplateLine], used: set[int]) -> set[int]:
    """``if``/``with`` blocks that cannot have rendered although some of their lines were matched: none of
    their fixed lines (literal text, no action) is in ``used``. A block renders all its fixed lines or
    none, so those matches belong elsewhere (a later ``range``, another block)."""
    blocks: dict[int, list[TemplateLine]] = {}
    for p in pats:
        if p.block and p.block_kind in ("if", "else", "with"):
            blocks.setdefault(p.block, []).append(p)
    dead = set()
    for number, lines in blocks.items():
        fixed = [p for p in lines if p.fixed]
        if fixed and not any(p.number in used for p in fixed) and any(p.number in used for p in lines):
            dead.add(number)
    return dead


def _assign(
    run: Sequence[int],
    texts: Sequence[str],
    actions: Sequence[TemplateLine],
    helpers: Mapping[str, Sequence[re.Pattern[str]]] | None,
) -> list[TemplateLine | None]:
    """The output line that wrote each of ``texts`` (consecutive unmatched rendered lines, indentation
    removed), given the ``actions`` between their matched neighbours, in order.

    One action (or none, or no helpers known): all lines to the first. Several: the actions write their
    lines one after the other, so they are consumed in order. An ``include`` of a known named template takes
    the lines its literal lines match, in the order of its body; any other action (``toYaml``) takes lines
    until one matches the first line of the next known ``include``; lines left over go to the last action.
    """
    if not actions:
        return [None] * len(run)
    known = helpers or {}
    if len(actions) == 1 or not any(x.include in known for x in actions if x.include):
        return [actions[0]] * len(run)
    owners: list[TemplateLine | None] = [None] * len(run)
    pos = 0
    for k, act in enumerate(actions):
        body = known.get(act.include) if act.include else None
        if body is not None:
            bi = 0
            while pos < len(texts) and bi < len(body):
                j = next((j for j in range(bi, len(body)) if body[j].fullmatch(texts[pos])), None)
                if j is None:
                    break
                owners[pos] = act
                pos += 1
                bi = j + 1
            continue
        nxt = next((x for x in actions[k + 1 :] if x.include and known.get(x.include)), None)
        start_next = known[nxt.include][0] if nxt is not None and nxt.include else None
        while pos < len(texts) and not (start_next is not None and start_next.fullmatch(texts[pos])):
            owners[pos] = act
            pos += 1
    for i in range(pos, len(texts)):
        owners[i] = actions[-1]
    return owners


class RegionIndex:
    """What :func:`align_document` needs of one parsed template for every document it wrote, built once: its
    :func:`regions`, and which regions have a pattern line that can match a given rendered text.

    A template that writes its documents one after the other (``---`` between literal Deployments) has as many
    regions as documents; aligning each document with every region was documents x documents alignments (1,000
    documents: a million). The index lets :func:`align_document` bound a region's score without aligning it: a
    rendered line matched in a region fullmatches one of that region's pattern lines, so a region's score is at
    most the number of rendered lines some pattern of it matches (:meth:`candidates`). Fixed lines are looked up by
    their text; a line with actions is tried only on a text that starts with its first literal piece and ends with
    its last (:attr:`TemplateLine.pieces`: ``  name: {{ .Release.Name }}-model-3`` only on the lines ending in
    ``-model-3``), each distinct pattern once per distinct text, the answers kept for the template's next
    documents."""

    def __init__(self, template: Sequence[TemplateLine]) -> None:
        self.template = template
        self.parts = regions(template)
        fixed: dict[str, set[int]] = {}
        wild: dict[str, tuple[re.Pattern[str], tuple[str, ...], set[int]]] = {}
        for ri, (a, b) in enumerate(self.parts):
            for t in template[a:b]:
                if t.pattern is None:
                    continue
                if t.fixed:  # fullmatches its one piece and nothing else
                    fixed.setdefault(t.pieces[0], set()).add(ri)
                else:
                    wild.setdefault(t.pattern.pattern, (t.pattern, t.pieces, set()))[2].add(ri)
        # patterns with actions by first piece, then last piece: (pattern, regions)
        ends: dict[str, dict[str, list[tuple[re.Pattern[str], set[int]]]]] = {}
        for pattern, pieces, where in wild.values():
            first, last = (pieces[0], pieces[-1]) if len(pieces) > 1 else ("", "")
            ends.setdefault(first, {}).setdefault(last, []).append((pattern, where))
        self._fixed = fixed
        self._ends = ends
        self._first_sizes = sorted({len(f) for f in ends})
        self._last_sizes = {f: sorted({len(x) for x in lasts}) for f, lasts in ends.items()}
        self._seen: dict[str, tuple[set[int], ...]] = {}
        #: regions aligned (:func:`align_document`) and patterns tried (:meth:`candidates`) with this index: the
        #: work the tests and ``bench/chart_map.py`` count
        self.aligned = 0
        self.tried = 0

    def candidates(self, text: str) -> tuple[set[int], ...]:
        """Sets whose union is the regions with a pattern line that fullmatches ``text`` (a rendered line,
        trailing blanks removed)."""
        found = self._seen.get(text)
        if found is not None:
            return found
        sets: list[set[int]] = []
        exact = self._fixed.get(text)
        if exact is not None:
            sets.append(exact)
        size = len(text)
        for first_size in self._first_sizes:
            if first_size > size:
                break
            first = text[:first_size]
            lasts = self._ends.get(first)
            if lasts is None:
                continue
            for last_size in self._last_sizes[first]:
                if first_size + last_size > size:
                    break
                for pattern, where in lasts.get(text[size - last_size :], ()):
                    self.tried += 1
                    if pattern.fullmatch(text):
                        sets.append(where)
        found = self._seen[text] = tuple(sets)
        return found


def align_document(
    rendered: Sequence[str],
    template: Sequence[TemplateLine],
    after: int = -1,
    helpers: Mapping[str, Sequence[re.Pattern[str]]] | None = None,
    index: RegionIndex | None = None,
) -> tuple[list[tuple[int, int | None] | None], int]:
    """:func:`align` ``rendered`` (one document) with the template region that wrote it.

    Each region (:func:`regions`) is aligned and the one matching most rendered lines wins; among equal
    ones, the first after region ``after`` (the one the previous document of the same template used:
    helm writes a template's documents in order), else the first. Returns ``(table, region index)``.

    ``index`` (:class:`RegionIndex` of ``template``, built here when not given) lets the regions that cannot win
    go unaligned, with the same result: the first region in that order (``after + 1``) is aligned first, scoring
    S; another wins only with more than S matched lines, so it has patterns matching at least S + 1 of the M
    rendered lines that some region can match, and so matching one of any M - S of them: only the regions
    matching one of the M - S lines with fewest regions are candidates, and of those only the ones whose bound
    (:meth:`RegionIndex.candidates`) exceeds the best score so far are aligned, in order. A template writing its
    documents in order then aligns about one region per document, not all of them.
    """
    if index is None or index.template is not template:
        index = RegionIndex(template)
    parts = index.parts
    first = after + 1 if 0 <= after + 1 < len(parts) else 0

    def scored(ri: int) -> tuple[int, list[tuple[int, int | None] | None]]:
        a, b = parts[ri]
        index.aligned += 1
        table = align(rendered, template[a:b], helpers)
        return matched_count(table), table

    best_score, best_table = scored(first)
    chosen = first
    if len(parts) == 1:
        return best_table, chosen
    lines = [index.candidates(r.rstrip()) for r in rendered if r.strip()]
    lines = [c for c in lines if c]
    need = len(lines) - best_score  # a region scoring more misses at most need - 1 of these lines
    if need <= 0:
        return best_table, chosen
    rare = sorted(lines, key=lambda c: sum(len(s) for s in c))[:need]
    pool = {ri for c in rare for s in c for ri in s}
    pool.discard(first)
    bounds = {ri: sum(1 for c in lines if any(ri in s for s in c)) for ri in pool}
    # the order of preference among equal scores: the regions after `after`, then the others, each in order
    for ri in sorted(pool, key=lambda r: (0 if r > after else 1, r)):
        if bounds[ri] <= best_score:
            continue
        score, table = scored(ri)
        if score > best_score:
            best_score, best_table, chosen = score, table, ri
    return best_table, chosen


def align(
    rendered: Sequence[str],
    template: Sequence[TemplateLine],
    helpers: Mapping[str, Sequence[re.Pattern[str]]] | None = None,
) -> list[tuple[int, int | None] | None]:
    """Template position of each rendered line.

    Args:
        rendered: the lines of one rendered document (the text after its ``# Source:`` comment).
        template: :func:`parse_template` of the template file that comment names.
        helpers: :func:`named_templates` of the chart: when several output lines could have written a
            rendered line (``{{- include "x.args" . }}`` then ``{{- toYaml .Values.extraArgs }}``), the
            ``include`` whose named template has a literal line matching it wins, and lines no helper
            explains go to the first output line that is not such an ``include``.

    Returns:
        One entry per rendered line: ``(template line, column)`` where the column is None when the
        rendered line matched a literal template line (the rendered column is then the template's), or
        the column of the action that wrote the line; None when no template line can be named (blank
        rendered lines, or a table larger than :data:`MAX_CELLS`).
    """
    rows = [i for i, r in enumerate(rendered) if r.strip()]
    n = len(rows)
    result: list[tuple[int, int | None] | None] = [None] * len(rendered)
    all_pats = [t for t in template if t.pattern is not None]
    if n == 0 or not all_pats or n * len(all_pats) > MAX_CELLS:
        return result
    texts = [rendered[i].rstrip() for i in rows]
    excluded = _unrendered_blocks(all_pats, texts)
    matched: dict[int, int] = {}
    for _ in range(3):
        matched = _lcs(texts, [t for t in all_pats if not excluded.intersection(t.enclosing)])
        dead = _dead_blocks(all_pats, set(matched.values())) - excluded
        if not dead:
            break
        excluded |= dead
    by_number = {t.number: t for t in template}
    first_num, last_num = template[0].number, template[-1].number  # a region keeps the file's numbers
    following = [last_num + 1] * (n + 1)  # template line of the next matched rendered line below
    for a in range(n - 1, -1, -1):
        following[a] = matched.get(a, following[a + 1])
    prev = first_num - 1  # template line of the last matched rendered line above (none yet)
    a = 0
    while a < n:
        if a in matched:
            prev = matched[a]
            result[rows[a]] = (prev, None)
            a += 1
            continue
        run = [a]  # the unmatched rendered lines up to the next matched one
        while run[-1] + 1 < n and run[-1] + 1 not in matched:
            run.append(run[-1] + 1)
        nxt_line = following[a]
        actions = [by_number[x] for x in range(prev + 1, nxt_line) if x in by_number and by_number[x].output]
        owners = _assign(run, [texts[r].strip() for r in run], actions, helpers)
        for r, action in zip(run, owners, strict=True):
            if action is not None:
                result[rows[r]] = (action.number, action.column)
            elif prev >= first_num:
                result[rows[r]] = (prev, by_number[prev].column)
            elif nxt_line <= last_num:
                result[rows[r]] = (nxt_line, by_number[nxt_line].column)
        a = run[-1] + 1
    return result
