"""Regexes that were quadratic on hostile text, rewritten to scan linearly: each rewrite must find exactly
what the old regex found. The old regexes are kept here as oracles and compared on every manifest of the
shared corpus and of fixtures/, the string values in them (shell scripts, KServe templates, images, env
values), the start-up logs of fixtures/logs, edge strings and random strings. Linearity itself is shown by
``bench/hostile.py`` (CPU time at N and 4N); here only structural properties are asserted (how many
``str.find`` calls a scan makes), never a time."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint import load as L
from kvlint.engines import shell
from kvlint.engines.images import envsubst_placeholders, image_placeholder
from kvlint.spans import delimited_spans
from kvlint.template_lines import parse_template
from kvlint.verify import logparse
from kvlint.workloads import gotemplate

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
TEXT_SUFFIXES = (".yaml", ".yml", ".json", ".tpl", ".txt", ".md", ".log", ".jsonl")

# ---------------------------------------------------------------------------------------- the old regexes
OLD_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.S)  # shell._TEMPLATE_RE, template_lines._ACTION
OLD_GO_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.S)  # gotemplate._ACTION_RE
OLD_ACTION_OPEN_WORD = re.compile(r"\{\{-?\s*(?:[.$]|/\*|(?P<word>[^\s}]+)(?=[\s}]))")  # load.py
OLD_IMAGE_ENVSUBST = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:-][^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*")
OLD_ENVSUBST = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:-][^}]*)?\}")  # workloads/placeholders.py
OLD_FREE = re.compile(r"Free memory on device[^(]*\(" + logparse._NUM + r"/" + logparse._NUM + r" GiB\)")


def _files() -> list[Path]:
    out = []
    for base in (CORPUS, ROOT / "fixtures"):
        if base.is_dir():
            out += sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)
    return out


FILES = _files()


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _texts() -> list[str]:
    """Every corpus/fixture file's text and every string value of the documents that parse as YAML/JSON."""
    texts: list[str] = []
    for p in FILES:
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts.append(text)
        if p.suffix in (".yaml", ".yml", ".json"):
            try:
                docs = list(yaml.safe_load_all(text))
            except yaml.YAMLError:
                continue
            texts += [s for d in docs for s in _strings(d) if len(s) > 1]
    return texts


TEXTS = _texts()

PIECES = ["{{", "}}", "{", "}", "-", " ", "\n", "\t", ".", "$", "${", ":", "-", "A", "a_1", "/*", "*/", "\\"]
PIECES += ["{{-", "-}}", "}}}", "{{{", "if", "end", "toYaml", "$(", ")", '"', "'", "`", ":-", "x" * 20]


def _random(seed: int, count: int, pieces: list[str] = PIECES, most: int = 12) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, most))) for _ in range(count)]


EDGES = [
    "",
    "{{",
    "}}",
    "{{}}",
    "{{-}}",
    "{{--}}",
    "{{ -}}",
    "{{- x -}}",
    "{{{ x }}}",
    "{{ a }}}}{{ b",
    "{{ a {{ b }} c }}",
    "{{ a\n b }}\n{{ c",
    "x {{ .Values.a }} y {{- if .b }}z{{ end -}}",
    "{{" * 50,
    "{{ " * 50,
    "{{\n" * 50,
    "}}{{" * 10,
    "${A}",
    "${A:-b}",
    "${A-b}",
    "${A:-${B}}",
    "${A:" * 20 + "}",
    "${A:" * 20,
    "$A ${ B} ${1} ${A_1:x}${B}",
    "${A}${A}${B:-}",
]
RANDOM = _random(1, 30000)


def test_the_corpus_and_fixtures_are_compared() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/manifests not present: the fixtures alone are compared")
    assert len(FILES) > 400 and any(p.is_relative_to(CORPUS) for p in FILES)
    assert sum("{{" in t for t in TEXTS) > 50 and sum("${" in t for t in TEXTS) > 5


# ------------------------------------------------------------------------------------- {{ ... }} spans


@pytest.mark.parametrize("which", ["corpus", "edges", "random"])
def test_delimited_spans_are_the_lazy_regex_spans(which: str) -> None:
    texts = {"corpus": TEXTS, "edges": EDGES, "random": RANDOM}[which]
    for text in texts:
        want = [m.span() for m in OLD_TEMPLATE.finditer(text)]
        assert list(delimited_spans(text)) == want, repr(text[:200])


def test_shell_template_placeholders_as_the_regex_made_them() -> None:
    """The script lexed with placeholders and the actions by shape, as ``_TEMPLATE_RE.sub``/``finditer``."""
    for text in TEXTS + EDGES + RANDOM:
        want = OLD_TEMPLATE.sub(lambda m: shell._placeholder(m.group()), text)
        assert shell._with_placeholders(text) == want, repr(text[:200])
        shapes: dict[str, tuple[list[int], list[str]]] = {}
        if "{{" in text:
            for m in OLD_TEMPLATE.finditer(text):
                starts, originals = shapes.setdefault(shell._placeholder(m.group()), ([], []))
                starts.append(m.start())
                originals.append(m.group())
        assert shell._template_shapes(text) == shapes


def test_go_template_actions_split_as_the_regex_split_them() -> None:
    for text in TEXTS + EDGES + RANDOM:
        want = [
            (m.start(), m.end(), m.group(1), m.group(2), m.group(3)) for m in OLD_GO_ACTION.finditer(text)
        ]
        assert list(gotemplate._actions(text)) == want, repr(text[:200])
        assert gotemplate.unresolved_actions(text) == [m.group(0) for m in OLD_GO_ACTION.finditer(text)]


def test_chart_template_lines_use_the_same_actions() -> None:
    """parse_template on a chart template with an unclosed action: the closed ones still count."""
    lines = parse_template("a: {{ .Values.a }}\nb: {{ .Values.b\nc: x\n")
    assert [t.pattern is not None for t in lines] == [True, True, True, False]


class _CountingStr(str):
    finds = 0

    def find(self, *args: Any) -> int:  # type: ignore[override]
        _CountingStr.finds += 1
        return super().find(*args)


@pytest.mark.parametrize("text", ["{{ " * 2000, "{{\n" * 2000, "{{" * 2000, "x {{ a }} " * 500 + "{{ " * 500])
def test_an_unclosed_action_ends_the_scan(text: str) -> None:
    """Two ``find`` calls per action and one or two at the end, however many unclosed ``{{`` follow."""
    _CountingStr.finds = 0
    spans = list(delimited_spans(_CountingStr(text)))
    assert spans == [m.span() for m in OLD_TEMPLATE.finditer(text)]
    assert _CountingStr.finds <= 2 * len(spans) + 2


# ---------------------------------------------------------------------------------- loader: {{ opening


def test_action_openings_match_the_unbounded_word_regex() -> None:
    """The word of an opening is at most as long as the longest Go word; a longer word never counted."""
    words = L._GO_WORDS.split("|")
    pieces = ["{{", "{{-", "-", " ", "\t", "\n", "}", "}}", ".", "$", "/*", "x", "{", "{{{{"]
    pieces += (
        words
        + [w + "s" for w in words]
        + ["semverCompareX", "x" * L._GO_WORD_MAX, "y" * (L._GO_WORD_MAX + 1)]
    )
    texts = (
        _random(3, 20000, pieces, 6)
        + TEXTS[:3000]
        + ["{{" * 40, "{{-" + "x" * 40 + " ", "{{ " + "a" * 30 + "}}"]
    )
    for text in texts:
        for pos in [i for i in range(len(text)) if text.startswith("{{", i)][:50]:
            old = OLD_ACTION_OPEN_WORD.match(text, pos)
            if old is not None and old.group("word") is not None and old.group("word") not in L._GO_WORD_SET:
                old = None
            new = L._open_action(text, pos)
            assert (old is None) == (new is None), (text, pos)
            assert old is None or new is None or old.span() == new.span(), (text, pos)


def test_template_actions_on_a_line_of_braces() -> None:
    assert L.template_actions("a: " + "{{" * 3000 + "\n") == []
    assert L.template_actions("a: " + "{{" * 300 + " .x }}\n") == [(0, 3 + 2 * 299, "{{ .x }}")]


# ---------------------------------------------------------------------------------- ${NAME} placeholders


def test_envsubst_placeholders_are_the_regex_matches() -> None:
    envs = [t for t in TEXTS if "$" in t] + EDGES + _random(5, 30000)
    for text in envs:
        want = [(m.group(0), m.group(1)) for m in OLD_ENVSUBST.finditer(text)]
        assert list(envsubst_placeholders(text)) == want, repr(text[:200])


def test_image_placeholder_sees_what_the_regex_saw() -> None:
    images = [s.strip() for s in TEXTS if len(s) < 300] + EDGES + _random(6, 30000)
    for image in images:
        got = image_placeholder(image)
        if OLD_IMAGE_ENVSUBST.search(image.strip()):
            assert got == "an envsubst-style ${VAR} placeholder", repr(image)
        else:
            assert got != "an envsubst-style ${VAR} placeholder", repr(image)


# ---------------------------------------------------------------------------------------- log parser


def _log_lines() -> list[str]:
    lines: list[str] = []
    for p in sorted((ROOT / "fixtures").rglob("*.log")):
        lines += logparse.clean_lines(p.read_text(encoding="utf-8", errors="replace"))
    return lines


def test_free_memory_line_found_as_the_regex_found_it() -> None:
    lines = _log_lines()
    assert any("Free memory on device" in ln for ln in lines)
    phrase = "Free memory on device"
    pieces = [phrase, " ", "(", ")", "1", "2.5", "/", " GiB", " GiB)", "(1/2 GiB)", "(-3.0/80.0 GiB)", "x"]
    for line in lines + _random(7, 30000, pieces, 8) + [phrase * 200, phrase + " (" * 50 + "(1/2 GiB)"]:
        want = OLD_FREE.search(line)
        got = logparse._free_memory(line)
        assert (want is None) == (got is None), repr(line[:200])
        if want is not None and got is not None:
            assert (got.group(1), got.group(2), got.end()) == (want.group(1), want.group(2), want.end())


OLD_BOX = re.compile(r"^[\s│┃|]+|[\s│┃|]+$")
OLD_RUST = re.compile(r"(\w+): (Some\(([^()]*)\)|None|\"[^\"]*\"|[^,}]+)")
OLD_LABEL = r"\s*(GiB)?\s*$"
OLD_KV_SIZE = re.compile(r"(?:GPU|[A-Z]+(?: \+ host)?) KV cache size: " + logparse._INT + r" tokens")
OLD_WARMUP = re.compile(r"warmup\{max_input_length=(\S+) max_prefill_tokens=(\d+) max_total_tokens=(\S+)")
OLD_SERVER_ARGS = re.compile(r"server_args=ServerArgs\((.*)\)")
OLD_LOAD_WEIGHT = re.compile(
    r"Load weight end\..*avail mem=" + logparse._NUM + r" GB, mem usage=" + logparse._NUM + r" GB"
)
OLD_KV_TOKENS = re.compile(r"KV Cache is allocated\..*#tokens: (\d+)")

LOG_PIECES = [" ", "  ", "\t", "│", "┃", "|", "x", "a_1", ": ", ",", "}", "{", "(", ")", '"', "Some(", "None"]
LOG_PIECES += ["Some(3)", '"m"', "GPU", "CPU", "AB", " + host", " KV cache size: ", "1,024", " tokens", "\n"]
LOG_PIECES += ["warmup{max_input_length=", "4096", " max_prefill_tokens=", " max_total_tokens=", "Some(8192)"]
LOG_PIECES += ["server_args=ServerArgs(", "model_path=x", "Load weight end.", " type=Llama,", "avail mem="]
LOG_PIECES += ["70.5", " GB", ", mem usage=", "14.9 GB", "KV Cache is allocated.", "#tokens: ", "12345", "]"]
LOG_PIECES += ["total_gpu_memory", "gpu_memory_utilization", "GiB", "79.19", "0.9"]


def _log_strings() -> list[str]:
    raw: list[str] = []
    for p in sorted((ROOT / "fixtures").rglob("*.log")):
        raw += p.read_text(encoding="utf-8", errors="replace").splitlines()
    return raw + _log_lines() + _random(11, 40000, LOG_PIECES, 10)


def test_box_borders_stripped_as_the_regex_stripped_them() -> None:
    assert all(bool(re.match(r"[\s│┃|]", chr(c))) == (chr(c) in logparse._BOX_CHARS) for c in range(0x110000))
    for line in _log_strings() + ["x" + " " * 300 + "x", "│ a │", "| |", " \u3000x\u2003 "]:
        line = line.replace("\n", " ")  # clean_lines sees lines without line breaks
        assert line.strip(logparse._BOX_CHARS) == OLD_BOX.sub("", line), repr(line[:200])


def test_rust_args_fields_as_the_regex_found_them() -> None:
    texts = _log_strings() + ["a" * 300, "a: Some(, b: Some(, c: Some(x)", 'a: "x, b: "y"', "a: Nonex: 1"]
    for text in texts:
        want = [(m.group(1), m.group(2), m.group(3)) for m in OLD_RUST.finditer(text)]
        assert list(logparse._rust_fields(text)) == want, repr(text[:200])


@pytest.mark.parametrize("label", list(logparse._V0_TABLE))
def test_v0_table_tail_matches_the_same_lines(label: str) -> None:
    new = r"\]\s*" + re.escape(label) + r"\s+" + logparse._NUM + r"\s*(?:GiB\s*)?$"
    old = r"\]\s*" + re.escape(label) + r"\s+" + logparse._NUM + OLD_LABEL
    tails = ["", " ", "  ", "GiB", " GiB", "GiB ", " GiB x", "x", "\t", ".5", "1", "GiBGiB"]
    lines = _log_lines() + [f"] {label} {n}{t}" for n in ("79", "0.9", "-1", "12.") for t in tails]
    for line in lines:
        a, b = re.search(old, line), re.search(new, line)
        assert (a is None) == (b is None) and (a is None or b is None or a.group(1) == b.group(1)), line


def test_sglang_and_tgi_lines_found_as_the_regexes_found_them() -> None:
    for line in _log_strings():
        for old, got in (
            (
                OLD_KV_SIZE,
                re.search(
                    r"(?:GPU|(?<![A-Z])[A-Z]+(?: \+ host)?) KV cache size: " + logparse._INT + r" tokens",
                    line,
                ),
            ),
            (OLD_WARMUP, logparse._warmup(line)),
            (
                OLD_LOAD_WEIGHT,
                logparse._head_then_last(line, "Load weight end.", "avail mem=", logparse._LOAD_WEIGHT_TAIL),
            ),
            (
                OLD_KV_TOKENS,
                logparse._head_then_last(
                    line, "KV Cache is allocated.", "#tokens: ", logparse._KV_TOKENS_TAIL
                ),
            ),
        ):
            want = old.search(line)
            assert (want is None) == (got is None), (old.pattern, line)
            if want is not None and got is not None:
                assert want.groups()[-len(got.groups()) :] == got.groups() or old is OLD_KV_SIZE, (
                    old.pattern,
                    line,
                )
                assert want.group(1) == got.group(1), (old.pattern, line)
        want_args = OLD_SERVER_ARGS.search(line)
        assert logparse._server_args(line) == (want_args.group(1) if want_args else None), line


# ------------------------------------------------------------------- chart blocks, GFD product labels

OLD_BLOCK_OPEN = re.compile(r"{{-?\s*(with|range|if)\b(.*?)-?}}")  # origins.py
OLD_MIG = re.compile(r"-MIG-(.+)$", re.IGNORECASE)  # accelerators/registry.py


def test_chart_block_openings_as_the_regex_found_them() -> None:
    from kvlint.origins import _block_opens

    pieces = PIECES + ["with", "range", "if", "iff", " .Values.a", "{{- with", "{{ if", "{{\n if", "-}}"]
    texts = TEXTS + EDGES + _random(13, 40000, pieces, 10) + ["{{ if " * 300, "{{ if x\n" * 100 + "}}"]
    texts += [line for t in TEXTS if "{{" in t for line in t.split("\n")]
    for text in texts:
        assert _block_opens(text) == OLD_BLOCK_OPEN.findall(text), repr(text[:200])


def test_gfd_mig_suffix_as_the_regex_found_it() -> None:
    from kvlint.accelerators.registry import _mig_suffix

    pieces = [
        "-MIG-",
        "-mig-",
        "-Mig-",
        "-MİG-",
        "-MıG-",
        "\n",
        "1g.5gb",
        "3g.40gb+me",
        "x",
        "-SHARED",
        "NVIDIA-A100",
    ]
    for v in _random(17, 40000, pieces, 8) + ["-MIG-" * 300 + "\nx", "a-MIG-b\n", "a-MIG-\n", "-MIG-\n\n"]:
        m = OLD_MIG.search(v)
        got = _mig_suffix(v)
        assert got == ((m.start(), m.end(1)) if m else None), repr(v)
        cut = v if got is None else v[: got[0]] + v[got[1] :]
        assert cut == re.sub(r"-MIG-.+$", "", v, flags=re.I), repr(v)


# ------------------------------------------------------------------- chart template line patterns


def _old_line_regex(pieces: list[str]) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(p) for p in pieces))  # template_lines.parse_template, before


def test_template_line_patterns_accept_what_the_plain_join_accepted() -> None:
    from kvlint.template_lines import _line_regex

    rng = random.Random(19)
    alphabet = ["-", "a", "b", "ab", "", " ", "--", "x: ", "."]
    cases: list[tuple[list[str], str]] = []
    for _ in range(20000):
        pieces = [rng.choice(alphabet) for _ in range(rng.randint(1, 6))]
        fill = "".join(p + "".join(rng.choice("-ab \n") for _ in range(rng.randint(0, 3))) for p in pieces)
        cases.append((pieces, fill))
        cases.append((pieces, "".join(rng.choice(["-", "a", "b", " "]) for _ in range(rng.randint(0, 12)))))
    # real template lines (single-line actions) against the lines of every text
    lines = [ln for t in TEXTS if "{{" in t for ln in t.split("\n") if "{{" in ln and "}}" in ln][:400]
    subjects = [ln for t in TEXTS[:200] for ln in t.split("\n")][:300]
    for ln in lines:
        pieces = OLD_TEMPLATE.split(ln)
        cases += [(pieces, s) for s in subjects[:50]]
        cases.append((pieces, "-".join(pieces)))
        cases.append((["", *pieces], "x" + "y".join(pieces)))
    for pieces, subject in cases:
        want = _old_line_regex(pieces).fullmatch(subject) is not None
        assert (re.compile(_line_regex(pieces)).fullmatch(subject) is not None) == want, (pieces, subject)


def test_template_line_pattern_with_many_actions_is_not_backtracked() -> None:
    """A line of 150 actions between dashes against 300 dashes: matched, and not matched with 100 (the plain
    join needed about n^k steps for this)."""
    lines = parse_template("x: " + "{{ .a }}-" * 150 + "z\n")
    pattern = lines[0].pattern
    assert pattern is not None
    assert pattern.fullmatch("x: " + "-" * 300 + "z") is not None
    assert pattern.fullmatch("x: " + "-" * 100 + "z") is None


def _old_action_spans(text: str) -> list[tuple[int, int]]:
    """load._action_spans before a run of braces was skipped in one search: every ``{{`` tried."""
    out, n, pos, eol = [], len(text), 0, -1
    while True:
        i = text.find("{{", pos)
        if i < 0:
            return out
        m = L._open_action(text, i)
        if m is None:
            pos = i + 1
            continue
        if m.end() > eol:
            eol = text.find("\n", m.end())
            eol = n if eol < 0 else eol
        j = text.find("}}", m.end(), eol)
        if j < 0:
            pos = eol
            continue
        out.append((i, j + 2))
        pos = j + 2


def test_action_spans_skip_brace_runs_without_losing_an_action() -> None:
    pieces = ["{", "{{", "{{{", "}}", " ", "\n", ".x", "if", "-", "$", "/*", "end", "a"]
    for text in (
        TEXTS + EDGES + _random(23, 40000, pieces, 10) + ["{" * 301 + " .x }}", "{{{{" * 50 + "- if x}}"]
    ):
        assert list(L._action_spans(text)) == _old_action_spans(text), repr(text[:200])


OLD_HF_CACHE = re.compile(
    r"(?:^|/)models--([A-Za-z0-9][\w.-]*?)--([\w.-]+?)(?:/snapshots/([0-9a-f]{40}))?(?:/|$)"
)


def test_hf_cache_folder_read_as_the_regex_read_it() -> None:
    from kvlint.models.resolve import _hf_cache_folder

    sha = "0123456789abcdef0123456789abcdef01234567"
    pieces = [
        "models--",
        "/",
        "/models--",
        "a",
        "Q",
        "--",
        "-",
        "---",
        ".",
        "_",
        "é",
        "7",
        "/snapshots/",
        sha,
    ]
    pieces += ["\n", "!", " ", "org", "name-v2"]
    refs = [s for s in TEXTS if "models--" in s and len(s) < 2000] + _random(29, 60000, pieces, 8)
    refs += [
        "/models--" + "a--" * 300 + "!",
        "models--a--b",
        "models--a--b\n",
        "x/models--_a--b/",
        "/models--a--",
    ]
    for ref in refs:
        m = OLD_HF_CACHE.search(ref)
        assert _hf_cache_folder(ref) == (m.groups() if m else None), repr(ref[:200])
