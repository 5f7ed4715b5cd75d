"""Request shapes for the capacity simulation: arrivals, prompt/output length distributions, cancellation,
shared-prefix groups and trace files.

Time is counted in scheduler steps (one engine step = one forward pass). ``--rate`` is given in requests per
second and converted with an assumed step duration (``step_ms``), which is stated in every report.
Everything random draws from one ``random.Random(seed)`` owned by :func:`generate`; no global state.
"""

from __future__ import annotations

import csv
import json
import math
import operator
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

#: z-score of the 95th percentile of a standard normal distribution (used to fit a lognormal to p50/p95).
Z95 = 1.6448536269514722
#: Most requests one simulation runs (``--requests`` and trace rows): ``kvlint simulate`` runs five simulations of
#: them (paged, contiguous, three sensitivity runs), about 9 s of CPU at 100,000 requests (bench/simulate.py), so
#: some one and a half minutes at this maximum, and memory in proportion.
MAX_REQUESTS = 1_000_000
#: Largest trace file read, in bytes (a million rows of CSV are some 20 MB).
MAX_TRACE_BYTES = 64 * 2**20
#: Largest token count (prompt, output, prefix) accepted in a trace or a length distribution: 10^9 tokens,
#: far beyond any model's context.
MAX_TOKENS = 10**9
#: Latest arrival time accepted in a trace, in seconds (about 31 years).
MAX_ARRIVAL_S = 1e9
#: Latest arrival step a workload may have (``--rate``, ``--step-ms``, ``--burst-every`` and trace times all
#: become steps): the simulator counts steps in 32-bit arrays (``array('i')``, at most 2**31 - 1) and the
#: requests still need steps to finish after the last arrival. A ``--rate 1e-10`` put the first arrival near
#: step 10^11 and ended in an OverflowError traceback.
MAX_ARRIVAL_STEP = 10**9
#: Longest text read as one number (a real count or time is a few characters; thousands of digits are not).
_MAX_NUMBER_CHARS = 40


def _big(n: float) -> str:
    """``n`` for a message: with thousands separators, or as ``~1.2e+20`` when longer than 15 digits (``~inf``
    for a quotient beyond any float, ``~10^400`` for an integer too large for one)."""
    if n < 10**15:
        return f"{int(n):,}"
    try:
        return f"~{float(n):.2g}"
    except OverflowError:  # an integer past 1.8e308 (--burst-every with 400 digits)
        return f"~10^{len(str(int(n))) - 1}"


class WorkloadError(ValueError):
    """A distribution spec, trace file or workload option cannot be used; the message names the file and line
    (for traces) or the offending text."""


@dataclass(frozen=True)
class LengthDist:
    """A token-length distribution (tokens per request, always >= 1 when sampled).

    ``kind``: ``fixed`` (``a``), ``uniform`` (integers ``a``..``b`` inclusive), ``lognormal`` (median ``a`` =
    p50, 95th percentile ``b`` = p95; sigma = ln(p95/p50) / 1.645), ``empirical`` (draws from ``values``).
    """

    kind: str
    a: float = 0.0
    b: float = 0.0
    values: tuple[int, ...] = ()

    def sample(self, rng: random.Random) -> int:
        """One length in tokens drawn with ``rng``."""
        if self.kind == "fixed":
            return max(1, int(self.a))
        if self.kind == "uniform":
            return max(1, rng.randint(int(self.a), int(self.b)))
        if self.kind == "lognormal":
            mu = math.log(self.a)
            sigma = math.log(self.b / self.a) / Z95 if self.b > self.a else 0.0
            return max(1, int(round(rng.lognormvariate(mu, sigma))))
        return max(1, self.values[rng.randrange(len(self.values))])

    def sampler(self, rng: random.Random) -> Callable[[], int]:
        """A function drawing one length with ``rng`` per call: the same values, from the same draws, as
        repeated :meth:`sample` calls (the distribution's parameters are worked out once)."""
        if self.kind == "fixed":
            fixed = max(1, int(self.a))
            return lambda: fixed
        if self.kind == "uniform":
            lo, hi, randint = int(self.a), int(self.b), rng.randint
            return lambda: max(1, randint(lo, hi))
        if self.kind == "lognormal":
            mu = math.log(self.a)
            sigma = math.log(self.b / self.a) / Z95 if self.b > self.a else 0.0
            lognorm = rng.lognormvariate
            return lambda: max(1, int(round(lognorm(mu, sigma))))
        values, count, randrange = self.values, len(self.values), rng.randrange
        return lambda: max(1, values[randrange(count)])

    def quantile(self, q: float) -> int:
        """The q-quantile (0 < q < 1) of the distribution in tokens (analytic; empirical: order statistic)."""
        if self.kind == "fixed":
            return max(1, int(self.a))
        if self.kind == "uniform":
            return int(round(self.a + q * (self.b - self.a)))
        if self.kind == "lognormal":
            sigma = math.log(self.b / self.a) / Z95 if self.b > self.a else 0.0
            z = _norm_ppf(q)
            return max(1, int(round(self.a * math.exp(sigma * z))))
        vals = sorted(self.values)
        return vals[min(len(vals) - 1, int(q * len(vals)))]

    def mean(self) -> float:
        """Expected value in tokens."""
        if self.kind == "fixed":
            return float(self.a)
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "lognormal":
            sigma = math.log(self.b / self.a) / Z95 if self.b > self.a else 0.0
            return self.a * math.exp(sigma * sigma / 2)
        return sum(self.values) / len(self.values)

    def with_p95(self, p95: int) -> LengthDist:
        """The same distribution with its 95th percentile moved to ``p95`` tokens (median kept for lognormal and
        empirical-as-lognormal; ``fixed`` becomes lognormal with p50 = the fixed value; ``uniform`` stretches b)."""
        p50 = self.quantile(0.5)
        if self.kind == "uniform":
            return LengthDist("uniform", self.a, max(self.a, self.a + (p95 - self.a) / 0.95))
        return LengthDist("lognormal", float(p50), float(max(p95, p50)))

    def describe(self) -> str:
        """Human text (``lognormal p50=512 p95=2048 tokens``)."""
        if self.kind == "fixed":
            return f"fixed {int(self.a)} tokens"
        if self.kind == "uniform":
            return f"uniform {int(self.a)}..{int(self.b)} tokens"
        if self.kind == "lognormal":
            return f"lognormal p50={int(self.a)} p95={int(self.b)} tokens (mean {self.mean():.0f})"
        return (
            f"empirical from {len(self.values)} trace rows (p50={self.quantile(0.5)}, p95={self.quantile(0.95)}, "
            f"max={max(self.values)} tokens)"
        )


def _norm_ppf(q: float) -> float:
    """Inverse standard normal CDF by bisection on ``erfc`` (80 halvings of [-10, 10]: exact to float precision).

    Raises ValueError unless 0 < q < 1."""
    if not 0.0 < q < 1.0:
        raise ValueError("quantile must be in (0, 1)")
    x = 0.0
    lo, hi = -10.0, 10.0
    for _ in range(80):
        x = (lo + hi) / 2
        if 0.5 * math.erfc(-x / math.sqrt(2)) < q:
            lo = x
        else:
            hi = x
    return x


def parse_length_dist(text: str) -> LengthDist:
    """Parse ``fixed:N``, ``uniform:A,B`` (or ``A..B``), ``lognormal:P50,P95`` (``p50=..,p95=..`` accepted).

    Token counts accept vLLM's human-readable suffixes (``2k`` = 2000, ``2K`` = 2048). ``empirical`` needs a trace
    and is built by :func:`empirical_from_trace`. Raises :class:`WorkloadError` on anything else.
    """
    from kvlint.engines.options import human_readable_int

    kind, _, rest = text.strip().partition(":")
    kind = kind.strip().lower()
    parts = [p.split("=")[-1].strip() for p in rest.replace("..", ",").split(",") if p.strip()]
    try:
        nums = [human_readable_int(p) for p in parts]
    except ValueError as exc:
        raise WorkloadError(f"length distribution '{text}': {exc}") from exc
    if any(n > MAX_TOKENS for n in nums):
        raise WorkloadError(
            f"length distribution '{text}': token counts above {MAX_TOKENS:,} are not plausible"
        )
    if kind == "fixed" and len(nums) == 1 and nums[0] >= 1:
        return LengthDist("fixed", nums[0])
    if kind == "uniform" and len(nums) == 2 and 1 <= nums[0] <= nums[1]:
        return LengthDist("uniform", nums[0], nums[1])
    if kind == "lognormal" and len(nums) == 2 and 1 <= nums[0] <= nums[1]:
        return LengthDist("lognormal", nums[0], nums[1])
    raise WorkloadError(
        f"length distribution '{text}': expected fixed:N, uniform:MIN,MAX or lognormal:P50,P95 (tokens, 1 <= MIN <= MAX)"
    )


@dataclass(frozen=True)
class TraceRow:
    """One request of a trace: ``prompt_tokens``, ``output_tokens``; optional ``arrival_s`` (seconds from the
    start), ``prefix_group`` (requests sharing a prompt prefix) and ``prefix_tokens`` (its length)."""

    prompt_tokens: int
    output_tokens: int
    arrival_s: float | None = None
    prefix_group: str | None = None
    prefix_tokens: int = 0


_PROMPT_KEYS = ("prompt_tokens", "input_tokens", "prompt_len", "input_len", "prompt")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens", "output_len", "max_tokens", "output")
_ARRIVAL_KEYS = ("arrival_s", "arrival", "timestamp", "time")


def _pick(row: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in row and row[k] not in (None, ""):
            return row[k]
    return None


def _number(value: Any, where: str, limit: float) -> float:
    """``value`` (a trace cell: text or a JSON number) as a finite float of at most ``limit``.

    Raises :class:`WorkloadError` naming ``where`` for text that is not a number, is longer than
    :data:`_MAX_NUMBER_CHARS` characters, is not finite, or is above ``limit``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise WorkloadError(f"{where}: not a number ({value!r:.40})")
    if isinstance(value, int) and value.bit_length() > 64:
        raise WorkloadError(f"{where}: a {value.bit_length()}-bit number is not plausible here")
    text = str(value).strip() if isinstance(value, str) else None
    if text is not None and len(text) > _MAX_NUMBER_CHARS:
        raise WorkloadError(f"{where}: a number of {len(text)} characters is not plausible here")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise WorkloadError(f"{where}: not a number ({exc})") from exc
    if not math.isfinite(number):
        raise WorkloadError(f"{where}: {value!r:.40} is not a finite number")
    if number > limit:
        raise WorkloadError(f"{where}: {value!r:.40} is above the plausible maximum {limit:,.0f}")
    return number


def _row(raw: dict[str, Any], where: str) -> TraceRow:
    p, o = _pick(raw, _PROMPT_KEYS), _pick(raw, _OUTPUT_KEYS)
    if p is None or o is None:
        raise WorkloadError(f"{where}: needs prompt_tokens and output_tokens (got keys {sorted(raw)[:20]})")
    pt, ot = int(_number(p, where, MAX_TOKENS)), int(_number(o, where, MAX_TOKENS))
    arr = _pick(raw, _ARRIVAL_KEYS)
    arrival = _number(arr, where, MAX_ARRIVAL_S) if arr is not None else None
    ptok = int(_number(raw.get("prefix_tokens") or 0, where, MAX_TOKENS))
    if pt < 1 or ot < 1 or ptok < 0 or (arrival is not None and arrival < 0):
        raise WorkloadError(f"{where}: token counts must be >= 1 and arrival >= 0")
    grp = raw.get("prefix_group")
    return TraceRow(pt, ot, arrival, str(grp) if grp not in (None, "") else None, min(ptok, pt))


def load_trace(path: str | Path) -> list[TraceRow]:
    """Read a request trace: CSV with a header row, or JSONL (one object per line; ``.jsonl``/``.json`` or a
    first character ``{``). Columns/keys: ``prompt_tokens`` (aliases input_tokens, prompt_len), ``output_tokens``
    (completion_tokens, output_len, max_tokens), optional ``arrival_s``, ``prefix_group``, ``prefix_tokens``.

    Raises :class:`WorkloadError` naming ``file:line`` for unreadable files, missing columns, bad numbers;
    for files larger than :data:`MAX_TRACE_BYTES` (read no further: ``--trace /dev/zero`` ends at once) and
    traces of more than :data:`MAX_REQUESTS` rows.
    """
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_TRACE_BYTES + 1)
        if len(data) > MAX_TRACE_BYTES:
            raise WorkloadError(f"{p}: the trace is larger than {MAX_TRACE_BYTES:,} bytes; use a shorter one")
        if b"\x00" in data:
            raise WorkloadError(f"{p}: not a text file (NUL byte); a trace is CSV or JSON lines")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"{p}: cannot read trace ({exc})") from exc
    rows: list[TraceRow] = []

    def add(row: TraceRow) -> None:
        if len(rows) >= MAX_REQUESTS:
            raise WorkloadError(f"{p}: more than {MAX_REQUESTS:,} rows; use a shorter trace")
        rows.append(row)

    if p.suffix in (".jsonl", ".json", ".ndjson") or text.lstrip().startswith("{"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise WorkloadError(f"{p}:{n}: invalid JSON ({exc.args[0]})") from exc
            except RecursionError:
                raise WorkloadError(f"{p}:{n}: JSON nested too deeply") from None
            if not isinstance(obj, dict):
                raise WorkloadError(f"{p}:{n}: expected a JSON object per line")
            add(_row(obj, f"{p}:{n}"))
    else:
        reader = csv.DictReader(text.splitlines())
        try:
            for n, rec in enumerate(reader, 2):
                add(_row({k.strip().lower(): v for k, v in rec.items() if isinstance(k, str)}, f"{p}:{n}"))
        except csv.Error as exc:
            raise WorkloadError(f"{p}: not a CSV trace ({exc})") from exc
    if not rows:
        raise WorkloadError(f"{p}: the trace holds no requests")
    return rows


def empirical_from_trace(rows: list[TraceRow]) -> tuple[LengthDist, LengthDist]:
    """Empirical prompt and output length distributions of a trace."""
    return (
        LengthDist("empirical", values=tuple(r.prompt_tokens for r in rows)),
        LengthDist("empirical", values=tuple(r.output_tokens for r in rows)),
    )


@dataclass(frozen=True)
class WorkloadSpec:
    """What the simulated clients send.

    Attributes:
        requests: number of requests.
        prompt, output: length distributions (tokens). ``output`` is the length the request would generate if
            not cancelled (what ``max_tokens``/EOS yields).
        arrivals: ``poisson`` (rate ``rate`` requests/s), ``burst`` (``burst_size`` requests every
            ``burst_every`` steps) or ``trace`` (arrival times of the trace rows).
        step_ms: assumed wall time of one scheduler step (ms), converting ``rate`` and reporting delays.
        cancel_prob: probability a request's client disconnects; the disconnect happens after a uniformly drawn
            number of its output tokens, and the engine notices ``cancel_lag_steps`` steps later (it keeps
            generating, and holding blocks, meanwhile).
        prefix_groups, prefix_tokens, prefix_share: ``prefix_share`` of the requests start with one of
            ``prefix_groups`` shared prompt prefixes of ``prefix_tokens`` tokens (e.g. a system prompt).
        trace: rows replayed in order (``requests`` None/equal: each row once; otherwise drawn uniformly).
        seed: seed of the single ``random.Random`` used.
    """

    requests: int = 1000
    prompt: LengthDist = LengthDist("lognormal", 512, 2048)
    output: LengthDist = LengthDist("lognormal", 128, 512)
    arrivals: str = "poisson"
    rate: float = 10.0
    burst_size: int = 64
    burst_every: int = 200
    step_ms: float = 30.0
    cancel_prob: float = 0.0
    cancel_lag_steps: int = 0
    prefix_groups: int = 0
    prefix_tokens: int = 0
    prefix_share: float = 0.0
    trace: tuple[TraceRow, ...] = field(default=(), repr=False)
    trace_name: str = ""
    seed: int = 0

    def with_output_p95(self, p95: int) -> WorkloadSpec:
        """This workload with the output-length p95 moved to ``p95`` tokens (for sensitivity runs)."""
        return replace(self, output=self.output.with_p95(p95), trace=() if self.trace else self.trace)

    def assumptions(self) -> list[str]:
        """Every request-shape assumption as one sentence each (for reports)."""
        out = [f"{self.requests:,} requests, random seed {self.seed} (deterministic)"]
        if self.trace:
            out.append(f"trace {self.trace_name}: {len(self.trace):,} rows of prompt/output token counts")
        out.append(f"prompt length: {self.prompt.describe()}")
        out.append(
            f"output length: {self.output.describe()} (generated unless cancelled; not known at admission)"
        )
        if self.arrivals == "poisson":
            out.append(
                f"arrivals: Poisson, {self.rate:g} requests/s = {self.rate * self.step_ms / 1000:.3g} per step"
            )
        elif self.arrivals == "burst":
            out.append(f"arrivals: bursts of {self.burst_size} requests every {self.burst_every} steps")
        else:
            out.append("arrivals: the trace's arrival times")
        out.append(
            f"one scheduler step assumed to take {self.step_ms:g} ms (delays are reported in steps; seconds use this)"
        )
        if self.cancel_prob:
            out.append(
                f"cancellation: {self.cancel_prob:.0%} of requests disconnect mid-generation; the engine keeps "
                f"generating and holding blocks for {self.cancel_lag_steps} more steps (release lag)"
            )
        else:
            out.append("no cancellations")
        rows = [r for r in self.trace if r.prefix_group is not None and r.prefix_tokens]
        if rows:  # generate_columns gives these rows their group's prefix, at most the row's prompt
            lengths = sorted({min(r.prefix_tokens, r.prompt_tokens) for r in rows})
            span = f"{lengths[0]:,}" if len(lengths) == 1 else f"{lengths[0]:,} to {lengths[-1]:,}"
            out.append(
                f"shared prefixes from the trace: {len(rows):,} of {len(self.trace):,} rows start with the prefix of "
                f"one of {len({r.prefix_group for r in rows}):,} prefix groups ({span} tokens, within the prompt)"
            )
        if self.prefix_groups and self.prefix_tokens and self.prefix_share:
            others = " of the other requests" if rows else " of requests"
            out.append(
                f"shared prefixes: {self.prefix_share:.0%}{others} start with one of {self.prefix_groups} "
                f"prefixes of {self.prefix_tokens} tokens (prompt length includes it; a shorter prompt is "
                f"lengthened to {self.prefix_tokens + 1:,} tokens)"
            )
        elif not rows:
            out.append("no shared prompt prefixes")
        return out


@dataclass(slots=True)
class Request:
    """One simulated request: ``arrival`` step, ``prompt``/``output`` tokens, ``cancel_at`` output tokens
    after which the client disconnected (-1: never), ``group`` shared-prefix group (-1: none) and its
    ``prefix`` tokens."""

    rid: int
    arrival: int
    prompt: int
    output: int
    cancel_at: int = -1
    group: int = -1
    prefix: int = 0


@dataclass(frozen=True)
class RequestColumns:
    """Requests as parallel lists: entry ``k`` of each list belongs to the ``k``-th request (sorted by arrival
    step, ties by id). The fields of :class:`Request` without an object per request; what the simulator reads.
    The lists are read-only by convention: the variants of :func:`output_variant_columns` share all but
    ``output``."""

    rid: list[int]
    arrival: list[int]
    prompt: list[int]
    output: list[int]
    cancel_at: list[int]
    group: list[int]
    prefix: list[int]

    @classmethod
    def of(cls, requests: Sequence[Request]) -> RequestColumns:
        """The columns of ``requests`` (in their order)."""
        return cls(
            [r.rid for r in requests],
            [r.arrival for r in requests],
            [r.prompt for r in requests],
            [r.output for r in requests],
            [r.cancel_at for r in requests],
            [r.group for r in requests],
            [r.prefix for r in requests],
        )

    def requests(self) -> list[Request]:
        """One :class:`Request` per entry, in order."""
        return list(
            map(
                Request,
                self.rid,
                self.arrival,
                self.prompt,
                self.output,
                self.cancel_at,
                self.group,
                self.prefix,
            )
        )

    def __len__(self) -> int:
        return len(self.rid)


def generate(spec: WorkloadSpec) -> list[Request]:
    """The requests of ``spec`` sorted by arrival step (ties by id). Deterministic for ``spec.seed``.

    Raises :class:`WorkloadError` for impossible settings (non-positive rate, step time or request count).
    """
    return _draw(spec, False)[0].requests()


def generate_columns(spec: WorkloadSpec) -> RequestColumns:
    """:func:`generate` as columns (no object per request). Raises :class:`WorkloadError` as it does."""
    return _draw(spec, False)[0]


def generate_output_variants(spec: WorkloadSpec, outputs: Sequence[LengthDist]) -> Iterator[list[Request]]:
    """``generate(replace(spec, output=d))`` for each ``d`` of ``outputs`` in turn (one list at a time, so only
    one variant is held), the same requests, from one pass of draws when it can.

    The draws of ``spec`` do not depend on the output distribution's parameters when every output is lognormal
    (one standard normal draw per request whatever p50/p95) and no request is cancelled (the cancellation point
    is drawn in ``range(output)``): then the arrivals, prompts and prefixes are drawn once and each variant's
    output is ``exp(mu + z * sigma)`` of the same normal draw ``z``, the value ``random.lognormvariate`` returns
    for it. This is how the p95-output sensitivity runs of ``kvlint simulate`` share one workload. Otherwise
    (or if this Python's ``lognormvariate`` is not ``exp`` of its ``normalvariate``) each variant is generated
    on its own. Raises :class:`WorkloadError` as :func:`generate` does, when the first list is asked for.
    """
    for columns in output_variant_columns(spec, outputs):
        yield columns.requests()


def output_variant_columns(spec: WorkloadSpec, outputs: Sequence[LengthDist]) -> Iterator[RequestColumns]:
    """:func:`generate_output_variants` as columns (no object per request)."""
    if not (
        len(outputs) > 1
        and all(d.kind == "lognormal" for d in outputs)
        and not spec.cancel_prob
        and _lognormal_is_exp_of_normal()
    ):
        for d in outputs:
            yield generate_columns(replace(spec, output=d))
        return
    drawn, zs = _draw(spec, True)
    exp = math.exp
    for d in outputs:
        mu = math.log(d.a)
        sigma = math.log(d.b / d.a) / Z95 if d.b > d.a else 0.0
        # round() of a float is an int: the value int(round(lognormvariate(mu, sigma))) has for this draw
        yield replace(drawn, output=[max(1, round(exp(mu + z * sigma))) for z in zs])


def _lognormal_is_exp_of_normal() -> bool:
    """Whether ``random.lognormvariate(mu, sigma)`` equals ``exp(mu + normalvariate(0, 1) * sigma)`` for the same
    draws (CPython's implementation); checked on a few draws."""
    for seed, mu, sigma in ((0, 4.85, 0.84), (1, 6.2, 1.3), (2, 0.0, 0.0)):
        a, b = random.Random(seed), random.Random(seed)
        for _ in range(4):
            if a.lognormvariate(mu, sigma) != math.exp(mu + b.normalvariate(0.0, 1.0) * sigma):
                return False
    return True


def _draw(spec: WorkloadSpec, normal_outputs: bool) -> tuple[RequestColumns, list[float]]:
    """The requests of ``spec`` sorted by arrival and, with ``normal_outputs``, the standard normal draw of each
    one's output length in the same order (its ``output`` then left 0 for the caller to set; see
    :func:`output_variant_columns`, which checks that this is valid)."""
    if not 1 <= spec.requests <= MAX_REQUESTS:
        raise WorkloadError(f"--requests must be between 1 and {MAX_REQUESTS:,}")
    if spec.step_ms <= 0:
        raise WorkloadError("--step-ms must be > 0")
    if spec.arrivals == "poisson" and spec.rate <= 0:
        raise WorkloadError("--rate must be > 0 requests/s")
    if spec.arrivals == "burst" and (spec.burst_size < 1 or spec.burst_every < 1):
        raise WorkloadError("--burst-size and --burst-every must be >= 1")
    if not 0.0 <= spec.cancel_prob <= 1.0 or not 0.0 <= spec.prefix_share <= 1.0:
        raise WorkloadError("--cancel-prob and --prefix-share are fractions in [0, 1]")
    rng = random.Random(spec.seed)
    rand, randrange, expo = rng.random, rng.randrange, rng.expovariate
    step_s = spec.step_ms / 1000.0
    rows = spec.trace
    n_rows = len(rows)
    replay = bool(rows) and spec.requests == n_rows
    # the variants' outputs are lognormal, never the rows' own counts
    empirical_rows = (
        not normal_outputs and spec.prompt.kind == "empirical" and spec.output.kind == "empirical"
    )
    sample_prompt = spec.prompt.sampler(rng)
    if not normal_outputs:
        sample_output = spec.output.sampler(rng)
    else:
        normal = rng.normalvariate
    burst = spec.arrivals == "burst"
    trace_arrivals = spec.arrivals == "trace"
    rate = spec.rate
    n_groups, prefix_tokens, share = spec.prefix_groups, spec.prefix_tokens, spec.prefix_share
    cancel_prob = spec.cancel_prob
    n = spec.requests
    arrivals: list[int] = []
    prompts: list[int] = []
    outputs: list[int] = []
    cancels: list[int] = []
    group_ids: list[int] = []
    prefixes: list[int] = []
    zs: list[float] = []
    t = 0.0
    groups: dict[str, int] = {}
    for i in range(n):
        row = (rows[i] if replay else rows[randrange(n_rows)]) if rows else None
        if row is not None and empirical_rows:
            prompt, output = row.prompt_tokens, row.output_tokens
        elif not normal_outputs:
            prompt, output = sample_prompt(), sample_output()
        else:
            prompt = sample_prompt()
            zs.append(normal(0.0, 1.0))
            output = 0  # set per variant below
        at: float
        if trace_arrivals and row is not None and row.arrival_s is not None:
            at = row.arrival_s / step_s
        elif burst:
            at = (i // spec.burst_size) * spec.burst_every
        else:
            t += expo(rate)
            at = t / step_s
        # compared before int(): over a subnormal step (--step-ms 1e-320) the quotient is inf, which int() refuses
        if not at < MAX_ARRIVAL_STEP + 1:  # int(at) <= MAX_ARRIVAL_STEP, and never inf or NaN
            raise WorkloadError(
                f"request {i + 1} would arrive at step {_big(at)}, beyond the {MAX_ARRIVAL_STEP:,} steps kvlint "
                f"simulates (steps of {spec.step_ms:g} ms); use a larger --rate or --step-ms, a smaller --burst-every, "
                "or earlier trace arrival times"
            )
        arrival = int(at)
        group, prefix = -1, 0
        if row is not None and row.prefix_group is not None and row.prefix_tokens:
            group = groups.setdefault(row.prefix_group, len(groups))
            prefix = min(row.prefix_tokens, prompt)
        elif n_groups and prefix_tokens and rand() < share:
            group = randrange(n_groups)
            prompt = max(prompt, prefix_tokens + 1)
            prefix = prefix_tokens
        cancel_at = -1
        if cancel_prob and rand() < cancel_prob:
            cancel_at = randrange(output)
        arrivals.append(arrival)
        prompts.append(prompt)
        outputs.append(output)
        cancels.append(cancel_at)
        group_ids.append(group)
        prefixes.append(prefix)
    columns = RequestColumns(list(range(n)), arrivals, prompts, outputs, cancels, group_ids, prefixes)
    if all(map(operator.le, arrivals, islice(arrivals, 1, None))):
        return columns, zs
    # stable sort by arrival = by (arrival, rid): rids increase in drawing order
    order = sorted(range(n), key=arrivals.__getitem__)
    fields = (arrivals, prompts, outputs, cancels, group_ids, prefixes)
    columns = RequestColumns(order, *([col[k] for k in order] for col in fields))
    return columns, [zs[k] for k in order] if normal_outputs else zs
