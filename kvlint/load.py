"""Stage 1 of the pipeline: read YAML/JSON manifests into position-carrying documents.

``load_paths`` expands files, directories and ``-`` (standard input) and hands each file's content to
``load_text``, which returns :class:`~kvlint.types.Document` objects whose data is built from
:class:`~kvlint.source.LDict` / :class:`~kvlint.source.LList` so every value knows its 1-based
``file:line:column``.

How it works: the YAML *parser* (libyaml's, the parser of ``CSafeLoader``, when PyYAML was built with it, else the
pure-Python ``SafeLoader``; both give the same result) emits events carrying start marks, and one tight
loop builds LDict/LList/scalars straight from them. This skips PyYAML's node graph and its per-node
Python resolver call, scalar typing is memoised, and the cyclic garbage collector is paused while
documents are built (the result holds no reference cycles; see ``_gc_paused``); together about 5x faster
than composing nodes (thousands of documents per second). Entries' positions are kept packed, one int each,
and made :class:`~kvlint.source.Loc` objects only when a container's ``locs``/``key_locs`` are read. Scalars are typed by the YAML 1.1 implicit resolver exactly as ``yaml.safe_load`` does
(``8`` is ``int``, ``"8"`` is ``str``, ``0.9`` is ``float``, ``true`` is ``bool``), except that
timestamps and ``!!binary`` stay strings, as Kubernetes' own YAML-to-JSON conversion leaves them.
Aliases share the anchored object. JSON is read by the same loader (YAML is a superset of JSON).

Bad input never raises: each problem becomes a :class:`~kvlint.types.Finding` and the rest of the
input still loads.

* ``KV001`` (yaml-parse-error): syntax error (at the problem mark; documents before it are kept, and the
  file is re-read document by document so documents after it load too), an explicit tag whose value cannot
  have its type (``!!bool maybe``, ``!!int x``: kubectl rejects such a document), binary content, invalid UTF-8,
  nesting deeper than :data:`MAX_DEPTH`, alias expansion above :data:`MAX_NODES` values or above what
  the document's own text holds (:data:`ALIAS_FLOOR`), recursive aliases, files above ``max_file_bytes``
  (skipped unread), unreadable files.
* ``KV002`` (unrendered-template): Helm/Go template actions (``{{ .Values.x }}``, ``{{- include ... }}``)
  in a document, at the first such action. A document that does not parse and holds template actions
  gets KV002 instead of KV001 (the template is the likely cause). A document that parses is flagged only
  when an action stands outside any scalar (it shapes the YAML) or is Helm-only (``.Values``,
  ``.Release``, ``include``, ``toYaml``...): placeholders that controllers substitute themselves inside
  string values (KServe's ``--served-model-name={{.Name}}``) and Jinja chat templates are not flagged.
  See :func:`template_actions` for what counts as an action.

Duplicate keys: the later one wins (as ``kubectl`` does). Empty files and empty documents produce no
document and no finding. ``kind: List`` and ``*List`` kinds (``DeploymentList``) are flattened into one
Document per item (same ``index`` as the List).
"""

from __future__ import annotations

import codecs
import dataclasses
import fnmatch
import functools
import gc
import io
import math
import os
import re
import stat
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, TextIO

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from kvlint.kustomize_patch import strategic_merge_patch_finding, use_loader
from kvlint.paths import missing_path, real_path_inside, shown_path, walk_tree
from kvlint.source import LDict, LList, Loc, Packing
from kvlint.template_params import new_budget, process_template
from kvlint.types import Document, Finding, LoadResult, Mark
from kvlint.wording import shell_word

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MANIFEST_EXTENSIONS",
    "MAX_DEPTH",
    "MAX_NODES",
    "WalkSkip",
    "helm_first",
    "load_paths",
    "load_text",
    "template_actions",
]

#: Files larger than this are skipped with a KV001 finding (``--max-file-bytes`` raises it).
DEFAULT_MAX_FILE_BYTES = 16 * 2**20
#: Deepest mapping/sequence nesting accepted in a document (real manifests stay below ~30).
MAX_DEPTH = 200
#: Most values one document may expand to, counting every alias expansion (billion-laughs guard).
MAX_NODES = 2_000_000
#: Alias amplification guard: the values a document's aliases expand to (each alias counts the values of the
#: value it names) may not exceed the characters of the document read so far, or this floor if that is
#: larger. A value takes at least two characters of YAML text, so aliases may at most about double what the
#: document's own text holds; real manifests use few, small aliases (an anchored ``env`` list reused by two
#: containers). Without it a 30 KB ``kind: List`` of 10,000 ``*pod`` aliases became 10,000 analysed pods.
ALIAS_FLOOR = 200
#: Extensions picked up when walking a directory (explicitly named files are read whatever their name).
MANIFEST_EXTENSIONS = (".yaml", ".yml", ".json")

#: The YAML event parser: libyaml's ``CParser`` (the parser half of ``CSafeLoader``, without its
#: constructor and resolver, which the loader does not use) when PyYAML was built with libyaml, else the
#: pure-Python ``SafeLoader``; only their ``get_event``/``check_event``/``dispose`` are used.
_Loader: Any = getattr(getattr(yaml, "_yaml", None), "CParser", None) if yaml.__with_libyaml__ else None
_Loader = _Loader or yaml.SafeLoader

_TAG = "tag:yaml.org,2002:"
#: Text that starts an inline suppression comment (``# kvlint: ignore KV202=reason``); files containing it
#: keep their text in ``LoadResult.source_texts`` for :func:`kvlint.pipeline.apply_comment_suppressions`.
SUPPRESSION_MARKER = "kvlint:"
#: Other spellings of a suppression comment's start (``# KVLINT: disable=KV202``, ``# Kvlint: ignore ...``,
#: ``# kvlint ignore ...``): kvlint does not read them, and KV003 says so (:mod:`kvlint.suppress`), so files holding
#: them keep their text too. None of them is in a ``kvlint.io/ignore`` annotation's key.
SUPPRESSION_VARIANTS = ("# kvlint", "#kvlint", "KVLINT", "Kvlint", "KvLint", "KVLint")
#: What every spelling above holds one of (:func:`holds_suppression_marker`'s first test; ``tests/test_perf54.py``
#: checks each spelling holds one).
_MARKER_CORES = ("lint", "LINT", "Lint")


def holds_suppression_marker(text: str) -> bool:
    """Whether ``text`` may hold an inline suppression comment, however spelled (:data:`SUPPRESSION_MARKER`,
    :data:`SUPPRESSION_VARIANTS`): the loader keeps such a file's text for
    :func:`kvlint.suppress.apply_comment_suppressions`. Substring scans only (a case-insensitive pattern is tried
    at every character: some 30x slower). Every spelling holds ``lint``, ``LINT`` or ``Lint``
    (``_MARKER_CORES``): a text with none of them, nearly every file and every review's string, is answered
    in those three scans instead of the seven spellings' (asked of every file loaded, the seven were 1% of a
    corpus check)."""
    lower, upper, title = _MARKER_CORES
    if lower not in text and upper not in text and title not in text:
        return False
    return SUPPRESSION_MARKER in text or any(v in text for v in SUPPRESSION_VARIANTS)


_STR = _TAG + "str"
_MERGE = _TAG + "merge"
_NULL = _TAG + "null"
_INT = _TAG + "int"
_SAFE = SafeConstructor()
# Scalar tags converted to Python values; every other scalar (str, timestamp, binary, custom !tags) stays
# the text as written.
_SCALAR_CONSTRUCTORS: dict[str, Any] = {
    _TAG + "int": _SAFE.construct_yaml_int,
    _TAG + "float": _SAFE.construct_yaml_float,
    _TAG + "bool": _SAFE.construct_yaml_bool,
    _NULL: _SAFE.construct_yaml_null,
}

# A ``---`` document marker at the start of a line. Besides LF (and CR, NEL, rewritten to LF by
# _normalise_breaks), YAML 1.1 and libyaml break lines at U+2028 / U+2029 (kept as written: inside quoted
# scalars they are content), so a marker may follow those too.
_DOC_START = re.compile(r"(?:^|(?<=[\u2028\u2029]))---(?=[ \t\r\u2028\u2029]|$)", re.M)
_CR_OR_NEL = re.compile(r"\r(?!\n)|\x85")
# A YAML comment line: optional blanks, then ``#``.
_COMMENT_LINE = re.compile(r"[^\S\n\u2028\u2029]*#")

# Helm / Go template actions. A Go action starts (after ``{{`` and an optional trim ``-``) with a field or
# variable (``.Values``, ``.``, ``$x``), a comment ``/*``, or a template keyword / Helm function followed by
# whitespace or the closing braces. Jinja expressions as found in chat templates (``{{- bos_token }}``,
# ``{{ message['content'] }}``, ``{{ raise_exception(...) }}``, ``{{ '<s>' + x }}``) do not match.
_GO_WORDS = (
    "if|else|end|range|with|define|block|template|include|toYaml|toJson|toPrettyJson|fromYaml|tpl|"
    "default|printf|required|quote|squote|nindent|indent|lookup|fail|not|and|or|eq|ne|len|index|"
    "trim|trimSuffix|trimPrefix|upper|lower|replace|b64enc|b64dec|dict|list|hasKey|empty|coalesce|"
    "ternary|semverCompare|toString|cat|join|contains|hasPrefix|hasSuffix|sha256sum|merge|break|continue"
)
# The opening of an action; its end is the first ``}}`` after it on the same line (found with str.find in
# :func:`_action_spans`, which keeps the scan linear: a lazy ``[^\n]*?\}\}`` regex re-scans the rest of the
# line from every ``{{``, quadratic on a long line of ``{{ .`` without ``}}``).
_ACTION_OPEN = re.compile(r"\{\{-?\s*(?:[.$]|/\*|(?:" + _GO_WORDS + r")(?=[\s}]))")
# The same openings, matched faster: the word (the characters up to the next blank or ``}``) is looked up in
# a set instead of being tried against each alternative of _GO_WORDS in turn. A match whose ``word`` group
# is set counts only when the word is one of _GO_WORDS (see _open_action). The word is at most as long as the
# longest of _GO_WORDS: an unbounded ``[^\s}]+`` ran to the end of the line from every ``{{`` of a line of
# ``{{{{...`` (quadratic); a longer word is not one of _GO_WORDS, and now simply does not match.
_GO_WORD_SET = frozenset(_GO_WORDS.split("|"))
_GO_WORD_MAX = max(len(w) for w in _GO_WORD_SET)
_ACTION_OPEN_WORD = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?P<word>[^\s}]{1," + str(_GO_WORD_MAX) + r"})(?=[\s}]))"
)
# The next opening, found by one search: _ACTION_OPEN at a ``{{`` not followed by another ``{`` (after ``{{{`` no
# opening matches: a run of braces costs no Python step per brace). The same openings as _open_action, found
# in C: a search for a ``{{`` then a match there (_open_action) made two calls and a Python step for every
# ``{{`` that opens no action (about 40% of template_actions on the corpus's templates).
_ACTION_SEARCH = re.compile(r"\{\{(?!\{)-?\s*(?:[.$]|/\*|(?:" + _GO_WORDS + r")(?=[\s}]))")
# Actions that only Helm understands (built-in objects or Helm/sprig functions at the start); these are
# flagged even inside string values, where other engines' own placeholders (KServe's ``{{.Name}}`` in a
# ServingRuntime) are left alone.
_HELM_ONLY = re.compile(
    r"\{\{-?\s*(?:\$?\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|"
    r"(?:include|template|define|toYaml|toJson|tpl|required|nindent|indent|lookup)\b|[^}\n]*\.Values\b)"
)

_KV001_FIX = "fix the file so it parses as YAML (kubectl apply --dry-run=client -f FILE shows the same error)"
_KV002_FIX = (
    "render the chart first and lint the output: helm template RELEASE CHART -f values.yaml | kvlint check -"
)


# --------------------------------------------------------------------------------------------------
# public API


def load_paths(
    paths: Sequence[str],
    *,
    stdin: TextIO | BinaryIO | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    exclude: Sequence[str] = (),
    skip: WalkSkip | None = None,
) -> LoadResult:
    """Read every manifest named by ``paths``.

    Args:
        paths: files, directories (walked recursively, picking ``.yaml``/``.yml``/``.json`` files in sorted
            order, skipping hidden directories and files such as ``.git``) and ``-`` for standard input.
            A file named explicitly is read whatever its extension. The same file is read once. A file met
            in a walk none of whose documents is a Kubernetes object gets no "not an object" KV001
            (:func:`skip_walked_non_objects`); one named explicitly, or stdin, does.
        stdin: stream read for ``-`` (text or binary); defaults to ``sys.stdin``.
        max_file_bytes: files (and stdin) larger than this many bytes are skipped with a KV001 finding.
        exclude: ``fnmatch`` globs; a file or directory whose path (as joined from the argument) or base
            name matches any of them is skipped.
        skip: what a directory walk leaves to a renderer (:class:`WalkSkip`: the charts and kustomizations
            :func:`kvlint.render.plan_walk` found in it, which are rendered instead of read as plain files).

    Returns:
        LoadResult with documents in input order, findings (KV001/KV002) and ``files``, the number of
        files (stdin counting as one) that were read or attempted, skipped ones included.

    Raises:
        FileNotFoundError: a path does not exist (raised before anything is read; the CLI exits 2).
    """
    for p in paths:
        if p != "-" and not os.path.exists(p):
            raise FileNotFoundError(missing_path(p))
    with _gc_paused():
        return _load_paths(paths, stdin, max_file_bytes, exclude, skip)


def _load_paths(
    paths: Sequence[str],
    stdin: TextIO | BinaryIO | None,
    max_file_bytes: int,
    exclude: Sequence[str],
    skip: WalkSkip | None = None,
) -> LoadResult:
    """Body of :func:`load_paths` (paths already checked to exist)."""
    result = LoadResult()
    seen: set[str] = set()
    real_dirs: dict[str, str] = {}
    for p in paths:
        if p == "-":
            if "-" in seen:
                continue
            seen.add("-")
            result.files += 1
            _merge(result, _load_stream(stdin if stdin is not None else sys.stdin, max_file_bytes))
            continue
        unreadable: list[OSError] = []
        outside: list[tuple[str, str]] = []
        walked = os.path.isdir(p)  # a file named on the command line keeps every KV001
        for f in _expand(p, exclude, unreadable, outside, skip):
            key = _realpath(f, real_dirs)
            if key in seen:
                continue
            seen.add(key)
            result.files += 1
            loaded = _load_file(f, max_file_bytes)
            if walked:
                skip_walked_non_objects(loaded)
            _merge(result, loaded)
        result.findings.extend(outside_finding(link, target, p) for link, target in outside)
        for e in unreadable:
            where = str(e.filename or p)
            result.findings.append(
                Finding(
                    "KV001",
                    f"cannot read directory: {e.strerror or e}; the manifests in it were not linted",
                    Loc(where, 1, 1),
                    fix="give the user running kvlint read and execute permission on the directory, or leave it out",
                )
            )
    return result


def _realpath(path: str, real_dirs: dict[str, str]) -> str:
    """``os.path.realpath(path)``, resolving each directory once (``real_dirs`` keeps them): for a file that
    is not a symbolic link, the real path is its directory's real path joined with its name."""
    return _realpath_stat(path, real_dirs)[0]


def _realpath_stat(path: str, real_dirs: dict[str, str]) -> tuple[str, os.stat_result | None]:
    """:func:`_realpath` of ``path`` and, when ``path`` is not a symbolic link, its ``os.lstat``, which is then
    what ``os.stat`` would say (the two differ only for a link), so a caller needs no second call; None when
    ``path`` is a link or could not be looked at."""
    head, tail = os.path.split(path)
    if not tail or tail in (".", ".."):
        return os.path.realpath(path), None
    st: os.stat_result | None
    try:
        st = os.lstat(path)  # what os.path.islink asks
    except (OSError, ValueError):
        st = None  # (islink: not a link)
    else:
        if stat.S_ISLNK(st.st_mode):
            return os.path.realpath(path), None
    real = real_dirs.get(head)
    if real is None:
        real = real_dirs[head] = os.path.realpath(head)
    return os.path.join(real, tail), st


#: A BOM at the start of the line after a document separator: kept is the separator, a line of ``---`` followed by
#: nothing but blanks or by a ``#`` comment after a blank (kubectl's YAMLReader splits at ``---`` followed by blanks
#: or a comment, k8s.io/apimachinery pkg/util/yaml/decoder.go ``YAMLReader.Read``; libyaml needs the blank before
#: the ``#`` to read it as a document start).
_BOM_AFTER_SEPARATOR = re.compile("^(---(?:[ \t]+#[^\r\n]*|[ \t]*)\r?\n)\ufeff", re.M)

#: A lone UTF-16 surrogate (not encodable as UTF-8).
_SURROGATE = re.compile("[\ud800-\udfff]")


def load_text(data: str | bytes, path: str, *, line_offset: int = 0) -> LoadResult:
    """Load one file's content (``path`` is only used in locations and messages).

    Args:
        data: the content; bytes are decoded as UTF-8 (a UTF-8 BOM is dropped; UTF-16/32 with a BOM are
            accepted too). Text is used as is, except that a lone surrogate (from a JSON ``\\ud800`` escape)
            is read as U+FFFD, as the API server's JSON decoder stores it.
        path: the name to put in every :class:`~kvlint.source.Loc` (``-`` for standard input).
        line_offset: lines before ``data`` in that file, added to every line of a location (text taken from
            inside a file, such as a ``helm.values`` block scalar).

    Returns:
        LoadResult with ``files == 1``. Never raises for bad content: binary data, invalid UTF-8, YAML
        errors, nesting/alias bombs become KV001 findings; unrendered templates KV002.
    """
    result = LoadResult(files=1)
    if isinstance(data, (bytes, bytearray, memoryview)):
        text, problem = _decode(bytes(data), path)
        if problem is not None:
            result.findings.append(problem)
            return result
        assert text is not None
    else:
        # a leading BOM, as the bytes are read (:func:`_decode` drops it): libyaml does not count it in a column,
        # so the line-1 hints that read the text at an error's column (the early closing quote) read one too far
        text = data[1:] if data.startswith("\ufeff") else data
        if "\x00" in text:
            result.findings.append(_nul_finding(path, text, text.index("\x00")))
            return result
        if _SURROGATE.search(text):
            # only text decoded from JSON escapes holds these (an admission object's "\ud800"): the API
            # server's Go decoder stores U+FFFD for each, so that is what is read (libyaml takes UTF-8)
            text = _SURROGATE.sub("\ufffd", text)
    escaped: dict[int, list[int]] = {}
    if _JSON_START.match(text) and _SURROGATE_ESCAPE.search(text):
        text = _json_surrogates(text)
    if _JSON_START.match(text) and _YAML_RAW.search(text):
        raw = text
        text, problem = _json_raw_escaped(text, path)
        if problem is not None:
            result.findings.append(problem)
            return result
        escaped = _escaped_columns(raw)
    text = _normalise_breaks(text)
    result.read_paths.add(path)
    if "# Source: " in text or holds_suppression_marker(text):
        # rendered Helm output (kvlint.render's template mapping) or inline suppressions (the pipeline)
        result.source_texts[path] = text
    with _gc_paused():
        before = len(result.findings)
        _load_decoded(text, path, result, line_offset)
        if (
            path.endswith(".json")
            and len(result.findings) > before
            and not result.documents
            and all(
                f.rule == "KV001" and f.message.startswith(_SYNTAX_ERROR) for f in result.findings[before:]
            )
            and _JSONC_COMMENT.search(text)
            and not _API_VERSION.search(text)
        ):
            # a .json file with // or /* comment lines (JSONC) that does not parse and names no apiVersion is no
            # Kubernetes manifest (every object, List included, has one; kubectl's JSON decoder takes no comments):
            # an editor's or build tool's configuration (tsconfig.json, devcontainer.json, VS Code settings) met
            # walking a repository is not reported as broken. Only a syntax error is left unreported so: a limit
            # kvlint refuses at (nesting depth, alias expansion) is no proof the file is not a manifest kubectl
            # applies (a YAML Deployment named .json, with // lines in a block scalar, hid itself behind one)
            del result.findings[before:]
        if escaped:
            _unshift_columns(result.findings, before, escaped, line_offset)
            _unshift_documents(result.documents, escaped, line_offset)
    if (
        path != "-"
        and not isinstance(data, str)
        and len(data) <= _ENGINE_SCAN_BYTES
        and not bytes(data[:4]).startswith(_WIDE_BOMS)
        and any(f.rule == "KV002" for f in result.findings)
    ):
        # what kvlint.sizing.unread would find reading the file again, known now: the whole file, in UTF-8
        # (unread reads up to 1 MiB as UTF-8; line breaks, normalised here, are not in an engine's name)
        result.engine_named[path] = _mentions_engine(text)
    return result


@functools.cache
def _engine_pattern_anycase() -> re.Pattern[str]:
    """A serving engine named in a template's or values file's text (image, module or launcher), in text that is
    not ASCII: :data:`kvlint.engines.images.ENGINE_TEXT` case-insensitive. Lower-cased ASCII text is searched
    through :func:`kvlint.engines.images.names_engine` instead (in ASCII text ``re.IGNORECASE`` pairs each letter
    with its other case only, so the two searches agree; the lower-cased search is ~7x faster). Imported on first
    use: loading alone does not import the engines package."""
    from kvlint.engines.images import ENGINE_TEXT

    return re.compile(ENGINE_TEXT.pattern, re.I)


def _mentions_engine(text: str) -> bool:
    """Whether ``text`` names a serving engine (vLLM, SGLang, TGI, or an image of one of them kvlint knows:
    :data:`kvlint.engines.images.ENGINE_TEXT`), in any case (:func:`kvlint.sizing.unread`'s test, here for
    :func:`load_text`)."""
    if text.isascii():
        from kvlint.engines.images import names_engine

        return names_engine(text.lower())
    return _engine_pattern_anycase().search(text) is not None


#: Files up to this size (bytes) that have a KV002 get :attr:`LoadResult.engine_named` from the text read
#: (kvlint.sizing's ``_MAX_SCAN_BYTES``: a larger one is read again, in part, as before).
_ENGINE_SCAN_BYTES = 1 << 20
#: Byte-order marks of the UTF-16/32 files the loader decodes and :func:`kvlint.sizing.unread` does not.
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class _gc_paused:  # noqa: N801 - used as the function it was: ``with _gc_paused():``
    """Pause the cyclic garbage collector while documents are built; a no-op when it is already paused.

    The built documents hold no reference cycles, yet every LDict/LList/Loc is a GC-tracked object, and a
    large input creates millions of them; pausing the collector while they are created saves rescanning
    them again and again during loading. On exit the collector is simply re-enabled: nothing is moved
    between generations. (An earlier version ended with ``gc.freeze(); gc.unfreeze()``, which moves every
    tracked object, garbage cycles included, into the oldest generation; CPython only runs a full
    collection when the objects that survived young collections exceed 25% of that generation, so in a
    long-running process such as the admission webhook, which loads one review after another, the oldest
    generation kept growing and its cycles were never collected: about 11 KB per review.)

    A class rather than a ``contextlib.contextmanager`` generator: entered once per file loaded, the
    generator's wrapper cost ~4 us a use (~0.4% of a corpus check), this ~1 us.
    """

    __slots__ = ("_paused",)

    def __enter__(self) -> None:
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            gc.enable()


def template_actions(text: str) -> list[tuple[int, int, str]]:
    """Helm/Go template actions in ``text`` outside YAML comment lines.

    Returns ``(line, column, action)`` triples, 0-based, in order. An action is ``{{``, an optional
    ``-``, optional whitespace, then ``.``/``$``/``/*`` or a template keyword or Helm function
    (``if``, ``range``, ``end``, ``include``, ``toYaml``, ...) and a closing ``}}`` on the same line.
    Jinja expressions (chat templates) such as ``{{- bos_token }}`` do not count.
    """
    if "{{" not in text:
        return []
    out: list[tuple[int, int, str]] = []
    line = 0
    pos = 0
    line_start = 0
    comment = _COMMENT_LINE.match(text, 0) is not None
    unicode_breaks = "\u2028" in text or "\u2029" in text
    for start, end in _action_spans(text):
        # line and line start advanced over text[pos:start] only: linear even with thousands of actions on
        # one long line
        breaks = text.count("\n", pos, start)  # _breaks(text, pos, start, unicode_breaks), in line
        if unicode_breaks:
            breaks += text.count("\u2028", pos, start) + text.count("\u2029", pos, start)
        if breaks:
            line += breaks
            nl = text.rfind("\n", pos, start)
            if unicode_breaks:
                nl = max(nl, text.rfind("\u2028", pos, start), text.rfind("\u2029", pos, start))
            line_start = nl + 1
            comment = _COMMENT_LINE.match(text, line_start) is not None
        pos = start
        if comment:
            continue
        out.append((line, start - line_start, text[start:end]))
    return out


def _open_action(text: str, pos: int) -> re.Match[str] | None:
    """``_ACTION_OPEN.match(text, pos)``, with the same result (the same end), found faster (the tests' reference
    for the openings :data:`_ACTION_SEARCH` finds)."""
    m = _ACTION_OPEN_WORD.match(text, pos)
    if m is not None and m.group("word") is not None and m.group("word") not in _GO_WORD_SET:
        return None
    return m


def _action_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each template action in ``text``: an opening (:data:`_ACTION_OPEN`) and the first
    ``}}`` after it on the line where the opening ends; non-overlapping, left to right.

    Linear in ``len(text)``: each opening is found once (:data:`_ACTION_SEARCH`), and when the rest of a line
    holds no ``}}`` the scan moves on to the next line (no later ``{{`` on that line can close either)."""
    n = len(text)
    pos = 0
    eol = -1  # end of the line being scanned (found once per line, not once per action)
    out: list[tuple[int, int]] = []
    search = _ACTION_SEARCH.search
    find = text.find
    while True:
        m = search(text, pos)
        if m is None:
            return out
        end = m.end()
        if end > eol:
            eol = find("\n", end)
            if eol < 0:
                eol = n
        j = find("}}", end, eol)
        if j < 0:
            pos = eol
            continue
        out.append((m.start(), j + 2))
        pos = j + 2


# --------------------------------------------------------------------------------------------------
# files


@dataclasses.dataclass(frozen=True)
class WalkSkip:
    """What a directory walk (:func:`_expand`) does not read as plain files because a renderer reads it
    (:func:`kvlint.render.plan_walk`): every path normalised (``os.path.normpath``) as the walk joins it from the
    directory named. ``prune``: directories not entered at all (a Helm chart, rendered whole); ``files_in``:
    directories whose own files are not read (a kustomization's directory and the plain folders below it), their
    subdirectories still walked; ``files``: single files not read (a file a rendered kustomization names outside
    such a directory)."""

    prune: frozenset[str] = frozenset()
    files_in: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()

    def __or__(self, other: WalkSkip) -> WalkSkip:
        return WalkSkip(self.prune | other.prune, self.files_in | other.files_in, self.files | other.files)

    def __bool__(self) -> bool:
        return bool(self.prune or self.files_in or self.files)


def _expand(
    path: str,
    exclude: Sequence[str],
    errors: list[OSError] | None = None,
    outside: list[tuple[str, str]] | None = None,
    skip: WalkSkip | None = None,
) -> Iterator[str]:
    """Files named by one argument: the file itself, or a sorted recursive walk of a directory.

    Directories that cannot be listed (permissions) are appended to ``errors`` instead of being skipped
    silently. In a walk, a symbolic link to a file whose real path is outside the directory walked (its real
    path) is not given: ``(link, where it leads)`` (:func:`link_chain`) is appended to ``outside`` (:func:`outside_finding`), as
    kustomize's default load restrictor (``LoadRestrictionsRootOnly``, ``api/krusty`` ``--load-restrictor``)
    refuses files outside a kustomization's root -- a pull request's ``x.yaml -> /proc/self/environ`` must not
    make a CI run read the runner's files. Links to directories are not followed (``os.walk``'s default); a
    file named on the command line is read wherever it points. ``skip``: directories and files of the walk left
    to a renderer (:class:`WalkSkip`), not given."""
    if _excluded(path, exclude):
        return
    if not os.path.isdir(path):
        yield shown_path(path)
        return
    found: list[str] = []
    real_dir = os.path.realpath(path)
    for root, dirs, files in walk_tree(path, onerror=errors.append if errors is not None else None):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not _excluded(os.path.join(root, d), exclude)]
        if skip:
            dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(root, d)) not in skip.prune]
            if os.path.normpath(root) in skip.files_in:
                continue
        for name in files:
            if name.startswith(".") or not name.lower().endswith(MANIFEST_EXTENSIONS):
                continue
            full = os.path.join(root, name)
            if _excluded(full, exclude):
                continue
            if skip and os.path.normpath(full) in skip.files:
                continue
            if os.path.islink(full):
                if not real_path_inside(full, real_dir, below=True, resolved=True):
                    if outside is not None:
                        outside.append((full, link_chain(full)))
                    continue
            found.append(full)
    # sorted by path components, so a/b.yaml, a/c/d.yaml, a/e.yaml (a tree listing's order). Every path
    # os.walk gives is ``path`` joined with the rest, so the rest is the relative path (os.path.relpath
    # gives the same, slower).
    # Each is named as reports name files (:func:`kvlint.paths.shown_path`: ``apps/x.yaml`` for ``kvlint check .``,
    # as the files a chart or kustomization of the walk renders are named).
    prefix = os.path.join(path, "")
    if all(f.startswith(prefix) for f in found):
        yield from map(shown_path, sorted(found, key=lambda f: f[len(prefix) :].split(os.sep)))
    else:  # pragma: no cover - os.walk joins onto the path as given
        yield from map(shown_path, sorted(found, key=lambda f: os.path.relpath(f, path).split(os.sep)))


#: Most links :func:`link_chain` follows (Linux follows 40 before ELOOP; a chain of 8 is already contrived).
MAX_LINK_HOPS = 8


def link_chain(link: str, max_hops: int = MAX_LINK_HOPS) -> str:
    """Where the symbolic link ``link`` leads, for a message: each hop's target as its link writes it
    (``a.yaml -> /proc/self/environ``, not the process id ``/proc/self`` resolves to), joined by ``->``, at
    most ``max_hops`` of them (then ``-> ...`` and the real path in parentheses). The real path is added too
    when the last hop is relative and leads elsewhere than it reads (through a linked directory: ``d/x.yaml
    (/etc/x.yaml)`` with ``d -> /etc``). A loop is said (``(a loop)``). A link that is gone since (no hop
    read) gives its real path."""
    hops: list[str] = []
    here, seen, loop = link, {os.path.abspath(link)}, False
    while len(hops) < max_hops:
        try:
            written = os.readlink(here)
        except OSError:  # not a link (the end of the chain), or replaced since
            break
        hops.append(written)
        here = os.path.abspath(os.path.join(os.path.dirname(here), written))
        if here in seen:
            loop = True
            break
        seen.add(here)
    if not hops:
        return os.path.realpath(link)
    text = " -> ".join(hops)
    if loop:
        return text + " (a loop)"
    real = os.path.realpath(link)
    if os.path.islink(here):
        return f"{text} -> ... ({real})"
    if not os.path.isabs(hops[-1]) and real != here:
        text += f" ({real})"  # a relative hop through a linked directory (d/x.yaml with d -> /etc)
    return text


def outside_finding(link: str, target: str, walked: str) -> Finding:
    """The KV001 note (info) at a symbolic ``link`` met walking the directory ``walked`` whose ``target`` (where
    it leads, :func:`link_chain`: each hop as its link writes it) lies outside it, which :func:`_expand` did not
    read."""
    return Finding(
        "KV001",
        f"not read: this symbolic link points outside the directory walked ({walked}), to {target}; kvlint "
        "reads only files inside a directory it walks",
        Loc(link, 1, 1),
        fix="name the file on the command line to lint it (kvlint check FILE), or walk a directory that holds "
        "its target",
        severity="info",
    )


def _excluded(path: str, exclude: Sequence[str]) -> bool:
    """``path`` matches one of the ``exclude`` fnmatch globs: as written, normalised, absolute, or by its
    base name; a glob's trailing ``/`` is ignored (``charts/`` excludes the directory ``charts``). A glob with
    no ``*``, ``?`` or ``[`` matches only itself, so those are looked up in a set (:func:`_exclude_patterns`):
    ``kvlint diff`` passes every file git ignores as such a glob, and matching each file read against each of
    thousands of them one by one was quadratic."""
    if not exclude:
        return False
    literal, wild = _exclude_patterns(tuple(exclude), os.getcwd())
    norm = os.path.normpath(path)
    forms = {os.path.normcase(f) for f in (path, norm, os.path.abspath(norm), os.path.basename(norm))}
    if not forms.isdisjoint(literal):
        return True
    return any(fnmatch.fnmatch(f, gl) for f in forms for gl in wild)


@functools.lru_cache(maxsize=16)
def _exclude_patterns(exclude: tuple[str, ...], cwd: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The forms of the ``exclude`` globs :func:`_excluded` matches (each glob without its trailing ``/``,
    normalised, and absolute from ``cwd`` when relative and without wildcards), split into those without a
    wildcard character (``fnmatch`` matches them by equality, after ``os.path.normcase``) and the rest."""
    literal: set[str] = set()
    wild: list[str] = []
    for g in exclude:
        glob = g.rstrip("/") or g
        globs = {glob, os.path.normpath(glob)}
        if not any(ch in glob for ch in "*?[") and not os.path.isabs(glob):
            globs.add(os.path.normpath(os.path.join(cwd, glob)))  # os.path.abspath in ``cwd``
        for gl in sorted(globs):
            if any(ch in gl for ch in "*?["):
                wild.append(gl)
            else:
                literal.add(os.path.normcase(gl))
    return frozenset(literal), tuple(dict.fromkeys(wild))


def _too_big(path: str, size: int, limit: int) -> Finding:
    return Finding(
        "KV001",
        f"file skipped: {size} bytes is more than the {limit}-byte limit (--max-file-bytes)",
        Loc(path, 1, 1),
        fix=f"raise the limit (kvlint check --max-file-bytes {max(size + 1, 2 * limit)}) or split the file",
    )


def read_upto(fh: BinaryIO, size: int, limit: int) -> bytes:
    """The bytes of the open file ``fh`` up to ``limit + 1`` (one more than the limit, so that a file over it
    is seen to be): ``size`` bytes (what ``stat`` said) and then whatever the file grew by since. A single read
    of ``limit + 1`` bytes would allocate the whole limit (16 MiB by default) for every small manifest.
    Raises OSError as the reads do."""
    return _upto(fh.read, size, limit)


def _upto(read: Callable[[int], bytes], size: int, limit: int) -> bytes:
    """:func:`read_upto` with ``read(n)`` reading the next ``n`` bytes (fewer only at the end of the file)."""
    data = read(min(size, limit) + 1)
    if size < len(data) <= limit:
        data += read(limit + 1 - len(data))
    return data


def read_file(path: str, size: int, limit: int) -> bytes:
    """``read_upto(open(path, "rb"), size, limit)``: the file's bytes up to ``limit + 1`` (``size``: what
    ``stat`` said), read with ``os.open``/``os.read`` on the descriptor. A file object costs about as much
    again as the reads of a small manifest (its buffer, and an ``fstat`` and an ``isatty`` ioctl the reads do
    not need: ~11 -> ~6 us a file, and a check reads every file twice, for the context and in its turn).
    Raises OSError as the reads do."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return _upto(functools.partial(_read_fd, fd), size, limit)
    finally:
        os.close(fd)


def read_head(path: str, n: int) -> bytes:
    """``open(path, "rb").read(n)``: the first ``n`` bytes of the file (fewer when it is shorter), read as
    :func:`read_file` reads. Raises OSError as the reads do."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return _read_fd(fd, n)
    finally:
        os.close(fd)


def _read_fd(fd: int, n: int) -> bytes:
    """The next ``n`` bytes of the descriptor ``fd``, fewer at the end of the file (as a buffered file object's
    ``read(n)``: the reads go on after a short one until the end)."""
    data = os.read(fd, n)
    if not data or len(data) == n:
        return data
    parts = [data]
    got = len(data)
    while got < n:
        more = os.read(fd, n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _load_file(path: str, limit: int) -> LoadResult:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            # a FIFO or device would block or never end: never open one
            return LoadResult(
                findings=[
                    Finding(
                        "KV001",
                        "not a regular file (a named pipe, socket or device); skipped",
                        Loc(path, 1, 1),
                        fix="pass regular manifest files, or pipe the content through stdin: cat FILE | kvlint check -",
                    )
                ]
            )
        size = st.st_size
        if size > limit:
            return LoadResult(findings=[_too_big(path, size, limit)])
        data = read_file(path, size, limit)
    except OSError as e:
        reason = e.strerror or str(e)
        return LoadResult(findings=[Finding("KV001", f"cannot read file: {reason}", Loc(path, 1, 1))])
    if len(data) > limit:  # grew while we looked
        return LoadResult(findings=[_too_big(path, len(data), limit)])
    return load_text(data, path)


def _load_stream(stream: TextIO | BinaryIO | io.IOBase, limit: int) -> LoadResult:
    src: Any = getattr(stream, "buffer", stream)
    try:
        data = src.read(limit + 1)
    except (OSError, ValueError) as e:
        return LoadResult(findings=[Finding("KV001", f"cannot read standard input: {e}", Loc("-", 1, 1))])
    if data is None:
        data = b""
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > limit:
        return LoadResult(findings=[_too_big("-", size, limit)])
    if not data.strip():
        # `helm template ... | kvlint check -` passes an empty stream when the command before the pipe fails
        return LoadResult(
            findings=[
                Finding(
                    "KV001",
                    "standard input is empty: there is nothing to lint",
                    Loc("-", 1, 1),
                    fix="check the command that feeds kvlint (it may have failed; use `set -o pipefail` in CI)",
                )
            ]
        )
    return load_text(data, "-")


def _merge(into: LoadResult, part: LoadResult) -> None:
    into.documents.extend(part.documents)
    into.findings.extend(part.findings)
    into.source_texts.update(part.source_texts)
    into.read_paths.update(part.read_paths)
    into.engine_named.update(part.engine_named)
    into.unparsed_configmaps.extend(part.unparsed_configmaps)


# --------------------------------------------------------------------------------------------------
# decoding


def _line_col(text: str | bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of a 0-based offset."""
    nl = "\n" if isinstance(text, str) else b"\n"
    line = text.count(nl, 0, offset)  # type: ignore[arg-type]
    start = text.rfind(nl, 0, offset) + 1  # type: ignore[arg-type]
    return line + 1, offset - start + 1


#: Text kubectl decodes as JSON: its first character after whitespace (and a BOM) is ``{``
#: (k8s.io/apimachinery ``pkg/util/yaml/decoder.go``: ``NewYAMLOrJSONDecoder`` sniffs the stream with
#: ``hasJSONPrefix``, then a ``json.Decoder`` reads it), and the next one after JSON's whitespace a ``"`` or ``}``,
#: as a JSON object goes on: a Helm or Mustache template that starts with ``{{`` (``{{- if .Values.x }}``) is a
#: template to render (KV002), not JSON that kubectl refuses.
_JSON_START = re.compile(r'[\ufeff]?[ \t\r\n]*\{[ \t\r\n]*["}]')
#: Characters JSON takes raw inside a string that the YAML reader does not read as JSON means them: U+0085, U+2028
#: and U+2029, which YAML counts as line breaks (and folds inside a quoted scalar), and U+007F-U+009F, U+FFFE,
#: U+FFFF, which PyYAML refuses raw ("unacceptable character", ``Reader.NON_PRINTABLE``); the webhook writes the
#: same ones escaped when it dumps an admitted object (:func:`kvlint.webhook.jsonload.dump_text`).
_YAML_RAW = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")
#: A JSON string token (no raw line feed: JSON refuses one, and a broken string stops at the end of its line). The
#: closing quote is optional so that the pattern matches at every ``"``: a string left open would otherwise fail
#: there and be scanned again from each ``"`` after it, quadratic in the length of the line (a 64 KB line of
#: escaped quotes took 14 s); :func:`_json_raw_escaped` reads a match without its closing quote as no string.
_JSON_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"?')


def _json_raw_escaped(text: str, path: str) -> tuple[str, Finding | None]:
    """``text`` (a JSON manifest, :data:`_JSON_START`) with each :data:`_YAML_RAW` character inside a string
    written as its ``\\uXXXX`` escape, which the YAML reader's double-quoted style reads back as the character: the
    value kubectl's JSON decoder reads. A ConfigMap whose value held a DEL was refused ("YAML syntax error:
    unacceptable character #x007f") though kubectl applies it, and a U+2028 in a key was "did not find expected ','
    or '}'" a line below the character (YAML counts it as a line break). A column after such a character on its
    line moves by 5 per escape: the loader's own findings (a syntax error) are moved back
    (:func:`_unshift_columns`), and so are the positions of the values the documents hold
    (:func:`_unshift_documents`), which the rules report. One outside a string is no JSON: kubectl's decoder refuses
    it ("invalid character"), so the second item is the KV001 naming it escaped (``U+2028 LINE SEPARATOR``) at its line and
    column (lines counted at LF, as kvlint counts them), and the first is ``text`` unchanged. So is one right after
    a string's escaping backslash: JSON escapes only ``"\\/bfnrtu`` (Go's decoder: "invalid character ... in string
    escape code"), and written as ``\\uXXXX`` behind that backslash it would read as the six characters of the
    escape."""
    pieces: list[str] = []
    pos = last = 0
    search = _YAML_RAW.search
    for m in _JSON_STRING.finditer(text):
        # (the pattern's last quote is never an escaped one: its ``\\.`` takes each backslash with what follows)
        start = m.start()
        closed = m.end() - start > 1 and text[m.end() - 1] == '"'
        # a string left open (no closing quote on its line) is not one: what it holds is read as outside a string
        outside = search(text, last, start if closed else m.end())
        if outside is not None:
            return text, _json_raw_finding(
                text, path, outside.start(), "outside a string", "invalid character"
            )
        last = m.end()
        if not closed or search(text, start, last) is None:
            # only the strings holding such a character are cut out and rewritten: 8 MB of "" made 8 million
            # pieces (390 MB) when every string was
            continue
        token = m.group()
        # the pattern pairs each backslash with what follows it, left to right, as JSON does
        for e in _JSON_ESCAPE.finditer(token):
            if _YAML_RAW.match(e.group(1)):
                at = start + e.start(1)
                return text, _json_raw_finding(text, path, at, "after a backslash", "invalid escape")
        pieces.append(text[pos:start])
        pieces.append(_YAML_RAW.sub(_escape_yaml_raw, token))
        pos = last
    outside = search(text, last)
    if outside is not None:
        return text, _json_raw_finding(text, path, outside.start(), "outside a string", "invalid character")
    if not pieces:
        return text, None
    pieces.append(text[pos:])
    return "".join(pieces), None


#: A ``\\uXXXX`` escape of a UTF-16 surrogate (quick test: :func:`_json_surrogates` reads each string's escapes).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: An escape in a JSON string token: ``\\uXXXX`` (its four digits), or a backslash and the one character it escapes.
_JSON_U_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)


def _json_surrogates(text: str) -> str:
    """``text`` (a JSON manifest, :data:`_JSON_START`) with each UTF-16 surrogate escape inside a string written as
    the YAML reader reads the character kubectl's JSON decoder makes of it: a high and a low surrogate escape in a
    row (``\\ud83d\\ude00``, as Python's ``json.dumps`` writes any character past U+FFFF) as the one character they
    encode (``\\U0001f600``), and any other (a lone one) as U+FFFD, which Go's decoder puts in its place
    (``encoding/json`` ``unquote``: ``utf16.DecodeRune``, else ``unicode.ReplacementChar``). The YAML reader
    refused every such escape ("found invalid Unicode character escape code"): a valid JSON file was a KV001 and
    none of its documents was read. A pair's 12 characters become 10: two spaces after the string's closing quote
    (JSON whitespace) keep the columns of what follows on the line. Linear in ``text``."""
    pieces: list[str] = []
    pos = 0
    for m in _JSON_STRING.finditer(text):
        start, end = m.start(), m.end()
        if end - start < 2 or text[end - 1] != '"' or _SURROGATE_ESCAPE.search(text, start, end) is None:
            continue
        out: list[str] = []
        last, shrunk, high = start, 0, None
        for e in _JSON_U_ESCAPE.finditer(text, start, end - 1):
            code = int(e.group(1), 16) if e.group(1) is not None else None
            if high is not None:
                if code is not None and 0xDC00 <= code <= 0xDFFF and e.start() == high.end():
                    joined = 0x10000 + ((int(high.group(1), 16) - 0xD800) << 10) + (code - 0xDC00)
                    out.append(text[last : high.start()] + f"\\U{joined:08x}")
                    last, shrunk = e.end(), shrunk + 2
                    high = None
                    continue
                out.append(text[last : high.start()] + "\\ufffd")
                last, high = high.end(), None
            if code is not None and 0xD800 <= code <= 0xDBFF:
                high = e
            elif code is not None and 0xDC00 <= code <= 0xDFFF:
                out.append(text[last : e.start()] + "\\ufffd")
                last = e.end()
        if high is not None:
            out.append(text[last : high.start()] + "\\ufffd")
            last = high.end()
        pieces.append(text[pos:start])
        pieces.extend(out)
        pieces.append(text[last:end] + " " * shrunk)
        pos = end
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


#: An escape in a JSON string token (:data:`_JSON_STRING`): a backslash and the character it escapes.
_JSON_ESCAPE = re.compile(r"\\(.)", re.S)


def _json_raw_finding(text: str, path: str, at: int, where: str, why: str) -> Finding:
    """The KV001 of :func:`_json_raw_escaped` for the :data:`_YAML_RAW` character at offset ``at`` of ``text``,
    which stands ``where`` (``outside a string``, ``after a backslash``) and which kubectl's JSON decoder refuses
    for ``why``: the character named and escaped, at its line and column (counted at LF)."""
    import unicodedata

    line = text.count("\n", 0, at) + 1
    col = at - text.rfind("\n", 0, at)
    ch = text[at]
    name = unicodedata.name(
        ch, "DELETE" if ch == "\x7f" else "a C1 control" if ch < "\xa0" else "a noncharacter"
    )
    fix = (
        f"delete the character, or write it inside a string as \\u{ord(ch):04x}"
        if where == "outside a string"
        else "delete the backslash before it, or write that backslash as \\\\ if the value holds one"
    )
    return Finding(
        "KV001",
        f"not valid JSON: the character U+{ord(ch):04X} ({name}) {where}; kubectl's JSON decoder refuses the file "
        f"({why}), so nothing in it is applied",
        Loc(path, line, col),
        fix=fix,
    )


def _escaped_columns(raw: str) -> dict[int, list[int]]:
    """The 1-based columns, by 1-based line (counted at LF), of the characters :func:`_json_raw_escaped` wrote as
    ``\\uXXXX`` escapes in ``raw`` (each one in a string: the escaping refused any other). Linear in ``raw``."""
    out: dict[int, list[int]] = {}
    line, line_start, pos = 1, 0, 0
    for m in _YAML_RAW.finditer(raw):
        at = m.start()
        nl = raw.count("\n", pos, at)
        if nl:
            line += nl
            line_start = raw.rfind("\n", pos, at) + 1
        pos = at
        out.setdefault(line, []).append(at - line_start + 1)
    return out


def _escape_starts(cols: Sequence[int]) -> list[int]:
    """Where each escape of a line starts in the escaped text (1-based), for :func:`_file_column`: the ``k``-th
    character of ``cols`` (the file's columns, ascending) moved right by the 5 extra characters of each of the ``k``
    escapes before it."""
    return [orig + 5 * k for k, orig in enumerate(cols)]


def _file_column(col: int, cols: Sequence[int], starts: Sequence[int]) -> int:
    """The file's 1-based column of the 1-based column ``col`` of a line of the escaped text, on which the
    characters at the file's columns ``cols`` (ascending, :func:`_escaped_columns`) were each written as a
    6-character ``\\uXXXX`` escape (5 more than the character), starting at ``starts``
    (:func:`_escape_starts`): a column inside an escape is its character's. A binary search: every position of a
    one-line JSON document after its escapes is moved, and a walk over the escapes before each made a line of
    20,000 DELs and 20,000 values 4e8 steps."""
    k = bisect_right(starts, col)  # the escapes that start at or before col
    if k == 0:
        return col
    if col < starts[k - 1] + 6:
        return cols[k - 1]
    return col - 5 * k


def _unshift_columns(
    findings: list[Finding], start: int, escaped: dict[int, list[int]], line_offset: int
) -> None:
    """Move the columns of ``findings[start:]`` (the loader's, on the escaped text) back to the file's: each
    escape before a column on its line (:func:`_escaped_columns`) added 5 characters; a column inside an escape
    is its character's. A syntax error after a DEL was reported 5 columns right of where it is."""
    for i in range(start, len(findings)):
        f = findings[i]
        loc = f.loc
        cols = escaped.get(loc.line - line_offset) if loc is not None else None
        if not cols or loc is None:
            continue
        col = _file_column(loc.column, cols, _escape_starts(cols))
        message = f.message
        for q in "\"'":
            # the early-closing-quote hint (:func:`_closing_quote_before`) names the quote just left of the error
            said = f"right after the {q} at column {loc.column - 1}:"
            if said in message:
                message = message.replace(said, f"right after the {q} at column {col - 1}:", 1)
        findings[i] = dataclasses.replace(f, loc=loc._replace(column=col), message=message)


def _unshift_documents(documents: list[Document], escaped: dict[int, list[int]], line_offset: int) -> None:
    """Move every position the ``documents`` (read from one escaped text) hold back to the file's columns, as
    :func:`_unshift_columns` moves the loader's findings: each document's own ``loc`` and the positions of every
    mapping and sequence in its data (packed, as the loader stored them, or the :class:`Loc` values already made
    from them), each container once (an alias shares one). Without it a rule's finding on a value after a DEL on
    its line (a flag of a one-line JSON manifest) stood 5 columns right per escape before it.

    Run only for a JSON text that held such characters; each position costs a binary search on its line's escapes
    (:func:`_file_column`)."""
    starts_of = {line: _escape_starts(cols) for line, cols in escaped.items()}

    def fix_loc(loc: Loc) -> Loc:
        line = loc.line - line_offset
        cols = escaped.get(line)
        return loc._replace(column=_file_column(loc.column, cols, starts_of[line])) if cols else loc

    def fix_packed(p: int, packing: Packing) -> int:
        line = p >> packing.shift  # 0-based in the text: line (p >> shift) + 1 counted at LF
        at = packing.line_base + line - line_offset
        cols = escaped.get(at)
        if not cols:
            return p
        column = p & ((1 << packing.shift) - 1)  # 0-based
        return packing.pack(line, _file_column(column + 1, cols, starts_of[at]) - 1)

    seen: set[int] = set()
    for i, doc in enumerate(documents):
        fixed = fix_loc(doc.loc)
        if fixed != doc.loc:
            documents[i] = dataclasses.replace(doc, loc=fixed)
        todo: list[Any] = [doc.data]
        while todo:
            node = todo.pop()
            if not isinstance(node, (LDict, LList)) or id(node) in seen:
                continue
            seen.add(id(node))
            own = node._loc
            if isinstance(own, int):
                node._loc = fix_packed(own, node._packing)
            elif own is not None:
                node._loc = fix_loc(own)
            if isinstance(node, LDict):
                if node._locs is None:
                    packing = node._packing
                    node._plocs = {k: fix_packed(p, packing) for k, p in node._plocs.items()}
                else:
                    node._locs = {k: fix_loc(v) for k, v in node._locs.items()}
                if node._key_locs is None:
                    packing = node._packing
                    node._pkey_locs = {k: fix_packed(p, packing) for k, p in node._pkey_locs.items()}
                else:
                    node._key_locs = {k: fix_loc(v) for k, v in node._key_locs.items()}
                todo.extend(node.values())
            else:
                if node._locs is None:
                    packing = node._packing
                    node._plocs = [fix_packed(p, packing) for p in node._plocs]
                else:
                    node._locs = [fix_loc(v) for v in node._locs]
                todo.extend(node)


def _escape_yaml_raw(m: re.Match[str]) -> str:
    """The :data:`_YAML_RAW` character ``m`` matched as its ``\\uXXXX`` escape."""
    return f"\\u{ord(m.group()):04x}"


def _nul_finding(path: str, data: str | bytes, offset: int) -> Finding:
    line, col = _line_col(data, offset)
    return Finding(
        "KV001",
        f"not a text file (NUL byte at offset {offset}); kvlint reads YAML or JSON manifests",
        Loc(path, line, col),
        fix="point kvlint at manifest files, or leave this one out (--exclude GLOB, or exclude: in .kvlint.yaml)",
    )


def _decode(data: bytes, path: str) -> tuple[str | None, Finding | None]:
    """Bytes -> text, or a KV001 finding for binary / non-UTF-8 content."""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec), None
            except UnicodeDecodeError as e:
                return None, Finding("KV001", f"not valid {codec.upper()}: {e.reason}", Loc(path, 1, 1))
    nul = data.find(b"\x00")
    if nul >= 0:
        return None, _nul_finding(path, data, nul)
    skip = 3 if data[:3] == codecs.BOM_UTF8 else 0
    try:
        # what data.decode("utf-8-sig") does, without the Python-level codec wrapper
        return (data[skip:] if skip else data).decode("utf-8"), None
    except UnicodeDecodeError as e:
        offset = e.start + skip  # the error's offset counts from after the BOM: the file's counts it
        line, col = _line_col(data, offset)
        return None, Finding(
            "KV001",
            f"not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset} (line {line}, byte column "
            f"{col}): {e.reason}",
            Loc(path, line, col),
            fix="save the file as UTF-8 (iconv -f LATIN1 -t UTF-8 FILE)",
        )


# --------------------------------------------------------------------------------------------------
# YAML


class _Problem(Exception):
    """A document that parsed but cannot be built (too deep, too big, recursive or undefined alias)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


# Implicit (plain scalar) tag resolution, as yaml.resolver.Resolver does it, keyed by first character.
_IMPLICIT: dict[str, list[tuple[str, Any]]] = dict(yaml.resolver.Resolver.yaml_implicit_resolvers)
_MERGE_KEY = object()


# Which scalars' spans _documents records for template attribution: only those whose text (the event's
# value) holds ``{{``. An action inside a scalar's span starts with two ``{`` that are both inside it
# and next to each other: a plain scalar in block context runs on through ``{`` (in flow context it cannot
# hold one), a quoted scalar ends at its quote and a block scalar at a line break, and a scalar's text keeps
# every two neighbouring characters of its source except around a line break or an escape (neither is
# ``{``). So every span that holds an action is recorded, and the scalars are disjoint: the same actions
# are found inside a span as with every scalar's span (tests/test_load_fastpaths.py compares both), without
# a pair of tuples per scalar of every templated file.


class _Doc:
    """One document built from parser events: ``value`` (or ``problem``), its 0-based start and, when
    asked for, the 0-based ``(start, end)`` of every scalar whose text holds ``{{`` (for template
    attribution; see the comment above)."""

    __slots__ = ("value", "problem", "start", "spans", "duplicates", "complex_keys")

    def __init__(
        self,
        value: Any,
        problem: _Problem | None,
        start: tuple[int, int],
        spans: list[Any] | None,
        duplicates: list[tuple[Any, Loc | None, Loc]] | None = None,
        complex_keys: list[Loc] | None = None,
    ):
        self.value = value
        self.problem = problem
        self.start = start
        self.spans = spans
        #: ``(key, first key's Loc, repeated key's Loc)`` for each key repeated in a mapping (KV004)
        self.duplicates = duplicates or []
        #: where a mapping key is itself a mapping or a list (kept in the value as ``<complex key at line N>``)
        self.complex_keys = complex_keys or []


# Memo of scalar resolution: the typed value depends only on (tag, implicit, text), and the results are
# immutable (str, int, float, bool, None, the merge marker), so equal scalars can share one. Keys are the
# text for plain untagged scalars and ``(tag, text)`` for explicitly tagged ones; short texts only, and
# the memo is emptied when it grows past _MEMO_MAX entries (bounded memory).
_PLAIN_MEMO: dict[str, Any] = {}
_TAGGED_MEMO: dict[tuple[str, str], Any] = {}
_MEMO_MAX = 50_000
_MEMO_TEXT_MAX = 200
#: Longest text converted to an int or float (longer ones stay strings). A 64-bit integer has at most 20
#: digits, a float's ``repr`` at most 24 characters; 100 leaves room for ``_`` separators and ``0b`` forms.
#: Without a bound a YAML 1.1 sexagesimal ``1:1:1:...`` or a 100,000-digit number takes seconds to minutes
#: to convert (quadratic big-integer arithmetic), and Python refuses decimal ints above 4,300 digits.
MAX_NUMBER_CHARS = 100
_NUMERIC_TAGS = frozenset({_TAG + "int", _TAG + "float"})


def _resolve_scalar(ev: Any) -> Any:
    """Python value of a scalar event, typed like ``yaml.safe_load`` (timestamps, binary stay text).

    Memoised (see ``_PLAIN_MEMO``); the work is done by :func:`_resolve_scalar_uncached`.
    """
    value = ev.value
    tag = ev.tag
    if tag is None:
        if not ev.implicit[0]:
            return value  # quoted or block scalar without a tag: always a string
        if len(value) > _MEMO_TEXT_MAX:
            return _resolve_scalar_uncached(value, None, True)
        hit = _PLAIN_MEMO.get(value, _MISSING)
        if hit is _MISSING:
            if len(_PLAIN_MEMO) >= _MEMO_MAX:
                _PLAIN_MEMO.clear()
            hit = _PLAIN_MEMO[value] = _resolve_scalar_uncached(value, None, True)
        return hit
    if tag == "!" or len(value) > _MEMO_TEXT_MAX:
        return _resolve_scalar_uncached(value, tag, ev.implicit[0])
    key = (tag, value)
    hit = _TAGGED_MEMO.get(key, _MISSING)
    if hit is _MISSING:
        if len(_TAGGED_MEMO) >= _MEMO_MAX:
            _TAGGED_MEMO.clear()
        hit = _TAGGED_MEMO[key] = _resolve_scalar_uncached(value, tag, ev.implicit[0])
    return hit


_MISSING = object()
_FLOAT = _TAG + "float"
#: go-yaml v2's ``yamlStyleFloat`` (resolve.go), tried on the text with ``_`` removed.
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
#: What Go's ``strconv.ParseInt(s, 0, 64)`` / ``ParseUint`` accept (base prefix 0x, 0o, 0b in either case, or a
#: leading ``0`` for octal), after go-yaml v2 removed every ``_``.
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_GO_BOOLS = {"y": True, "Y": True, "n": False, "N": False}


def _go_yaml_v2_only(value: str) -> Any:
    """The value kubectl's and Helm's YAML reader (sigs.k8s.io/yaml -> go.yaml.in/yaml/v2, ``resolve``) gives a
    plain scalar that PyYAML's YAML 1.1 resolvers leave a string: ``y``/``Y``/``n``/``N`` are booleans (its
    ``resolveMap``); a digit- or sign-led text with ``_`` removed is an int when Go's ``strconv.ParseInt(s, 0,
    64)`` takes it (``0o17``, ``0X1F``) and else a float when it matches ``yamlStyleFloat`` (``1e3``, ``1.5e3``,
    ``08``, ``-.5``); a ``.``-led one is a float when ``strconv.ParseFloat`` takes it (``.5e3``). Anything else
    stays the text. An env value or an args item written so reaches the API server as a JSON bool or number
    (KV005). Timestamp-like texts stay text (go-yaml v2 keeps them strings when decoding into interface{})."""
    b = _GO_BOOLS.get(value)
    if b is not None:
        return b
    first = value[:1]
    if len(value) > MAX_NUMBER_CHARS or not first or first not in "0123456789+-.":
        return value
    plain = value if first == "." else value.replace("_", "")
    if first != "." and _GO_INT.match(plain):
        sign, digits = ("-", plain[1:]) if plain[0] == "-" else ("", plain.lstrip("+"))
        if len(digits) > 1 and digits[0] == "0" and digits[1] in "0123456789":
            digits = "0o" + digits[1:]  # Go's base-0 leading-zero octal
        n = int(sign + digits, 0)
        if -(2**63) <= n < 2**64:
            return n
    if _GO_FLOAT.match(plain):
        f = float(plain)
        if not math.isinf(f):  # strconv.ParseFloat reports a range error: go-yaml keeps the text
            return f
    return value


class _TagError(ValueError):
    """An explicit YAML tag whose value cannot have that type (``!!bool maybe``)."""


def _resolve_scalar_uncached(value: str, tag: str | None, plain: bool) -> Any:
    """Typed value of scalar text ``value`` with tag ``tag`` (None when untagged; ``plain`` says the
    scalar was written unquoted, so the YAML 1.1 implicit resolvers apply).

    Raises :class:`_TagError` when an explicit ``!!bool``/``!!int``/``!!float``/``!!null`` tag holds a value
    of another type."""
    explicit = tag is not None and tag != "!"
    if tag is None or tag == "!":
        if tag == "!" or not plain:
            return value
        for rtag, regexp in _IMPLICIT.get(value[:1], ()):
            if regexp.match(value):
                tag = rtag
                break
        else:
            return _go_yaml_v2_only(value)
        if tag == _FLOAT and value[:1] == "." and "_" in value:
            return (
                value  # ``.5_``: go-yaml v2 parses a ``.``-led float without dropping ``_`` (strconv fails)
            )
        if tag in _NUMERIC_TAGS and ":" in value:
            # a YAML 1.1 base-60 number (``1:20``, ``8000:9000``): kubectl's YAML reader (sigs.k8s.io/yaml's
            # go-yaml v2 fork, "base-60 floats ... purposefully not supported"; neither ints) reads it as the string
            # written, which is what the container or the API server gets; PyYAML made it 80 or 489000
            return value
    if tag == _MERGE:
        return _MERGE_KEY
    if len(value) > MAX_NUMBER_CHARS and tag in _NUMERIC_TAGS:
        return value  # no real number is this long; converting it costs time quadratic in its length
    try:
        if tag == _INT and value.isdigit() and value[0] != "0":  # (0-led digits are YAML 1.1 octal)
            return int(value)
        ctor = _SCALAR_CONSTRUCTORS.get(tag)
        if ctor is None:
            return value
        return ctor(ScalarNode(tag, value))
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, yaml.YAMLError):
        # (IndexError: PyYAML's int and float constructors index the text's first character after dropping
        # every ``_`` and sign: ``!!int ''``, ``!!float _``, ``!!int +``)
        if explicit:
            # ``!!bool maybe`` (a KeyError in PyYAML), ``!!int x``: the YAML-to-JSON conversion of kubectl
            # (sigs.k8s.io/yaml, go-yaml) rejects the document ("cannot decode !!str `maybe` as a !!bool")
            name = tag.rsplit(":", 1)[-1]
            what = {"bool": "a boolean", "int": "an integer", "float": "a number"}.get(name, name)
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise _TagError(
                f"!!{name} {shown!r}: the value is not {what}; kubectl rejects the document (cannot decode "
                f"it as a !!{name}); kvlint did not read this document"
            ) from None
        return value


def _packed_positions(d: LDict, packing: Packing) -> tuple[dict[Any, int], dict[Any, int]]:
    """The value and key positions of the mapping ``d`` (of the text ``packing`` packs) packed: those the
    loader stored, or those of its ``locs`` and ``key_locs`` once they have been built."""
    if d._locs is None and d._key_locs is None and d._packing == packing:
        return d._plocs, d._pkey_locs
    return (
        {k: packing.pack_loc(v) for k, v in d.locs.items()},
        {k: packing.pack_loc(v) for k, v in d.key_locs.items()},
    )


def _documents(text: str, path: str, line_offset: int, want_spans: bool) -> Iterator[_Doc]:
    """Build each document of ``text`` straight from libyaml parser events.

    Faster than composing nodes (no resolver round trip per node) and keeps 1-based locations
    (``line_offset`` added to every line). Aliases share the anchored object; every alias expansion is
    counted, and a document above MAX_NODES values, whose aliases expand to more values than its text
    (:data:`ALIAS_FLOOR`), nesting above MAX_DEPTH, or with a recursive or undefined alias yields a ``_Doc`` with ``problem`` set (the next documents still load).
    Raises yaml.YAMLError for syntax errors, after yielding the documents before the error.

    The loop is the loader's hot spot (one pass per parser event), so it is written for CPython's speed:
    the open container's state lives in local variables (saved on a stack of tuples only when a nested
    container opens), plain untagged scalars are looked up in the resolution memo in line, and
    ``LDict``/``LList`` objects are made with the built-in ``dict.__new__``/``list.__new__`` (the same
    objects as their constructors make, without a Python-level call each). Entries' positions are stored
    packed (one int each, :class:`kvlint.source.Packing`), their ``Loc`` objects made only when a container's
    ``locs``/``key_locs`` are read: a ``Loc`` per key and value cost about 15% of the loop, and, being
    GC-tracked, made the first collection after loading scan twice as many objects (about 0.1 CPU s of a
    corpus x30 load). A container's own position is stored packed too (``_loc``; its ``loc`` made when read,
    which on the corpus happens for about one container in eight): ~4% of the loop's instructions.
    """
    loader = _Loader(text)
    off = line_offset + 1
    get_event = loader.get_event
    check_event = loader.check_event
    scalar_cls = yaml.ScalarEvent
    mstart_cls = yaml.MappingStartEvent
    sstart_cls = yaml.SequenceStartEvent
    mend_cls = yaml.MappingEndEvent
    send_cls = yaml.SequenceEndEvent
    alias_cls = yaml.AliasEvent
    dstart_cls = yaml.DocumentStartEvent
    dend_cls = yaml.DocumentEndEvent
    stream_end_cls = yaml.StreamEndEvent
    # the positions of entries are packed ints (kvlint.source.Packing): m.line * pos_line + m.column
    packing = Packing.for_text(path, off, len(text))
    pos_line = 1 << packing.shift
    new_dict = dict.__new__
    new_list = list.__new__
    memo_get = _PLAIN_MEMO.get
    missing = _MISSING
    merge_key = _MERGE_KEY
    max_nodes = MAX_NODES
    alias_floor = ALIAS_FLOOR
    try:
        while not check_event(stream_end_cls):
            ev = get_event()
            if ev.__class__ is not dstart_cls:
                continue
            # one document
            doc_index: int = ev.start_mark.index  # type: ignore[union-attr]  # libyaml always marks events
            expanded = 0  # values the document's aliases expand to
            ev = get_event()
            cls = ev.__class__
            if cls is dend_cls:
                continue  # empty document
            m = ev.start_mark
            start = (m.line, m.column)
            anchors: dict[str, tuple[Any, int]] = {}
            open_anchors: set[str] = set()
            spans: list[Any] | None = [] if want_spans else None
            root: Any = None
            root_set = False
            problem: _Problem | None = None
            duplicates: list[tuple[Any, Loc | None, Loc]] = []
            complex_keys: list[Loc] = []
            # the open container (None at document level) and its state; `stack` keeps the enclosing ones'
            cont: Any = None
            locs: Any = None
            key_locs: Any = None
            is_map = False
            key: Any = None
            key_pos: Any = None
            cpos: Any = None  # the open container's packed position
            has_key = False
            size = 0
            anchor: Any = None
            merges: Any = None
            stack: list[tuple[Any, ...]] = []
            while True:
                if cls is scalar_cls:
                    m = ev.start_mark
                    if ev.tag is None:
                        value = ev.value
                        if ev.implicit[0]:  # plain: typed by the implicit resolvers (memoised)
                            value = memo_get(value, missing)
                            if value is missing:
                                value = _resolve_scalar(ev)
                    else:
                        try:
                            value = _resolve_scalar(ev)
                        except _TagError as te:
                            problem = _Problem(str(te), m.line + off, m.column + 1)
                            break
                    vsize = 1
                    if spans is not None and "{{" in ev.value:
                        # only a scalar whose text holds "{{" can hold a template action (see _Doc)
                        em = ev.end_mark
                        spans.append(((m.line, m.column), (em.line, em.column)))
                    if ev.anchor is not None:
                        anchors[ev.anchor] = (value, 1)
                    vpos = m.line * pos_line + m.column
                elif cls is mstart_cls or cls is sstart_cls:
                    m = ev.start_mark
                    if len(stack) >= MAX_DEPTH:
                        problem = _Problem(
                            f"nesting deeper than {MAX_DEPTH} levels (kvlint stops reading this document here)",
                            m.line + off,
                            m.column + 1,
                        )
                        break
                    stack.append(
                        (cont, cpos, locs, key_locs, is_map, key, key_pos, has_key, size, anchor, merges)
                    )
                    cpos = m.line * pos_line + m.column
                    if cls is mstart_cls:
                        cont = new_dict(LDict)
                        cont._loc = cpos  # its Loc made when first read (kvlint.source)
                        cont._packing = packing
                        cont._locs = cont._key_locs = None
                        locs = cont._plocs = {}
                        key_locs = cont._pkey_locs = {}
                        is_map = True
                    else:
                        cont = new_list(LList)
                        cont._loc = cpos
                        cont._packing = packing
                        cont._locs = None
                        locs = cont._plocs = []
                        key_locs = None
                        is_map = False
                    key = key_pos = merges = None
                    has_key = False
                    size = 1
                    anchor = ev.anchor
                    if anchor is not None:
                        open_anchors.add(anchor)
                    ev = get_event()
                    cls = ev.__class__
                    continue
                elif cls is mend_cls or cls is send_cls:
                    value, vsize = cont, size
                    if merges:  # YAML merge keys: explicit keys win, earlier merged maps win
                        for src in merges:
                            for item in src if isinstance(src, list) else (src,):
                                if isinstance(item, LDict):
                                    item_locs, item_key_locs = _packed_positions(item, packing)
                                    for k, v in item.items():
                                        if k not in value:
                                            value[k] = v
                                            if k in item_locs:
                                                locs[k] = item_locs[k]
                                            if k in item_key_locs:
                                                key_locs[k] = item_key_locs[k]
                    if vsize > max_nodes:
                        problem = _Problem(
                            f"document expands to more than {MAX_NODES} values (alias bomb?)",
                            value.loc.line,
                            value.loc.column,
                        )
                        break
                    if anchor is not None:
                        open_anchors.discard(anchor)
                        anchors[anchor] = (value, vsize)
                    vpos = cpos  # the container's own position
                    cont, cpos, locs, key_locs, is_map, key, key_pos, has_key, size, anchor, merges = (
                        stack.pop()
                    )
                elif cls is alias_cls:
                    m = ev.start_mark
                    if ev.anchor in open_anchors:
                        problem = _Problem(
                            f"recursive alias *{ev.anchor}: a value contains itself",
                            m.line + off,
                            m.column + 1,
                        )
                        break
                    hit = anchors.get(ev.anchor)
                    if hit is None:
                        problem = _Problem(f"undefined alias *{ev.anchor}", m.line + off, m.column + 1)
                        break
                    value, vsize = hit
                    expanded += vsize
                    if expanded > alias_floor and expanded > m.index - doc_index:
                        where = cont.loc if cont is not None else Loc(path, m.line + off, m.column + 1)
                        problem = _Problem(
                            f"aliases expand this document to more than {max(alias_floor, m.index - doc_index)} "
                            f"values, more than its own text holds (alias bomb?)",
                            where.line,
                            where.column,
                        )
                        break
                    vpos = m.line * pos_line + m.column
                elif cls is dend_cls:
                    break
                else:  # pragma: no cover - the parser emits no other event inside a document
                    ev = get_event()
                    cls = ev.__class__
                    continue
                # attach the finished value to the open container
                if cont is None:
                    root, root_set = value, True
                else:
                    size += vsize
                    if size > max_nodes:
                        problem = _Problem(
                            f"document expands to more than {MAX_NODES} values (alias bomb?)",
                            cont.loc.line,
                            cont.loc.column,
                        )
                        break
                    if is_map:
                        if not has_key:
                            if cls is not scalar_cls and isinstance(value, (dict, list)):
                                complex_keys.append(packing.unpack(vpos))
                                value = f"<complex key at line {complex_keys[-1].line}>"
                            key, key_pos, has_key = value, vpos, True
                        else:
                            has_key = False
                            if key is merge_key:
                                if merges is None:
                                    merges = []
                                merges.append(value)
                            else:
                                n = len(cont)
                                cont[key] = value
                                # a repeated key: the later one wins, as kubectl apply does; reported as KV004
                                # for the same YAML type only: `1` and `true` are different keys to Go's YAML
                                # (the mapping keeps the first key object when a later equal key is assigned)
                                if len(cont) == n:
                                    first = next((k for k in cont if k == key), key)
                                    if type(first) is type(key):
                                        first_pos = key_locs.get(key)
                                        duplicates.append(
                                            (
                                                key,
                                                None if first_pos is None else packing.unpack(first_pos),
                                                packing.unpack(key_pos),
                                            )
                                        )
                                locs[key] = vpos
                                key_locs[key] = key_pos
                    else:
                        cont.append(value)
                        locs.append(vpos)
                ev = get_event()
                cls = ev.__class__
            if problem is not None:
                # the rest of this document is not read into values (the parser still checks its syntax)
                while ev.__class__ is not dend_cls:
                    ev = get_event()
            elif not root_set or root is None:
                continue  # an explicit null / empty document
            if spans is not None:
                spans.sort()
            yield _Doc(root, problem, start, spans, duplicates, complex_keys)
    finally:
        loader.dispose()


#: How the message of the KV001 for a YAML syntax error starts (:func:`_error_finding`), as opposed to a limit
#: kvlint refuses a document at (nesting depth, alias expansion): :func:`load_text` tells them apart by it.
_SYNTAX_ERROR = "YAML syntax error"


def _error_finding(e: Exception, text: str, path: str, line_offset: int) -> Finding:
    """KV001 for a YAML error, at its problem mark (1-based, file coordinates)."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if mark is not None:
        line, col = mark.line + line_offset + 1, mark.column + 1
    elif isinstance(getattr(e, "position", None), int):
        line, col = _line_col(text, e.position)  # type: ignore[attr-defined]
        line += line_offset
    else:
        line, col = line_offset + 1, 1
    problem = getattr(e, "problem", None)
    context = getattr(e, "context", None)
    if problem:
        msg = f"{context}: {problem}" if context else str(problem)
    else:
        msg = str(e).split("\n")[0]
    placeholder = _envsubst_at(text, mark.line, mark.column) if mark is not None else None
    if placeholder is not None:
        return Finding(
            "KV001",
            f"{_SYNTAX_ERROR}: {msg}, at the '{{' of the unquoted envsubst placeholder {placeholder}: inside "
            "{ } or [ ] YAML reads that brace as the start of a mapping, so the file parses only after the "
            "placeholder is replaced",
            Loc(path, line, col),
            fix=(
                "render it first (envsubst < FILE | kvlint check -), or quote the placeholder "
                f'("{placeholder}") so the file is valid YAML before rendering too'
            ),
        )
    mustache = _mustache_on(text, mark.line, mark.column) if mark is not None else None
    if mustache is not None:
        return Finding(
            "KV001",
            f"{_SYNTAX_ERROR}: {msg}, on a line holding the unquoted template placeholder {mustache}: YAML reads "
            "its braces as a flow mapping, so the file parses only after the placeholder is replaced",
            Loc(path, line, col),
            fix=(
                "render the template first (replace its {{NAME}} placeholders) and lint the output "
                "(... | kvlint check -), or quote the scalar that holds the placeholder "
                f'("{mustache}...") so the file is valid YAML before rendering too'
            ),
        )
    brace = _brace_placeholder_on(text, mark.line, mark.column) if mark is not None else None
    if brace is not None:
        return Finding(
            "KV001",
            f"{_SYNTAX_ERROR}: {msg}, on a line holding the unquoted placeholder {brace}; a value to fill in "
            "by hand, which YAML reads as a flow mapping (a plain value cannot start with {), so the file parses "
            "only once the placeholder is replaced",
            Loc(path, line, col),
            fix=f"replace {brace} with the value it stands for and lint the result, or quote the scalar that "
            f'holds it ("{brace}...") so the file is valid YAML before it is filled in too',
        )
    # an error raised inside a quoted scalar (an escape YAML does not have, right after the opening quote: "\d+")
    # sits after the quote that opened the string, not one that closed it
    inside = "quoted scalar" in str(context or "")
    quote = _closing_quote_before(text, mark.line, mark.column) if mark is not None and not inside else None
    if quote is not None:
        q, qcol = quote
        kind, escape = ("double", '\\"') if q == '"' else ("single", "''")
        return Finding(
            "KV001",
            f"{_SYNTAX_ERROR}: {msg}, right after the {q} at column {qcol}: YAML ends a {kind}-quoted string at "
            f"its first unescaped {q}, so a {q} meant inside it (a JSON value in a shell command) closes the "
            "string early and the rest of the line is read as more YAML",
            Loc(path, line, col),
            fix=f"write each {q} inside the string as {escape}, or give the script as a block scalar (- |) where "
            "quotes need no escaping",
        )
    return Finding("KV001", f"{_SYNTAX_ERROR}: {msg}", Loc(path, line, col), fix=_KV001_FIX)


def _closing_quote_before(text: str, line: int, column: int) -> tuple[str, int] | None:
    """``(quote, 1-based column)`` when the YAML error at 0-based ``line``/``column`` of ``text`` sits on a plain
    word right after (no space between) the quote closing a quoted scalar: a quote meant inside the string ended
    it there (surajssd/llm-k8s's LWS: a double-quoted ``sh -c`` script holding ``--kv-transfer-config
    '{"kv_connector":...}'``; PyYAML "expected <block end>, but found '<scalar>'", libyaml "did not find expected
    key"): the inner quote is followed by what it quotes, and another quote of that kind follows on the line (the
    rest of the string left outside it). None otherwise: a word after a space is another item
    (``["--model", "m" --max-model-len]`` lacks a comma, ``k: "v" note`` a ``#``), no quote of its kind after the
    mark means the string ended where it was meant to (``"HF_TOKEN"abc``: something else is wrong), and when the
    mark is on a quote, a colon, a comment or the end of the line (other errors). The caller does not ask for an
    error raised inside a quoted scalar (its context "while scanning/parsing a quoted scalar": ``"\\d+"``, an
    unknown escape right after the quote that opened the string)."""
    lines = text.split("\n", line + 1)
    if len(lines) <= line:
        return None
    here = lines[line]
    if column >= len(here) or here[column] in "\"'#:,[]{} \t":
        return None
    if column < 1 or here[column - 1] not in "\"'":
        return None
    quote = here[column - 1]
    if quote not in here[column:]:
        # no quote of its kind follows on the line, so no part of the string was left outside it: the mistake is
        # elsewhere (a colon missing; a line break)
        return None
    return quote, column


#: A Mustache/Handlebars placeholder, ``{{NAME}}`` or ``{{{NAME}}}`` (a name, no Go template action: those
#: start with ``.``, ``$`` or a keyword followed by more words).
_MUSTACHE = re.compile(r"\{\{\{?\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}\}?")


#: A single-brace placeholder at the start of a plain scalar (``image: {username}/torchserve:latest``, the
#: kserve samples' way of saying "your registry here"), after a ``: `` or ``- `` and not inside ``{{ }}``
_BRACE_PLACEHOLDER = re.compile(r"(?:^|:\s|-\s)\s*(\{[A-Za-z_][A-Za-z0-9_.-]*\})(?!\})")


def _brace_placeholder_on(text: str, line: int, column: int) -> str | None:
    """The unquoted single-brace placeholder (``{username}``) that starts a plain scalar at or before 0-based
    ``column`` of 0-based ``line`` of ``text``, or None: kserve's docs samples write ``image:
    {username}/torchserve-gpu:latest``, which YAML reads as a flow mapping followed by more text (a syntax
    error kubectl reports too); :func:`_error_finding` then says what the brace is."""
    lines = text.split("\n", line + 1)
    if len(lines) <= line:
        return None
    for m in _BRACE_PLACEHOLDER.finditer(lines[line]):
        if m.start(1) > column:
            return None
        return m.group(1)
    return None


def _mustache_on(text: str, line: int, column: int, lines: Sequence[str] | None = None) -> str | None:
    """The first unquoted Mustache placeholder (``{{NAME}}``, ``{{{NAME}}}``) that starts at or before 0-based
    ``column`` of 0-based ``line`` of ``text``, or None.

    Templates rendered by a script before ``kubectl apply`` (aws-samples/sample-genai-on-eks-starter-kit's
    ``*.template.yaml``: ``{{{KARPENTER_PREFIX}}}/instance-family: g6e``, ``image: {{GHCR_IMAGE_PREFIX}}...``)
    are not YAML until rendered: a plain scalar cannot start with ``{``, so the parser reads a flow mapping and
    stops after it. A placeholder inside quotes parses and is not reported here.

    ``lines``: ``text.split("\n")`` when the caller has it (one split for many lookups in one text: splitting
    the text for each of a document's thousands of complex keys was quadratic).
    """
    if lines is None:
        lines = text.split("\n", line + 1)
    if len(lines) <= line:
        return None
    src = lines[line]
    # the quotes before each placeholder, counted on from the previous one (the whole prefix was counted again
    # for every placeholder on the line)
    quotes = [0, 0]
    at = 0
    for m in _MUSTACHE.finditer(src):
        if m.start() > column:
            return None
        quotes[0] += src.count('"', at, m.start())
        quotes[1] += src.count("'", at, m.start())
        at = m.start()
        if quotes[0] % 2 == 0 and quotes[1] % 2 == 0:
            return m.group(0)
    return None


#: The opening ``${NAME`` of an envsubst placeholder (``${NAME}``, ``${NAME:-default}``, ``${NAME-default}``).
_ENVSUBST_OPEN_AT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?=[:}-])")


def _envsubst_at(text: str, line: int, column: int) -> str | None:
    """The envsubst placeholder (``${NAME}``, up to its first ``}``) whose ``{`` is at 0-based ``line``/``column``
    of ``text``, or None.

    Unquoted inside a flow collection (``labels: { app: ${NAME} }``), the plain scalar ends at ``$`` and the
    ``{`` opens a nested mapping whose key never closes as YAML expects: PyYAML (and kubectl's parser) stop
    there with "did not find expected ',' or '}'". Such a file is an envsubst template that is valid YAML only
    once rendered (aws-samples/aws-do-eks ``*.yaml-template``).
    """
    if column < 1:
        return None
    lines = text.split("\n", line + 1)
    if len(lines) <= line:
        return None
    src = lines[line]
    m = _ENVSUBST_OPEN_AT.match(src, column - 1)
    if m is None:
        return None
    close = src.find("}", m.end())
    return src[column - 1 : close + 1] if close >= 0 else None


def _flatten(doc: Document, budget: list[int] | None = None) -> list[Document]:
    """Items of ``kind: List`` / ``*List`` become Documents of their own; an OpenShift ``Template``'s objects
    are processed as ``oc process`` processes them (:func:`kvlint.template_params.process_template`), every
    Template of one loaded text drawing on the one ``budget`` of added characters (a fresh one when None)."""
    if budget is None:
        budget = new_budget()
    data = doc.data
    kind = data.get("kind") if isinstance(data, dict) else None
    items = data.get("items") if isinstance(data, dict) else None
    if kind == "Template":
        process_template(data, budget)
    if not (isinstance(kind, str) and kind.endswith("List") and isinstance(items, list)):
        return [doc]
    out: list[Document] = []
    for i, item in enumerate(items):
        loc = (items.locs[i] if isinstance(items, LList) and i < len(items.locs) else None) or doc.loc
        out.extend(_flatten(Document(doc.path, doc.index, item, loc), budget))
    return out


#: The most ``spec.sources`` of an Argo CD Application looked through (as :mod:`kvlint.workloads.gitops` reads
#: them).
_MAX_VALUES_SOURCES = 64


def _key_lines(node: Any) -> list[int]:
    """The lines of the keys of the located mapping ``node`` (none for anything else)."""
    return [loc.line for loc in node.key_locs.values() if loc is not None] if isinstance(node, LDict) else []


def _chart_values_lines(value: Any) -> list[tuple[int, int]]:
    """The 1-based line ranges ``[first, end)`` (``end`` 0: to the document's end) of the inline Helm values of a
    Flux HelmRelease (``spec.values``: helm-controller passes it to the chart) or an Argo CD Application
    (``helm.values``, a string, and ``helm.valuesObject`` of ``spec.source`` or each of ``spec.sources``: argo-cd
    ``reposerver/repository/repository.go``, ``helmTemplate``, writes them to a values file for ``helm
    template``; and its ``helm.parameters``, whose ``value`` the same function hands Helm as ``--set``/
    ``--set-string``, a value the chart reads as written too): from the line of the values key to the next key
    below it in the same or an enclosing mapping. (A Flux HelmRelease's ``spec`` has only ``values``: another key
    there is not Flux's and counts as any other.)"""
    if not isinstance(value, LDict):
        return []
    api, kind = str(value.get("apiVersion") or ""), value.get("kind")
    spec = value.get("spec")
    if not isinstance(spec, LDict):
        return []
    outer = _key_lines(value) + _key_lines(spec)
    holders: list[tuple[Any, list[int]]] = []
    if kind == "HelmRelease" and api.startswith("helm.toolkit.fluxcd.io/"):
        holders.append((spec, outer))
    elif kind == "Application" and api.startswith("argoproj.io/"):
        source = spec.get("source")
        if isinstance(source, LDict):
            helm = source.get("helm")
            holders.append((helm, outer + _key_lines(source) + _key_lines(helm)))
        sources = spec.get("sources")
        if isinstance(sources, LList):
            items = [s for s in sources[:_MAX_VALUES_SOURCES] if isinstance(s, LDict)]
            # every source's keys and its helm's: the next key below a values key may open the next source
            lines = outer + [ln for s in items for ln in _key_lines(s) + _key_lines(s.get("helm"))]
            holders.extend((s.get("helm"), lines) for s in items)
    out: list[tuple[int, int]] = []
    for holder, lines in holders:
        if not isinstance(holder, LDict):
            continue
        keys = ("values",) if holder is spec else ("values", "valuesObject", "parameters")
        for key in keys:
            at = holder.key_locs.get(key)
            if at is None or key not in holder:
                continue
            below = [ln for ln in lines if ln > at.line]
            out.append((at.line, min(below) if below else 0))
    return out


def _outside_chart_values(
    value: Any, actions: list[tuple[int, int, str]], spans: list[Any], line_offset: int
) -> list[tuple[int, int, str]]:
    """``actions`` without those inside a string of a GitOps object's inline Helm values (a Flux HelmRelease's
    ``spec.values``, an Argo CD Application source's ``helm.values``/``helm.valuesObject``): Helm passes them to
    the chart as written, and a chart that runs a value through ``tpl`` renders ``{{ .Release.Name }}`` there
    itself (bjw-s app-template's route ``hostnames``, its ``tpl`` of values: a homelab HelmRelease writes
    ``"{{ .Release.Name }}.${SECRET_DOMAIN}"``), so the object is not a template to render first (KV002). Actions
    outside every scalar still count: they shape the YAML. ``actions`` and ``spans`` are in segment coordinates
    (0-based), shifted by ``line_offset`` to the file's lines."""
    ranges = _chart_values_lines(value)
    if not ranges:
        return actions
    starts = [sp[0] for sp in spans]
    kept = []
    for line, col, act in actions:
        i = bisect_right(starts, (line, col)) - 1
        in_scalar = i >= 0 and spans[i][0] <= (line, col) < spans[i][1]
        at = line + line_offset + 1
        if in_scalar and any(first <= at and (end == 0 or at < end) for first, end in ranges):
            continue
        kept.append((line, col, act))
    return kept


def _template_finding(
    spans: list[Any] | None,
    actions: list[tuple[int, int, str]],
    path: str,
    line_offset: int,
) -> Finding | None:
    """KV002 for the first template action that makes a document a template.

    ``actions`` and ``spans`` (sorted 0-based ``(start, end)`` of the document's scalars whose text holds
    ``{{``: see :class:`_Doc`) are in segment coordinates; ``spans`` None means the document did not parse. When it did not parse, any action
    counts (the template is the likely reason). When it parsed, an action counts if it stands outside
    every scalar (it shapes the YAML) or is Helm-only (``.Values``, ``include``...); actions inside
    string values that other controllers substitute themselves (KServe ``{{.Name}}`` in a
    ServingRuntime, an LLMInferenceServiceConfig) do not.
    """
    chosen: tuple[int, int, str] | None = None
    if spans is None:
        chosen = actions[0] if actions else None
    else:
        starts = [sp[0] for sp in spans]
        for line, col, act in actions:
            if _HELM_ONLY.match(act):
                chosen = (line, col, act)
                break
            i = bisect_right(starts, (line, col)) - 1
            if not (i >= 0 and spans[i][0] <= (line, col) < spans[i][1]):
                chosen = (line, col, act)
                break
    if chosen is None:
        return None
    line, col, act = chosen
    shown = act if len(act) <= 60 else act[:57] + "..."
    tail = "" if spans is not None else " (the document does not parse as YAML until rendered)"
    chart = template_chart(path)
    top = outermost_chart(chart) if chart is not None else None
    base = os.path.basename(path).lower()
    own = values_chart(path) if chart is None and base.startswith("values") else None
    apart = repository_chart(path) if chart is None and own is None else None
    if apart is not None:  # a values file the chart passes through tpl, kept apart from the chart
        fix = (
            f"lint what the chart renders from it: kvlint check {shell_word(apart)} --helm-values {shell_word(path)} (the chart of this "
            "repository whose templates read its values)"
        )
    elif own is not None and outermost_chart(own) == own:
        # a chart's own values passed through tpl (llm-d-modelservice's ``{{ .Values.modelArtifacts.name }}``):
        # the chart is the file's, as for its values-file KV002 (kvlint.render.values_file_finding)
        if os.path.normpath(path) == os.path.normpath(os.path.join(own, "values.yaml")):
            fix = f"lint what the chart renders from it: kvlint check {shell_word(own)} (helm template reads its values.yaml)"
        else:
            fix = f"lint what the chart renders from it: kvlint check {shell_word(own)} --helm-values {shell_word(path)}"
    elif chart is None or top is None:
        fix = _KV002_FIX
    elif top != chart:
        fix = (
            f"lint what the chart renders: kvlint check {shell_word(top)} ({chart} is a subchart of it: helm renders it through "
            f"{top}, with the values {top} sets for it), or helm template RELEASE {shell_word(top)} -f values.yaml | kvlint "
            "check -"
        )
    else:
        fix = (
            f"lint what the chart renders: kvlint check {shell_word(chart)} (kvlint renders a chart directory it is given with "
            f"helm), or helm template RELEASE {shell_word(chart)} -f values.yaml | kvlint check -"
        )
    return Finding(
        "KV002",
        f"unrendered Helm/Go template syntax {shown!r}{tail}; kvlint lints rendered manifests: render with "
        f"`helm template` first",
        Loc(path, line + line_offset + 1, col + 1),
        fix=helm_first(fix),
    )


def helm_first(fix: str) -> str:
    """``fix`` (a KV002 fix for a chart's template or values file), led by "install helm ..." when it lints what a
    chart renders (``kvlint check CHART``, which renders with helm) and ``helm`` is not on ``PATH``: there that
    command alone stops with exit status 2 ("the helm binary is not on PATH"), and a walk that met the chart read
    its files as plain files, which is why they got this finding."""
    import shutil

    if fix.startswith("lint what the chart") and shutil.which("helm") is None:
        return f"install helm (https://helm.sh/docs/intro/install/; it is not on PATH), then {fix}"
    return fix


#: How many charts :func:`outermost_chart` climbs through (a subchart of a subchart ...). [assumed] real umbrella
#: charts nest two or three deep.
_SUBCHART_DEPTH = 8


def parent_charts(chart: str) -> list[str]:
    """The charts ``chart`` is a subchart of, nearest first: while it sits in a chart's ``charts/`` directory
    (``PARENT/charts/NAME`` beside ``PARENT/Chart.yaml``), that chart. As written in ``chart``; at most
    :data:`_SUBCHART_DEPTH` levels; empty for a chart of no other."""
    out: list[str] = []
    here = chart
    for _ in range(_SUBCHART_DEPTH):
        charts_dir = os.path.dirname(os.path.normpath(here))
        if os.path.basename(charts_dir) != "charts":
            break
        parent = os.path.dirname(charts_dir) or "."
        if not os.path.isfile(os.path.join(parent, "Chart.yaml")):
            break
        out.append(parent)
        here = parent
    return out


def outermost_chart(chart: str) -> str:
    """The chart that renders the chart directory ``chart``: ``chart`` itself, or, when it is a subchart
    (:func:`parent_charts`), the outermost of its parents. Helm renders a subchart only through its parent, with
    the values the parent sets under the subchart's name (and its globals), so that is the chart to render. As
    written in ``chart``."""
    parents = parent_charts(chart)
    return parents[-1] if parents else chart


#: File names that make a directory a kustomization (as kustomize itself accepts them); :mod:`kvlint.render`
#: builds such directories.
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def is_kustomize_dir(path: str) -> bool:
    """True when ``path`` is a directory holding a kustomization file (:data:`KUSTOMIZATION_FILES`)."""
    return os.path.isdir(path) and any(os.path.isfile(os.path.join(path, f)) for f in KUSTOMIZATION_FILES)


def directories_to_repository_root(directory: str, *, resolve: bool = False) -> tuple[list[str], bool]:
    """``directory`` and its parents, nearest first, up to and including the first that holds ``.git`` (a
    directory, or the ``.git`` file of a worktree or submodule; an entry of that name, as git looks for it, a
    dangling link included), else up to the filesystem root; and whether the last one holds ``.git``. The paths
    are ``directory`` made absolute, with symbolic links resolved when ``resolve``, else as written. No depth
    limit: git climbs to the filesystem root too, and a path has at most a few thousand components, one
    ``lstat`` each. The one climb of kvlint: :func:`repository_root`, the chart search of a values file kept
    apart from its chart (:func:`repository_chart`) and of a rendered file's templates
    (:func:`kvlint.render._search_places`). Never raises."""
    here = os.path.realpath(directory) if resolve else os.path.abspath(directory)
    out = [here]
    while not os.path.lexists(os.path.join(here, ".git")):
        up = os.path.dirname(here)
        if up == here:
            return out, False
        here = up
        out.append(here)
    return out, True


def repository_root(directory: str, *, resolve: bool = False) -> str | None:
    """The nearest of ``directory`` and its parents that holds ``.git`` (a directory, or the ``.git`` file of a
    worktree or submodule; an entry of that name, as git looks for it), or None outside a git repository. The
    path is ``directory`` made absolute, with symbolic links resolved when ``resolve`` (to compare real paths
    with it, as :mod:`kvlint.config` does), else as written (so paths shown under it read as the user gave
    them, as :mod:`kvlint.workloads.gitops_local` shows chart paths). Climbed by
    :func:`directories_to_repository_root`. Never raises."""
    climbed, found = directories_to_repository_root(directory, resolve=resolve)
    return climbed[-1] if found else None


#: How many directories below a chart's ``templates/`` a template may sit for :func:`template_chart` to find the chart
_TEMPLATE_DEPTH = 6


def template_chart(path: str) -> str | None:
    """The directory of the Helm chart whose ``templates/`` holds the file ``path`` (``CHART/templates/x.yaml``, or
    a folder below ``templates/``), as written in ``path`` (``.`` for the current directory); None for any other
    file, standard input included. A directory walk lints a chart's raw templates as plain files (kvlint renders
    only a chart directory it is given), so their KV002 names the directory to give it: the chart itself, not the
    first parent holding a ``Chart.yaml`` (a file of a chart's ``files/`` folder is not one of its templates)."""
    here = os.path.dirname(path)
    for _ in range(_TEMPLATE_DEPTH):
        if not here or here == os.path.dirname(here):
            return None
        chart = os.path.dirname(here)
        if os.path.basename(here) == "templates" and os.path.isfile(os.path.join(chart or ".", "Chart.yaml")):
            return chart or "."
        here = chart
    return None


#: How many directories above a values file :func:`values_chart` looks for its chart (``CHART/ci/values.yaml``,
#: ``CHART/examples/NAME/values.yaml``)
_VALUES_DEPTH = 3


def values_chart(path: str) -> str | None:
    """The directory of the Helm chart a values file at ``path`` belongs to: the nearest of the file's directory and
    its parents (:data:`_VALUES_DEPTH` in all) holding a ``Chart.yaml`` with a ``templates/`` directory beside it,
    as written in ``path`` (``.`` for the current directory); None when there is none (values kept apart from
    their chart, as a GitOps repository's values for a chart of a Helm repository; or standard input)."""
    here = os.path.dirname(path)
    for _ in range(_VALUES_DEPTH):
        d = here or "."
        if os.path.isfile(os.path.join(d, "Chart.yaml")) and os.path.isdir(os.path.join(d, "templates")):
            return d
        if not here or here == os.path.dirname(here):
            return None
        here = os.path.dirname(here)
    return None


#: How many directories above a values file kept apart from its chart :func:`repository_chart` climbs (the file's
#: own directory first); it stops sooner at a directory holding ``.git`` (the checkout's root). [assumed]
#: AI-Hypercomputer/gpu-recipes' ``inference/a3ultra/single-host-serving/vllm/values.yaml`` is four below the root
#: that holds its chart, ``src/helm-charts/a3ultra/inference-templates/deployment``.
_REPO_CLIMB = 5
#: At most this many directories are listed in one search for charts (a large checkout is searched only so far).
_REPO_SCAN_DIRS = 4000
#: At most this many template files, and this many characters of them, are read in one search for charts (a checkout
#: of thousands of charts, or a chart of thousands of megabyte templates, is read only so far).
_REPO_SCAN_FILES = 4000
_REPO_SCAN_CHARS = 64 << 20
#: Directories a search for charts does not enter.
_REPO_SKIP = frozenset({"node_modules", "vendor", "third_party", "__pycache__"})
#: Top-level values keys most charts take (``helm create``'s values.yaml, and the pod fields and model keys serving
#: charts repeat): a values file whose keys are all among them says nothing of which chart it is for (substratusai's
#: vllm examples, ``model``/``replicaCount``/``resources``/``env``, matched an unrelated chart reading the same
#: names), so :func:`repository_chart` needs one key of the chart's own (``workload``, ``modelArtifacts``).
_COMMON_VALUES_KEYS = frozenset(
    ("replicaCount", "image", "imagePullSecrets", "nameOverride", "fullnameOverride", "serviceAccount",
     "podAnnotations", "podLabels", "podSecurityContext", "securityContext", "service", "ingress", "resources",
     "livenessProbe", "readinessProbe", "startupProbe", "autoscaling", "volumes", "volumeMounts", "nodeSelector",
     "tolerations", "affinity", "env", "envFrom", "model", "modelName", "modelId", "args", "command", "extraArgs",
     "global", "labels", "annotations", "persistence", "storage", "secrets", "config", "name", "namespace",
     "enabled", "port", "ports", "strategy", "priorityClassName", "runtimeClassName", "topologySpreadConstraints")
)  # fmt: skip
#: A top-level key of a YAML mapping, at the start of a line (a values file's ``workload:``, ``modelArtifacts:``),
#: searched in the text with a newline put before it (:func:`top_level_keys`): the same matches as
#: ``^([A-Za-z_][A-Za-z0-9_-]*)\s*:`` with ``re.MULTILINE`` (whose ``^`` holds at the start and after each
#: ``\n`` only), but the leading literal lets the regular expression engine skip to each newline instead of
#: trying the pattern at every character (about 6x fewer instructions on a values file).
_TOP_KEY = re.compile(r"\n([A-Za-z_][A-Za-z0-9_-]*)\s*:")
#: A template's read of a top-level value (``.Values.workload.image``, ``$.Values.decode``).
_VALUES_READ = re.compile(r"\.Values\.([A-Za-z_][A-Za-z0-9_]*)")


def top_level_keys(text: str) -> set[str]:
    """The names written as top-level keys of a YAML mapping in ``text``: a name at the start of a line followed
    by ``:`` (after optional white space), as :func:`repository_chart` reads a values file without parsing it."""
    return set(_TOP_KEY.findall("\n" + text))


@functools.lru_cache(maxsize=64)
def _charts_under(root: str, top: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The Helm charts (a ``Chart.yaml`` with ``templates/`` beside it) below ``root``, each with the top-level
    value names its templates read (``.Values.NAME``), in a sorted walk that skips hidden directories, charts'
    own ``charts/`` subcharts and :data:`_REPO_SKIP`, listing at most :data:`_REPO_SCAN_DIRS` directories (the
    templates' own included) and reading at most :data:`_REPO_SCAN_FILES` template files and
    :data:`_REPO_SCAN_CHARS` characters. Only regular files whose real path is inside ``top`` (the checkout's
    root, :func:`repository_root`) are read: a ``templates`` directory or file that is a symbolic link out of the
    checkout (to ``/``, to ``/dev/stdin``) is not followed."""
    found: list[tuple[str, frozenset[str]]] = []
    real_top = os.path.realpath(top)
    listed = files_read = 0
    chars_left = _REPO_SCAN_CHARS

    for here, dirs, files in walk_tree(root):
        listed += 1
        if listed > _REPO_SCAN_DIRS:
            break
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _REPO_SKIP)
        if "Chart.yaml" not in files or "templates" not in dirs:
            continue
        reads: set[str] = set()
        templates = os.path.join(here, "templates")
        for tdir, tsub, tfiles in (
            walk_tree(templates) if real_path_inside(templates, real_top, resolved=True) else ()
        ):
            listed += 1
            if listed > _REPO_SCAN_DIRS or files_read >= _REPO_SCAN_FILES or chars_left <= 0:
                break
            tsub.sort()
            for name in sorted(tfiles):
                full = os.path.join(tdir, name)
                if not name.endswith((".yaml", ".yml", ".tpl", ".txt", ".json")):
                    continue
                if files_read >= _REPO_SCAN_FILES or chars_left <= 0:
                    break
                if not os.path.isfile(full) or not real_path_inside(
                    full, real_top, resolved=True
                ):  # a FIFO would block; a link out is not read
                    continue
                files_read += 1
                try:
                    with open(full, encoding="utf-8", errors="replace") as f:
                        text = f.read(min(1 << 20, chars_left))
                except OSError:
                    continue
                chars_left -= len(text)
                reads.update(_VALUES_READ.findall(text))
        found.append((here, frozenset(reads)))
        dirs[:] = [d for d in dirs if d not in ("charts", "templates")]
    return tuple(found)


def repository_chart(path: str) -> str | None:
    """The chart of the same checkout that a values file kept apart from its chart is for, as a path to give
    ``kvlint check`` (relative as ``path`` is), or None. Climbing from the file's directory (at most
    :data:`_REPO_CLIMB` directories, never above the checkout's root, :func:`repository_root`, however far above
    the file it is; None outside a checkout), the first directory below which there are charts answers, when one
    of the charts' templates read every top-level key of the file (``.Values.KEY``), one of them not among
    :data:`_COMMON_VALUES_KEYS` (else None: the nearest charts are not the file's): among such charts, the one
    whose path shares most directory names with the file's
    (gpu-recipes' ``inference/a3ultra/...`` values are for ``src/helm-charts/a3ultra/...``, not ``a4/``); a tie
    is None (kvlint does not guess). llm-d-modelservice's ``examples/values-pd.yaml`` names
    ``charts/llm-d-modelservice``; the KV002 fix was a generic ``helm template RELEASE CHART``."""
    if path in ("", "-") or not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            keys = top_level_keys(f.read(1 << 20))
    except OSError:
        return None
    if not keys or keys & {"apiVersion", "kind"}:  # a manifest (or a template of one), not values
        return None
    if keys <= _COMMON_VALUES_KEYS:  # nothing in it of one chart's own
        return None
    root = repository_root(os.path.dirname(os.path.abspath(path)))
    if root is None:  # not in a checkout: no repository to search (a directory of collected files)
        return None
    parts = set(os.path.normpath(os.path.dirname(os.path.abspath(path))).split(os.sep))
    here = os.path.dirname(path) or "."
    for _ in range(_REPO_CLIMB):
        scored = []
        charts = _charts_under(os.path.abspath(here), root)
        if charts and not any(keys <= reads for _, reads in charts):
            return None  # the nearest charts are not its chart: kvlint does not search the checkout further
        for chart, reads in charts:
            if keys <= reads:
                shared = len(parts & set(os.path.normpath(os.path.abspath(chart)).split(os.sep)))
                scored.append((shared, chart))
        if scored:
            scored.sort(key=lambda s: s[0], reverse=True)
            if len(scored) > 1 and scored[0][0] == scored[1][0]:
                return None
            best = scored[0][1]
            return best if os.path.isabs(path) else os.path.relpath(best)
        if os.path.abspath(here) == root:
            return None
        up = os.path.dirname(os.path.abspath(here))
        if up == os.path.abspath(here):
            return None
        here = os.path.relpath(up) if not os.path.isabs(path) else up
    return None


def _load_segment(
    text: str,
    path: str,
    line_offset: int,
    result: LoadResult,
    actions: list[tuple[int, int, str]],
    counter: list[int],
    *,
    whole_file: bool,
    budget: list[int] | None = None,
) -> bool:
    """Parse ``text`` (a whole file or one ``---`` segment of it) into ``result``.

    ``actions`` are template actions in ``text`` coordinates; ``counter[0]`` is the next document index
    of the file. Returns False, appending nothing, when ``whole_file`` and a YAML error occurred (the
    caller then re-reads the file document by document).
    """
    if "\ufeff" in text:
        # a BOM that starts a document after its --- line (files saved by editors that add one, joined with cat):
        # kubectl splits the stream at --- lines and its YAML decoder drops a BOM that starts a document
        # (k8s.io/apimachinery pkg/util/yaml YAMLReader; sigs.k8s.io/yaml then parses each part with gopkg.in/yaml.v2,
        # whose readerc.go yaml_parser_determine_encoding skips a BOM at the start of its input), while libyaml reads one mid-stream as content: "did not find expected <document start>",
        # which hid the document and its own findings (a missing apiVersion). Here, not in load_text, so that the
        # streaming run's segments of a large file are read alike.
        text = _BOM_AFTER_SEPARATOR.sub(r"\1", text)
    docs: list[_Doc] = []
    error: Exception | None = None
    before = len(result.findings)
    try:
        for doc in _documents(text, path, line_offset, bool(actions)):
            if whole_file:
                docs.append(doc)
            else:
                _add_doc(doc, path, line_offset, result, actions, counter, None, text, budget)
    except yaml.YAMLError as e:
        # kept without its traceback: the traceback's frames (this one and its callers', with the texts they
        # hold) and the error would form a reference cycle that only a garbage collection frees
        error = e.with_traceback(None)
    except RecursionError:  # pragma: no cover - libyaml limits nesting itself
        error = _Problem("nesting too deep to read", line_offset + 1, 1)
    if whole_file:
        if error is not None:
            return False
        for i, doc in enumerate(docs):
            nxt = docs[i + 1].start if i + 1 < len(docs) else None
            _add_doc(doc, path, line_offset, result, actions, counter, nxt, text, budget)
        return True
    if error is not None:
        if actions:
            tf = _template_finding(None, actions, path, line_offset)
            if tf is not None:
                result.findings.append(tf)
        elif any(f.rule == "KV002" for f in result.findings[before:]):
            # the segment's template actions were taken by a document read before the error (a chart template
            # opening with ``{{ $x := ... }}`` lines, each read as a flow mapping, then "did not find expected
            # <document start>"): its KV002 says to render it first; the syntax error is the template's, and a
            # KV001 error beside it failed a walk of a repository's charts (exit 1) on files helm renders fine
            pass
        elif isinstance(error, _Problem):
            result.findings.append(Finding("KV001", error.message, Loc(path, error.line, error.column)))
        else:
            result.findings.append(_error_finding(error, text, path, line_offset))
        where = result.findings[-1].loc if result.findings else None
        named = unparsed_configmap(text) if where is not None else None
        if named is not None and where is not None:
            result.unparsed_configmaps.append((named[0], named[1], where))
    return True


#: A top-level ``kind: ConfigMap`` line (quoted or not, a comment after it).
_CM_KIND = re.compile(r"""^kind:[ \t]*(["']?)ConfigMap\1[ \t\r]*(?:#.*)?$""", re.M)
#: A top-level ``metadata:`` with its indented block, or its flow mapping on the same line.
_CM_META = re.compile(r"^metadata:[ \t\r]*(?:#.*)?\n((?:[ \t]+.*(?:\n|$)|[ \t]*(?:\n|$))*)", re.M)
_CM_META_FLOW = re.compile(r"^metadata:[ \t]*\{([^}\n]*)\}", re.M)
_CM_FIELD = r"""(?:^|[,{{\s]){key}:[ \t]*(["']?)([A-Za-z0-9][-A-Za-z0-9_.]*)\1[ \t\r]*(?:[,}}#]|$)"""


def unparsed_configmap(text: str) -> tuple[str | None, str] | None:
    """``(namespace or None, name)`` of the ConfigMap a document that does not parse as YAML seems to be:
    a top-level ``kind: ConfigMap`` line and a ``name`` directly under its top-level ``metadata`` (a block
    mapping, or a flow mapping on one line), read from the text as written. None when the text shows no
    such ConfigMap (then nothing is guessed). Never raises."""
    # (the pattern holds the word: text without it is answered without trying the pattern at every line's start)
    if "ConfigMap" not in text or not _CM_KIND.search(text):
        return None
    flow = _CM_META_FLOW.search(text)
    if flow is not None:
        body, indent = flow.group(1), None
    else:
        block = _CM_META.search(text)
        if block is None:
            return None
        body = block.group(1)
        first = next((ln for ln in body.split("\n") if ln.strip() and not ln.strip().startswith("#")), "")
        indent = first[: len(first) - len(first.lstrip())]
        if not indent:
            return None

    def field(key: str) -> str | None:
        pattern = _CM_FIELD.format(key=key)
        if indent is None:
            m = re.search(pattern, body)
            return m.group(2) if m else None
        for ln in body.split("\n"):
            if ln.startswith(indent) and not ln[len(indent) :].startswith((" ", "\t")):
                m = re.match(pattern, ln[len(indent) :])
                if m:
                    return m.group(2)
        return None

    name = field("name")
    return (field("namespace"), name) if name else None


def _add_doc(
    doc: _Doc,
    path: str,
    line_offset: int,
    result: LoadResult,
    actions: list[tuple[int, int, str]],
    counter: list[int],
    next_start: tuple[int, int] | None,
    text: str = "",
    budget: list[int] | None = None,
) -> None:
    """Record one built document (or its KV001 problem) and its KV002, if any (``text``: the segment it was
    read from, for what a mapping key that is a mapping or list holds: :func:`_complex_key_finding`)."""
    mine: list[tuple[int, int, str]] = []
    if actions:
        mine = [a for a in actions if next_start is None or (a[0], a[1]) < next_start]
        del actions[: len(mine)]
        if mine and doc.spans is not None and template_chart(path) is None:
            # (in a chart's templates/, an app-of-apps Application is itself rendered by Helm first)
            mine = _outside_chart_values(doc.value, mine, doc.spans, line_offset)
        if mine:
            tf = _template_finding(doc.spans, mine, path, line_offset)
            if tf is not None:
                result.findings.append(tf)
    if doc.problem is not None:
        p = doc.problem
        result.findings.append(Finding("KV001", p.message, Loc(path, p.line, p.column), fix=_KV001_FIX))
        return
    refusals: list[Finding] = []
    if not mine:  # a Helm template's `{{ .Values.x }}` keys: its KV002 above says to render it
        lines = text.split("\n") if len(doc.complex_keys) > 1 else None
        refusals = [_complex_key_finding(text, at, line_offset, lines) for at in doc.complex_keys]
    if any(f.rule == "KV001" for f in refusals):
        # kubectl and the API server refuse the whole document ("invalid map key"), so nothing in it is
        # deployed: like a document that does not parse, it yields its parse findings only, not findings about
        # a workload that will never run (KV501 "cannot tell which GPU", KV005 on the key itself) nor a
        # ComputeClass or ConfigMap that other documents would be read against
        result.findings.extend(refusals)
        return
    loc = Loc(path, doc.start[0] + line_offset + 1, doc.start[1] + 1)
    flat = _flatten(Document(path, counter[0], doc.value, loc), budget)
    if not mine:
        for d in flat:
            missing = _no_api_version(d) or _not_an_object(d)
            if missing is not None:
                # refused by kubectl and the API server; what it says is unambiguous, so it is still checked (the
                # one line to add does not change it), unlike a document whose content did not parse
                result.findings.append(missing)
    result.documents.extend(flat)
    counter[0] += 1
    for key, first, again in doc.duplicates:
        where = f" (first at line {first.line})" if first is not None else ""
        key = {True: "true", False: "false", None: "null"}.get(key, key) if not isinstance(key, str) else key
        result.findings.append(
            Finding(
                "KV004",
                f"duplicate key '{key}' in this mapping{where}: kubectl apply keeps only this last value and "
                'silently drops the first, while kustomize, Helm and Argo CD reject the file ("mapping key '
                'already defined"); kvlint, like kubectl, used the last value',
                again,
                fix=f"keep one '{key}' key (merge the two values if both were meant)",
            )
        )
    result.findings.extend(refusals)


def _values_file_name(path: str) -> bool:
    """Whether ``path``'s file name is a Helm values file's (``values.yaml``, ``values-gpu.yml``, any case): a
    chart's values, which helm reads, not kubectl, may set ``kind:`` and ``metadata:`` for its templates."""
    base = os.path.basename(path).lower()
    return base.startswith("values") and base.endswith((".yaml", ".yml"))


#: Kinds whose files are read by a tool, not sent to the API server, and are written without ``apiVersion``
#: (kustomize takes a kustomization file with ``kind: Kustomization`` alone).
_NO_API_KINDS = frozenset({"Kustomization", "Component"})
#: The ``apiVersion`` of core kinds a manifest beside a workload holds (the Kubernetes API's core group, ``v1``).
_CORE_KINDS = frozenset(
    {"ConfigMap", "Secret", "Service", "PersistentVolumeClaim", "Namespace", "ServiceAccount"}
)


def _no_api_version(doc: Document) -> Finding | None:
    """The KV001 for ``doc`` when it is a Kubernetes object with no ``apiVersion``: a mapping with a ``kind``
    (a non-empty string, not a kustomize kind: :data:`_NO_API_KINDS`) and a ``metadata`` mapping, but no
    ``apiVersion`` (absent, null or empty). kubectl decodes each object into an unstructured object, which refuses one without a
    version (k8s.io/apimachinery ``pkg/runtime/error.go``, ``NewMissingVersionErr``: "Object 'apiVersion' is
    missing in ..."; ``pkg/apis/meta/v1/unstructured`` ``UnstructuredJSONScheme``), and the API server refuses
    it too: nothing in the document is applied. Not a kustomize strategic-merge patch
    (:func:`kvlint.kustomize_patch.strategic_merge_patch_finding`: ``kubectl kustomize`` applies one without
    ``apiVersion`` to the objects a ``patches`` entry's ``target`` selects), nor a file named as Helm values
    (``values.yaml``, ``values-gpu.yml``), whose ``kind:`` and ``metadata:`` may be settings its chart reads. The document is still checked (its content is read as written:
    the line to add changes none of it). Located at the document's first line; the remedy names the
    ``apiVersion`` of the kind when kvlint knows one (:data:`kvlint.kinds.WORKLOAD_KINDS` with one served
    version, core kinds). None for any other document (Helm values with a ``kind:`` setting have no ``metadata``
    mapping)."""
    data = doc.data
    if not isinstance(data, dict) or data.get("apiVersion") not in (None, ""):
        return None
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind.strip() or kind in _NO_API_KINDS:
        return None
    if not isinstance(data.get("metadata"), dict) or os.path.basename(doc.path) in KUSTOMIZATION_FILES:
        return None
    if _values_file_name(doc.path):
        # a chart's values (as kvlint.render reads a values file by its name) may set ``kind:`` and ``metadata:``
        # for its templates (``kind: StatefulSet``, ``metadata: {annotations: ...}``): helm reads it, not kubectl
        return None
    if strategic_merge_patch_finding(doc) is not None:
        # a kustomize strategic-merge patch (its KV002 says so), which kustomize applies to the objects its
        # kustomization's ``target`` selects whatever apiVersion it lacks: not an object sent to the API server
        return None
    from kvlint.kinds import WORKLOAD_KINDS
    from kvlint.report.escape import printable
    from kvlint.statement import clip

    shown = printable(clip(kind, 80))
    known = {
        f"{k.group}/{k.versions[0]}" if k.group else k.versions[0]
        for k in WORKLOAD_KINDS
        if k.kind == kind and len(k.versions) == 1
    }
    if kind in _CORE_KINDS:
        known = {"v1"}
    fix = (
        f"add apiVersion: {known.pop()} above kind: {shown}"
        if len(known) == 1
        else f"add the apiVersion of kind {shown} (kubectl api-resources lists each kind's group and version)"
    )
    return Finding(
        "KV001",
        f"this {shown} has no apiVersion: kubectl and the API server refuse it (\"Object 'apiVersion' is missing\"), "
        "so nothing in it is applied; kvlint checks the rest of it as written",
        doc.loc,
        fix=fix,
    )


#: Files kvlint may be pointed at that a tool other than kubectl reads (Helm, kustomize, kvlint itself): a document
#: in them that is not a mapping is not a manifest kubectl refuses.
_TOOL_FILES = frozenset({*KUSTOMIZATION_FILES, "Chart.yaml", "Chart.lock", ".kvlint.yaml", ".kvlint.yml"})


def _not_an_object(doc: Document) -> Finding | None:
    """The KV001 for ``doc`` when it is not an object at all: a scalar (a string, number or boolean), or a list
    one of whose items is a Kubernetes object (a mapping with ``apiVersion`` or ``kind``: objects written as a YAML
    list instead of ``---`` documents or a ``kind: List``). kubectl decodes each document into an unstructured
    object and refuses anything but a mapping (k8s.io/apimachinery ``pkg/apis/meta/v1/unstructured/helpers.go``,
    ``unstructuredJSONScheme.decode``; kubectl v1.32: ``error: unable to decode "notes.yaml": json: cannot
    unmarshal string into Go value of type unstructured.detector``, ``... cannot unmarshal array ...``) and
    applies nothing in it. None for an empty document (``---`` alone, comments only, ``null``: kubectl skips it),
    for a mapping, for a list of mappings that are not objects (an Ansible playbook, a list of hooks a tool reads;
    a list of strings, numbers or lists, which no such tool reads either, is one kubectl refuses), and for a file a tool
    other than kubectl reads (:data:`_TOOL_FILES`; Helm values named ``values*.yaml``). Located at the document's
    first line."""
    data = doc.data
    if data is None or isinstance(data, dict):
        return None
    if os.path.basename(doc.path) in _TOOL_FILES or _values_file_name(doc.path):
        return None
    mark: Mark | None = None
    if isinstance(data, list):
        if any(isinstance(x, dict) and ("apiVersion" in x or "kind" in x) for x in data):
            what, go = "a list of objects", "array"
            fix = "write each object as its own document, separated by ---, or wrap them in kind: List, items: [...]"
        elif any(isinstance(x, dict) for x in data):
            return None  # a list of mappings a tool reads (an Ansible playbook, .pre-commit-hooks.yaml)
        else:
            # strings, numbers, lists: no tool's mapping, no object (a word list, a JSON array of values)
            what, go = "a list, not an object", "array"
            fix = "make the document a Kubernetes object (apiVersion, kind, metadata), or leave this file out"
            mark = Mark.NOT_AN_OBJECT
    else:
        kind = "string" if isinstance(data, str) else "bool" if isinstance(data, bool) else "number"
        what, go = f"a {kind}, not an object", kind
        fix = "make the document a Kubernetes object (apiVersion, kind, metadata), or leave this file out"
        mark = Mark.NOT_AN_OBJECT
    return Finding(
        "KV001",
        f'this document is {what}: kubectl refuses it ("cannot unmarshal {go} into Go value of type '
        'unstructured.detector") and applies nothing in it',
        doc.loc,
        fix=fix,
        mark=mark,
    )


def _object_like(data: Any) -> bool:
    """Whether a document's value is, or holds at its top, a Kubernetes object: a mapping with ``apiVersion`` or
    ``kind``, or a list with such a mapping among its items (objects written as a YAML list)."""
    if isinstance(data, dict):
        return "apiVersion" in data or "kind" in data
    return isinstance(data, list) and any(
        isinstance(x, dict) and ("apiVersion" in x or "kind" in x) for x in data
    )


def skip_walked_non_objects(loaded: LoadResult) -> None:
    """Drop, in place, the "not an object" KV001s (:func:`_not_an_object`, :attr:`Mark.NOT_AN_OBJECT`: a scalar or a
    list of scalars) of ``loaded``, the result of reading one file (or one batch of a large file) met in a directory
    walk, when none of its documents is a Kubernetes object (:func:`_object_like`): such a file is some tool's or
    application's data (a ``data.json`` array, a word list), skipped as kube-linter and kubeconform skip the files
    of a walk that are not Kubernetes objects and as kvlint skips a mapping without ``kind`` (``package.json``).
    A file with a Kubernetes object keeps them (kubectl refuses the stray document of a manifest), and so does a
    file named on the command line or read from stdin (the caller does not call this for those)."""
    if not any(f.mark is Mark.NOT_AN_OBJECT for f in loaded.findings):
        return
    if any(_object_like(d.data) for d in loaded.documents):
        return
    loaded.findings = [f for f in loaded.findings if f.mark is not Mark.NOT_AN_OBJECT]


def _complex_key_finding(text: str, at: Loc, line_offset: int, lines: Sequence[str] | None = None) -> Finding:
    """The finding for a mapping key that is itself a mapping or a list, at ``at`` in ``text`` (a segment that
    starts ``line_offset`` lines into its file). kubectl reads manifests with sigs.k8s.io/yaml, whose YAML decoder
    refuses such a key (kubernetes-sigs/yaml v1.4.0 goyaml.v2/decode.go, decoder.mapping: "invalid map key"), so
    the document is not applied. Most often the key is an unquoted Mustache placeholder (GKE's samples write
    ``hf_api_token: {{HF_TOKEN}}`` in a Secret, to be replaced before ``kubectl apply``): YAML reads ``{{NAME}}`` as
    a mapping whose one key is the mapping ``{NAME}``; that is KV002, a template to render first. Else KV001.
    ``lines``: ``text.split("\n")``, given by a caller reporting many keys of one text."""
    mustache = _mustache_on(text, at.line - line_offset - 1, at.column - 1, lines)
    if mustache is not None:
        return Finding(
            "KV002",
            f"unquoted template placeholder {mustache}: YAML reads its braces as a mapping used as a key, which "
            'kubectl refuses ("invalid map key"), so this document is a template to render before it is applied',
            at,
            fix=(
                "render the template first (replace its {{NAME}} placeholders) and lint the output "
                f'(... | kvlint check -), or quote the placeholder ("{mustache}") so the file is valid YAML before '
                "rendering too"
            ),
        )
    return Finding(
        "KV001",
        'a mapping key that is itself a mapping or a list: kubectl refuses the document ("invalid map key"; a '
        "Kubernetes object is JSON, whose keys are strings)",
        at,
        fix="quote the key, or fix the indentation or the braces that made a mapping or a list the key",
    )


def _normalise_breaks(text: str) -> str:
    """``text`` with lone CR and NEL (U+0085) line breaks written as LF.

    YAML (1.1 and 1.2) and libyaml count a lone CR (classic Mac line endings) and NEL as line breaks and read
    them as LF inside scalars, so values and line numbers are unchanged; kvlint's own line arithmetic and
    ``---`` splitting count LF. Without this, a CR-only file was one long line to kvlint: one broken document
    hid every later document's findings. CRLF is left alone (the CR sits at the end of a line)."""
    if "\r" not in text and "\x85" not in text:
        return text
    return _CR_OR_NEL.sub("\n", text)


def _breaks(text: str, start: int, end: int, unicode_breaks: bool | None = None) -> int:
    """Line breaks in ``text[start:end]`` as libyaml counts them (LF, U+2028, U+2029; CR and NEL were
    normalised to LF). ``unicode_breaks``: whether ``text`` holds U+2028/U+2029 (looked up when None;
    callers in a loop pass it, so each call costs only ``end - start``)."""
    n = text.count("\n", start, end)
    if unicode_breaks is None:
        unicode_breaks = "\u2028" in text or "\u2029" in text
    if unicode_breaks:
        n += text.count("\u2028", start, end) + text.count("\u2029", start, end)
    return n


def _doc_starts(text: str) -> list[int]:
    """Offsets of the ``---`` document markers in ``text``: ``[m.start() for m in _DOC_START.finditer(text)]``.

    Found with ``str.find`` on ``\n---`` (about 10x faster than the regex, which has no literal prefix to
    skip ahead with and is tried at every character); the regex is used when the text holds U+2028/U+2029
    line breaks, the only other places a marker can start."""
    if "\u2028" in text or "\u2029" in text:
        return [m.start() for m in _DOC_START.finditer(text)]
    n = len(text)
    out = [0] if text.startswith("---") and (n == 3 or text[3] in " \t\r\n") else []
    i = text.find("\n---")
    while i >= 0:
        after = i + 4
        if after == n or text[after] in " \t\r\n":
            out.append(i + 1)
        i = text.find("\n---", after)
    return out


def _segments(text: str) -> Iterator[tuple[int, str]]:
    """(line offset, text) of each ``---``-separated part of a multi-document file."""
    starts = _doc_starts(text)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    line = 0
    prev = 0
    unicode_breaks = "\u2028" in text or "\u2029" in text
    for i, s in enumerate(starts):
        line += _breaks(text, prev, s, unicode_breaks)
        prev = s
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        yield line, text[s:end]


#: The ``apiVersion`` key of a Kubernetes object in JSON or YAML text (quoted or not, then a colon), for
#: :func:`load_text`: a file named .json may hold YAML, which kubectl reads as YAML (``apiVersion: v1``)
_API_VERSION = re.compile(r"""(?:^|[\s{,])["']?apiVersion["']?\s*:""", re.MULTILINE)
#: A line of JSON text that starts with a ``//`` or ``/*`` comment (JSON with comments, JSONC), for :func:`load_text`
_JSONC_COMMENT = re.compile(r"^[ \t]*(?://|/\*)", re.MULTILINE)


def _load_decoded(text: str, path: str, result: LoadResult, base: int = 0) -> None:
    """Fast path: parse the whole file at once. Slow path (a syntax error, or template actions): read
    each ``---`` segment on its own, so a broken document costs only itself. ``base``: lines before
    ``text`` in its file."""
    counter = [0]
    budget = new_budget()  # what Template parameters may add to the whole text (not to each Template)
    actions = template_actions(text)
    if not actions:
        if _load_segment(text, path, base, result, [], counter, whole_file=True, budget=budget):
            return
        if path.endswith(".json") and "\t" in text:
            # libyaml accepts tabs between JSON tokens, the pure-Python scanner does not; tabs cannot occur
            # raw inside JSON strings, so spaces keep every column the same.
            if _load_segment(
                text.replace("\t", " "), path, base, result, [], counter, whole_file=True, budget=budget
            ):
                return
    action_lines = [a[0] for a in actions]  # sorted: actions are found left to right
    for offset, seg in _segments(text):
        if not seg.strip():
            continue
        nlines = _breaks(seg, 0, len(seg)) + 1
        lo, hi = bisect_left(action_lines, offset), bisect_left(action_lines, offset + nlines)
        seg_actions = [(ln - offset, col, a) for ln, col, a in actions[lo:hi]]
        _load_segment(seg, path, base + offset, result, seg_actions, counter, whole_file=False, budget=budget)


# kvlint.kustomize_patch reads the kustomization files that list patches with this module's bounded loader; it
# cannot import this module, which asks it whether a document is a patch
use_loader(read_file, load_text)
