"""``kvlint models pull``: fetch what kvlint needs of Hub models into a pulled catalogue, and check it.

With network, for each model id (``org/name``, ``org/name@revision``, or every hub model the given manifests
name, collected by kvlint's own pipeline: the engine's model argument, the ``kvlint.io/model`` annotation,
``.kvlint.yaml`` ``model_paths``, the engine's ``--revision``, a speculative-decoding draft model),
through ``huggingface_hub`` (``HF_ENDPOINT``, ``HF_TOKEN`` honoured):

1. ``HfApi.model_info`` at the requested revision gives the commit sha and the file list; every file is then
   read at that sha, so one entry never mixes two commits;
2. ``config.json`` and the quantization configs the repository has (:data:`QUANT_FILES`) are stored byte for
   byte (``quantization_config`` inside config.json comes with it);
3. the safetensors headers of the checkpoint (the files ``model.safetensors.index.json`` names, else the
   top-level ``*.safetensors``, as vLLM loads them) are read with HTTP range requests
   (``HfApi.parse_safetensors_file_metadata``; the weights are never downloaded): the exact tensor bytes are
   the sum of every tensor's ``data_offsets`` span, the parameter count the sum of its shape products;
4. the entry is written atomically with its ``provenance.json`` (:mod:`kvlint.models.pulled`).

Re-running is idempotent: an entry whose commit, files and checkpoint are unchanged is left untouched (its
``pulled_at`` too); an entry pinned to a full commit sha that is already complete is not even fetched again.
:func:`check_catalogue` is the offline ``--check``: every requested model has an intact entry at its revision.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from kvlint.models import pulled

if TYPE_CHECKING:
    from kvlint.options import Options

__all__ = [
    "QUANT_FILES",
    "CheckOutcome",
    "ModelRequest",
    "PullError",
    "PullOutcome",
    "Skipped",
    "check_catalogue",
    "collect_from_manifests",
    "parse_model_arg",
    "pull_models",
]

#: quantization configs stored when the repository has them: ModelOpt's ``hf_quant_config.json`` (read by
#: vLLM's ModelOpt loader when config.json has no ``quantization_config``), AutoAWQ's ``quant_config.json``
#: and AutoGPTQ's ``quantize_config.json`` (read by vLLM's AWQ/GPTQ configs with ``--quantization``).
QUANT_FILES = ("hf_quant_config.json", "quant_config.json", "quantize_config.json")
#: seconds one Hub request may take when ``HF_HUB_ETAG_TIMEOUT`` is not set.
PULL_TIMEOUT_S = 10.0
#: parallel safetensors header reads of one sharded checkpoint.
HEADER_WORKERS = 8

_ORG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_IGNORED_IN_COMPARISON = ("pulled_at", "pulled_by", "endpoint")


class PullError(Exception):
    """A model could not be pulled; the message names the model, the reason and the fix."""


@dataclass(frozen=True)
class ModelRequest:
    """A model to pull or check: hub ``id`` (``org/name``), ``revision`` (None = the default branch) and where
    it was named (``deploy/x.yaml:12:9 Deployment/llm container vllm``, or ``command line``)."""

    id: str
    revision: str | None = None
    where: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``org/name`` or ``org/name@revision``."""
        return f"{self.id}@{self.revision}" if self.revision else self.id


@dataclass(frozen=True)
class Skipped:
    """A model reference of the manifests that is not a hub model to pull, and why (``where`` as above).

    ``unsized``: True when it is the serving container's own model and kvlint found no config.json for it
    (the container is "model unknown" in the sizing line; a serving-runtime template or an unrendered
    placeholder is not, as its model is named elsewhere): nothing can be pulled or checked for it, so
    ``kvlint check`` cannot size that workload and ``kvlint models pull`` (with or without ``--check``)
    exits 1 for it, as ``--require-sizing`` does for ``kvlint check``.
    """

    ref: str
    where: str
    why: str
    unsized: bool = False


@dataclass
class PullOutcome:
    """What pulling one :class:`ModelRequest` did.

    ``status``: ``pulled`` (new entry), ``updated`` (the revision moved to another commit, or the files
    changed), ``unchanged`` (nothing written), ``failed`` (``message`` names the reason and the fix).
    ``warnings``: e.g. a config kvlint cannot plan, or a checkpoint without safetensors.
    """

    request: ModelRequest
    status: str
    message: str = ""
    path: str | None = None
    commit: str | None = None
    files: tuple[str, ...] = ()
    checkpoint_bytes: int | None = None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON of ``kvlint models pull --format json``: :func:`_outcome_dict`'s keys, then the pull's."""
        return {
            **_outcome_dict(self.request, self.status, self.message, self.path),
            "commit": self.commit,
            "files": list(self.files),
            "checkpoint_bytes": self.checkpoint_bytes,
            "warnings": self.warnings,
        }


@dataclass
class CheckOutcome:
    """One model of ``--check``: ``ok``, ``bundled`` (not pulled, but kvlint's bundled catalogue has it and no
    revision was asked: sized offline all the same), ``missing`` (no entry at the revision asked; ``message``
    says when another revision is pulled) or ``corrupt`` (a file missing or edited since the pull)."""

    request: ModelRequest
    status: str
    message: str = ""
    path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON of ``kvlint models pull --check --format json``."""
        return _outcome_dict(self.request, self.status, self.message, self.path)


def _outcome_dict(request: ModelRequest, status: str, message: str, path: str | None) -> dict[str, Any]:
    """The keys every model entry of ``kvlint models pull [--check] --format json`` starts with, in order."""
    return {
        "id": request.id,
        "revision": request.revision,
        "where": list(request.where),
        "status": status,
        "message": message,
        "path": path,
    }


# --------------------------------------------------------------------------------------------------
# what to pull


def parse_model_arg(arg: str, revision: str | None = None) -> ModelRequest:
    """A command-line model id: ``org/name`` or ``org/name@revision`` (``revision`` is ``--revision``; both at
    once must agree).

    Raises:
        ValueError: not an ``org/name`` hub id, or two different revisions.
    """
    ident, _, rev = arg.strip().partition("@")
    ident = ident.strip("/")
    if not _ORG_NAME.match(ident):
        raise ValueError(
            f"'{arg}' is neither an existing file or directory nor a Hugging Face model id (org/name or "
            "org/name@revision)"
        )
    if rev and revision and rev != revision:
        raise ValueError(f"'{arg}' names revision {rev} but --revision says {revision}")
    return ModelRequest(ident, rev or revision or None, ("command line",))


def _merge(requests: Sequence[ModelRequest]) -> list[ModelRequest]:
    """Requests deduplicated by (id case-insensitively, revision), their ``where`` joined, in first-seen order."""
    out: dict[tuple[str, str | None], ModelRequest] = {}
    for r in requests:
        key = (r.id.lower(), r.revision)
        if key in out:
            prev = out[key]
            out[key] = replace(prev, where=prev.where + tuple(w for w in r.where if w not in prev.where))
        else:
            out[key] = r
    return list(out.values())


def collect_from_manifests(
    paths: Sequence[str], options: Options, *, stdin: TextIO | BinaryIO | None = None
) -> tuple[list[ModelRequest], list[Skipped]]:
    """Every hub model the manifests under ``paths`` serve, found by kvlint's own pipeline (offline).

    Per serving container: the ``kvlint.io/model`` annotation, else the engine's model argument, mapped by
    ``model_paths``, at the engine's ``--revision``; plus a speculative-decoding draft model (vLLM
    ``--speculative-config`` ``model``, SGLang ``--speculative-draft-model-path`` and its revision). A
    reference that is a local directory, a path inside the container that ``model_paths`` does not map, a
    KAITO preset or a bare name is returned in the second list with the reason and how to name its hub id.

    Raises:
        FileNotFoundError, kvlint.render.RenderError: as :func:`kvlint.pipeline.run_check`.
    """
    from kvlint.models.resolve import _looks_like_path, map_model_path
    from kvlint.pipeline import model_reference, run_check
    from kvlint.sizing import sizing_of
    from kvlint.types import ContainerResult

    result = run_check(paths, replace(options, allow_hub=False), stdin=stdin)
    found: list[ModelRequest] = []
    skipped: list[Skipped] = []
    for cr in result.containers:
        # run_check keeps every container's full result (only a streaming run keeps compact records)
        if not isinstance(cr, ContainerResult) or cr.serving.model is None:
            continue
        ref, revision = model_reference(cr.serving, cr.workload)
        w = cr.workload
        obj = "/".join(x for x in (w.kind, w.namespace, w.name) if x)
        loc = cr.serving.model.loc or cr.serving.command_loc or w.loc
        where = (
            f"{loc} {obj} container {cr.container_name}" if loc else f"{obj} container {cr.container_name}"
        )
        refs = [(ref, revision)]
        draft = getattr(cr.settings, "speculative_model_id", None)  # vLLM --speculative-config model
        if draft:
            refs.append((str(draft), None))
        sgl_draft = cr.serving.get("speculative_draft_model_path") if cr.serving.engine == "sglang" else None
        if sgl_draft:
            rev = cr.serving.get("speculative_draft_model_revision")
            refs.append((str(sgl_draft), str(rev) if rev else None))
        for i, (r, rev) in enumerate(refs):
            target = map_model_path(r, options.model_paths) or r
            via = f" (mapped from '{r}' by model_paths)" if target != r else ""
            # the container's own model (not a draft) with no config.json: the workload stays unsized ("model
            # unknown"); a runtime template or an unrendered placeholder is sized where the model is named
            reason = sizing_of(cr) if i == 0 and cr.model is None else None
            unsized = reason == "model unknown"
            name_it = (
                f"map it to a hub id in .kvlint.yaml model_paths (e.g. {target}: <org>/<name>) or annotate the "
                "workload with kvlint.io/model"
            )
            local = False
            if target.startswith("kaito-preset:"):
                what = "a KAITO preset"
                name_it = "name its hub model with the kvlint.io/model annotation"
            elif local := os.path.exists(os.path.expanduser(target)):
                what = f"a local path{via}"
                name_it = "give the directory a config.json or " + name_it
            elif _looks_like_path(target):
                what = f"a path inside the container{via}"
            elif not _ORG_NAME.match(target.strip("/")):
                what = f"'{target}'{via}"
            else:
                found.append(ModelRequest(target.strip("/"), rev, (where,)))
                continue
            what = f"it is {what}, not an org/name Hub id"
            if unsized:
                why = (
                    f"cannot be pulled or checked: {what}, and kvlint has no config.json for it, so kvlint check "
                    f"cannot size this workload (KV502, model unknown); {name_it}"
                )
            elif reason == "runtime template":
                why = (
                    f"{what}; a serving-runtime template: pull the model of the InferenceService that uses it"
                )
            elif reason == "template not rendered":
                why = f"{what}; a template placeholder: render the template, then pull the model it names"
            elif local:
                why = f"{what}: kvlint reads it where it is"
            elif i == 0 and cr.model is not None:
                why = f"{what}; kvlint check sizes it as {cr.model.id} all the same (no pull needed); to pin it, "
                why += name_it
            else:
                why = f"{what}; to pull it, {name_it}"
            skipped.append(Skipped(r, where, why, unsized))
    return _merge(found), skipped


# --------------------------------------------------------------------------------------------------
# the Hub


def _timeout() -> float:
    try:
        return float(os.environ.get("HF_HUB_ETAG_TIMEOUT") or PULL_TIMEOUT_S)
    except ValueError:
        return PULL_TIMEOUT_S


def endpoint() -> str:
    """The Hub endpoint pulled from: ``HF_ENDPOINT``, else ``https://huggingface.co``."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


class _Down(Exception):
    """The Hub could not be reached; later models are not tried (the message is reused for each)."""


def _status(exc: Exception) -> int | None:
    code = getattr(getattr(exc, "response", None), "status_code", None)
    return int(code) if isinstance(code, int) else None


def _explain(exc: BaseException, req: ModelRequest, ep: str, what: str) -> Exception:
    """The :class:`PullError` (or :class:`_Down`) for an exception of ``huggingface_hub`` while reading
    ``what`` of ``req``: the model, the reason with its HTTP status, and the fix."""
    from huggingface_hub import errors as hf

    from kvlint.models.resolve import _HubDeadline

    page = f"{ep}/{req.id}"
    token = bool(os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
    status = _status(exc) if isinstance(exc, Exception) else None
    if isinstance(exc, hf.GatedRepoError):
        if token:
            why = (
                f"the repository is gated and the account of HF_TOKEN has no access to it ({status or 403}): "
                f"request access on {page} (accept the licence) with that account, or set HF_TOKEN to a "
                "token of an account that has it"
            )
        else:
            why = (
                f"the repository is gated ({status or 401}: no token sent): request access on {page} "
                "(accept the licence), then set HF_TOKEN to a read token of that account and pull again"
            )
        return PullError(f"{req.label}: {why}")
    if isinstance(exc, hf.RevisionNotFoundError):
        return PullError(
            f"{req.label}: revision '{req.revision}' not found ({status or 404}): check the branch, tag or "
            "commit sha (--revision, org/name@revision, or the manifest's --revision)"
        )
    if isinstance(exc, hf.RepositoryNotFoundError):
        private = (
            "if it is private, check that the account of HF_TOKEN can read it"
            if token
            else "if it is private, set HF_TOKEN to a token that can read it"
        )
        return PullError(
            f"{req.label}: no such model on the Hub at {ep} ({status or 404}): check the id for a typo "
            f"(organisation, name, version suffix); {private}"
        )
    if isinstance(exc, hf.EntryNotFoundError) and not isinstance(exc, hf.LocalEntryNotFoundError):
        return PullError(
            f"{req.label}: the repository has no {what} ({status or 404}): kvlint reads transformers "
            "checkpoints; for a GGUF-only or adapter repository, name its base model with the kvlint.io/model "
            "annotation"
        )
    if isinstance(exc, hf.OfflineModeIsEnabled) or (
        isinstance(exc, hf.LocalEntryNotFoundError)
        and os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    ):
        return _Down(
            "HF_HUB_OFFLINE is set: pulling needs the network; unset it for `kvlint models pull` (kvlint check, "
            "kvlint plan and the webhook then read the pulled catalogue offline)"
        )
    if isinstance(exc, hf.HfHubHTTPError) and status is not None:
        if status == 401:
            return PullError(
                f"{req.label}: the Hub rejected the token (401): HF_TOKEN is invalid or expired; set a valid "
                "read token, or unset it for public models"
            )
        if status == 429 or status >= 500:
            return _Down(
                f"the Hub at {ep} answered {status} while reading {what}: try again later, or set HF_ENDPOINT "
                "to a mirror"
            )
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return PullError(f"{req.label}: the Hub answered {status} for {what}: {first}")
    if isinstance(exc, _HubDeadline):
        return _Down(
            f"the Hub at {ep} did not answer within the deadline ({exc}; HF_HUB_ETAG_TIMEOUT={_timeout():g} s): "
            "check the network or proxy (HTTPS_PROXY), set HF_ENDPOINT to a reachable mirror, or run kvlint "
            "with --offline (bundled catalogue only)"
        )
    text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    return _Down(
        f"cannot reach the Hugging Face Hub at {ep} ({type(exc).__name__}{': ' + text if text else ''}): "
        "check the network or proxy (HTTPS_PROXY), set HF_ENDPOINT to a reachable mirror, or run kvlint with "
        "--offline (bundled catalogue only)"
    )


#: times a request interrupted on an established connection is sent again (:func:`_interrupted`).
_INTERRUPTED_RETRIES = 2


def _interrupted(exc: BaseException) -> bool:
    """Whether a request failed on a connection closed under it rather than because the Hub is unreachable:
    ``huggingface_hub`` shares one HTTP client between threads and closes it whenever any request meets a
    connection error, so requests in flight on other threads (parallel header reads) then fail with a read
    error or "client has been closed"; sent again, they get a new client."""
    seen: BaseException | None = exc
    for _ in range(4):  # the error itself, or what hf_hub_download wrapped in LocalEntryNotFoundError
        if seen is None:
            return False
        name = type(seen).__name__
        if name in ("ReadError", "WriteError", "RemoteProtocolError", "LocalProtocolError", "CloseError"):
            return True
        if isinstance(seen, RuntimeError) and "closed" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Hub:
    """One ``huggingface_hub`` session of a pull: the API client, a temporary download cache (the user's
    Hugging Face cache is left alone) and the per-request deadline."""

    def __init__(self, ep: str, cache: str) -> None:
        from huggingface_hub import HfApi
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()  # kvlint prints one line per model; the files are a few kB each
        self.endpoint = ep
        self.cache = cache
        self.timeout = _timeout()
        self.api = HfApi(endpoint=ep)

    def call(self, fn: Callable[[], Any], req: ModelRequest, what: str, deadline: float | None = None) -> Any:
        from kvlint.models.resolve import _bounded

        for attempt in range(_INTERRUPTED_RETRIES + 1):
            try:
                return _bounded(fn, deadline or (3 * self.timeout + 5))
            except Exception as exc:
                if attempt < _INTERRUPTED_RETRIES and _interrupted(exc):
                    continue
                raise _explain(exc, req, self.endpoint, what) from None

    def info(self, req: ModelRequest) -> Any:
        return self.call(
            lambda: self.api.model_info(req.id, revision=req.revision, timeout=self.timeout),
            req,
            "model information",
        )

    def download(self, req: ModelRequest, filename: str, commit: str) -> bytes:
        from huggingface_hub import hf_hub_download

        path = self.call(
            lambda: hf_hub_download(
                req.id,
                filename,
                revision=commit,
                cache_dir=self.cache,
                endpoint=self.endpoint,
                etag_timeout=self.timeout,
            ),
            req,
            filename,
        )
        return Path(path).read_bytes()

    def header(self, req: ModelRequest, filename: str, commit: str) -> Any:
        return self.call(
            lambda: self.api.parse_safetensors_file_metadata(
                req.id, filename, revision=commit, timeout=self.timeout
            ),
            req,
            f"the safetensors header of {filename}",
        )


def _checkpoint(
    hub: _Hub, req: ModelRequest, commit: str, files: set[str] | None
) -> tuple[dict[str, Any] | None, dict[str, Any], str | None]:
    """``(checkpoint, read, note)``: the exact tensor bytes and parameters from the safetensors headers, the
    files read but not stored (the index), and why there is no checkpoint size when there is none.
    ``files`` is the repository's file list, None when the endpoint gave none (the index, then
    ``model.safetensors``, are then tried)."""
    from concurrent.futures import ThreadPoolExecutor

    read: dict[str, Any] = {}
    total_size: int | None = None
    index = "model.safetensors.index.json"
    raw: bytes | None = None
    if files is None:
        try:
            raw = hub.download(req, index, commit)
        except PullError:
            files = {"model.safetensors"}
    elif index in files:
        raw = hub.download(req, index, commit)
    if raw is not None:
        try:
            data = json.loads(raw)
            total = (data.get("metadata") or {}).get("total_size")
            total_size = int(total) if isinstance(total, (int, float)) and total > 0 else None
            shards = sorted({str(v) for v in (data.get("weight_map") or {}).values()})
        except (ValueError, AttributeError, TypeError):
            shards = []
        read[index] = {"sha256": _sha256(raw), "size": len(raw), "metadata.total_size": total_size}
    else:
        shards = sorted(f for f in (files or ()) if "/" not in f and f.endswith(".safetensors"))
    if not shards:
        return (
            None,
            read,
            "the repository has no safetensors checkpoint (model.safetensors or an index): weight bytes are "
            "estimated from the architecture",
        )
    try:
        with ThreadPoolExecutor(max_workers=min(HEADER_WORKERS, len(shards))) as pool:
            metas = list(pool.map(lambda f: (f, hub.header(req, f, commit)), shards))
    except PullError as exc:
        if total_size:
            ck = {
                "bytes": total_size,
                "files": shards,
                "method": "model.safetensors.index.json metadata.total_size",
            }
            return ck, read, f"safetensors headers not read ({exc}); the index's total_size is recorded"
        return None, read, f"safetensors headers not read ({exc}): weight bytes are estimated"
    nbytes = tensors = 0
    by_dtype: dict[str, int] = {}
    for _f, meta in metas:
        for t in meta.tensors.values():
            begin, end = t.data_offsets
            nbytes += int(end) - int(begin)
            tensors += 1
        for dt, n in meta.parameter_count.items():
            by_dtype[dt] = by_dtype.get(dt, 0) + int(n)
    ck = {
        "bytes": nbytes,
        "parameters": sum(by_dtype.values()),
        "parameters_by_dtype": dict(sorted(by_dtype.items())),
        "tensors": tensors,
        "files": shards,
        "method": "safetensors headers",
    }
    note = None
    if total_size is not None and total_size != nbytes:
        note = f"the index's metadata.total_size {total_size} differs from the headers' tensor bytes {nbytes}; the headers are used"
    return ck, read, note


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    strip = lambda d: {k: v for k, v in d.items() if k not in _IGNORED_IN_COMPARISON}  # noqa: E731
    return strip(a) == strip(b)


def _write_entry(dest: Path, name: str, blobs: dict[str, bytes], provenance: dict[str, Any]) -> None:
    """Write ``dest/name`` atomically: a hidden temporary sibling renamed into place, the old entry removed."""
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=dest))
    try:
        for fname, data in blobs.items():
            (tmp / fname).write_bytes(data)
        (tmp / pulled.PROVENANCE).write_text(
            json.dumps(provenance, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        final = dest / name
        old: Path | None = None
        if final.exists():
            old = dest / f".{name}.old-{os.getpid()}"
            final.rename(old)
        tmp.rename(final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _pull_one(hub: _Hub, req: ModelRequest, dest: Path, now: str) -> PullOutcome:
    from kvlint import __version__
    from kvlint.models.config import parse_config

    name = pulled.entry_dir_name(req.id, req.revision)
    existing = pulled._entry(dest / name)
    if (
        existing is not None
        and req.revision
        and _SHA.match(req.revision.lower())
        and existing.commit.lower() == req.revision.lower()
        and not pulled.verify(existing)
    ):
        return PullOutcome(
            req,
            "unchanged",
            "pinned to this commit and already complete (no network request)",
            str(existing.path),
            existing.commit,
            tuple(existing.files),
            (existing.checkpoint or {}).get("bytes"),
        )
    info = hub.info(req)
    listed = {s.rfilename for s in (info.siblings or [])}
    commit = str(info.sha or "") or None
    pin = commit or req.revision or "main"
    if listed and "config.json" not in listed:
        raise PullError(
            f"{req.label}: the repository has no config.json at {pin[:12]}: kvlint reads transformers checkpoints; "
            "for a GGUF-only or adapter repository, name its base model with the kvlint.io/model annotation"
        )
    blobs = {"config.json": hub.download(req, "config.json", pin)}
    try:
        config = json.loads(blobs["config.json"])
    except ValueError as exc:
        raise PullError(
            f"{req.label}: config.json at {pin[:12]} is not valid JSON ({exc}); nothing was written"
        ) from None
    warnings: list[str] = []
    if not isinstance(config, dict):
        raise PullError(f"{req.label}: config.json at {pin[:12]} is not a JSON object; nothing was written")
    for fname in QUANT_FILES:
        if listed and fname not in listed:
            continue
        try:
            blobs[fname] = hub.download(req, fname, pin)
        except PullError:
            if listed:
                raise
    checkpoint, read, ck_note = _checkpoint(hub, req, pin, listed or None)
    if ck_note:
        warnings.append(ck_note)
    try:
        parse_config(config, model_id=req.id, source="config.json")
    except ValueError as exc:
        warnings.append(f"stored, but kvlint cannot plan it: {exc}")
    provenance: dict[str, Any] = {
        "format": pulled.FORMAT,
        "id": req.id,
        "hub_id": str(getattr(info, "id", None) or req.id),
        "revision": req.revision,
        "commit": commit or pin,
        "gated": getattr(info, "gated", None) or False,
        "endpoint": hub.endpoint,
        "pulled_at": now,
        "pulled_by": f"kvlint {__version__}",
        "files": {f: {"sha256": _sha256(b), "size": len(b)} for f, b in sorted(blobs.items())},
        "read": read,
        "checkpoint": checkpoint,
        "checkpoint_note": ck_note,
    }
    out = PullOutcome(
        req,
        "pulled",
        "",
        str(dest / name),
        provenance["commit"],
        tuple(sorted(blobs)),
        (checkpoint or {}).get("bytes"),
        warnings,
    )
    if existing is not None and _same(existing.raw, provenance) and not pulled.verify(existing):
        out.status, out.message = "unchanged", f"up to date (pulled {existing.pulled_at})"
        return out
    if existing is not None:
        out.status = "updated"
        out.message = (
            f"commit {existing.commit[:12]} -> {provenance['commit'][:12]}"
            if existing.commit != provenance["commit"]
            else "files repaired or changed at the same commit"
        )
    _write_entry(dest, name, blobs, provenance)
    return out


def pull_models(requests: Sequence[ModelRequest], catalogue: str | os.PathLike[str]) -> list[PullOutcome]:
    """Pull each request into ``catalogue`` (created when missing); one outcome per request, in order.

    A request that fails does not stop the others, except when the Hub cannot be reached at all: the later
    ones then fail with the same message without being tried. Never raises for a model's failure.
    """
    dest = Path(catalogue)
    ep = endpoint()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out: list[PullOutcome] = []
    down: str | None = None
    with tempfile.TemporaryDirectory(prefix="kvlint-pull-") as cache:
        hub: _Hub | None = None
        for req in _merge(requests):
            if down is not None:
                out.append(PullOutcome(req, "failed", f"{req.label}: not pulled: {down}"))
                continue
            try:
                hub = hub or _Hub(ep, cache)
                out.append(_pull_one(hub, req, dest, now))
            except PullError as exc:
                out.append(PullOutcome(req, "failed", str(exc)))
            except _Down as exc:
                down = str(exc)
                out.append(PullOutcome(req, "failed", f"{req.label}: not pulled: {down}"))
    pulled.clear()
    from kvlint.models.resolve import clear_cache

    clear_cache()
    return out


# --------------------------------------------------------------------------------------------------
# --check


def check_catalogue(
    requests: Sequence[ModelRequest], catalogue: str | os.PathLike[str]
) -> list[CheckOutcome]:
    """Offline: whether ``catalogue`` has an intact entry for each request at its revision (or, for a request
    without a revision, kvlint's bundled catalogue has the model: ``bundled``). With no requests, every entry
    of the catalogue is verified. Never touches the network."""
    pulled.clear()
    entries = pulled.load_entries(catalogue)
    out: list[CheckOutcome] = []
    if not requests:
        for e in entries:
            problems = pulled.verify(e)
            req = ModelRequest(e.id, e.revision, ())
            if problems:
                out.append(CheckOutcome(req, "corrupt", "; ".join(problems), str(e.path)))
            else:
                out.append(CheckOutcome(req, "ok", f"{e.label}, pulled {e.pulled_at}", str(e.path)))
        return out
    for req in _merge(requests):
        hit = pulled.lookup(catalogue, req.id, req.revision)
        if hit is None and req.revision is None and not any(x.id.lower() == req.id.lower() for x in entries):
            from kvlint.models import catalogue as bundled

            entry = bundled.lookup(req.id)
            if entry is not None:
                how = "" if entry.id == entry.base_id else f" (config of {entry.base_id})"
                out.append(
                    CheckOutcome(
                        req, "bundled", f"in kvlint's bundled catalogue{how}; pulling it is optional"
                    )
                )
                continue
        if hit is None:
            others = [x for x in entries if x.id.lower() == req.id.lower()]
            msg = "not pulled"
            if others:
                revs = ", ".join(x.revision or "the default branch" for x in others)
                msg = f"pulled only at {revs}, not at {req.revision or 'the default branch'}"
            out.append(CheckOutcome(req, "missing", msg))
            continue
        problems = pulled.verify(hit)
        if problems:
            out.append(CheckOutcome(req, "corrupt", "; ".join(problems), str(hit.path)))
        else:
            out.append(CheckOutcome(req, "ok", f"{hit.label}, pulled {hit.pulled_at}", str(hit.path)))
    return out
