"""vLLM version parsing and the era switches keyed on it.

Versions follow the Python packaging rules (PEP 440, ``packaging.version``), which is how vLLM, TGI's server
and SGLang number their wheels: ``0.10.1.1`` (four components), ``0.11.0+cu130`` and ``0.10.1.1+nv25.11``
(local build labels, ignored for ordering), ``0.15.2rc1.dev93`` (a development build *before* 0.15.2, so
it orders between 0.15.1 and 0.15.2), ``0.8.5.post1`` (after 0.8.5). A source checkout built without release
tags prints setuptools-scm's fallback ``0.1.devN``: that says nothing about the release, so it is treated as
unknown. Image tags (``v0.20.1-cu129``) and log fragments (``~0.7``, ``0.22``) are read by their leading
version. ``None``, ``latest``, ``nightly``, digests and anything unreadable resolve to :data:`NEWEST_VLLM`
*and* are flagged as assumed (see :func:`resolve_version`).

A :class:`ReleaseVersion` is a ``(major, minor, patch)`` tuple (so ``v[1]`` and formatting keep working) whose
comparisons use the full PEP 440 ordering: ``ReleaseVersion("0.10.1.1") < (0, 10, 2)``,
``ReleaseVersion("0.15.2rc1.dev93") < (0, 15, 2)``.

Every switch below is listed in docs/engine-memory-model.md §4 with the vLLM wheel it was read in (e.g. ``vllm@0.20.0:vllm/config/cache.py::CacheConfig.gpu_memory_utilization``); the CUDA-graph
default was re-read in the wheels release by release (:func:`cudagraph_subtracted_by_default`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from packaging.version import Version as _PV

NEWEST_VLLM = "0.34.0"
"""Newest vLLM release the memory model was read from (docs/engine-memory-model.md §0)."""

# A PEP 440 version at the start of a tag or log fragment (``v0.20.1-cu129`` -> ``0.20.1``).
_PEP440_PREFIX = re.compile(
    r"v?(\d+(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?:\.?post\d+)?(?:\.?dev\d+)?(?:\+[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?)",
    re.I,
)


class ReleaseVersion(tuple[int, int, int]):
    """``(major, minor, patch)`` of a release, ordered by PEP 440 (``packaging.version.Version``).

    Compares with plain tuples (``v >= (0, 20, 0)``) and with other ReleaseVersions; pre-releases and
    development builds order before their release, post releases and a fourth component after it, local
    labels (``+cu130``) are ignored. ``str()`` gives the normalised version text.

    A final release (no epoch, no pre-, post- or development part, nothing but zeros after the third release
    component: ``0.20.0``, ``0.11.0+cu130``, ``1.0``) is an instance of this class itself and compares as the
    tuple it is, in C (``tuple``'s own comparison, no Python call): with a three-component tuple or another
    final release that is PEP 440's order, and ``>=``/``<`` (the memory models' switches) are PEP 440's with a
    shorter tuple too. Every other version (``0.10.1.1``, ``0.15.2rc1.dev93``, ``0.8.5.post1``, ``1!0.1``) is
    a :class:`PEP440Version`, whose comparisons are PEP 440's in Python; it is a subclass, so Python asks its
    reflected method first when it stands right of a final release. The one difference from comparing every
    version in Python: a final release compared with a plain tuple of another length that equals it but for
    zeros (``ReleaseVersion("0.33.0") == (0, 33)``, ``> (0, 33)``, ``<= (0, 33)``, ``>= (0, 33, 0, 0)``)
    gets the tuple's answer, not PEP 440's. kvlint's thresholds are three-component release tuples (none
    other was compared with a version in a check of the corpus, ``fixtures/examples`` and ``fixtures/collected``).
    """

    _pv: _PV
    _key: Any
    _text: str | None
    _orders: dict[tuple[Any, ...], int]

    def __new__(cls, text: str | _PV) -> ReleaseVersion:
        pv = text if isinstance(text, _PV) else _PV(text)
        release = pv.release
        rel = (tuple(release) + (0, 0, 0))[:3]
        final = (
            pv.epoch == 0 and pv.pre is None and pv.post is None and pv.dev is None and not any(release[3:])
        )
        # the class is the version's, whichever of the two was called (unpickling calls the object's own)
        obj = tuple.__new__(ReleaseVersion if final else PEP440Version, rel)  # type: ignore[type-var]
        obj._pv = pv
        obj._key = None
        obj._text = None
        obj._orders = {}
        return obj

    @property
    def pep440(self) -> _PV:
        """The ``packaging`` version (local label dropped for ordering); parsed once per object (the memory
        models compare one version against dozens of release thresholds per plan)."""
        key = self._key
        if key is None:
            key = self._key = _PV(self._pv.public)
        return key

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._text = str(self._pv)
        return text

    def __repr__(self) -> str:
        return f"ReleaseVersion({str(self._pv)!r})"

    def __hash__(self) -> int:
        return hash(self.pep440)

    def __getnewargs__(self) -> tuple[Any, ...]:  # pickling/copying keeps the full version
        return (str(self._pv),)

    def __getstate__(self) -> dict[str, Any]:  # the memos are rebuilt, not pickled
        return {"_pv": self._pv, "_key": None, "_text": None, "_orders": {}}

    if TYPE_CHECKING:  # at run time tuple's own comparisons (in C); typed for callers as PEP440Version's

        def __lt__(self, other: object) -> bool: ...  # type: ignore[override]
        def __le__(self, other: object) -> bool: ...  # type: ignore[override]
        def __gt__(self, other: object) -> bool: ...  # type: ignore[override]
        def __ge__(self, other: object) -> bool: ...  # type: ignore[override]

    def _cmp(self, other: object) -> tuple[_PV, _PV] | None:
        if isinstance(other, ReleaseVersion):
            return self.pep440, other.pep440
        if isinstance(other, tuple) and other and all(isinstance(x, int) for x in other):
            return self.pep440, _tuple_version(other)
        return None

    def _order(self, other: object) -> int | None:
        """-1, 0 or 1 as this version orders before, equal to or after ``other`` (PEP 440), None when ``other``
        is not a version. Memoised per object for plain release tuples: a plan compares its version with the
        same few dozen ``(0, 20, 0)``-style thresholds every time."""
        if type(other) is tuple:
            orders = self._orders
            try:
                return orders[other]
            except KeyError:
                pass
            except TypeError:  # an unhashable element: not a release tuple
                return None
            c = self._cmp(other)
            if c is None:
                return None
            o = (c[0] > c[1]) - (c[0] < c[1])
            if len(orders) < _ORDERS_MAX:
                orders[other] = o
            return o
        c = self._cmp(other)
        return None if c is None else (c[0] > c[1]) - (c[0] < c[1])


class PEP440Version(ReleaseVersion):
    """A :class:`ReleaseVersion` that is not a final three-component release (a pre-, post- or development
    release, a fourth non-zero component, an epoch): its ``(major, minor, patch)`` tuple does not tell its
    order, so it compares by PEP 440 in Python. :class:`ReleaseVersion` makes it; never constructed directly."""

    __hash__ = ReleaseVersion.__hash__

    # Each comparison with a plain tuple first looks it up in the memo of :meth:`_order` itself (a release tuple
    # compared before: one dict lookup, no further call); anything else, or a first comparison, asks _order.

    def __eq__(self, other: object) -> bool:
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o == 0

    def __ne__(self, other: object) -> bool:
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o != 0

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o < 0

    def __le__(self, other: object) -> bool:  # type: ignore[override]
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o <= 0

    def __gt__(self, other: object) -> bool:  # type: ignore[override]
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o > 0

    def __ge__(self, other: object) -> bool:  # type: ignore[override]
        try:
            o = self._orders[other] if type(other) is tuple else self._order(other)  # type: ignore[index]
        except (KeyError, TypeError):  # not compared yet, or an unhashable element
            o = self._order(other)
        return NotImplemented if o is None else o >= 0


#: bound of one version's memo of comparisons (the thresholds are constants of the memory models)
_ORDERS_MAX = 512


def _tuple_version(release: tuple[int, ...]) -> _PV:
    """The ``packaging`` version of a plain release tuple such as ``(0, 20, 0)``, memoised: the thresholds
    compared against are a few dozen constants of the memory models."""
    pv = _TUPLE_VERSIONS.get(release)
    if pv is None:
        if len(_TUPLE_VERSIONS) > 4096:
            _TUPLE_VERSIONS.clear()
        pv = _TUPLE_VERSIONS[release] = _PV(".".join(str(x) for x in release))
    return pv


_TUPLE_VERSIONS: dict[tuple[int, ...], _PV] = {}

Version = tuple[int, int, int]
"""A release as ``(major, minor, patch)``; values made here are :class:`ReleaseVersion` (PEP 440 ordering)."""


def is_untagged_source_build(pv: _PV) -> bool:
    """setuptools-scm's fallback for a checkout without release tags is ``0.1.devN`` (its default ``0.0`` tag
    bumped to the next release, plus the commit distance): such a version names no release."""
    return pv.release == (0, 1) and pv.dev is not None


def engine_version_option(value: str | None) -> str | None:
    """An engine release as the user gives it (``--engine-version`` of ``kvlint check``, ``plan``, ``simulate``,
    ``webhook serve``; ``engine_version`` in ``.kvlint.yaml``), in the one form every consumer reads: blanks and
    a leading ``v``/``V`` dropped, as image tags are read (``v0.11.0`` -> ``0.11.0``); None for None or an empty
    string. The option parser's release table and the memory model then see the same text
    (:func:`kvlint.engines.images.engine_release` puts it on the container): a raw ``v0.11.0`` was a release
    the memory model read as 0.11.0 but the option parser as none (every release's options).

    Raises:
        ValueError: ``value`` is not a PEP 440 version (``0.11.0``, ``0.10.1.1``, ``0.11.0+cu130``,
            ``0.15.2rc1.dev93``); the message says so and gives those examples.
    """
    if value is None or not value.strip():
        return None
    v = value.strip()
    try:
        _PV(v)  # an untagged source build (0.1.devN) is accepted and planned as "version unknown"
    except ValueError:  # InvalidVersion, or a number of more than 4,300 digits (Python's int() refuses it)
        shown = value if len(value) <= 80 else value[:77] + "..."
        raise ValueError(
            f"'{shown}' is not a release number such as 0.11.0 (PEP 440: 0.10.1.1, 0.11.0+cu130, 0.15.2rc1.dev93)"
        ) from None
    return v.lstrip("vV")


def parse_pep440(s: str | None) -> ReleaseVersion | None:
    """The PEP 440 version of a version string, image tag or log fragment, or None when there is none.

    ``"0.11.0+cu130"``, ``"v0.8.5.post1"``, ``"0.15.2rc1.dev93"``, ``"0.10.1.1+nv25.11"`` parse whole;
    ``"v0.20.1-cu129"``, ``"~0.7"``, ``"0.22 (issue title)"`` by their leading version. An untagged source
    build (``0.1.devN``, :func:`is_untagged_source_build`) returns None. Never raises. Memoised by text (every
    TGI and SGLang plan parses its container's version; the shared object keeps its comparison memo).
    """
    if not s:
        return None
    if type(s) is not str:
        return _parse_pep440(s)
    try:
        return _PARSED[s]
    except KeyError:
        pass
    out = _parse_pep440(s)
    if len(_PARSED) >= _RESOLVED_MAX:
        _PARSED.clear()
    _PARSED[s] = out
    return out


#: parse_pep440's answers by text (None included)
_PARSED: dict[str, ReleaseVersion | None] = {}


def _parse_pep440(s: str) -> ReleaseVersion | None:
    """:func:`parse_pep440` itself, not memoised."""
    text = s.strip()
    cands = [text]
    m = _PEP440_PREFIX.search(text)
    if m:
        cands.append(m.group(1))
    for c in cands:
        try:
            pv = _PV(c)
        except ValueError:  # InvalidVersion, or a number of over 4,300 digits (int() refuses it)
            continue
        if is_untagged_source_build(pv):
            return None
        return ReleaseVersion(pv)
    return None


NEWEST: Version = ReleaseVersion(NEWEST_VLLM)


def resolve_version(s: str | None) -> tuple[Version, bool]:
    """Parse an engine version and say whether it had to be assumed.

    Args:
        s: version text as read from an image tag, a log or ``--engine-version`` (``"0.11.0"``,
            ``"v0.8.5.post1"``, ``"0.11.0+cu130"``, ``"0.15.2rc1.dev93"``, ``"latest"``, ``None``).

    Returns:
        ``(version, assumed)`` with ``version`` a :class:`ReleaseVersion`; ``assumed`` is True when ``s`` is
        None/empty/``latest``, has no version number, or is an untagged source build (``0.1.devN``), in which
        case the version is :data:`NEWEST_VLLM`. Never raises.
    """
    if not s:
        return NEWEST, True
    hit = _RESOLVED.get(s) if type(s) is str else None
    if hit is not None:
        return hit
    out: tuple[Version, bool]
    if s.strip().lower() in {"latest", "nightly", "main", "head"}:
        out = NEWEST, True
    else:
        v = parse_pep440(s)
        out = (NEWEST, True) if v is None else (v, False)
    if type(s) is str:
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[s] = out
    return out


#: resolve_version's answers by text: every plan of a container resolves the same version string, and the
#: shared ReleaseVersion keeps its memo of threshold comparisons across them
_RESOLVED: dict[str, tuple[Version, bool]] = {}
_RESOLVED_MAX = 1024


def parse_version(s: str | None) -> Version:
    """The release of a vLLM version string; None/``latest``/unreadable -> 0.34.0.

    Use :func:`resolve_version` to also learn whether the newest version was assumed. Never raises.
    """
    return resolve_version(s)[0]


def release_shown(s: str | None) -> str:
    """The vLLM release a message names for version text ``s``: ``"0.11.0"`` as read, or the release kvlint
    assumes with the word ``assumed`` (``"0.34.0 (assumed)"``) when ``s`` is None, ``latest`` or names no
    release (:func:`resolve_version`), so no message prints an empty or ``?`` version."""
    v, assumed = resolve_version(s)
    return f"{fmt_version(v)} (assumed)" if assumed else str(s)


def fmt_version(v: Version) -> str:
    """``ReleaseVersion("0.10.1.1")`` -> ``"0.10.1.1"``; a plain ``(0, 11, 0)`` -> ``"0.11.0"``."""
    if isinstance(v, ReleaseVersion):
        return str(v)
    return f"{v[0]}.{v[1]}.{v[2]}"


def default_gpu_memory_utilization(v: Version) -> float:
    """Default ``--gpu-memory-utilization``: 0.90 up to 0.19.x, 0.92 from 0.20.0.

    Source: ``vllm@0.20.0:vllm/config/cache.py::CacheConfig.gpu_memory_utilization`` (docs/engine-memory-model.md §1.2.2).
    """
    return 0.92 if v >= (0, 20, 0) else 0.90


def has_extensible_kv_cache(v: Version) -> bool:
    """The extensible KV cache exists from 0.34.0, on by default on CUDA and ROCm: the pool is sized from the memory
    measured after warm-up and CUDA-graph capture, and ``--gpu-memory-utilization`` defaults to 1.0 with it.

    Source: ``vllm@0.34.0:vllm/config/cache.py::CacheConfig.enable_extensible_kv_cache``,
    ``::CacheConfig.resolved_gpu_memory_utilization`` (docs/engine-memory-model.md §1.2.5).
    """
    return v >= (0, 34, 0)


def has_kv_cache_memory_bytes(v: Version) -> bool:
    """``--kv-cache-memory-bytes`` exists from 0.10.2 (``vllm@0.10.2:vllm/config/cache.py``)."""
    return v >= (0, 10, 2)


def supports_auto_max_model_len(v: Version) -> bool:
    """``--max-model-len -1``/``auto`` accepted from 0.14.0 (``vllm@0.33.0:vllm/config/model.py``, §1.8 item 9)."""
    return v >= (0, 14, 0)


def yarn_multiplies_max_len(v: Version) -> bool:
    """YaRN ``factor`` multiplies the derived max length up to 0.29.x, not from 0.30.0 (§1.8 item 5)."""
    return v < (0, 30, 0)


def has_null_block_in_fit_check(v: Version) -> bool:
    """From 0.29.0 the fit check plans against ``available - bytes_per_block`` (null block, §1.4)."""
    return v >= (0, 29, 0)


def fit_check_whole_model_under_pp(v: Version) -> bool:
    """0.14.0 - 0.16.x check one max-model-len request against the KV groups of the *whole* model (every pipeline
    stage's layers merged) and the smallest stage's KV memory (``vllm@0.14.0``, ``@0.15.0``,
    ``@0.16.0:vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs``, "using min across all workers", with
    ``_max_memory_usage_bytes_from_groups`` of the global groups); 0.13.0 and 0.17.0 check each worker's own layers
    against its own memory (``check_enough_kv_cache_memory`` per worker, "Check if the available memory is enough
    per worker"). Only pipeline parallelism tells them apart (§1.11)."""
    return v >= (0, 14, 0) and v < (0, 17, 0)


def capacity_is_concurrency_times_len(v: Version) -> bool:
    """From 0.20.1 "GPU KV cache size" = int(max_concurrency x max_model_len) (§1.4).

    ``vllm/v1/core/kv_cache_utils.py::_report_kv_cache_config`` of the 0.20.1 wheel ("GPU KV cache size in tokens =
    max_concurrency * max_model_len"; the same in 0.22.0, 0.23.0 and, through ``get_kv_cache_capacity``, 0.33.0),
    where the 0.20.0 wheel still prints ``num_blocks // len(kv_cache_groups) * min_block_size``. gt-310 (a v0.20.1
    start-up, its ``kv_cache_utils.py:1708`` line the 0.20.1 wheel's) prints 619,479 tokens = 2.36x x 262,144 for a
    hybrid model, which the older formula cannot give. kvlint had 0.21.0."""
    return v >= (0, 20, 1)


def cudagraph_subtracted_by_default(v: Version) -> bool:
    """CUDA-graph estimate subtracted from the KV budget by default from 0.20.0 (§1.2.2).

    ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` default, read release by release in ``vllm/envs.py`` of the PyPI
    wheels: absent up to 0.17 (no estimate); "0" in 0.18.0 and 0.19.0; "1" in 0.20.0, 0.21.0, 0.22.0, 0.23.0,
    0.24.0, 0.25.0, 0.26.0, 0.27.0, 0.28.0, 0.29.0, 0.30.0, 0.31.0, 0.32.0, 0.33.0 and 0.34.0.
    ``vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory`` subtracts ``cudagraph_memory_estimate_applied``
    (the estimate when the env is on) in every one of them. Why reports of 0.27 and later "add up without the
    deduction": from 0.27.0 the printed "peak activation" already contains the applied estimate
    (:func:`printed_activation_includes_cudagraph`). gt-062 (0.26.0, whose 0.26 figures close without its 0.48 GiB
    of graph memory) stays an out-of-rule observation. Measured only from 0.18.0; not at all before.
    """
    return v >= (0, 20, 0)


def cudagraph_capture_follows_speculation(v: Version) -> bool:
    """Whether vLLM widens its default CUDA-graph capture sizes by the speculative tokens (from 0.13.0).

    ``VllmConfig._set_cudagraph_sizes`` (``vllm/config/vllm.py``) sets the default ``max_cudagraph_capture_size``
    to ``min(max_num_seqs x decode_query_len x 2, 512)`` with ``decode_query_len = 1 + num_speculative_tokens`` in
    the 0.13.0 wheel (vLLM pull request #30330, December 2025) and in 0.22.0 and 0.34.0 (0.34.0 names it
    ``uniform_decode_query_len`` and raises the 512 ceiling to 1,024 on data-center Blackwell, not modelled);
    the 0.12.0 wheel still has ``min(max_num_seqs x 2, 512)`` whatever the speculative tokens.
    """
    return v >= (0, 13, 0)


def printed_activation_includes_cudagraph(v: Version) -> bool:
    """Whether the "for peak activation" figure of the start-up log already contains the CUDA-graph estimate that
    was taken off the KV budget.

    ``Worker.determine_available_memory`` sets ``peak_activation_memory`` to the torch peak plus the *applied*
    estimate in 0.18.0 (``torch_peak_increase + cudagraph_memory_estimate_applied``) and from 0.27.0
    (``transient_peak_headroom + cudagraph_memory_estimate_applied``; 0.34.0 takes the estimate only when the env is
    on, and not at all with the extensible KV cache, ``vllm/v1/worker/gpu/model_runner.py::
    GPUModelRunner.profile_cudagraph_memory`` returning 0, so its printed peak then holds no graph memory);
    0.19.0 - 0.26.x print the torch peak alone. Read in ``vllm/v1/worker/gpu_worker.py`` of the wheels
    0.18.0 - 0.34.0.
    """
    return v >= (0, 27, 0) or (0, 18, 0) <= v < (0, 19, 0)


def cudagraph_estimated_on_rocm(v: Version) -> bool:
    """Whether ``Worker.determine_available_memory`` takes the CUDA-graph estimate on ROCm (AMD GPUs): from 0.26.0,
    whose condition is ``current_platform.is_cuda_alike()``. 0.18.0 and 0.20.0 skip it with ``not
    current_platform.is_rocm()``, 0.21.0 - 0.25.0 with ``current_platform.is_cuda()`` ("On ROCm,
    cudagraph_memory_estimate is always 0"), so nothing comes off the KV budget there whatever
    ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` says (``vllm/v1/worker/gpu_worker.py`` of the wheels 0.18.0,
    0.20.0 - 0.29.0 read; 0.19.x **[assumed]** as 0.18.0 and 0.20.0)."""
    return v >= (0, 26, 0)


def cudagraph_env_exists(v: Version) -> bool:
    """``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` exists from 0.18.0 (``vllm@0.18.0:vllm/envs.py``)."""
    return v >= (0, 18, 0)


def refuses_max_num_seqs_over_mamba_blocks(v: Version) -> bool:
    """Whether vLLM release ``v`` refuses to start a model with Mamba-style state layers (Mamba-1/2, gated
    DeltaNet, KDA, linear attention: any ``MambaSpec`` in the KV-cache config) when ``max_num_seqs`` exceeds the
    KV-cache blocks: "max_num_seqs (N) exceeds available Mamba cache blocks (M)".

    The check (vllm-project/vllm#38270, merged between 2026-03-26 and 2026-03-31) is made when the model runner resolves its CUDA-graph
    mode, with FULL decode graphs, outside the profiling run, ``max_num_reqs > kv_cache_config.num_blocks`` (read
    in the 0.22.0 wheel, ``vllm/config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes`` called
    from ``vllm/v1/worker/gpu_model_runner.py::GPUModelRunner._check_and_update_cudagraph_mode``, and in 0.34.0,
    called from ``vllm/v1/worker/gpu/model_runner.py``). **[assumed]** from 0.20.0: the 0.19.0 - 0.21.x wheels
    were not read; vllm-project/recipes#551 reports 0.19.0 reaching CUDA-graph capture with 1,024 sequences where
    a later release refused at 856 blocks. Earlier releases clamp instead: vllm-project/vllm#34571 (merged
    2026-02) and #37416 silently capped the CUDA-graph capture sizes at the block count, which #38270 replaced by
    this refusal; before #34571 a FULL decode capture larger than the block count failed in
    ``causal_conv1d_update`` (``assert num_cache_lines >= batch``, vllm-project/vllm#34094). kvlint predicts
    neither of those (docs/engine-memory-model.md §1.5).
    """
    return v >= (0, 20, 0)


def moe_gathers_dp_batch(v: Version) -> bool:
    """Whether an MoE layer of release ``v`` runs the tokens of every data-parallel rank, not its own (V1,
    ``--data-parallel-size`` > 1, the default all-to-all backend).

    ``FusedMoE.forward_impl`` dispatches with ``do_naive_dispatch_combine`` whenever ``dp_size > 1`` and neither
    DeepEP high-throughput nor FlashInfer's CUTLASS MoE kernels are in use, with or without expert parallelism
    (``vllm/model_executor/layers/fused_moe/layer.py``; ``FusedMoEParallelConfig.make`` keeps ``dp_size``). The
    default ``VLLM_ALL2ALL_BACKEND`` is ``naive`` up to 0.10.2 (``NaiveAll2AllManager.dispatch`` multicasts every
    rank's hidden states and router logits into one buffer of ``cu_tokens_across_dp`` rows) and
    ``allgather_reducescatter`` in 0.11.0 (``AgRsAll2AllManager.dispatch``: ``all_gatherv`` of both), so the fused
    MoE sees the sum of the ranks' batches (``vllm/distributed/device_communicators/all2all.py``, ``vllm/envs.py``).
    Read in the 0.9.0, 0.9.2, 0.10.1, 0.10.2 and 0.11.0 wheels (0.9.0's ``FusedMoE.forward_impl`` dispatches at
    ``dp_size > 1`` through the same ``NaiveAll2AllManager``, ``VLLM_FUSED_MOE_CHUNK_SIZE`` 32,768 and the same
    chunk loop; 0.9.1 between them taken as they are); later releases were not read, so the term is not applied to
    them, nor to 0.8.x, whose ``FusedMoE`` multicasts the batch itself (not read in detail; docs/engine-memory-
    model.md §1.10).
    """
    return (0, 9, 0) <= v < (0, 11, 1)


def moe_shards_experts_across_dp(v: Version) -> bool:
    """Whether release ``v`` splits every routed expert over the ``tp x dp`` ranks of a data-parallel deployment
    without ``--enable-expert-parallel``. ``FusedMoEParallelConfig.make`` flattens TP across DP
    (``flatten_tp_across_dp``, from 0.14.0 ``flatten_tp_across_dp_and_pcp``: ``tp_size = dp_size x tp_size``) and
    ``FusedMoE`` builds ``intermediate_size // tp_size`` of each expert (``vllm/model_executor/layers/fused_moe/
    config.py``, ``layer.py``; read in the 0.9.0, 0.9.2, 0.10.1, 0.11.0, 0.14.0, 0.15.0 and 0.19.0 wheels and on
    main at 002d6073, whose docstring states it: "TP = 1, DP = 2 and EP = False ... the tensors are sharded across 2
    devices"). Before ``FusedMoEParallelConfig`` (0.8.0 - 0.8.5) ``FusedMoE.__init__`` does the same inline: without
    expert parallelism ``self.tp_rank = tp_rank + self.tp_size * self.dp_rank`` and ``self.tp_size = self.tp_size *
    self.dp_size`` (``vllm@0.8.0``/``0.8.5:vllm/model_executor/layers/fused_moe/layer.py``), from the first release
    with a data-parallel group (0.8.0, ``VLLM_DP_SIZE``). Expert parallelism splits the experts over the same ranks
    whole."""
    return v >= (0, 8, 0)


def hybrid_allocator_available(v: Version) -> bool:
    """The hybrid KV-cache manager (sliding-window/Mamba-aware allocation) exists from 0.9.2 (§1.5)."""
    return v >= (0, 9, 2)


def nemotron_h_ssm_cache_dtype(v: Version, hook: str) -> str | None:
    """The SSM-state dtype vLLM release ``v`` gives a Nemotron-H model (``--mamba-ssm-cache-dtype auto``), or None
    for the model dtype (no hook). For a config without ``mamba_ssm_cache_dtype``:

    ``hook`` ``"nemotron_h"`` (``NemotronHForCausalLM``, ``NemotronHPuzzleForCausalLM``): none up to 0.12.x (auto =
    the model dtype, read in ``vllm@0.12.0:vllm/model_executor/models/config.py``, which has no Nemotron-H entry);
    ``"float16"`` from 0.13.0 to 0.19.x (``NemotronHForCausalLMConfig.verify_and_update_config``,
    ``getattr(hf_config, "mamba_ssm_cache_dtype", "float16")``, vllm-project/vllm#29978, read in the 0.13.0 and
    0.19.1 sources); ``"float32"`` from 0.20.0 (``NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE``,
    vllm-project/vllm#39032, merged 2026-04-05 after 0.19.0 was cut; read in the 0.20.0 and 0.34.0 sources).
    ``"nemotron_h_vl"`` (``NemotronH_Nano_VL_V2`` and the Omni / transcribe wrappers): no hook before 0.20.0
    (``NemotronHNanoVLV2Config`` set only the video backend in 0.19.1), float32 from 0.20.0 (#39032).
    With ``"+config"`` (the config sets ``mamba_ssm_cache_dtype``, Nemotron 3): ``"config"`` (the config's dtype)
    from the release whose hook reads it (0.13.0 for ``nemotron_h``, 0.20.0 for ``nemotron_h_vl``), None (the
    model dtype) before: vllm@0.12.0 reads the SSM dtype only from ``--mamba-ssm-cache-dtype``.
    """
    base, _, config = hook.partition("+")
    if config:
        return "config" if v >= ((0, 13, 0) if base == "nemotron_h" else (0, 20, 0)) else None
    if v >= (0, 20, 0):
        return "float32"
    if base == "nemotron_h" and v >= (0, 13, 0):
        return "float16"
    return None


def version_source(serving: Any) -> str:
    """Where the engine release would have come from, for the "version unknown" assumption of a plan: "from the
    image" for a container (its tag names none), "(a command line names none; --engine-version sets it)" for
    ``kvlint plan``'s bare command, which has no image (``ServingConfig.image`` empty)."""
    if getattr(serving, "image", ""):
        return "from the image"
    return "(a command line names none; --engine-version sets it)"
