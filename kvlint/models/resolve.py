"""Resolve a model reference (hub id, local directory, container path) to a :class:`ModelSpec`.

Order (first hit wins): ``model_paths`` mapping -> an existing local path holding ``config.json`` ->
``model_dirs`` (a pulled catalogue given as one is read as such) -> pulled catalogues (``kvlint models pull``,
:mod:`kvlint.models.pulled`; the entry of the requested revision) -> the bundled catalogue (case-insensitive, with its cited variants) -> the Hugging Face Hub
-> a quantized build derived from its name (``org/<catalogued name>-AWQ`` and the like,
:func:`kvlint.models.catalogue.derive_quantized`), only when the real config.json cannot be read and always
with an "ASSUMPTION (derived from name)" note first in the spec's notes and "derived from name" in its
source. The hub is asked through ``huggingface_hub`` (``hf_hub_download``; honours ``HF_HUB_OFFLINE``,
``HF_TOKEN``, ``HF_HUB_CACHE``/``HF_HOME`` and ``HF_ENDPOINT``; short timeouts unless the user set
``HF_HUB_ETAG_TIMEOUT``/``HF_HUB_DOWNLOAD_TIMEOUT``; after the first network failure in the process only
the local cache is consulted). Results (and failures) are memoised per process. ``huggingface_hub`` is imported lazily so ``kvlint --help`` stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from kvlint.models.config import DEEPSEEK_V41_UNMODELLED, REFUSED, NotDecoderLLM, parse_config
from kvlint.models.pulled import inside as _inside
from kvlint.types import ConfigRefusal, ModelSpec, ModelUnavailable

__all__ = ["resolve_model", "clear_cache", "manifest_root", "map_model_path", "HUB_TIMEOUT_S"]

#: default hub timeouts (seconds) when the user has not set HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT.
HUB_TIMEOUT_S = 5

#: Memo of resolutions: a ModelSpec, or the message of a failure with its config refusal (``(str, ConfigRefusal |
#: None)``). Failures are kept as text, not as the exception: an exception holds its traceback, and with it every
#: frame of the run that raised it.
#: Bounded (oldest entries dropped first): in a long-running process (the admission webhook) every
#: distinct model reference in a review would otherwise stay for ever.
_memo: dict[tuple[Any, ...], ModelSpec | tuple[str, ConfigRefusal | None]] = {}
MEMO_MAX = 1024
#: Largest JSON file read as a model config (bytes); real config.json files are a few KiB.
MAX_CONFIG_BYTES = 4 * 2**20
_network_down: list[str] = []  # first network failure reason, once seen
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def clear_cache() -> None:
    """Forget memoised specs/failures and the "network is down" flag (tests, long-running webhook reloads)."""
    from kvlint.models import pulled

    _memo.clear()
    _network_down.clear()
    pulled.clear()


#: The last remedy of :func:`_how_to`; KV502 words it otherwise when the workload's annotation named the model
ANNOTATE_HINT = "annotate the workload with kvlint.io/model: <hub id>"


#: A model reference written as a plain YAML flow scalar in a remedy (``model_paths: {REF: ...}``); any other is
#: written double-quoted (a ``:`` or space in a flow mapping would end the key).
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")


def yaml_key(ref: str) -> str:
    """``ref`` as a key of a YAML flow mapping a user can paste into ``.kvlint.yaml``: as is when it is plain
    (:data:`_PLAIN_KEY`: a hub id, a path), else JSON-quoted (which YAML reads back the same)."""
    return ref if _PLAIN_KEY.fullmatch(ref) else json.dumps(ref, ensure_ascii=False)


def _how_to(ref: str) -> str:
    stripped = ref.strip("/")
    org_name = stripped if _HUB_ID.match(stripped) and "/" in stripped else None
    if org_name:
        org, name = org_name.split("/", 1)
        layout = f"{org}--{name}/config.json or {org}/{name}/config.json"
    else:
        layout = "<org>--<name>/config.json or <org>/<name>/config.json"
    pull = (
        f"`kvlint models pull {org_name}` (with network, once; kvlint then reads it offline), "
        if org_name
        else ""
    )
    # a hub id: pulled, a --model-dir copy or the annotation (a model_paths entry is read for the manifest's own
    # reference only, not for the hub id a KAITO preset or an OCI image name stands for: not offered); any other
    # reference: a model_paths entry mapping it (map_model_path matches it exactly)
    mapped = (
        ""
        if org_name
        else f"a `.kvlint.yaml` entry mapping it to a hub id or local directory (model_paths: {{{yaml_key(ref)}: "
        "<org>/<name>}), "
    )
    return f"provide it with {pull}--model-dir DIR holding {layout}, {mapped}or {ANNOTATE_HINT}"


def typed_model_remedies(message: str, ref: str, argument: str) -> str:
    """A "config.json not found" error of :func:`resolve_model` (:func:`_unavailable`: "model 'X': config.json not
    found (WHY); provide it with ...; for hub models ...") with the remedies of a command that reads no manifest
    (`kvlint models show ID`, `kvlint plan -- COMMAND`): a pull (``org/name`` hub ids only), ``--model-dir DIR``
    holding the config, or the path of a directory holding its config.json given as ``argument`` (the command's
    word for the model: ``MODEL_ID``, ``the command's model``). A manifest's remedies, a ``.kvlint.yaml``
    ``model_paths`` entry and the workload's ``kvlint.io/model`` annotation, are not offered: neither command reads
    them. Any other message (a config found but refused) is returned as it is."""
    head, sep, rest = message.partition("; provide it with ")
    if not sep:
        return message
    tail = rest[rest.find("; for hub models") :] if "; for hub models" in rest else ""
    typed = ref.strip()
    hub = (
        typed.count("/") == 1
        and not typed.startswith(("/", ".", "~"))
        and not typed.endswith("/")
        and bool(_HUB_ID.match(typed))
    )
    name = os.path.basename(typed.rstrip("/")) or "<name>"
    layout = (
        f"{typed.replace('/', '--', 1)}/config.json or {typed}/config.json" if hub else f"{name}/config.json"
    )
    pull = f"`kvlint models pull {typed}` (with network, once; kvlint then reads it offline), " if hub else ""
    return (
        f"{head}; provide it with {pull}--model-dir DIR holding {layout}, or give the path of a directory holding "
        f"its config.json as {argument}{tail}"
    )


#: Hub ids (lower case) real manifests name whose architecture kvlint's memory model does not cover and whose
#: config.json the catalogue lacks: the KV502 says why, not only "not found". deepseek-ai/DeepSeek-V4.1-Flash is a
#: DeepseekV41ForCausalLM (model_type deepseek_v41: huggingface/transformers issue #48755 "Add DeepSeek-V4.1-Flash
#: (deepseek_v41)"; named by ai-dynamo/dynamo's recipes/deepseek-v4.1-flash, fixtures/collected); see
#: :data:`kvlint.models.config.DEEPSEEK_V41_UNMODELLED` for the engine sources.
UNMODELLED_HUB_IDS: dict[str, str] = {"deepseek-ai/deepseek-v4.1-flash": DEEPSEEK_V41_UNMODELLED}


def _without_org(ref: str) -> tuple[str, str]:
    """When the hub id ``ref`` has no organisation (``Llama-3.2-1B``) and the bundled catalogue holds a model of
    that very repository name (``meta-llama/Llama-3.2-1B``, :func:`kvlint.models.catalogue.close_ids`), the words
    that say so for KV502's reason and that id, else ``("", "")``. A Hub repository id is ``<org>/<name>``; one without an
    organisation resolves only for the Hub's legacy canonical models (``gpt2``, ``bert-base-uncased``, since moved
    under organisations and redirected), and vLLM reads the bare name as a local directory first
    (``vllm/transformers_utils/config.py::get_config``, ``file_or_path_exists``), so a chart that drops the
    organisation value (``vllm serve {{ .Values.model.name }}`` beside an unused ``model.organization``) asks the Hub
    for a repository that is not there."""
    if "/" in ref.strip("/"):
        return "", ""
    from kvlint.models.catalogue import close_ids

    name = ref.strip("/").lower()
    same = [mid for mid in close_ids(ref) if mid.rsplit("/", 1)[-1].lower() == name]
    if not same:
        return "", ""
    return (
        f"'{ref.strip('/')}' is a hub id without its organisation, which the Hub resolves only for its legacy "
        f"canonical models (gpt2, bert-base-uncased), and the catalogued model of that name is {same[0]}: did you "
        f"mean {same[0]}?",
        same[0],
    )


def _unavailable(ref: str, reason: str, hub_hint: bool = True) -> ModelUnavailable:
    hint = _how_to(ref)
    if hub_hint:
        hint += "; for hub models allow network access (and set HF_TOKEN for gated models)"
    return ModelUnavailable(f"model '{ref}': config.json not found ({reason}); {hint}")


def _refused(
    ref: str, path: Path | str, why: str, not_decoder: NotDecoderLLM | None = None
) -> ModelUnavailable:
    """The error for ``ref``'s config file ``path`` that exists but that kvlint refuses, ``why`` saying what is
    wrong, with its :class:`~kvlint.types.ConfigRefusal` (``not_decoder``: the config is not a decoder LLM)."""
    refusal = ConfigRefusal(
        str(path),
        why,
        not_decoder.model_type if not_decoder is not None else None,
        not_decoder is not None and not_decoder.encoder_decoder,
    )
    return ModelUnavailable(f"model '{ref}': {path}{REFUSED}{why}", refusal)


def _read_json(path: Path, ref: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise _refused(ref, path, f"larger than {MAX_CONFIG_BYTES} bytes, not a model config")
        data = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise _refused(ref, f"{path}:{e.lineno}:{e.colno}", f"malformed JSON: {e.msg}") from None
    except RecursionError:
        raise _refused(ref, path, "JSON nested too deeply") from None
    except (OSError, UnicodeDecodeError) as e:
        raise _unavailable(ref, f"{path}: cannot read: {e}", hub_hint=False) from None
    if not isinstance(data, dict):
        raise _refused(ref, path, "not a JSON object")
    return data


#: The largest ``metadata.total_size`` read as a checkpoint's bytes (2^63 - 1, as a quantity past 2^63 bytes is
#: implausible: :mod:`kvlint.accelerators.quantity`); past it the index is read as giving none, where a 4,000-digit
#: size made every plan "could not size ... OverflowError: integer division result too large for a float"
MAX_CHECKPOINT_BYTES = 2**63 - 1


def _checkpoint_total(total: Any) -> bool:
    """Whether an index's ``metadata.total_size`` is a checkpoint size kvlint reads: an integer (not a boolean)
    from 1 to :data:`MAX_CHECKPOINT_BYTES`."""
    return isinstance(total, int) and not isinstance(total, bool) and 0 < total <= MAX_CHECKPOINT_BYTES


def _checkpoint_size(d: Path, root: Path | None = None) -> tuple[int | None, str | None]:
    """Exact weight bytes of a local checkpoint: ``model.safetensors.index.json`` ``metadata.total_size``,
    else the sum of ``*.safetensors`` file sizes (headers included, a few KiB over), else None. With ``root``,
    only files whose real path lies in it count (:func:`_from_dir`)."""
    idx = d / "model.safetensors.index.json"
    if idx.is_file() and (root is None or _inside(idx, root)):
        try:  # at most MAX_CONFIG_BYTES (a real index is ~100 KB); nesting past the decoder's depth is no index
            with open(idx, "rb") as fh:
                raw = fh.read(MAX_CONFIG_BYTES + 1)
            if len(raw) <= MAX_CONFIG_BYTES:
                total = (json.loads(raw.decode("utf-8")).get("metadata") or {}).get("total_size")
                if _checkpoint_total(total):
                    return total, f"checkpoint size ({idx} metadata.total_size)"
        except (OSError, ValueError, AttributeError, RecursionError):
            pass
    files = [p for p in d.glob("*.safetensors") if p.is_file() and (root is None or _inside(p, root))]
    if files:
        try:
            return sum(
                p.stat().st_size for p in files
            ), f"checkpoint size (sum of {len(files)} *.safetensors in {d})"
        except OSError:
            return None, None
    return None, None


def _from_dir(d: Path, ref: str, model_id: str | None = None, root: Path | None = None) -> ModelSpec:
    """The spec of the model directory ``d`` (its ``config.json``, ``hf_quant_config.json``, checkpoint size).
    With ``root`` (the directory ``d`` was found in: a model directory, the repository holding the manifest),
    a file whose real path is outside it is not read, as if it were not there (:func:`_has_config`): a
    repository's ``models/x/config.json -> ~/.docker/config.json`` made CI read the runner's file."""
    cfg_path = d / "config.json"
    if not _has_config(d, root):
        raise _unavailable(ref, f"directory {d} has no config.json", hub_hint=False)
    config = _read_json(cfg_path, ref)
    qpath = d / "hf_quant_config.json"
    quant = _read_json(qpath, ref) if qpath.is_file() and (root is None or _inside(qpath, root)) else None
    wb, wb_src = _checkpoint_size(d, root)
    return _parse(config, model_id or ref, str(cfg_path), quant, wb, wb_src)


def _has_config(d: Path, root: Path | None) -> bool:
    """Whether the directory ``d`` holds a ``config.json`` kvlint reads: a file, whose real path lies in ``root``
    when one is given. The real path is asked first, so a link out of ``root`` is "no config.json" whether its
    target exists or not (nothing tells which files exist out of it)."""
    cfg = d / "config.json"
    return (root is None or _inside(cfg, root)) and cfg.is_file()


#: What reading a config of an unexpected shape raises (:func:`_parse`): a number where a mapping or list is read
#: (AttributeError, TypeError), a list too short (IndexError), a key of a mapping missing (KeyError), an integer
#: beyond a float (OverflowError)
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, OverflowError)


def _parse(
    config: dict[str, Any],
    model_id: str,
    source: str,
    quant: dict[str, Any] | None,
    wb: int | None = None,
    wb_src: str | None = None,
    param_count: int | None = None,
    extra_notes: tuple[str, ...] = (),
) -> ModelSpec:
    try:
        spec = parse_config(
            config,
            model_id=model_id,
            source=source,
            weight_bytes=wb,
            weight_bytes_source=wb_src,
            param_count=param_count,
            quant_config_extra=quant,
        )
    except ValueError as e:
        why = str(e)
        why = why[len(model_id) + 2 :] if why.startswith(f"{model_id}: ") else why
        raise _refused(model_id, source, why, e if isinstance(e, NotDecoderLLM) else None) from None
    except _SHAPE_ERRORS as e:
        # a field of another type or shape than transformers writes (hf_quant_config.json "quantization": 5, a
        # Nemotron-NAS block_configs entry that is a number): refused at its file, as a config with a size out of
        # range is; it was "no config.json for model ..." (the pipeline's net for a resolution that raised)
        files = "config.json" if quant is None else "config.json or hf_quant_config.json"
        raise _refused(
            model_id,
            source,
            f"{files} holds a value of another type or shape than the one transformers writes there "
            f"({type(e).__name__}: {str(e)[:120]})",
        ) from None
    if extra_notes:
        import dataclasses

        spec = dataclasses.replace(spec, notes=tuple(extra_notes) + spec.notes, assumption="")
    return spec


def _candidates_in(model_dir: Path, ref: str) -> list[Path]:
    """Directories of ``model_dir`` that may hold ``ref``'s config.json; never one outside ``model_dir``
    (a reference such as ``../../etc`` or a symlink pointing out of it is not followed)."""
    return [c for c in _candidate_paths(model_dir, ref) if _inside(c, model_dir)]


def _spelled_inside(path: str, directory: str) -> bool:
    """Whether ``path`` lies in ``directory`` as written (its absolute path, links not resolved) or once resolved
    (:func:`_inside`): a link of the directory pointing out of it is still in it by this test."""
    spelled = os.path.abspath(path)
    inside = spelled == directory or spelled.startswith(directory.rstrip(os.sep) + os.sep)
    return inside or _inside(Path(path), Path(directory))


def _candidate_paths(model_dir: Path, ref: str) -> list[Path]:
    r = ref.strip("/")
    out: list[Path] = []
    if "/" in r and _HUB_ID.match(r):
        org, name = r.split("/", 1)
        out += [model_dir / f"{org}--{name}", model_dir / org / name, model_dir / name]
        snaps = model_dir / f"models--{org}--{name}" / "snapshots"
        if snaps.is_dir():
            out += sorted(
                (p for p in snaps.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True
            )
    base = Path(r).name
    if base:
        out.append(model_dir / base)
    return out


def _from_catalogue(ref: str, revision: str | None, derive_because: str | None = None) -> ModelSpec | None:
    """The spec of a catalogued id (or variant); with ``derive_because`` set, of a quantized build derived
    from its name instead (the reason the real config was not read is quoted in its assumption note)."""
    from kvlint.models import catalogue

    if derive_because is None:
        entry = catalogue.lookup(ref)
    else:
        entry = catalogue.derive_quantized(ref, derive_because) or catalogue.derive_reupload(
            ref, derive_because
        )
    if entry is None:
        return None
    config, quant = catalogue.load_config(entry)
    wb_src = (
        f"checkpoint size (model.safetensors.index.json metadata.total_size, cited in facts.yaml: "
        f"{entry.weight_bytes_citation})"
        if entry.weight_bytes
        else None
    )
    notes = list(entry.notes[:1] if entry.id != entry.base_id else [])
    # a name-derived build (a quantized build, a re-upload: CatalogueEntry.derived) states its assumption first
    # (or a stored build whose abridged config lacks the quantization its name states: derived["abridged"])
    assumption = (
        entry.notes[0]
        if entry.derived and (entry.id != entry.base_id or entry.derived.get("abridged")) and entry.notes
        else ""
    )
    if (
        entry.derived
        and entry.id != entry.base_id
        and len(entry.notes) > 1
        and "uses the config of" in entry.notes[1]
    ):
        notes.append(entry.notes[1])  # the base is itself a variant: say why its config applies too
    if revision:
        notes.append(
            f"revision {revision} requested; the bundled catalogue config ({entry.source_citation}) was used"
        )
    spec = _parse(
        config,
        entry.id,
        f"kvlint catalogue: {entry.source_citation}",
        quant,
        entry.weight_bytes,
        wb_src,
        entry.param_count if entry.param_count_exact else None,
        tuple(notes),
    )
    return dataclasses.replace(spec, assumption=assumption) if assumption else spec


class _HubDeadline(Exception):
    """A hub call did not finish within its deadline (``huggingface_hub`` retries timeouts with back-off
    for up to ~40 s; kvlint stops waiting earlier)."""


def _deadline(etag_timeout: float) -> float:
    """Wall-clock budget (s) of one hub call: two timeouts plus 1 s of retries (11 s at the default
    :data:`HUB_TIMEOUT_S` of 5 s)."""
    return 2 * etag_timeout + 1.0


def _bounded(fn: Any, deadline: float) -> Any:
    """Run ``fn()`` in a daemon thread and wait at most ``deadline`` seconds; re-raise its exception.

    Raises:
        _HubDeadline: still running at the deadline (the thread is abandoned; it only touches the cache).
    """
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=run, name="kvlint-hub", daemon=True)
    t.start()
    t.join(deadline)
    if t.is_alive():
        raise _HubDeadline(f"no answer within {deadline:.0f} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _hub_env() -> None:
    for var in ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"):
        os.environ.setdefault(var, str(HUB_TIMEOUT_S))


def _probe_endpoint(endpoint: str, timeout: float) -> None:
    """One TCP connect to the hub endpoint per process; on failure mark the network down so that
    ``hf_hub_download`` only consults the local cache (its own retry/back-off on connection errors
    takes ~20 s). Skipped when an HTTP(S) proxy is configured (a direct connect says nothing then)."""
    if any(
        os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")
    ):
        return
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(endpoint)
    host = u.hostname or "huggingface.co"
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        _network_down.append(f"cannot connect to {host}:{port}: {type(e).__name__}")


def _from_hub(ref: str, revision: str | None) -> ModelSpec:
    _hub_env()
    try:
        from huggingface_hub import errors as hf_errors
        from huggingface_hub import hf_hub_download
    except ImportError:  # pragma: no cover - dependency is declared
        raise _unavailable(ref, "huggingface_hub is not installed") from None

    offline_env = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    kwargs: dict[str, Any] = {"revision": revision}
    if os.environ.get("HF_HUB_CACHE"):
        kwargs["cache_dir"] = os.environ["HF_HUB_CACHE"]
    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    if os.environ.get("HF_ENDPOINT"):
        kwargs["endpoint"] = endpoint
    try:
        kwargs["etag_timeout"] = float(os.environ.get("HF_HUB_ETAG_TIMEOUT") or HUB_TIMEOUT_S)
    except ValueError:
        kwargs["etag_timeout"] = HUB_TIMEOUT_S
    # whether the hub was found unreachable before this model was asked for (by another model's look-up): the
    # message says "earlier in this run" then, and "is unreachable" when this look-up's own probe found it so
    down_before = bool(_network_down)
    if not offline_env and not _network_down:
        _probe_endpoint(endpoint, min(float(kwargs["etag_timeout"]), 3.0))
    kwargs["local_files_only"] = offline_env or bool(_network_down)

    limit = _deadline(float(kwargs["etag_timeout"]))

    def download(filename: str) -> str:
        return str(_bounded(lambda: hf_hub_download(ref, filename, **kwargs), limit))

    try:
        path = download("config.json")
    except (hf_errors.LocalEntryNotFoundError, hf_errors.OfflineModeIsEnabled) as e:
        if offline_env:
            why = "HF_HUB_OFFLINE is set and the model is not in the local Hugging Face cache"
        elif _network_down and down_before:
            why = f"the Hugging Face Hub was unreachable earlier in this run ({_network_down[0]}) and the model is not cached"
        elif _network_down:
            why = f"the Hugging Face Hub is unreachable ({_network_down[0]}) and the model is not in the local cache"
        else:
            why = f"the Hugging Face Hub is unreachable and the model is not in the local cache ({type(e).__name__})"
            _network_down.append(type(e).__name__)
        raise _unavailable(ref, why) from None
    except hf_errors.GatedRepoError:
        raise _unavailable(
            ref,
            "the repository is gated on the Hugging Face Hub (401/403): accept its license on the model page and "
            "set HF_TOKEN",
        ) from None
    except hf_errors.RepositoryNotFoundError:
        raise _unavailable(
            ref,
            "the Hugging Face Hub has no such repository, or it is private (404; set HF_TOKEN if private)",
        ) from None
    except hf_errors.RevisionNotFoundError:
        raise _unavailable(ref, f"revision '{revision}' not found on the Hugging Face Hub (404)") from None
    except hf_errors.EntryNotFoundError:
        raise _unavailable(ref, "the Hugging Face Hub repository has no config.json (404)") from None
    except hf_errors.HfHubHTTPError as e:
        status = getattr(getattr(e, "response", None), "status_code", None)
        raise _unavailable(
            ref, f"Hugging Face Hub error {status or ''}: {str(e).splitlines()[0][:200]}"
        ) from None
    except hf_errors.HFValidationError as e:
        raise _unavailable(ref, f"not a valid hub id: {e}", hub_hint=False) from None
    except _HubDeadline as e:
        _network_down.append(f"timed out: {e}")
        raise _unavailable(
            ref,
            f"the Hugging Face Hub at {endpoint} did not answer ({e}; HF_HUB_ETAG_TIMEOUT="
            f"{kwargs['etag_timeout']:g}) and the model is not cached",
        ) from None
    except Exception as e:  # connection errors / timeouts (httpx, requests, socket): stop using the network
        name = type(e).__name__
        _network_down.append(name)
        raise _unavailable(
            ref, f"the Hugging Face Hub is unreachable ({name}) and the model is not cached"
        ) from None

    d = Path(path).parent
    config = _read_json(Path(path), ref)
    quant = None
    wb: int | None = None
    wb_src: str | None = None
    for fname in ("hf_quant_config.json", "model.safetensors.index.json"):
        local = d / fname
        if not local.is_file() and not _network_down:
            try:
                local = Path(download(fname))
            except Exception:  # optional files: absence or failure is not an error
                continue
        if not local.is_file():
            continue
        try:
            data = json.loads(local.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if fname == "hf_quant_config.json" and isinstance(data, dict):
            quant = data
        elif isinstance(data, dict):
            meta = data.get("metadata")
            total = meta.get("total_size") if isinstance(meta, dict) else None
            if _checkpoint_total(total):
                wb, wb_src = (
                    total,
                    f"checkpoint size (hub {ref} model.safetensors.index.json metadata.total_size)",
                )
    param_total: int | None = None
    if wb is None and not kwargs["local_files_only"]:
        try:
            wb, wb_src, param_total = _bounded(
                lambda: _safetensors_header_bytes(ref, revision, endpoint, float(kwargs["etag_timeout"])),
                limit,
            )
        except _HubDeadline:
            wb, wb_src, param_total = None, None, None
    return _parse(
        config,
        ref,
        f"huggingface hub: {ref}" + (f"@{revision}" if revision else ""),
        quant,
        wb,
        wb_src,
        param_total,
    )


def _safetensors_header_bytes(
    ref: str, revision: str | None, endpoint: str, timeout: float
) -> tuple[int | None, str | None, int | None]:
    """Exact tensor bytes of a hub checkpoint from its safetensors headers only (HTTP range requests of
    the first ~100 kB per file through ``HfApi.get_safetensors_metadata``; the weights are never
    downloaded): sum of every tensor's ``data_offsets`` span, plus the parameter count summed over dtypes.

    Used when the repository has no ``model.safetensors.index.json`` (single-file checkpoints). Returns
    ``(None, None, None)`` on any failure (not a safetensors repo, gated, timeout): weight bytes are then
    estimated from the architecture, which the plan says.
    """
    try:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=endpoint if os.environ.get("HF_ENDPOINT") else None)
        meta = api.get_safetensors_metadata(ref, revision=revision, timeout=timeout)
    except Exception:  # optional: absence or failure only means "estimate instead"
        return None, None, None
    total = 0
    params = 0
    for fmeta in meta.files_metadata.values():
        for t in fmeta.tensors.values():
            begin, end = t.data_offsets
            total += int(end) - int(begin)
        params += sum(int(v) for v in fmeta.parameter_count.values())
    if total <= 0:
        return None, None, None
    files = ", ".join(sorted(meta.files_metadata))
    by_dtype: dict[str, int] = {}
    for fmeta in meta.files_metadata.values():
        for dt, n in fmeta.parameter_count.items():
            by_dtype[dt] = by_dtype.get(dt, 0) + int(n)
    dtypes = ", ".join(f"{dt} {n:,}" for dt, n in sorted(by_dtype.items()))
    return (
        total,
        f"checkpoint size (hub {ref} safetensors headers of {files}: parameters {dtypes})",
        params or None,
    )


#: Prefixes and suffixes model-image builders add to the model's name (Red Hat's ``modelcar-<name>`` images,
#: ``<name>-modelcar``).
_OCI_AFFIXES = re.compile(r"^(?:modelcar|model-car|model)[-_]|[-_](?:modelcar|model-car)$", re.I)


def oci_named_model(ref: str) -> tuple[str, str] | None:
    """``(catalogued id, why)`` for an ``oci://REGISTRY/REPO[:TAG]`` model image whose repository name or tag,
    without a ``modelcar`` affix, is the repository name of exactly one catalogued model (``.``, ``_`` and
    ``-`` alike: ``oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5`` names
    ``granite-3.1-8b-instruct``; ``oci://quay.io/redhat-ai-services/modelcar-catalog:granite-3.0-8b-instruct``
    names it by tag); None otherwise. Names without a digit (``catalog``, ``models``) never match. String rules
    only: the image is never pulled."""
    from kvlint.engines.images import split_image
    from kvlint.models import catalogue

    repository, tag, _ = split_image(ref[len("oci://") :])
    parts = repository.split("/")
    repo, namespace = parts[-1], (parts[-2] if len(parts) > 1 else "oci")
    for what, name in (("repository name", repo), ("tag", tag or "")):
        bare = _OCI_AFFIXES.sub("", name)
        if not bare or not re.search(r"\d", bare):
            continue
        if "--" in bare:
            # modelcar-maker's tag spelling of a hub id, ``org--name`` (:func:`kvlint.models.catalogue.modelcar_maker_tag`)
            named = catalogue.modelcar_maker_match(bare)
            if named is not None:
                return (
                    named,
                    f"its {what} '{name}' is modelcar-maker's spelling of {named} (org--name, '.' as '_', lower "
                    "case), so the image is taken to hold that model",
                )
            continue
        hit = catalogue.repository_name_match(bare, loose=True)
        if hit is not None:
            return (
                hit,
                f"its {what} '{name}' names the catalogued {hit} only, so the image is taken to hold that model",
            )
        # a quantized build of a catalogued model (``qwen2.5-0.5b-quantized.w8a8``): named under the image's
        # namespace, derived from its base as hub ids are (:func:`kvlint.models.catalogue.derive_quantized`)
        derived = f"{namespace}/{bare}"
        if catalogue.derive_quantized(derived) is not None:
            return (
                derived,
                f"its {what} '{name}' names a quantized build of a catalogued model, read as {derived}",
            )
    return None


def _oci_org_name_hint(ref: str) -> str:
    """For an unresolved ``oci://`` model image whose tag (or repository name) is spelled ``org--name`` as
    modelcar-maker spells hub ids (:func:`kvlint.models.catalogue.modelcar_maker_tag`), the clause saying so:
    that spelling drops case and dots, so kvlint does not turn it back into an id it has not catalogued."""
    from kvlint.engines.images import split_image

    repository, tag, _ = split_image(ref[len("oci://") :])
    for name in (tag or "", repository.rsplit("/", 1)[-1]):
        bare = _OCI_AFFIXES.sub("", name)
        org, sep, rest = bare.partition("--")
        if sep and org and rest:
            return (
                f" ('{name}' is spelled org--name as modelcar-maker tags hub ids, {org}/{rest} with case lost and "
                "'.' written '_', which is no catalogued model kvlint could read back)"
            )
    return ""


def dots_dropped_hint(location: str) -> tuple[str, str] | None:
    """``(catalogued id, clause)`` when the last component of a path or storage location is a catalogued
    model's name with its dots dropped (:func:`kvlint.models.catalogue.dots_dropped_match`:
    ``pvc://s3-data/llama-31-8b-instruct``): the "did you mean" KV502 adds; kvlint does not assume it."""
    from kvlint.models.catalogue import dots_dropped_match

    name = Path(location.strip().rstrip("/")).name
    hit = dots_dropped_match(name) if name and not name.startswith("$") else None
    if hit is None:
        return None
    return hit, (
        f"; did you mean {hit}? '{name}' is its name with the dots dropped, which kvlint does not assume (a "
        "dropped dot joins version and size digits)"
    )


def _looks_like_path(ref: str) -> bool:
    return (
        ref.startswith(("/", "./", "../", "~", "\\"))
        or bool(re.match(r"^[A-Za-z]:[\\/]", ref))
        or ref.count("/") > 1
    )


#: huggingface_hub's cache layout: ``models--<org>--<name>`` (``file_download.repo_folder_name``), then
#: ``snapshots/<commit>``.
# A Hugging Face cache folder ``models--<org>--<name>[/snapshots/<commit>]`` in a path: read by
# :func:`_hf_cache_folder` (the run of name characters after ``models--``, split at its first ``--``). The
# regex ``(?:^|/)models--([A-Za-z0-9][\w.-]*?)--([\w.-]+?)(?:/snapshots/...)?(?:/|$)`` tried the name at every
# ``--`` of the run, each time to the run's end (quadratic: a 12 KB argument took 2.6 s).
_HF_NAME_RUN = re.compile(r"[\w.-]*")
_HF_SNAPSHOT = re.compile(r"/snapshots/([0-9a-f]{40})(?:/|$)")
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _hf_cache_folder(ref: str) -> tuple[str, str, str | None] | None:
    r"""``(org, name, commit or None)`` of the first ``models--<org>--<name>[/snapshots/<commit>]`` folder of
    ``ref`` (at its start or after a ``/``; the folder ends at a ``/`` or the end), as the regex
    ``(?:^|/)models--([A-Za-z0-9][\w.-]*?)--([\w.-]+?)(?:/snapshots/([0-9a-f]{40}))?(?:/|$)`` finds it: the
    org is the shortest, so the run is split at its first ``--``. Linear in ``len(ref)``."""
    n = len(ref)
    body = 0 if ref.startswith("models--") else -1
    pos = 0
    while True:
        if body < 0:
            slash = ref.find("/models--", pos)
            if slash < 0:
                return None
            body = slash + 1
        start = body + len("models--")
        end = _HF_NAME_RUN.match(ref, start).end()  # type: ignore[union-attr]
        run = ref[start:end]
        cut = run.find("--", 1)
        closed = end == n or (end == n - 1 and ref[end] == "\n") or ref[end] == "/"
        if run[:1] in _ASCII_ALNUM and 0 < cut < len(run) - 2 and closed:
            snapshot = _HF_SNAPSHOT.match(ref, end)
            return run[:cut], run[cut + 2 :], snapshot.group(1) if snapshot else None
        pos, body = end, -1


#: ``<org>--<name>``: a folder named after a hub id with its ``/`` written ``--`` (the org as the Hub allows it,
#: split at its first ``--``).
_ORG_NAME_FOLDER = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*?)--([A-Za-z0-9][\w.-]*)")
#: Longest ``<org>--<name>`` folder read as a hub id: a Hub namespace and a repository name are at most 96
#: characters each (huggingface_hub ``utils/_validators.py``: ``REPO_ID_REGEX``, read in 2.4.0), plus the ``--``.
#: The pattern's lazy org tries every ``--`` of the name, each followed by a scan to its end: a 60,000-character
#: storageUri component cost seconds per workload.
_MAX_ORG_NAME_FOLDER = 96 + 2 + 96


def _org_name_folder(name: str) -> str | None:
    """The catalogued hub id ``<org>/<name>`` a folder ``name`` spells ``<org>--<name>`` (not a Hugging Face cache
    folder, ``models--...``, which :func:`_hf_cache_folder` reads), as the catalogue spells it; None otherwise."""
    from kvlint.models import catalogue

    if len(name) > _MAX_ORG_NAME_FOLDER:
        return None
    m = _ORG_NAME_FOLDER.fullmatch(name)
    if m is None or m.group(1).lower() == "models":
        return None
    entry = catalogue.lookup(f"{m.group(1)}/{m.group(2)}")
    return entry.id if entry is not None else None


#: A hub revision as the last folder of ``<root>/<org>/<name>/<revision>``: the branch ``main`` (huggingface_hub's
#: ``constants.DEFAULT_REVISION``) or a 40-hex commit (the folder of ``snapshots/<commit>``).
_REVISION_FOLDER = re.compile(r"main|[0-9a-f]{40}")


def _revision_folder(ref: str) -> tuple[str, str | None] | None:
    """``(catalogued hub id, commit or None)`` when ``ref`` ends ``<org>/<name>/<revision>`` and ``<org>/<name>`` is a
    catalogued hub id: the layout of a download to ``<cache root>/<model id>/<revision>``
    (``snapshot_download(repo_id, revision=..., local_dir=root / repo_id / revision)``, as a model cache warmer
    writes it), whose last component, a revision, names no model. ``main`` is the default revision (None)."""
    from kvlint.models import catalogue

    parts = [part for part in ref.rstrip("/").split("/") if part]
    if len(parts) < 3 or _REVISION_FOLDER.fullmatch(parts[-1]) is None:
        return None
    if len(parts[-3]) + len(parts[-2]) > _MAX_ORG_NAME_FOLDER:
        return None
    entry = catalogue.lookup(f"{parts[-3]}/{parts[-2]}")
    if entry is None:
        return None
    return entry.id, None if parts[-1] == "main" else parts[-1]


#: How a note says a folder name matched only with ``.``, ``_`` and ``-`` read alike
#: (:func:`kvlint.models.catalogue.repository_name_match` with ``loose``).
_LOOSE_CLAUSE = ", with '.', '_' and '-' read alike,"


def _path_named_model(ref: str) -> tuple[str, str | None, str, bool] | None:
    """``(hub id, revision or None, note, assumed)`` for a container path that names its model (string rules only;
    nothing is looked up on disk; ``assumed``: the note states an assumption, :attr:`ModelSpec.assumption`):

    * a Hugging Face cache folder, ``.../models--<org>--<name>[/snapshots/<commit>]``: the layout of
      ``huggingface_hub`` (``file_download.repo_folder_name``), so the id is exact;
    * a directory named after a catalogued model (``/models/Qwen3-8B``): the only catalogued configuration
      with that repository name, stated as an ASSUMPTION; failing that, the only one whose name it spells with
      ``.``, ``_`` and ``-`` alike (``deepseek_r1_0528``, ``llama-3-1-8b-instruct``: the rule of OCI model
      images, :func:`oci_named_model`), the note saying so. A dropped dot (``llama-31-8b``) is never read
      so (it joins digits: :func:`dots_dropped_hint`);
    * a directory named ``<org>--<name>`` after a catalogued ``<org>/<name>`` (the spelling of ``--model-dir``'s
      folders, and of model stores such as KServe's fluid sample's ``s3://.../meta-llama--Meta-Llama-3.1-8B-Instruct``),
      also an ASSUMPTION.
    """
    from kvlint.models import catalogue

    folder = _hf_cache_folder(ref)
    if folder is not None:
        hub_id = f"{folder[0]}/{folder[1]}"
        return (
            hub_id,
            folder[2],
            (
                f"path {ref} is the Hugging Face cache folder of {hub_id} (huggingface_hub's models--<org>--<name> "
                "layout)"
            ),
            False,
        )
    revision_folder = _revision_folder(ref)
    if revision_folder is not None:
        hub_id, commit = revision_folder
        return (
            hub_id,
            commit,
            (
                f"ASSUMPTION (path named after the model): {ref} was not read; it ends <org>/<name>/<revision>, "
                f"the catalogued {hub_id} at revision '{Path(ref.rstrip('/')).name}' (a download to "
                "<root>/<model id>/<revision>), so the path is taken to hold that model"
            ),
            True,
        )
    name = Path(ref.rstrip("/")).name
    if not name or name.startswith("$") or not re.search(r"\d", name):
        return None  # generic folder names (/mnt/models, /data/model) say nothing about the model
    org_name = _org_name_folder(name)
    if org_name is not None:
        return (
            org_name,
            None,
            (
                f"ASSUMPTION (path named after the model): {ref} was not read; its last component '{name}' is the "
                f"<org>--<name> spelling of the catalogued {org_name}, so the path is taken to hold that model"
            ),
            True,
        )
    named = catalogue.repository_name_match(name)
    alike = ""
    if named is None:
        named = catalogue.repository_name_match(name, loose=True)
        alike = _LOOSE_CLAUSE
    if named is None:
        return None
    return (
        named,
        None,
        (
            f"ASSUMPTION (path named after the model): {ref} was not read; its last component '{name}' is{alike} the "
            f"repository name of the catalogued {named} only, so the path is taken to hold that model"
        ),
        True,
    )


@functools.lru_cache(maxsize=1)
def _kaito_presets() -> tuple[str, dict[str, tuple[str, str]]]:
    """``(KAITO commit read, preset name -> (hub id, revision))`` from ``kvlint/data/kaito_presets.yaml``
    (facts from kaito-project/kaito ``presets/workspace/models/supported_models.yaml``)."""
    import yaml

    text = resources.files("kvlint.data").joinpath("kaito_presets.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    table = {str(k): (str(v["model"]), str(v["revision"])) for k, v in (data.get("presets") or {}).items()}
    return str(data.get("source_commit", "")), table


#: The model reference of a KAITO preset image whose wrapper serves its baked-in weights (see
#: :func:`kvlint.engines.command` ``_kaito_vllm``): resolved as that preset, with an ASSUMPTION note (KV505).
KAITO_IMAGE_PREFIX = "kaito-image:"


def kaito_preset(name: str) -> tuple[str, str] | None:
    """``(hub model id, revision)`` a KAITO preset runs, or None when KAITO's registry (as read) has no such
    preset."""
    return _kaito_presets()[1].get(name.strip().lower())


def kaito_hub_id(ref: str) -> str | None:
    """The hub model id a KAITO model reference stands for: ``kaito-preset:NAME`` (a Workspace's or InferenceSet's
    preset) and ``kaito-image:NAME`` (a preset image serving its baked-in weights) -> the model KAITO's registry
    names for preset NAME (:func:`kaito_preset`, as :func:`resolve_model` resolves them); None for any other
    reference and for a preset the registry (as read) does not list."""
    for prefix in ("kaito-preset:", KAITO_IMAGE_PREFIX):
        if ref.startswith(prefix):
            known = kaito_preset(ref[len(prefix) :])
            return known[0] if known is not None else None
    return None


def map_model_path(ref: str, model_paths: Mapping[str, str]) -> str | None:
    """What ``.kvlint.yaml`` ``model_paths`` maps ``ref`` to: the exact key (with or without a trailing
    ``/``), else the longest directory prefix with the rest of the path appended; None when unmapped, and when
    the rest has a ``..`` component: ``/models/../../etc`` under ``/models: /srv/models`` named
    ``/srv/models/../../etc``, any directory of the machine (the admission webhook's server, whose
    ``model_paths`` an admin sets, read and quoted a manifest's choice of its files)."""
    target: str | None = model_paths.get(ref) or model_paths.get(ref.rstrip("/"))
    if target is None:
        for src in sorted(model_paths, key=len, reverse=True):
            s = src.rstrip("/")
            if s and ref.startswith(s + "/"):
                rest = ref[len(s) :]
                if ".." in rest.replace("\\", "/").split("/"):
                    return None
                target = model_paths[src].rstrip("/") + rest
                break
    return target


#: The longest model path, and the most ``model_paths`` keys, :func:`near_model_path` compares (difflib's cost grows
#: with both; a manifest's path may be any text, a configuration's keys are a few).
MAX_NEAR_PATH = 256
MAX_NEAR_KEYS = 1000


def near_model_path(ref: str, model_paths: Mapping[str, str]) -> str | None:
    """The ``.kvlint.yaml`` ``model_paths`` key spelled like the model path ``ref`` that :func:`map_model_path` did
    not map (``/models/lama`` for ``/models/llama``: a typo, or the path of another mount), for KV502 to name; None
    when none is that close (difflib ratio 0.85 or more, trailing ``/`` ignored), or ``ref`` is longer than
    :data:`MAX_NEAR_PATH` characters (only the first :data:`MAX_NEAR_KEYS` keys are compared). Never raises."""
    import difflib

    want = ref.rstrip("/")
    if not want or len(want) > MAX_NEAR_PATH or not model_paths:
        return None
    keys = {
        str(k).rstrip("/"): str(k) for k in list(model_paths)[:MAX_NEAR_KEYS] if len(str(k)) <= MAX_NEAR_PATH
    }
    close = difflib.get_close_matches(want, list(keys), n=1, cutoff=0.85)
    return keys[close[0]] if close else None


def _from_pulled(catalogue: str, ref: str, revision: str | None) -> ModelSpec | None:
    """The spec of the entry of a pulled catalogue (:mod:`kvlint.models.pulled`) for ``ref`` at ``revision``,
    built as the Hub path builds it: ``config.json``, ``hf_quant_config.json`` when stored, and the exact
    tensor bytes and parameter count recorded from the safetensors headers. A stored file that no longer
    matches its recorded sha256 adds a note. None when the catalogue has no such entry."""
    from kvlint.models import pulled

    entry = pulled.lookup(catalogue, ref, revision)
    # (a file of the entry is read only inside the catalogue, as a model directory's: _from_dir)
    root = Path(os.path.expanduser(str(catalogue)))
    if entry is None or not _has_config(entry.path, root):
        return None
    cfg_path = entry.path / "config.json"
    config = _read_json(cfg_path, ref)
    qpath = entry.path / "hf_quant_config.json"
    quant = _read_json(qpath, ref) if qpath.is_file() and _inside(qpath, root) else None
    wb, wb_src, params = pulled.checkpoint_source(entry)
    notes = tuple(f"pulled catalogue: {p}; re-run `kvlint models pull`" for p in pulled.verify(entry))
    return _parse(
        config,
        ref,
        f"pulled catalogue {cfg_path} ({entry.label}, pulled {entry.pulled_at})",
        quant,
        wb,
        wb_src,
        params,
        notes,
    )


def _resolve(
    ref: str,
    model_dirs: Sequence[str],
    model_paths: Mapping[str, str],
    revision: str | None,
    allow_hub: bool,
    depth: int = 0,
    allow_local_paths: bool = True,
    catalogues: Sequence[str] = (),
    local_root: str | None = None,
) -> ModelSpec:
    ref = ref.strip()
    if "\x00" in ref or len(ref) > 4096:
        raise ModelUnavailable(f"model reference of {len(ref)} characters is not a model id or path")
    if not ref:
        raise ModelUnavailable("empty model reference; " + _how_to(""))

    def stands_for(
        other: str, note: str, other_revision: str | None = revision, *, assumed: bool = False
    ) -> ModelSpec:
        """The model of ``other``, a reference ``ref`` stands for (resolved one level deeper with this call's
        settings, at ``other_revision``), with ``note`` saying why first among its notes; ``assumed``: the note
        states an assumption kvlint made from the reference's name (:attr:`ModelSpec.assumption`)."""
        spec = _resolve(
            other,
            model_dirs,
            model_paths,
            other_revision,
            allow_hub,
            depth + 1,
            allow_local_paths,
            catalogues,
            local_root,
        )
        return dataclasses.replace(spec, notes=(note, *spec.notes), assumption=note if assumed else "")

    # 0. an OCI model image (KServe modelcar storageUri) named after its model
    if ref.startswith("oci://") and depth == 0:
        oci_named = oci_named_model(ref)
        if oci_named is None:
            raise ModelUnavailable(
                f"model image {ref}: kvlint cannot open OCI images, and neither its repository name nor its tag is "
                f"the name of a catalogued model{_oci_org_name_hint(ref)}; annotate the InferenceService with "
                "kvlint.io/model: <hub id>"
            )
        hub_id, why = oci_named
        return stands_for(
            hub_id, f"ASSUMPTION (OCI image named after the model): {ref} was not opened; {why}", assumed=True
        )
    # 0. a KAITO preset image running KAITO's vLLM wrapper with its default weights (kvlint.engines.command)
    if ref.startswith(KAITO_IMAGE_PREFIX) and depth == 0:
        preset = ref[len(KAITO_IMAGE_PREFIX) :]
        return stands_for(
            "kaito-preset:" + preset,
            f"ASSUMPTION (image named after a KAITO preset): the command runs KAITO's vLLM wrapper with no --model, "
            f"so it serves the weights baked into the image (/workspace/vllm/weights); the image is named after "
            f"KAITO's preset {preset}, so kvlint takes it to hold that preset's model",
            assumed=True,
        )
    # 0. a KAITO preset name (kvlint.workloads gives KAITO Workspaces this reference)
    if ref.startswith("kaito-preset:"):
        preset = ref[len("kaito-preset:") :]
        known = kaito_preset(preset)
        if known is None:
            raise ModelUnavailable(
                f"KAITO preset '{preset}': not among the presets of KAITO's model registry kvlint read "
                f"(kaito-project/kaito supported_models.yaml @{_kaito_presets()[0][:12]}); provide the model with "
                "the kvlint.io/model annotation on the Workspace/InferenceSet (e.g. kvlint.io/model: <org>/<name>)"
            )
        hub_id, commit = known
        note = (
            f"KAITO preset {preset} runs {hub_id} at revision {commit[:12]} (KAITO's supported_models.yaml "
            f"@{_kaito_presets()[0][:12]}; a KAITO release may pin another revision)"
        )
        try:
            return stands_for(hub_id, note, revision or commit)
        except ModelUnavailable as e:
            raise ModelUnavailable(f"KAITO preset '{preset}' runs {hub_id}, but: {e}", e.refusal) from None
    # 1. model_paths mapping (exact, then longest directory prefix)
    if depth == 0 and model_paths:
        target = map_model_path(ref, model_paths)
        if target:
            # a model_paths target is configuration, not manifest input: local paths are allowed there
            # (and `~` in it is the user's home, as in the user's own shell). One inside the manifest's repository
            # (a discovered .kvlint.yaml's are) stays in it, files below included: the pull request wrote both
            # the mapped directory and what it holds (models/x/config.json -> ~/.docker/config.json)
            expanded = os.path.expanduser(target)
            within = local_root if local_root is not None and _spelled_inside(expanded, local_root) else None
            try:
                return _resolve(
                    expanded,
                    model_dirs,
                    model_paths,
                    revision,
                    allow_hub,
                    depth + 1,
                    True,
                    catalogues,
                    within,
                )
            except ModelUnavailable as e:
                raise ModelUnavailable(
                    f"model '{ref}' is mapped to '{target}' by model_paths, but: {e}", e.refusal
                ) from None
    # 2. an existing local path (not when the reference comes from a manifest the caller does not trust, such
    # as an admission review: whether a path exists, and what a file there holds, must not leak)
    # `~` is not expanded: a manifest's `--model ~root` must not make kvlint probe the runner's home
    # directories (a model_paths target and --model-dir are the user's own and are expanded above/below).
    # With local_root (the repository holding the manifest), a path whose real path is outside it is taken
    # as not on this machine, whether it exists or not: a pull request's `--model /home/runner/.docker` must
    # not make CI read (and quote) the runner's files, nor tell which exist
    p = (
        Path(ref)
        if allow_local_paths and (local_root is None or _inside(Path(ref), Path(local_root)))
        else None
    )
    if p is not None and p.exists():
        if p.is_file() and p.name.endswith(".json"):
            return _parse(_read_json(p, ref), ref, str(p), None)
        if p.is_dir():
            held = Path(local_root) if local_root is not None else None
            if _has_config(p, held):
                return _from_dir(p, ref, root=held)
            if p.suffix == ".gguf" or any(p.glob("*.gguf")):
                raise _unavailable(
                    ref, f"{p} holds a GGUF file, kvlint reads config.json only", hub_hint=False
                )
            raise _unavailable(ref, f"directory {p} has no config.json", hub_hint=False)
        raise _unavailable(ref, f"{p} is a file, not a model directory holding config.json", hub_hint=False)
    # 3. --model-dir directories
    for md in model_dirs:
        spec = _from_pulled(md, ref, revision) if _HUB_ID.match(ref.strip("/")) else None
        if spec is not None:
            return spec
        model_dir = Path(os.path.expanduser(md))
        for cand in _candidates_in(model_dir, ref):
            if _has_config(cand, model_dir):
                return _from_dir(cand, ref, root=model_dir)
    if _looks_like_path(ref):
        named = _path_named_model(ref)
        if named is not None:
            hub_id, rev, why, assumed = named
            try:
                spec = _resolve(
                    hub_id, model_dirs, model_paths, revision or rev, allow_hub, depth + 1, False, catalogues
                )
            except ModelUnavailable:
                spec = None
            if spec is not None:
                return dataclasses.replace(spec, notes=(why, *spec.notes), assumption=why if assumed else "")
    if _looks_like_path(ref) and not allow_local_paths:
        raise ModelUnavailable(
            f"model '{ref}': a path is not looked up on this server's filesystem, only in the configured "
            "model directories (--model-dir) and model_paths; map it to a hub id in model_paths, annotate "
            "the workload with kvlint.io/model: <hub id>, or ask the admin to mount its config.json in a "
            "model directory"
        )
    if _looks_like_path(ref):
        from kvlint.models.catalogue import same_family_suggestion

        tried = f" (also looked in --model-dir {', '.join(model_dirs)})" if model_dirs else ""
        # an example target only of the name's own family and architecture, never an unrelated model
        example = same_family_suggestion(Path(ref.rstrip("/")).name) or "<org>/<name>"
        guess = dots_dropped_hint(ref)
        if guess is not None:
            example = guess[0]
        near = near_model_path(ref, model_paths)
        if near is not None:
            example = model_paths[near]
        missed = (
            f" (.kvlint.yaml's model_paths maps {near!r}, not this path: a key is the path exactly or a directory "
            "above it)"
            if near is not None
            else ""
        )
        # the remedy after "; provide it with ", as _how_to's: KV502 shows it as its fix, each way with its syntax
        raise ModelUnavailable(
            f"model '{ref}': config.json not found (the path does not exist on this machine: it is probably a "
            f"path inside the container or on a volume{tried}){missed}{guess[1] if guess else ''}; provide it with a "
            f"`.kvlint.yaml` entry mapping the path to a hub id or local directory (model_paths: {{{yaml_key(ref)}: {example}}}), "
            f"--model-dir DIR holding {Path(ref).name or '<name>'}/config.json, or {ANNOTATE_HINT}"
        )
    # 4. pulled catalogues (`kvlint models pull`), then the bundled catalogue
    if _HUB_ID.match(ref.strip("/")):
        for cat in catalogues:
            spec = _from_pulled(cat, ref, revision)
            if spec is not None:
                return spec
    spec = _from_catalogue(ref, revision)
    if spec is not None:
        return spec
    # 5. the hub, then 6. a quantized build derived from its name (stated as an assumption)
    if not _HUB_ID.match(ref):
        raise _unavailable(ref, "not a hub id (org/name) nor an existing path", hub_hint=False)
    if not allow_hub:
        spec = _from_catalogue(ref, revision, derive_because="hub access is disabled")
        if spec is not None:
            return spec
        unmodelled = UNMODELLED_HUB_IDS.get(ref.strip("/").lower())
        if unmodelled:
            # no "provide it with" remedy: a config.json would be refused too (parse_config)
            raise ModelUnavailable(
                f"model '{ref}': config.json not found (not in the bundled catalogue and hub access is disabled; "
                f"no public copy of it was found, and with it kvlint would still not size the model: {unmodelled})"
            )
        said, meant = _without_org(ref)
        if meant:
            hint = _how_to(ref).removeprefix("provide it with ")
            raise ModelUnavailable(
                f"model '{ref}': config.json not found (not in the bundled catalogue and hub access is disabled; "
                f"{said}); provide it with its hub id {meant} in the command (the id the Hub knows), {hint}"
            )
        raise _unavailable(ref, "not in the bundled catalogue and hub access is disabled")
    try:
        return _from_hub(ref, revision)
    except ModelUnavailable as e:
        m = re.search(r"config\.json not found \((.*)\); provide it", str(e))
        why = m.group(1) if m else str(e)
        spec = _from_catalogue(ref, revision, derive_because=f"hub: {why}")
        if spec is not None:
            return spec
        said, meant = _without_org(ref)
        if meant:
            # as offline above: the Hub, reached or not, knows no repository by the bare name
            hint = _how_to(ref).removeprefix("provide it with ")
            raise ModelUnavailable(
                f"model '{ref}': config.json not found (hub: {why}; {said}); provide it with its hub id {meant} "
                f"in the command (the id the Hub knows), {hint}"
            ) from None
        raise


def manifest_root(path: str) -> str | None:
    """The git repository (its real path) holding the manifest file ``path`` (``-`` or ``""``, standard input:
    the current directory's), the directory a model path the manifest names is looked up in on this machine
    (:func:`resolve_model`'s ``local_root``); None outside any git repository. In CI the repository is the
    checked-out pull request, as for a discovered ``.kvlint.yaml`` (:func:`kvlint.load.repository_root`)."""
    directory = os.path.dirname(os.path.abspath(path)) if path not in ("", "-") else os.getcwd()
    return _root_of(directory)


@functools.lru_cache(maxsize=256)
def _root_of(directory: str) -> str | None:
    from kvlint.load import repository_root

    return repository_root(directory, resolve=True)


def resolve_model(
    ref: str,
    *,
    model_dirs: Sequence[str] = (),
    model_paths: Mapping[str, str] | None = None,
    revision: str | None = None,
    allow_hub: bool = True,
    allow_local_paths: bool = True,
    catalogues: Sequence[str] = (),
    local_root: str | None = None,
) -> ModelSpec:
    """The :class:`ModelSpec` for a model reference as written in a manifest or command line.

    Args:
        ref: hub id (``meta-llama/Llama-3.1-8B-Instruct``), local directory or ``config.json`` path, or a
            container path (``/models/llama``).
        model_dirs: ``--model-dir`` directories holding ``<org>--<name>/config.json``,
            ``<org>/<name>/config.json``, ``<name>/config.json`` or an HF cache layout.
        model_paths: ``.kvlint.yaml`` ``model_paths`` (container path or prefix -> hub id or local dir).
        revision: hub revision (branch, tag or commit) for ``hf_hub_download``.
        allow_hub: False forbids network/cache access through ``huggingface_hub``.
        allow_local_paths: False never looks ``ref`` up as a path on this machine (only inside
            ``model_dirs``, confined to them, and through ``model_paths``); the admission webhook sets it so
            a manifest cannot probe or read the server's filesystem.
        catalogues: pulled catalogue directories (``kvlint models pull``; :mod:`kvlint.models.pulled`), read
            offline before the bundled catalogue; only an entry pulled at ``revision`` answers.
        local_root: with ``allow_local_paths``, the directory ``ref`` is looked up in as a path on this machine
            (the git repository holding the manifest that names it, :func:`manifest_root`): a path whose real
            path (links resolved) lies outside it is taken as a path not on this machine, as a container path
            usually is, whether it exists or not. None: anywhere (a manifest outside any git repository, the
            command line's own ``kvlint plan --model``). A ``model_paths`` target is configuration and is not
            held to it.

    Returns:
        The parsed spec; ``weight_bytes`` set when the checkpoint size is known (catalogue citation,
        local ``model.safetensors.index.json``/``*.safetensors``, or the hub index file).

    Raises:
        ModelUnavailable: nothing provides a readable decoder ``config.json``; the message names the model,
            the specific reason (missing path, gated 401/403, 404, offline cache miss, malformed JSON at
            file:line:col, not a decoder LLM) and how to provide it. Memoised per process.
    """
    key = (
        ref,
        tuple(model_dirs),
        tuple(sorted((model_paths or {}).items())),
        revision,
        allow_hub,
        allow_local_paths,
        tuple(catalogues),
        local_root,
    )
    hit = _memo.get(key)
    if isinstance(hit, ModelSpec):
        return hit
    if isinstance(hit, tuple):
        raise ModelUnavailable(*hit)
    try:
        spec = _resolve(
            ref,
            model_dirs,
            model_paths or {},
            revision,
            allow_hub,
            0,
            allow_local_paths,
            catalogues,
            local_root,
        )
    except ModelUnavailable as e:
        _remember(key, (str(e), e.refusal))
        raise
    _remember(key, spec)
    return spec


def resolve_stored_model(
    location: str,
    ref: str,
    *,
    model_dirs: Sequence[str] = (),
    model_paths: Mapping[str, str] | None = None,
    revision: str | None = None,
    allow_hub: bool = True,
    allow_local_paths: bool = True,
    catalogues: Sequence[str] = (),
    downloader: str = "KServe's storage initializer",
    local_root: str | None = None,
    how: str | None = None,
) -> ModelSpec | None:
    """The model a serving container reads from ``ref`` (KServe's ``/mnt/models``) when KServe's storage
    initializer (or another ``downloader``, named in the note: Kthena's model downloader) downloads it there
    from ``location``, a place kvlint cannot read (an ``s3://``, ``gs://``,
    ``pvc://``, ``https://`` storage URI, or a ``storage.path`` inside the bucket its key names): the only
    catalogued model whose repository name is the location's last component, or that component spelled with
    ``.``, ``_`` and ``-`` alike (the rule of a container path named after its model, :func:`_path_named_model`),
    with an ASSUMPTION note (KV505); None when the location's name
    names no catalogued model, or that model cannot be resolved either. ``how``, when the model is not downloaded
    but on a volume mounted at ``ref`` (:func:`kvlint.pipeline.volume_location`): how ``ref`` reaches
    ``location``, in words, said in the note instead of the downloader. Other arguments as :func:`resolve_model`."""
    named = _path_named_model(location.strip())
    if named is None:
        return None
    hub_id, rev, _, _ = named
    try:
        spec = resolve_model(
            hub_id,
            model_dirs=model_dirs,
            model_paths=model_paths,
            revision=revision or rev,
            allow_hub=allow_hub,
            allow_local_paths=allow_local_paths,
            catalogues=catalogues,
            local_root=local_root,
        )
    except ModelUnavailable:
        return None
    where = location if "://" in location else f"the storage path {location}"
    name = Path(location.strip().rstrip("/")).name
    from kvlint.models import catalogue

    if _revision_folder(location.strip()) is not None:
        what = f" a revision of the catalogued {hub_id}, the folder above it named <org>/<name>"
    elif _org_name_folder(name) is not None:
        what = f" the <org>--<name> spelling of the catalogued {hub_id}"
    else:
        alike = "" if catalogue.repository_name_match(name) is not None else _LOOSE_CLAUSE
        what = f"{alike} the repository name of the catalogued {hub_id} only"
    source = f"{downloader} downloads the model to {ref} from {where}" if how is None else f"{how}"
    note = (
        f"ASSUMPTION (path named after the model): {source}, which kvlint cannot read; its last component "
        f"'{name}' is{what}, so the location is taken to hold that model"
    )
    return dataclasses.replace(spec, notes=(note, *spec.notes), assumption=note)


def _remember(key: tuple[Any, ...], value: ModelSpec | tuple[str, ConfigRefusal | None]) -> None:
    """Memoise ``value`` under ``key``, dropping the oldest entries beyond :data:`MEMO_MAX`."""
    while len(_memo) >= MEMO_MAX:
        del _memo[next(iter(_memo))]
    _memo[key] = value
