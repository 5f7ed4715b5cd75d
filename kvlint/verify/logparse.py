"""Read an engine's start-up log: the configuration it printed and the memory figures it printed.

Accepted input: a log file, stdin or ``kubectl logs`` output (with or without ``--prefix``/``--timestamps``), with
ANSI colours, Ray worker prefixes (``(RayWorkerWrapper pid=…)``), vLLM process prefixes (``(APIServer pid=…)``,
``(EngineCore_0 pid=…)``, ``(VllmWorker TP0 pid=…)``), box-drawing borders of terminal log panes, and long lines
wrapped at a fixed width. Log-line families (the wording each engine prints, per release; sources in the
ground-truth README ``../shared/groundtruth/README.md`` and docs/engine-memory-model.md §1.1):

* vLLM V0: ``# GPU blocks: N, # CPU blocks: M`` (``# cuda blocks``/``# CUDA blocks`` from 0.6.x), the profile
  sentence "the current vLLM instance can use total_gpu_memory (T) x gpu_memory_utilization (U) = B … model weights
  take W; non_torch_memory takes N; PyTorch activation peak memory takes A; the rest of the memory reserved for KV
  Cache is K" or its Dec-2024 table form, the 0.6.4 one-line form "Memory profiling results: total_gpu_memory=TGiB
  initial_memory_usage=IGiB peak_torch_memory=PGiB memory_usage_post_profile=MGiB non_torch_memory=NGiB
  kv_cache_size=KGiB gpu_memory_utilization=U" (``vllm@0.6.4.post1:vllm/worker/worker.py::Worker.
  determine_num_available_blocks``; P is the torch peak, weights included), ``Loading model weights took X GB``, the
  max-seq-len ``ValueError``.
* vLLM V1: the banner's ``version X`` / ``model M`` lines (after the block-letter logo), ``Model loading took X GiB``, ``Available KV cache memory: X GiB``, ``GPU KV cache size: N tokens`` and
  ``Maximum concurrency for L tokens per request: X.XXx`` (two lines, or one from 0.28), ``non-default args: {…}``,
  ``Initializing a V1 LLM engine (vX) with config: …``, ``Graph capturing finished in S secs, took X GiB``,
  ``CUDA graph pool memory: A GiB (actual), E GiB (estimated)``, the per-term line "Free memory on device (F/T GiB)
  on startup … Actual usage is …" (0.20-0.26: weight / peak activation / non-torch / CUDAGraph; 0.27+: consumed
  memory (weights + non-torch) / peak activation / CUDAGraph), the E1 fit-check error; with
  ``--kv-cache-memory-bytes`` (no memory profile) "Initial free memory F GiB, reserved K GiB memory for KV Cache as
  specified by kv_cache_memory_bytes config" in place of "Available KV cache memory"; from 0.21.0 "The current
  --gpu-memory-utilization=U is equivalent to …" (the utilization the worker ran with); "EngineCore failed to
  start." (a failure of kind ``engine_core_failed`` until a later error line names the cause); for hybrid models
  with full decode CUDA graphs "max_num_seqs (N) exceeds available Mamba cache blocks (M)" (kind
  ``mamba_blocks_below_max_num_seqs``).
* vLLM >= 0.34.0 with the extensible KV cache: "Available KV cache memory" (and the "Current kv cache memory in
  use" of the per-term line) is then the pool *reserved* from the profile; the pool vLLM commits is sized after
  warm-up and CUDA-graph capture and printed per worker as "Memory after warmup: F GiB free, C GiB committed to
  the KV cache, T GiB kept for transient activations (P GiB allocated at peak, G GiB of torch reservation
  growth); N KV cache blocks (B GiB) fit within the requested R GiB. …"
  (``vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py::measure_kv_cache_blocks``) and "Extended KV cache to N
  blocks (X GiB)." (``::extend_kv_cache``); "GPU KV cache size" follows the measurement
  (``vllm/v1/core/kv_cache_planning.py::finalize_extensible_kv_cache``). With those lines ``kv_cache_gib`` is
  the committed pool (B, else X) and the reservation is kept as ``kv_reserved_gib``. "Disabling the extensible KV
  cache: REASON." (``vllm/v1/executor/abstract.py::Executor.disable_extensible_kv_cache``) and "Extensible KV
  cache off: …" (``vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache``) say it was off.
* TGI: ``Args { … }``, ``Default `max_batch_prefill_tokens` to N``, ``Setting max batch total tokens to N``,
  the shard's warmup ``KV-cache blocks: N, size: S`` (blocks allocated and BLOCK_SIZE), warmup errors;
  ``Sharding model on N processes`` (the shard count, every release); the router's ``no pipeline tag found for
  model M`` and ``Serving revision S of model M`` (the model when no ``Args`` line is shown); the
  launcher's ``Default `max_input_tokens` to N`` / ``Default `max_total_tokens` to N`` and "Model supports up to
  N but tgi will now set its default to M", printed by the launchers of 2.0.0 - 2.4.0 only
  (tgi@v2.0.0 … v2.4.0:launcher/src/main.rs::main; v2.4.1 and 3.x leave those limits to the shard's warmup).
* SGLang: ``server_args=ServerArgs(…)``, ``Load weight begin. avail mem=X GB`` (the free memory the pool is sized
  from), ``Load weight end … avail mem=X GB, mem usage=Y GB`` (0.4.2 and older: the free memory only), ``KV Cache is
  allocated. … #tokens: N`` (0.4.2 and older: ``K size: X GB, V size: Y GB.`` only), the scheduler's ``max_total_num_tokens=N, chunked_prefill_size=C, max_prefill_tokens=P,
  max_running_requests=R, context_len=L, available_gpu_mem=M GB``; no room for the KV pool: "Not enough memory. Please try to
  increase --mem-fraction-static." (0.5.x) or "Loaded weights leave no GPU memory for the KV cache under
  --mem-fraction-static=F. Raise --mem-fraction-static above S (minimum viable = … = M)" (later builds).

Nothing is computed here: every figure is the number as printed (GiB; vLLM's older "GB" is GiB too), the
minimum over ranks where several ranks print the same line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StartupLog", "parse_log", "clean_lines", "TGI_LAUNCHER_DEFAULTS"]

#: The TGI releases whose launcher prints ``Default `max_total_tokens` to N`` (and ``max_input_tokens``, and "Model
#: supports up to N but tgi will now set its default to M"): tgi@v2.0.0 - v2.4.0:launcher/src/main.rs::main; absent
#: from v1.4.5 and from v2.4.1 on, where the shard infers the limits at warmup.
TGI_LAUNCHER_DEFAULTS = "2.0.0 - 2.4.0"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Terminal-pane borders and blanks around a line: the characters regex ``\s`` matches (str.isspace, all below
# U+3000) and the box-drawing bars. Stripped with str.strip: the regex ``[\s│┃|]+$`` was tried at every
# position of a long run of blanks inside a line, each attempt scanning to the end of the run (quadratic).
_BOX_CHARS = "".join(c for c in map(chr, range(0x3001)) if c.isspace()) + "│┃|"
_KUBECTL_PREFIX = re.compile(r"^\[pod/[^\]]+\]\s*")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})\s+(?=\S)")
_NUM = r"(-?\d+(?:\.\d+)?)"
_INT = r"(\d[\d,]*)"


def clean_lines(text: str) -> list[str]:
    """Lines with ANSI colour codes, terminal-pane borders, ``kubectl logs --prefix`` and ``--timestamps``
    prefixes removed (the engine's own text is kept as printed)."""
    out = []
    for raw in text.splitlines():
        line = _ANSI.sub("", raw)
        line = line.strip(_BOX_CHARS)
        line = _KUBECTL_PREFIX.sub("", line)
        line = _RFC3339.sub("", line) if "text_generation" not in line else line
        out.append(line.rstrip())
    return out


@dataclass
class StartupLog:
    """What a start-up log printed.

    ``engine`` (``vllm``/``tgi``/``sglang`` or None), ``version`` as printed, ``era`` (``v0``/``v1`` for vLLM, from
    the line family), ``releases`` (the release range a line family pins when no version is printed: TGI
    ``2.0.0 - 2.4.0`` for the launcher's token-default lines), ``model`` (the model argument as printed), ``args`` (the non-default arguments / launcher
    ``Args`` / ``ServerArgs`` the log shows, engine field names), ``config`` (fields of vLLM's "Initializing … with
    config:" line), ``gpu_total_gib`` (device total when printed), ``ranks`` (TP ranks seen), ``figures`` (numbers
    keyed like the ground-truth ``figures`` fields), ``failure`` (kind and numbers of a start-up error), ``lines``
    (line numbers, 1-based, where each figure was read), ``texts`` (those lines' text, at most
    :data:`MAX_QUOTE_CHARS` characters each), ``truncated`` (the log's tail past the read bound).
    ``extensible_kv_cache``: vLLM >= 0.34.0's extensible KV
    cache, True when the log shows the pool sized after warm-up ("Memory after warmup: …", "Extended KV cache to
    …"), False when it shows the cache turned off ("Disabling the extensible KV cache: REASON. …", "Extensible KV
    cache off: …", with ``extensible_off_reason``), None when neither is printed.
    """

    engine: str | None = None
    version: str | None = None
    era: str | None = None
    releases: str | None = None
    model: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    gpu_total_gib: float | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    #: the log's own text of each line in ``lines`` (cleaned as :func:`clean_lines` does), keyed by line number
    texts: dict[int, str] = field(default_factory=dict)
    log_format: list[str] = field(default_factory=list)
    extensible_kv_cache: bool | None = None
    extensible_off_reason: str | None = None
    #: vLLM V1's top-k/top-p sampler as the log's ``TopKTopPSampler`` line names it: True for "Using FlashInfer for
    #: top-p & top-k sampling.", False for a fall-back to the PyTorch-native sampler ("FlashInfer is not
    #: available. Falling back to the PyTorch-native implementation …" when the image lacks the FlashInfer package,
    #: 0.9 - 0.11.0; "… available but disabled by default", "… disabled via VLLM_USE_FLASHINFER_SAMPLER=0", "… not
    #: supported on compute capability …", "… unavailable: …" of later releases), None when no such line is printed;
    #: ``sampler_line`` is its line (1-based). See :func:`_sampler_choice`.
    flashinfer_sampler: bool | None = None
    sampler_line: int | None = None
    #: events that did not stop the start-up, by kind, with the line (1-based) where the log first shows each:
    #: ``tgi_decode_cuda_graph_warmup_failed`` (TGI's "Decode cuda graph warmup failed", see :func:`_parse_tgi`)
    warnings: dict[str, int] = field(default_factory=dict)
    #: the log went on past :data:`MAX_LOG_LINES` lines or :data:`MAX_LOG_CHARS` characters, which were not read
    truncated: bool = False
    #: continuation characters joined so far (bounded by :data:`MAX_JOINED_CHARS`)
    joined_chars: int = field(default=0, repr=False, compare=False)

    @property
    def outcome(self) -> str:
        """``fail`` when the log shows a start-up error, else ``ok``."""
        return "fail" if self.failure else "ok"


#: Most characters of a log line kept to quote it beside the figure read there (vLLM's engine-config line runs to
#: kilobytes; the figure lines are a few hundred characters at most).
MAX_QUOTE_CHARS = 400


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _int(s: str) -> int:
    return int(s.replace(",", ""))


#: Most continuation characters :func:`_join_wrapped` joins over one log (4 MiB). vLLM's engine-config line and its
#: non-default args are a few kilobytes, printed once per engine start (the fixture logs' longest line is 2,439
#: characters); an unbalanced ``{`` on each of many lines made every one of them join the next 200 lines,
#: recounting the brackets of the growing text at each step (a 12 MB log of 200 such lines took 41 s of CPU), and
#: even counted incrementally, N short such lines cost N x 200 lines. Past the budget a line is read alone.
MAX_JOINED_CHARS = 4 << 20


def _join_wrapped(log: StartupLog, lines: list[str], i: int, opener: str, closer: str) -> tuple[str, int]:
    """The text from ``lines[i]`` on, continued over following lines (joined without a separator, as a fixed-width
    wrap cut them) until ``opener``/``closer`` balance, for at most 200 lines and while the log's
    :data:`MAX_JOINED_CHARS` budget lasts; returns the text and the index of its last line."""
    parts = [lines[i]]
    depth = lines[i].count(opener) - lines[i].count(closer)
    j = i
    while depth > 0 and j + 1 < len(lines) and j - i < 200:
        nxt = _ANSI.sub("", lines[j + 1])
        if (
            re.match(r"^(\(|\[|INFO|WARNING|ERROR|DEBUG)", nxt)
            or log.joined_chars + len(nxt) > MAX_JOINED_CHARS
        ):
            break
        j += 1
        parts.append(nxt)
        log.joined_chars += len(nxt)
        depth += nxt.count(opener) - nxt.count(closer)
    return "".join(parts), j


def _literal(text: str) -> dict[str, Any]:
    """A Python dict literal as vLLM logs it (``{'max_model_len': 16384, …}``); {} when unreadable."""
    try:
        obj = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _kv_pairs(text: str) -> dict[str, str]:
    """``name=value, name=value`` pairs of vLLM's config line (top level only; nested parentheses kept whole)."""
    out: dict[str, str] = {}
    depth, cur = 0, ""
    parts: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        k, eq, v = p.strip().partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k.strip()):
            out[k.strip()] = v.strip().strip("'\"")
    return out


_WORD = re.compile(r"\w+")
_PAREN = re.compile(r"[()]")
_FIELD_END = re.compile(r"[,}]")


def _rust_fields(text: str) -> Iterator[tuple[str, str, str | None]]:
    r"""``(name, value, inner)`` of each ``name: value`` of a Rust ``Debug`` struct: what the regex
    ``(\w+): (Some\(([^()]*)\)|None|"[^"]*"|[^,}]+)`` finds (``inner``: the text of ``Some(...)``, else None),
    in linear time. That regex tried ``\w+`` at every position of a long word not followed by ``: ``, each
    time scanning to the end of the word (quadratic); here such a word is skipped whole (a match cannot start
    inside it either). A value's scan ends at the next parenthesis, quote, ``,`` or ``}``, which the next
    ``Some(`` / quoted value / field also reaches, so those scans do not overlap."""
    pos = 0
    while True:
        w = _WORD.search(text, pos)
        if w is None:
            return
        v = w.end() + 2
        if not text.startswith(": ", w.end()):
            pos = w.end()
            continue
        if text.startswith("Some(", v):
            p = _PAREN.search(text, v + 5)
            if p is not None and p.group() == ")":
                yield w.group(), text[v : p.end()], text[v + 5 : p.start()]
                pos = p.end()
                continue
        if text.startswith("None", v):
            yield w.group(), "None", None
            pos = v + 4
            continue
        if text.startswith('"', v):
            q = text.find('"', v + 1)
            if q >= 0:
                yield w.group(), text[v : q + 1], None
                pos = q + 1
                continue
        e = _FIELD_END.search(text, v)
        end = e.start() if e is not None else len(text)
        if end > v:
            yield w.group(), text[v:end], None
            pos = end
        else:
            pos = w.end()


def _rust_args(text: str) -> dict[str, Any]:
    """TGI's ``Args { model_id: "x", num_shard: Some(2), max_total_tokens: None, … }``."""
    out: dict[str, Any] = {}
    for key, raw, some in _rust_fields(text):
        val: Any = some if some is not None else raw
        if raw == "None":
            continue
        val = str(val).strip().strip('"')
        if re.fullmatch(r"-?\d+", val):
            out[key] = int(val)
        elif re.fullmatch(r"-?\d+\.\d+", val):
            out[key] = float(val)
        elif val in ("true", "false"):
            out[key] = val == "true"
        else:
            out[key] = val
    return out


#: Largest figure a log line is read for (10^15: a petabyte in bytes, far past any token or block count an engine
#: prints); a number past it, or not finite (a 400-digit float reads as inf), is absurd and not recorded: a
#: 4,000-digit token count could not be compared (float() raised OverflowError).
MAX_FIGURE = 10**15


def _absurd(value: Any) -> bool:
    """A number (not a boolean) that is not finite or is past :data:`MAX_FIGURE` in magnitude."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not (-MAX_FIGURE <= value <= MAX_FIGURE)  # nan fails both comparisons


def _put(log: StartupLog, key: str, value: Any, line: int, *, keep_min: bool = False) -> None:
    """Record a figure: the first value seen, or the minimum over ranks for ``keep_min`` figures. A number that is
    not finite or is past :data:`MAX_FIGURE` in magnitude is not recorded."""
    if _absurd(value):
        return
    if key in log.figures and keep_min:
        if value < log.figures[key]:
            log.figures[key] = value
            log.lines[key] = line
        return
    if key not in log.figures:
        log.figures[key] = value
        log.lines[key] = line


def _gpu_total(log: StartupLog, gib: float) -> None:
    """Record the device total (GiB) the log printed, the first one above 0 (as ``log.gpu_total_gib or gib`` did);
    one that is not finite or past :data:`MAX_FIGURE` is not recorded, as :func:`_put` records no such figure: a
    total of 400 digits reads as an infinite float, which the replay could not turn into bytes (OverflowError)."""
    if not log.gpu_total_gib and gib > 0 and not _absurd(gib):
        log.gpu_total_gib = gib


def _family(log: StartupLog, name: str) -> None:
    if name not in log.log_format:
        log.log_format.append(name)


_V0_PROFILE = re.compile(
    r"total_gpu_memory \("
    + _NUM
    + r"\s*GiB\) x gpu_memory_utilization \("
    + _NUM
    + r"\) = "
    + _NUM
    + r"\s*GiB"
)
_V0_TERMS = re.compile(
    r"model weights take "
    + _NUM
    + r"\s*GiB; non_torch_memory takes "
    + _NUM
    + r"\s*GiB; PyTorch activation peak "
    r"memory takes " + _NUM + r"\s*GiB; the rest of the memory reserved for KV Cache is " + _NUM + r"\s*GiB"
)
_V0_TABLE = {
    "total_gpu_memory": "gpu_total",
    "gpu_memory_utilization": "util",
    "the current vLLM instance can use": "budget_gib",
    "model weights take": "weights_gib",
    "non_torch_memory": "non_torch_gib",
    "PyTorch activation peak memory": "activation_gib",
    "available_kv_cache_memory": "kv_cache_gib",
}
#: vLLM 0.6.4's one-line profile (``vllm@0.6.4.post1:vllm/worker/worker.py::Worker.determine_num_available_blocks``)
_V0_KEYVALUE = re.compile(
    r"Memory profiling results: total_gpu_memory=" + _NUM + r"GiB initial_memory_usage=" + _NUM
    + r"GiB peak_torch_memory=" + _NUM + r"GiB memory_usage_post_profile=" + _NUM + r"GiB non_torch_memory="
    + _NUM + r"GiB kv_cache_size=" + _NUM + r"GiB gpu_memory_utilization=" + _NUM
)  # fmt: skip
_ACTUAL_OLD = re.compile(
    r"Actual usage is " + _NUM + r" GiB for weight, " + _NUM + r" GiB for peak activation, " + _NUM
    + r" GiB for non-torch memory, and " + _NUM + r" GiB for CUDAGraph memory"
)  # fmt: skip
_ACTUAL_NEW = re.compile(
    r"Actual usage is " + _NUM + r" GiB for consumed memory \(weights \+ non-torch\), " + _NUM
    + r" GiB for peak activation, and " + _NUM + r" GiB for CUDAGraph memory"
)  # fmt: skip
# "Free memory on device ... (FREE/TOTAL GiB)": the phrase, then the first "(" after it must open the figures.
# Found with str.find and the figures matched at that "(" (:func:`_free_memory`); the regex
# ``Free memory on device[^(]*\(...`` scanned to the end of the line from every repetition of the phrase
# when no "(" followed (quadratic).
#: "Initial free memory F GiB, reserved K GiB memory for KV Cache as specified by kv_cache_memory_bytes config"
_KV_MEMORY_BYTES = re.compile(
    r"Initial free memory " + _NUM + r" GiB, reserved " + _NUM + r" GiB memory for KV Cache as specified by "
    r"kv_cache_memory_bytes"
)
#: failure kind when the log says the engine core did not start and no later line names the cause
_ENGINE_CORE_FAILED = "engine_core_failed"
_SAMPLER_WARMUP_OOM = re.compile(
    r"CUDA out of memory occurred when warming up sampler with (\d+) dummy requests"
)
_FREE_PHRASE = "Free memory on device"
_FREE_FIGURES = re.compile(r"\(" + _NUM + r"/" + _NUM + r" GiB\)")
_DESIRED = re.compile(r"\(" + _NUM + r", " + _NUM + r" GiB\)")


def _free_memory(line: str) -> re.Match[str] | None:
    r"""The ``(FREE/TOTAL GiB)`` figures of vLLM's "Free memory on device" line (groups 1 and 2; the match
    ends where the regex ``Free memory on device[^(]*\(NUM/NUM GiB\)`` would), or None. Linear: the first
    "(" after a phrase that does not open the figures is the first "(" after every earlier phrase too, so
    the search resumes after it."""
    pos = 0
    while True:
        start = line.find(_FREE_PHRASE, pos)
        if start < 0:
            return None
        paren = line.find("(", start + len(_FREE_PHRASE))
        if paren < 0:
            return None
        m = _FREE_FIGURES.match(line, paren)
        if m is not None:
            return m
        pos = paren + 1


#: Most characters and lines of a log :func:`parse_log` reads (64 MiB, 100,000 lines): the start-up lines come
#: first, within a few thousand lines even at DEBUG level, and every later line costs the same dozens of searches
#: (about 17 us a line: 10 MB of one-letter lines took 85 s of CPU, a 100 MB binary file 55 s). The rest of a
#: longer log (a serving pod's request lines) is not read; :attr:`StartupLog.truncated` says so.
MAX_LOG_CHARS = 64 << 20
MAX_LOG_LINES = 100_000
# the line boundaries of str.splitlines
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _head(text: str) -> tuple[str, bool]:
    """The first :data:`MAX_LOG_LINES` lines of ``text`` within its first :data:`MAX_LOG_CHARS` characters, and
    whether anything was left out."""
    cut = len(text) > MAX_LOG_CHARS
    text = text[:MAX_LOG_CHARS]
    for count, m in enumerate(_LINE_BREAK.finditer(text), 1):
        if count == MAX_LOG_LINES:
            return text[: m.end()], cut or m.end() < len(text)
    return text, cut


def parse_log(text: str) -> StartupLog:
    """Parse a start-up log (see the module docstring): its first :data:`MAX_LOG_LINES` lines within
    :data:`MAX_LOG_CHARS` characters. Never raises; an unrecognised log gives an empty :class:`StartupLog`
    (``engine`` None, no figures)."""
    text, truncated = _head(text)
    lines = clean_lines(text)
    log = StartupLog(truncated=truncated)
    i = 0
    while i < len(lines):
        line = lines[i]
        n = i + 1
        i += 1
        if not line.strip():
            continue
        try:
            _parse_vllm(log, lines, line, n)
            _parse_tgi(log, lines, line, n)
            _parse_sglang(log, line, n)
        except ValueError:
            # int() of a run of digits the patterns matched raises only past Python's int_max_str_digits (4,300
            # digits: "KV-cache blocks: 999…"): no engine prints such a number, the line gives no more figures
            continue
    if log.engine is None and log.figures:
        log.engine = "vllm"
    # the numbers of a start-up error and of the launcher's arguments are bounded as figures are (_put): a
    # 400-digit GiB read as inf was written as JSON's invalid ``Infinity`` and as YAML's ``.inf``
    for numbers in (log.failure, log.args):
        for key in [k for k, v in (numbers or {}).items() if _absurd(v)]:
            del numbers[key]
    log.texts = {
        n: lines[n - 1].strip()[:MAX_QUOTE_CHARS]
        for n in sorted({*log.lines.values(), *log.warnings.values()})
        if 0 < n <= len(lines)
    }
    _settle_extensible_kv(log)
    return log


def _settle_extensible_kv(log: StartupLog) -> None:
    """With the extensible KV cache (vLLM >= 0.34.0) the "Available KV cache memory" line prints the pool reserved
    from the profile (``Worker.determine_available_memory``, before warm-up); the pool committed is what
    ``measure_kv_cache_blocks`` prints after warm-up ("N KV cache blocks (B GiB) fit", the minimum over workers,
    as ``finalize_extensible_kv_cache`` takes it) or, without that line, what ``extend_kv_cache`` commits. Makes
    that ``kv_cache_gib`` and keeps the reservation as ``kv_reserved_gib``."""
    for key in ("kv_measured_gib", "kv_extended_gib"):
        if key in log.figures:
            if "kv_cache_gib" in log.figures:
                log.figures["kv_reserved_gib"] = log.figures["kv_cache_gib"]
                log.lines["kv_reserved_gib"] = log.lines["kv_cache_gib"]
            log.figures["kv_cache_gib"] = log.figures[key]
            log.lines["kv_cache_gib"] = log.lines[key]
            return


#: vLLM's start-up banner (``vllm/entrypoints/utils.py::log_version_and_model``; the public logs read
#: show it from 0.15.1 to 0.27.1): the block-letter logo, then ``version 0.20.0`` or ``model   org/name`` at the end
#: of its lines; without the logo (``VLLM_DISABLE_LOG_LOGO``, no formatter) one line "vLLM server version X,
#: serving model M".
_BANNER = re.compile(r"[█▀▄]\s+(version|model)\s+(\S+)$")
_BANNER_PLAIN = re.compile(r"vLLM server version (\S+), serving model (\S+)")


def _vllm(log: StartupLog, era: str | None = None) -> None:
    if log.engine is None:
        log.engine = "vllm"
    if era and log.era is None:
        log.era = era


#: vLLM V1's start-up line naming the FlashInfer top-k/top-p sampler (logger.info_once in
#: ``vllm/v1/sample/ops/topk_topp_sampler.py``, 0.9.0 - 0.34.0)
_SAMPLER_FLASHINFER = re.compile(r"Using FlashInfer for top-p & top-k sampling\.")
#: the same module's fall-backs to the PyTorch-native sampler at start-up: ``TopKTopPSampler.__init__`` of
#: vllm@0.10.2 ("FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k
#: sampling.", "FlashInfer is available, but it is not enabled. Falling back …", "FlashInfer version >= 0.2.3
#: required. Falling back to default sampling implementation."), vllm@0.17.0 ("… is available but disabled by
#: default"), vllm@0.21.0 ("… disabled via VLLM_USE_FLASHINFER_SAMPLER=0", "… not supported on compute
#: capability"), vllm@0.24.0 - vllm@0.34.0 ("FlashInfer top-p/top-k sampling unavailable: <reason>; falling back.").
#: Not read: the same releases' ``RuntimeError`` "FlashInfer top-p/top-k sampling unavailable: <reason>. Unset
#: VLLM_USE_FLASHINFER_SAMPLER=1." (``flashinfer_sampler_supported`` raises it when the variable is set: the start-up
#: fails, nothing fell back), and the per-request-generator fall-back ("does not support per-request generators"),
#: which happens at sampling time, not in the profile.
_SAMPLER_NATIVE = re.compile(
    r"Falling back to the PyTorch-native implementation of top-p & top-k sampling"
    r"|FlashInfer version >= 0\.2\.3 required\. Falling back to default sampling"
    r"|FlashInfer top-p/top-k sampling (?:is available but disabled|disabled via|not supported on)"
)
#: the 0.24.0+ fall-back's head; its tail ``; falling back.`` is looked for after the head's first occurrence (a
#: pattern ``unavailable: .*; falling back\.`` ran ``.*`` to the line's end from every occurrence of the head:
#: quadratic in a line that repeats it)
_SAMPLER_UNAVAILABLE = "FlashInfer top-p/top-k sampling unavailable: "


def _sampler_choice(line: str) -> bool | None:
    """True when ``line`` is vLLM's "Using FlashInfer for top-p & top-k sampling." start-up line, False when it is
    one of the start-up fall-backs to the PyTorch-native sampler (:data:`_SAMPLER_NATIVE`), else None. Which
    sampler the memory profile's dummy sampler runs sets its peak (docs/engine-memory-model.md §5; the FlashInfer
    package is an optional extra of the 0.10.2 wheel, ``Requires-Dist: flashinfer-python==0.3.0; extra ==
    "flashinfer"``, so a pip install runs the PyTorch sort where the image runs FlashInfer)."""
    if "sampl" not in line:
        return None
    if _SAMPLER_FLASHINFER.search(line):
        return True
    if _SAMPLER_NATIVE.search(line):
        return False
    head = line.find(_SAMPLER_UNAVAILABLE)
    if head >= 0 and line.find("; falling back.", head + len(_SAMPLER_UNAVAILABLE)) >= 0:
        return False
    return None


def _parse_vllm(log: StartupLog, lines: list[str], line: str, n: int) -> None:
    m = re.search(r"vLLM API server version (\S+)", line)
    if m:
        _vllm(log)
        log.version = log.version or m.group(1)
    # the start-up banner of recent releases: block-letter logo, then "version X" and "model M" on its lines
    m = _BANNER.search(line)
    if m:
        _vllm(log)
        if m.group(1) == "version":
            log.version = log.version or m.group(2)
        elif log.model is None:
            log.model = m.group(2)
    m = _BANNER_PLAIN.search(line)
    if m:
        _vllm(log)
        log.version = log.version or m.group(1)
        log.model = log.model or m.group(2)
    m = re.search(r"Initializing (?:a V1 LLM engine|an LLM engine) \(v?([^)\s]+)\) with config: (.*)", line)
    if m:
        _vllm(log, "v1" if "V1" in line else "v0")
        log.version = log.version or m.group(1)
        text, _ = _join_wrapped(log, lines, n - 1, "(", ")")
        body = text.split("with config: ", 1)[1]
        log.config.update(_kv_pairs(body))
        if log.model is None and log.config.get("model"):
            log.model = log.config["model"]
    if "non-default args:" in line:
        text, _ = _join_wrapped(log, lines, n - 1, "{", "}")
        d = _literal(text.split("non-default args:", 1)[1].strip())
        if d:
            _vllm(log)
            log.args.update(d)
            model = d.get("model_tag") or d.get("model")
            if model and log.model is None:
                log.model = str(model)
            _family(log, "v1 non-default args")
    m = re.search(r"Using max model len (\d+)", line)
    if m:
        _vllm(log)
        _put(log, "max_model_len", int(m.group(1)), n)
    m = re.search(r"max_num_batched_tokens=(\d+)", line)
    if m and "Chunked prefill is enabled" in line:
        _put(log, "max_num_batched_tokens", int(m.group(1)), n)
    # weights
    m = re.search(r"Model loading took " + _NUM + r" ?GiB", line)
    if m:
        _vllm(log, "v1")
        _put(log, "weights_gib", _num(m.group(1)), n)
        _family(log, "v1 'Model loading took'")
    m = re.search(r"Loading model weights took " + _NUM + r" ?GB", line)
    if m:
        _vllm(log, "v0")
        _put(log, "weights_gib", _num(m.group(1)), n)
        log.figures.setdefault("weights_unit_printed", "GB")
        _family(log, "v0 'Loading model weights took'")
    # V0 profile sentence / table
    m = _V0_PROFILE.search(line)
    if m:
        _vllm(log, "v0")
        _gpu_total(log, _num(m.group(1)))
        _put(log, "gpu_memory_utilization", _num(m.group(2)), n)
        _put(log, "budget_gib", _num(m.group(3)), n)
        _family(log, "v0 profile sentence")
    m = _V0_TERMS.search(line)
    if m:
        _vllm(log, "v0")
        for key, val in zip(
            ("weights_gib", "non_torch_gib", "activation_gib", "kv_cache_gib"), m.groups(), strict=True
        ):
            _put(log, key, _num(val), n, keep_min=key == "kv_cache_gib")
    for label, key in _V0_TABLE.items():
        # ``\s*(?:GiB\s*)?$``: the same tails as ``\s*(GiB)?\s*$``, whose two adjacent ``\s*`` split a run of N
        # blanks N ways before ``$`` failed (quadratic)
        m = re.search(r"\]\s*" + re.escape(label) + r"\s+" + _NUM + r"\s*(?:GiB\s*)?$", line)
        if m:
            _vllm(log, "v0")
            val = _num(m.group(1))
            if key == "gpu_total":
                _gpu_total(log, val)
            elif key == "util":
                _put(log, "gpu_memory_utilization", val, n)
            else:
                _put(log, key, val, n, keep_min=key == "kv_cache_gib")
            _family(log, "v0 'Memory profiling results' table")
    m = _V0_KEYVALUE.search(line)
    if m:
        _vllm(log, "v0")
        total, initial, peak_torch, _post, non_torch, kv, util = (_num(g) for g in m.groups())
        _gpu_total(log, total)
        _put(log, "initial_memory_usage_gib", initial, n)
        _put(log, "peak_torch_memory_gib", peak_torch, n)
        _put(log, "non_torch_gib", non_torch, n)
        _put(log, "kv_cache_gib", kv, n, keep_min=True)
        _put(log, "gpu_memory_utilization", util, n)
        _family(log, "v0 0.6.4 'Memory profiling results: …=…GiB'")
    m = re.search(r"# (?:GPU|cuda|CUDA) blocks: (\d+), # CPU blocks: (\d+)", line)
    if m:
        _vllm(log, "v0")
        _put(log, "gpu_blocks", int(m.group(1)), n, keep_min=True)
        _put(log, "cpu_blocks", int(m.group(2)), n)
        _family(log, "v0 '# GPU blocks'")
    # V1 KV figures
    m = re.search(r"Available KV cache memory: " + _NUM + r" GiB", line)
    if m:
        _vllm(log, "v1")
        _put(log, "kv_cache_gib", _num(m.group(1)), n, keep_min=True)
        _family(log, "v1 'Available KV cache memory'")
    # ``[A-Z]+`` starts only where a run of capitals starts (a match inside a run would start at its first
    # capital anyway); tried at every capital, it rescanned the rest of the run each time (quadratic)
    m = re.search(r"(?:GPU|(?<![A-Z])[A-Z]+(?: \+ host)?) KV cache size: " + _INT + r" tokens", line)
    if m:
        _vllm(log, "v1")
        _put(log, "kv_tokens", _int(m.group(1)), n, keep_min=True)
        _family(log, "v1 'GPU KV cache size'")
    m = re.search(r"Maximum concurrency for " + _INT + r" tokens per request: " + _NUM + r"x", line)
    if m:
        _vllm(log)
        _put(log, "concurrency_for_len", _int(m.group(1)), n)
        _put(log, "max_concurrency", _num(m.group(2)), n, keep_min=True)
    m = re.search(r"Graph capturing finished in \S+ secs?, took " + _NUM + r" GiB", line)
    if m:
        _vllm(log)
        _put(log, "cudagraph_gib", _num(m.group(1)), n)
    m = re.search(
        r"CUDA graph pool memory: " + _NUM + r" GiB \(actual\), " + _NUM + r" GiB \(estimated\)", line
    )
    if m:
        _put(log, "cudagraph_gib", _num(m.group(1)), n)
        _put(log, "cudagraph_estimated_gib", _num(m.group(2)), n)
    choice = _sampler_choice(line)
    if choice is not None and log.flashinfer_sampler is None:
        _vllm(log)
        log.flashinfer_sampler, log.sampler_line = choice, n
    # the profile's estimate alone, printed before "Available KV cache memory" by the releases that deduct it (the
    # 2026 gpu_model_runner.py line; gt-291, vllm-project/vllm#46462): the figure the KV budget lost
    m = re.search(r"Estimated CUDA graph memory: " + _NUM + r" GiB total", line)
    if m:
        _vllm(log, "v1")
        _put(log, "cudagraph_estimated_gib", _num(m.group(1)), n)
    m = _free_memory(line)
    if m:
        _vllm(log, "v1")
        _put(log, "free_at_startup_gib", _num(m.group(1)), n)
        _gpu_total(log, _num(m.group(2)))
        desired = _DESIRED.search(line[m.end() :])
        if desired:
            _put(log, "gpu_memory_utilization", _num(desired.group(1)), n)
            _put(log, "budget_gib", _num(desired.group(2)), n)
        old = _ACTUAL_OLD.search(line)
        if old:
            keys: tuple[str, ...] = ("weights_gib", "activation_gib", "non_torch_gib", "cudagraph_gib")
            for key, val in zip(keys, old.groups(), strict=True):
                _put(log, key, _num(val), n)
            _family(log, "v1 'Free memory on device … Actual usage' (0.20-0.26)")
        new = _ACTUAL_NEW.search(line)
        if new:
            keys = ("weights_plus_non_torch_gib", "activation_gib", "cudagraph_gib")
            for key, val in zip(keys, new.groups(), strict=True):
                _put(log, key, _num(val), n)
            _family(log, "v1 'Free memory on device … Actual usage' (0.27+)")
    _parse_vllm_extensible(log, line, n)
    # --kv-cache-memory-bytes skips the memory profile: the pool is the flag's size, printed with the free memory at
    # start-up (vllm@0.34.0:vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory, format_gib)
    m = _KV_MEMORY_BYTES.search(line)
    if m:
        _vllm(log, "v1")
        _put(log, "free_at_startup_gib", _num(m.group(1)), n)
        _put(log, "kv_cache_gib", _num(m.group(2)), n, keep_min=True)
        _family(log, "v1 'reserved … as specified by kv_cache_memory_bytes'")
    # the utilization the worker ran with, printed next to the CUDA-graph profiling note (same function, 0.21.0+)
    m = re.search(r"The current --gpu-memory-utilization=" + _NUM + r" is equivalent to", line)
    if m:
        _vllm(log, "v1")
        _put(log, "gpu_memory_utilization", _num(m.group(1)), n)
    m = re.search(r"Current kv cache memory in use is " + _NUM + r" GiB", line)
    if m:
        _put(log, "kv_cache_gib", _num(m.group(1)), n, keep_min=True)
    m = re.search(
        r"`--kv-cache-memory=(\d+)`[^`]*to fit into requested memory, or `--kv-cache-memory=(\d+)`", line
    )
    if m:
        _put(log, "suggested_kv_cache_memory_bytes_requested", int(m.group(1)), n)
        _put(log, "suggested_kv_cache_memory_bytes_full", int(m.group(2)), n)
    m = re.search(r"profiled with (\d+) (\w+) items", line)
    if m:
        _put(log, "encoder_profile_items", int(m.group(1)), n)
    # failures
    m = re.search(
        r"max seq len \((\d+)\), \("
        + _NUM
        + r" ?Gi?B KV cache is needed, which is larger than the available KV "
        r"cache memory \(" + _NUM + r" ?Gi?B\)",
        line,
    )
    if m:
        _vllm(log, "v1")
        log.failure = {
            "kind": "kv_needed_exceeds_available",
            "max_model_len": int(m.group(1)),
            "kv_needed_gib": _num(m.group(2)),
            "kv_available_gib": _num(m.group(3)),
        }
        e = re.search(r"estimated maximum model length is (\d+)", line)
        if e:
            log.failure["estimated_max_model_len"] = int(e.group(1))
    m = re.search(
        r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)",
        line,
    )
    if m:
        _vllm(log, "v0")
        log.failure = {
            "kind": "max_seq_len_exceeds_kv_capacity",
            "max_model_len": int(m.group(1)),
            "kv_capacity_tokens": int(m.group(2)),
        }
    # hybrid (Mamba / linear-attention) models with full decode CUDA graphs: every decode sequence needs one Mamba
    # block, so fewer blocks than max_num_seqs stops the start after the KV cache is sized
    # (vllm@0.34.0:vllm/config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes)
    m = _MAMBA_BLOCKS.search(line)
    if m:
        _vllm(log, "v1")
        log.failure = {
            "kind": "mamba_blocks_below_max_num_seqs",
            "max_num_seqs": int(m.group(1)),
            "mamba_blocks": int(m.group(2)),
        }
    # V1's sampler warm-up (vllm@0.11.0 - vllm@0.29.0:vllm/v1/worker/gpu_model_runner.py::
    # GPUModelRunner._dummy_sampler_run re-raises an out-of-memory error so). It runs twice: in profile_run, before the
    # KV cache is sized, and after the CUDA-graph capture (vllm/v1/worker/gpu_worker.py::Worker.
    # compile_or_warm_up_model); the line does not say which, a KV-cache line before it does (after_kv_sizing)
    m = _SAMPLER_WARMUP_OOM.search(line)
    if m:
        _vllm(log, "v1")
        log.failure = {
            "kind": "oom_during_sampler_warmup",
            "dummy_requests": int(m.group(1)),
            "after_kv_sizing": "kv_cache_gib" in log.figures,
        }
    if "No available memory for the cache blocks" in line:
        _vllm(log)
        if not log.failure or log.failure["kind"] == _ENGINE_CORE_FAILED:
            log.failure = {"kind": "no_memory_for_cache_blocks"}
    # V1's engine-core process reports that it did not start (vllm@0.34.0:vllm/v1/engine/core.py::run_engine_core,
    # logger.exception) before the traceback; the cause, when a later line names one, replaces this
    if "EngineCore failed to start" in line:
        _vllm(log, "v1")
        log.failure = log.failure or {"kind": _ENGINE_CORE_FAILED}


#: "max_num_seqs (N) exceeds available Mamba cache blocks (M). Each decode sequence requires one Mamba cache block,
#: so CUDA graph capture cannot proceed." (``vllm@0.34.0:vllm/config/compilation.py``)
_MAMBA_BLOCKS = re.compile(r"max_num_seqs \((\d+)\) exceeds available Mamba cache blocks \((\d+)\)")

#: ``vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py::measure_kv_cache_blocks``'s info line (``format_gib``:
#: GiB rounded to 2 decimals, printed as Python prints a float: ``61.4``, ``0.0``)
_EXT_MEASURED = re.compile(
    r"Memory after warmup: " + _NUM + r" GiB free, " + _NUM + r" GiB committed to the KV cache, " + _NUM
    + r" GiB kept for transient activations \(" + _NUM + r" GiB allocated at peak, " + _NUM
    + r" GiB of torch reservation growth\); (\d+) KV cache blocks \(" + _NUM + r" GiB\) fit within the requested "
    + _NUM + r" GiB"
)  # fmt: skip
#: ``::extend_kv_cache``: "Extended KV cache to %d blocks (%.2f GiB)."
_EXT_EXTENDED = re.compile(r"Extended KV cache to (\d+) blocks \(" + _NUM + r" GiB\)")
#: ``vllm@0.34.0:vllm/v1/executor/abstract.py::Executor.disable_extensible_kv_cache``: "Disabling the extensible KV
#: cache: %s. The KV cache will be sized from profiling estimates instead of measured memory."
_EXT_DISABLED = "Disabling the extensible KV cache: "
_EXT_DISABLED_TAIL = ". The KV cache will be sized"
#: ``vllm@0.34.0:vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache``'s info line, one fixed text: "Extensible
#: KV cache off: without an IMEX channel, KV transfers within a host (e.g. NIXL) would lose NVLink and fall back to
#: RDMA or TCP. If transfers only cross hosts, pass --enable-extensible-kv-cache." The reason is the first sentence,
#: which holds a '.' of its own ("e.g."), so it ends where the second sentence starts.
_EXT_OFF = "Extensible KV cache off: "
_EXT_OFF_TAIL = ". If transfers only cross hosts"


def _reason(line: str, start: int, tail: str) -> str:
    """The reason vLLM formats between ``line[:start]`` and ``tail`` (its next sentence). The reason may hold a
    '.' of its own ("e.g.", "0.34.0"), so only the tail ends it; a line cut before the tail keeps the rest, less
    a final '.'."""
    rest = line[start:]
    cut = rest.find(tail)
    return (rest[:cut] if cut >= 0 else rest.rstrip().removesuffix(".")).strip()


def _parse_vllm_extensible(log: StartupLog, line: str, n: int) -> None:
    """vLLM >= 0.34.0's extensible-KV-cache lines (see the module docstring)."""
    m = _EXT_MEASURED.search(line)
    if m:
        _vllm(log, "v1")
        log.extensible_kv_cache = True
        _put(log, "free_after_warmup_gib", _num(m.group(1)), n, keep_min=True)
        _put(log, "transient_peak_gib", _num(m.group(4)), n)
        _put(log, "kv_measured_blocks", int(m.group(6)), n, keep_min=True)
        _put(log, "kv_measured_gib", _num(m.group(7)), n, keep_min=True)
        _put(log, "budget_gib", _num(m.group(8)), n)
        _family(log, "v1 'Memory after warmup' (0.34+, extensible KV cache)")
    m = _EXT_EXTENDED.search(line)
    if m:
        _vllm(log, "v1")
        log.extensible_kv_cache = True
        _put(log, "kv_extended_blocks", int(m.group(1)), n, keep_min=True)
        _put(log, "kv_extended_gib", _num(m.group(2)), n, keep_min=True)
        _family(log, "v1 'Extended KV cache to' (0.34+, extensible KV cache)")
    start = line.find(_EXT_DISABLED)
    if start >= 0:
        _vllm(log, "v1")
        log.extensible_kv_cache = False
        log.extensible_off_reason = _reason(line, start + len(_EXT_DISABLED), _EXT_DISABLED_TAIL)
    start = line.find(_EXT_OFF)
    if start >= 0:
        _vllm(log, "v1")
        log.extensible_kv_cache = False
        log.extensible_off_reason = _reason(line, start + len(_EXT_OFF), _EXT_OFF_TAIL)


def _parse_tgi(log: StartupLog, lines: list[str], line: str, n: int) -> None:
    if "text_generation_launcher" in line or "text_generation_router" in line:
        log.engine = log.engine or "tgi"
    m = re.search(r"\bArgs \{", line)
    if m and log.engine in (None, "tgi"):
        text, _ = _join_wrapped(log, lines, n - 1, "{", "}")
        args = _rust_args(text[m.end() :])
        if args:
            log.engine = "tgi"
            log.args.update(args)
            if args.get("model_id") and log.model is None:
                log.model = str(args["model_id"])
            _family(log, "tgi launcher 'Args { … }'")
    m = re.search(r"Default `max_batch_prefill_tokens` to (\d+)", line)
    if m:
        log.engine = "tgi"
        _put(log, "max_batch_prefill_tokens_default", int(m.group(1)), n)
    m = re.search(r"Setting max batch total tokens to (\d+)", line)
    if m:
        log.engine = "tgi"
        _put(log, "max_batch_total_tokens", int(m.group(1)), n)
        _family(log, "tgi 'Setting max batch total tokens'")
    # the shard's warmup (flash models; logged from TGI v2.4.0, not in v2.3.1): "KV-cache blocks: N, size: S" -- N the blocks it
    # allocated, S its BLOCK_SIZE (1 with flashinfer, 256 flashdecoding, 16 paged); the router's budget is N x S
    # (tgi@v3.0.0:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup returns
    # num_blocks * BLOCK_SIZE, which backends/v3/src/lib.rs logs as "Setting max batch total tokens to N")
    m = re.search(r"KV-cache blocks: (\d+), size: (\d+)", line)
    if m:
        log.engine = "tgi"
        _put(log, "kv_cache_blocks", int(m.group(1)), n)
        _put(log, "kv_block_size", int(m.group(2)), n)
        _family(log, "tgi 'KV-cache blocks: N, size: S'")
    m = re.search(r"Default `max_(input_tokens|total_tokens)` to (\d+)", line)
    if m:
        log.engine = "tgi"
        _put(log, f"max_{m.group(1)}", int(m.group(2)), n)
        log.releases = TGI_LAUNCHER_DEFAULTS
    # TGI 3.x's router, when neither limit was given, takes them from the warmup's answer: "Maximum input tokens
    # defaulted to N" / "Maximum total tokens defaulted to N" (tgi@v3.0.1:backends/v3/src/main.rs::main)
    m = re.search(r"Maximum (input|total) tokens defaulted to (\d+)", line)
    if m:
        log.engine = "tgi"
        _put(log, f"max_{m.group(1)}_tokens", int(m.group(2)), n)
    if "but tgi will now set its default to" in line:
        log.engine = "tgi"
        log.releases = TGI_LAUNCHER_DEFAULTS
    m = re.search(r"Sharding model on (\d+) processes", line)
    if m:
        log.engine = "tgi"
        if not isinstance(log.args.get("num_shard"), int):
            log.args["num_shard"] = int(m.group(1))
            log.lines["num_shard"] = n
    m = re.search(r"(?:no pipeline tag found for model|Serving revision \S+ of model) (\S+)", line)
    if m and log.engine == "tgi" and log.model is None:
        log.model = m.group(1)
    m = _warmup(line)
    if m and "ERROR" in line:
        log.engine = "tgi"
        log.failure = {"kind": "tgi_warmup_failed", "max_prefill_tokens": int(m.group(2))}
        tot = re.search(r"Some\((\d+)\)", m.group(3))
        if tot:
            log.failure["max_total_tokens"] = int(tot.group(1))
    m = re.search(r"Not enough memory to handle (\d+) prefill tokens", line)
    if m:
        log.engine = "tgi"
        log.failure = {"kind": "tgi_prefill_oom", "prefill_tokens": int(m.group(1))}
    # the shard captures its decode CUDA graphs after the KV cache is allocated, in what the wiggle room left, and an
    # out-of-memory there is logged, not raised: the shard serves without the graphs not yet captured
    # (tgi@v1.4.1 - v3.3.7:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup,
    # ``except torch.cuda.OutOfMemoryError: logger.exception("Decode cuda graph warmup failed")``; mamba.py the same)
    if _TGI_GRAPH_OOM in line:
        log.engine = "tgi"
        log.warnings.setdefault("tgi_decode_cuda_graph_warmup_failed", n)


#: TGI's message when a decode CUDA-graph capture runs out of memory (start-up goes on)
_TGI_GRAPH_OOM = "Decode cuda graph warmup failed"


_WARMUP_HEAD = "warmup{max_input_length="
_WARMUP = re.compile(r"warmup\{max_input_length=(\S+) max_prefill_tokens=(\d+) max_total_tokens=(\S+)")
_BLANK = re.compile(r"\s")


def _warmup(line: str) -> re.Match[str] | None:
    """``re.search`` of :data:`_WARMUP` in ``line``, in linear time: when the phrase at one place does not
    match, every later phrase before the end of the same non-blank run meets the same blank and fails the
    same way, so the search resumes at that blank (the regex tried each one, scanning the run each time)."""
    pos = 0
    while True:
        start = line.find(_WARMUP_HEAD, pos)
        if start < 0:
            return None
        m = _WARMUP.match(line, start)
        if m is not None:
            return m
        blank = _BLANK.search(line, start + len(_WARMUP_HEAD))
        if blank is None:
            return None
        pos = blank.start()


def _server_args(line: str) -> str | None:
    r"""The text of ``server_args=ServerArgs(...)`` up to the last ``)`` of its line (group 1 of
    ``server_args=ServerArgs\((.*)\)``), or None; a phrase with no ``)`` after it on its line is followed by
    no closing for any later phrase of that line either (the regex rescanned the line from each)."""
    head = "server_args=ServerArgs("
    pos = 0
    while True:
        start = line.find(head, pos)
        if start < 0:
            return None
        lo = start + len(head)
        eol = line.find("\n", lo)
        eol = len(line) if eol < 0 else eol
        close = line.rfind(")", lo, eol)
        if close >= 0:
            return line[lo:close]
        pos = eol


_LOAD_WEIGHT_TAIL = re.compile(r"avail mem=" + _NUM + r" GB, mem usage=" + _NUM + r" GB")
_KV_TOKENS_TAIL = re.compile(r"#tokens: (\d+)")
_LOAD_WEIGHT_FREE = re.compile(r"avail mem=" + _NUM + r" GB")


def _head_then_last(line: str, head: str, anchor: str, tail: re.Pattern[str]) -> re.Match[str] | None:
    """``re.search(re.escape(head) + ".*" + TAIL, line)`` where ``tail`` (TAIL) starts with the literal
    ``anchor``, in linear time: the match of ``tail`` (its groups) at the last ``anchor`` after the first
    ``head`` of a line where it matches, as the greedy ``.*`` finds it. Every later ``head`` of the same line
    sees only some of the same anchors, so a line is given up after its first ``head`` (the regex rescanned
    the rest of the line from every ``head``)."""
    pos = 0
    while True:
        start = line.find(head, pos)
        if start < 0:
            return None
        lo = start + len(head)
        eol = line.find("\n", lo)
        eol = len(line) if eol < 0 else eol
        at = line.rfind(anchor, lo, eol)
        while at >= 0:
            m = tail.match(line, at)
            if m is not None and m.end() <= eol:
                return m
            at = line.rfind(anchor, lo, at + len(anchor) - 1)
        pos = eol


#: figure key -> the field of the SGLang scheduler's "max_total_num_tokens=N, …" line that prints it (GB as printed)
_SGLANG_SCHEDULER_FIELDS = (
    ("chunked_prefill_size", r"\bchunked_prefill_size=(\d+)"),
    ("max_prefill_tokens", r"\bmax_prefill_tokens=(\d+)"),
    ("max_running_requests", r"\bmax_running_requests=(\d+)"),
    ("context_len", r"\bcontext_len=(\d+)"),
    ("available_gpu_mem_gb", r"\bavailable_gpu_mem=" + _NUM + r" GB"),
)


def _parse_sglang(log: StartupLog, line: str, n: int) -> None:
    server_args = _server_args(line)
    if server_args is not None:
        log.engine = "sglang"
        pairs = _kv_pairs(server_args)
        log.args.update(pairs)
        if pairs.get("model_path") and log.model is None:
            log.model = pairs["model_path"]
    # the free memory before the weights load: "Load weight begin. avail mem=X GB" (sglang@0.4.2.post2 and
    # 0.5.x: model_runner.py::ModelRunner.load_model, get_available_gpu_memory right after the parallel groups exist,
    # the figure init_torch_distributed returns as the pool's total_gpu_memory); the minimum over ranks, as SGLang
    # takes it (distributed=tp_size > 1)
    m = re.search(r"Load weight begin\. avail mem=" + _NUM + r" GB", line)
    if m:
        log.engine = "sglang"
        _put(log, "free_before_weights_gb", _num(m.group(1)), n, keep_min=True)
    m = _head_then_last(line, "Load weight end.", "avail mem=", _LOAD_WEIGHT_TAIL)
    if m:
        log.engine = "sglang"
        _put(log, "free_after_weights_gb", _num(m.group(1)), n)
        _put(log, "weights_gb", _num(m.group(2)), n)
        _family(log, "sglang 'Load weight end'")
    else:  # 0.4.2 and older print the free memory only: "Load weight end. type=…, dtype=…, avail mem=X GB"
        m = _head_then_last(line, "Load weight end.", "avail mem=", _LOAD_WEIGHT_FREE)
        if m:
            log.engine = "sglang"
            _put(log, "free_after_weights_gb", _num(m.group(1)), n)
            _family(log, "sglang 'Load weight end'")
    m = _head_then_last(line, "KV Cache is allocated.", "#tokens: ", _KV_TOKENS_TAIL)
    if m:
        log.engine = "sglang"
        _put(log, "kv_tokens", int(m.group(1)), n, keep_min=True)
        kv = re.search(r"K size: " + _NUM + r" GB, V size: " + _NUM + r" GB", line)
        if kv:
            _put(log, "k_size_gb", _num(kv.group(1)), n)
            _put(log, "v_size_gb", _num(kv.group(2)), n)
        else:  # an MLA pool prints one size (sglang@0.5.4 mem_cache/memory_pool.py, MLATokenToKVPool)
            kv = re.search(r"KV size: " + _NUM + r" GB", line)
            if kv:
                _put(log, "kv_size_gb", _num(kv.group(1)), n)
        _family(log, "sglang 'KV Cache is allocated'")
    # 0.4.2 and older: "KV Cache is allocated. K size: X GB, V size: Y GB." without the token count
    # (sglang@0.4.2.post2:python/sglang/srt/mem_cache/memory_pool.py::MHATokenToKVPool.__init__)
    m = re.search(r"KV Cache is allocated\. K size: " + _NUM + r" GB, V size: " + _NUM + r" GB", line)
    if m:
        log.engine = "sglang"
        _put(log, "k_size_gb", _num(m.group(1)), n)
        _put(log, "v_size_gb", _num(m.group(2)), n)
        _family(log, "sglang 'KV Cache is allocated'")
    m = re.search(r"max_total_num_tokens=(\d+)", line)
    if m:
        log.engine = "sglang"
        _put(log, "kv_tokens", int(m.group(1)), n, keep_min=True)
        # the scheduler's start-up line goes on with the limits it resolved (sglang@0.5.23:python/sglang/srt/managers/
        # scheduler.py::Scheduler.init_model_worker, tp rank 0): ", chunked_prefill_size=C, max_prefill_tokens=P,
        # max_running_requests=R, context_len=L, available_gpu_mem=M GB" (the free memory after the pool, "%.2f")
        for key, pat in _SGLANG_SCHEDULER_FIELDS:
            f = re.search(pat, line[m.end() :])
            if f:
                _put(log, key, _num(f.group(1)) if key.endswith("_gb") else int(f.group(1)), n)
        _family(log, "sglang scheduler 'max_total_num_tokens=…'")
    m = re.search(r"Memory pool end\. avail mem=" + _NUM + r" GB", line)
    if m:
        log.engine = "sglang"
        _put(log, "free_after_kv_pool_gb", _num(m.group(1)), n)
    # no room left for the KV pool: "Not enough memory. Please try to increase --mem-fraction-static." (with
    # "Current value: mem_fraction_static=F"; sglang@0.5.23:python/sglang/srt/model_executor/pool_configurator.py,
    # MemoryPoolConfig.__post_init__), and in later builds "Loaded weights leave no GPU memory for the KV cache under
    # --mem-fraction-static=F. Raise --mem-fraction-static above S (minimum viable = 1 - available/pre = M)."
    m = re.search(
        r"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=" + _NUM, line
    )
    if m:
        log.engine = "sglang"
        log.failure = {"kind": "no_kv_memory", "mem_fraction_static": _num(m.group(1))}
        sug = re.search(r"Raise --mem-fraction-static above " + _NUM, line)
        if sug:
            log.failure["suggested_mem_fraction_static"] = _num(sug.group(1))
        v = re.search(r"minimum viable = 1 - available/pre = " + _NUM, line)
        if v:
            log.failure["minimum_mem_fraction_static"] = _num(v.group(1))
    if "Not enough memory. Please try to increase --mem-fraction-static" in line:
        log.engine = "sglang"
        log.failure = {"kind": "no_kv_memory"}
        cur = re.search(r"mem_fraction_static=" + _NUM, line)
        if cur:
            log.failure["mem_fraction_static"] = _num(cur.group(1))
    m = re.search(r"mem_fraction_static=" + _NUM, line)
    if m and log.engine == "sglang":
        _put(log, "mem_fraction_static", _num(m.group(1)), n)
