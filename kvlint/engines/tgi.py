"""TGI ``text-generation-launcher`` command lines -> :class:`~kvlint.types.ServingConfig`.

The launcher is a Rust ``clap`` parser (TGI ``launcher/src/main.rs::Args``): every option also reads an
environment variable named after it (``--max-total-tokens`` <- ``MAX_TOTAL_TOKENS``), and a command-line
value wins over the env var (docs/engine-memory-model.md §2.1). The image entrypoint ``/tgi-entrypoint.sh``
execs ``text-generation-launcher "$@"``, so ``args`` alone are launcher arguments.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from kvlint.engines.options import LAYOUT_DESTS, Collector
from kvlint.engines.shell import UNRESOLVED_RE
from kvlint.source import LDict, Loc
from kvlint.types import Finding, ServingConfig, Value

__all__ = ["parse_tgi_argv", "tgi_option", "TGI_OPTIONS"]

# dest -> kind (int | float | str | bool-switch | bool-value). SOURCE: TGI launcher/src/main.rs::Args
# (HEAD db931fcf and v2.x/v3.x tags, as summarised in docs/engine-memory-model.md §2.1).
TGI_OPTIONS: dict[str, str] = {
    "model_id": "str",
    "revision": "str",
    "validation_workers": "int",
    "sharded": "boolvalue",
    "num_shard": "int",
    "quantize": "str",
    "speculate": "int",
    "dtype": "str",
    "kv_cache_dtype": "str",
    "trust_remote_code": "switch",
    "max_concurrent_requests": "int",
    "max_best_of": "int",
    "max_stop_sequences": "int",
    "max_top_n_tokens": "int",
    "max_input_tokens": "int",
    "max_input_length": "int",
    "max_total_tokens": "int",
    "waiting_served_ratio": "float",
    "max_batch_prefill_tokens": "int",
    "max_batch_total_tokens": "int",
    "max_waiting_tokens": "int",
    "max_batch_size": "int",
    "cuda_graphs": "str",
    "hostname": "str",
    "port": "int",
    "prometheus_port": "int",
    "shard_uds_path": "str",
    "master_addr": "str",
    "master_port": "int",
    "huggingface_hub_cache": "str",
    "weights_cache_override": "str",
    "disable_custom_kernels": "switch",
    "cuda_memory_fraction": "float",
    "rope_scaling": "str",
    "rope_factor": "float",
    "json_output": "switch",
    "otlp_endpoint": "str",
    "otlp_service_name": "str",
    "cors_allow_origin": "str",
    "api_key": "str",
    "watermark_gamma": "float",
    "watermark_delta": "float",
    "ngrok": "switch",
    "ngrok_authtoken": "str",
    "ngrok_edge": "str",
    "tokenizer_config_path": "str",
    "disable_grammar_support": "switch",
    "env": "switch",
    "max_client_batch_size": "int",
    "lora_adapters": "str",
    "usage_stats": "str",
    "payload_limit": "int",
    "enable_prefill_logprobs": "switch",
    "graceful_termination_timeout": "int",
    "max_input_tokens_per_request": "int",
    "router_log_level": "str",
    "log_level": "str",
}
_TGI_CHOICES = {
    "dtype": {"float16", "bfloat16"},
    "kv_cache_dtype": {"fp8_e4m3fn", "fp8_e5m2"},
    "quantize": {
        "awq",
        "compressed-tensors",
        "eetq",
        "exl2",
        "gptq",
        "marlin",
        "bitsandbytes",
        "bitsandbytes-nf4",
        "bitsandbytes-fp4",
        "fp8",
    },
}


#: First TGI release whose launcher has ``--kv-cache-dtype`` (``KV_CACHE_DTYPE``): ``Args::kv_cache_dtype`` is in
#: tgi@v2.4.0:launcher/src/main.rs, not in v2.3.1's (nor any earlier tag read: v2.0.4, v2.1.1, v2.2.0, v2.3.0), so
#: clap refuses the option before 2.4.0 and the env var is not read.
KV_CACHE_DTYPE_FROM = (2, 4, 0)


def has_kv_cache_dtype(version: str | None) -> bool:
    """Whether TGI ``version`` (an image tag or release) has ``--kv-cache-dtype`` (:data:`KV_CACHE_DTYPE_FROM`);
    True when the release is not known (the newest modelled is assumed)."""
    from kvlint.memory.tgi import tgi_version

    v, assumed = tgi_version(version)
    return assumed or v >= KV_CACHE_DTYPE_FROM


#: The launcher ``Args`` integers narrower than ``usize`` (TGI launcher/src/main.rs at HEAD db931fcf and v2.0.0:
#: ``max_top_n_tokens``, ``max_batch_prefill_tokens`` and ``max_batch_total_tokens`` are ``u32``, ``port`` and
#: ``prometheus_port`` ``u16``); every other "int" of :data:`TGI_OPTIONS` is a ``usize`` (or the ``u64``
#: ``graceful_termination_timeout``), 64 bits on the x86-64 and arm64 images
_TGI_INT_MAX = {
    "max_top_n_tokens": 2**32 - 1,
    "max_batch_prefill_tokens": 2**32 - 1,
    "max_batch_total_tokens": 2**32 - 1,
    "port": 2**16 - 1,
    "prometheus_port": 2**16 - 1,
}
_USIZE_MAX = 2**64 - 1
#: An integer as Rust's ``FromStr`` reads one (what clap's value parsers for these fields call): ASCII digits after
#: at most one sign; no blank, no ``_`` separator, no other script's digits (all of which Python's int() takes)
_RUST_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _launcher_int(col: Collector, opt: str, dest: str, raw: str, loc: Loc | None) -> tuple[bool, object]:
    """An integer setting as TGI's launcher (clap 4 over the ``Args`` field's unsigned type) reads it: KV206 for a
    value it refuses at start-up (not a plain integer, negative, or past the field's width: clap's "invalid digit
    found in string" / "number too large to fit in target type" / "not in 0..=N"). Python's int() took " 4",
    "1_000" and "-5" (a negative prefill budget was planned) and 10^20 shards."""
    if not _RUST_INT.fullmatch(raw):
        col.invalid(opt, raw, loc, "an integer is required")
        return False, None
    top = _TGI_INT_MAX.get(dest, _USIZE_MAX)
    digits = raw.lstrip("+-").lstrip("0")
    value = int(raw) if len(digits) <= 20 else None  # past 20 digits every field's width is exceeded
    if value is not None and value < 0:
        col.invalid(opt, raw, loc, "TGI's launcher reads an unsigned integer; a negative value stops it")
        return False, None
    if value is None or value > top:
        col.invalid(
            opt, raw, loc, f"TGI's launcher reads at most {top:,} here ({top.bit_length()}-bit unsigned)"
        )
        return False, None
    return True, value


def _convert(col: Collector, opt: str, dest: str, raw: str, loc: Loc | None) -> tuple[bool, object]:
    kind = TGI_OPTIONS[dest]
    if kind == "int":
        return _launcher_int(col, opt, dest, raw, loc)
    try:
        if kind == "float":
            fval = float(raw)
            if fval != fval or fval in (float("inf"), float("-inf")):
                # Rust's f32 parser reads nan/inf; the memory arithmetic (TGI's and kvlint's) cannot use them
                col.invalid(opt, raw, loc, "a finite number is required")
                return False, None
            return True, fval
    except ValueError:
        col.invalid(opt, raw, loc, "an integer is required" if kind == "int" else "a number is required")
        return False, None
    if kind in ("boolvalue", "switch"):
        return True, raw.strip().lower() in ("true", "1", "yes")
    choices = _TGI_CHOICES.get(dest)
    if choices and raw not in choices:
        col.invalid(opt, raw, loc, f"TGI accepts {', '.join(sorted(choices))}")
        return False, None
    return True, raw


#: Launcher settings kvlint's TGI memory model reads (kvlint/memory/tgi.py ``plan_tgi``) besides NUM_SHARD: the
#: token limits (TGI launcher/src/main.rs ``Args``, each ``#[clap(long, env)]``) and the memory fraction. Set from
#: an env entry kvlint cannot read, the plan falls back to the launcher default, so KV503 says so.
_SIZING_ENV_DESTS = (
    "max_input_tokens",
    "max_input_length",
    "max_total_tokens",
    "max_batch_prefill_tokens",
    "max_batch_total_tokens",
    "max_batch_size",
    "max_concurrent_requests",
    "cuda_memory_fraction",
)
#: ``valueFrom`` source -> how KV503 names it.
_VALUE_FROM = {
    "secretKeyRef": "Secret key",
    "configMapKeyRef": "ConfigMap key",
    "fieldRef": "field reference",
    "resourceFieldRef": "resource field reference",
}


def _value_from_kind(container: LDict | None, name: str) -> str:
    """How the ``valueFrom`` of env entry ``name`` is named in KV503 (``Secret key``, ``ConfigMap key`` ...)."""
    entries = container.get("env") if isinstance(container, Mapping) else None
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, Mapping) and e.get("name") == name and isinstance(e.get("valueFrom"), Mapping):
            for key, what in _VALUE_FROM.items():
                if key in e["valueFrom"]:
                    return what
    return "reference"


def _opaque_env(container: LDict | None, env: Mapping[str, str]) -> dict[str, Loc | None]:
    """The container's ``env`` entries that are set through ``valueFrom`` (a Secret, a field or resource
    reference, a ConfigMap not among the inputs) and so missing from the statically resolved ``env``:
    ``NAME -> location of the entry``."""
    out: dict[str, Loc | None] = {}
    entries = container.get("env") if isinstance(container, Mapping) else None
    for e in entries if isinstance(entries, list) else []:
        if (
            isinstance(e, LDict)
            and isinstance(e.get("name"), str)
            and e["name"] not in env
            and "valueFrom" in e
        ):
            out[e["name"]] = e.locs.get("valueFrom") or e.loc
    return out


#: The launcher's short options: clap derives ``-p`` from ``port`` and ``-e`` from ``env``, the two ``Args`` fields
#: declared ``#[clap(long, short, ...)]`` (TGI launcher/src/main.rs at 009c4e0b: ``port``
#: ``#[clap(default_value = "3000", long, short, env)]``, ``env`` ``#[clap(long, short, action)]``), and from 3.2.2
#: ``-g`` from ``graceful_termination_timeout`` (``#[clap(default_value = "90", long, short, env)]``). 3.3.0's
#: ``prometheus_port`` is ``short`` too, a second ``-p``: clap's parser takes the first argument declared with it
#: (``port``). clap reads a short option's value as the next word, attached (``-p8080``) or after ``=`` (``-p=8080``).
_TGI_SHORT = {"p": "port", "e": "env", "g": "graceful_termination_timeout"}

#: The first release whose launcher has a short option of :data:`_TGI_SHORT` that not every release has: ``-g``
#: from 3.2.2 (launcher/src/main.rs: ``graceful_termination_timeout`` ``#[clap(default_value = "90", long, short,
#: env)]`` is in v3.2.2 (c67546fd) to v3.3.7 and not in v3.2.1 (4d28897b) or before; clap then stops with
#: "unexpected argument '-g' found").
_TGI_SHORT_FROM: dict[str, tuple[int, int, int]] = {"g": (3, 2, 2)}


def _short_missing(tok: str, version: str | None) -> str | None:
    """The release that brought short option ``tok`` (``-g``, ``-g30``) when TGI ``version`` is known and older;
    None otherwise (an unknown release is taken to have it, as :func:`has_kv_cache_dtype` takes its option)."""
    if len(tok) < 2 or tok[0] != "-" or tok[1] not in _TGI_SHORT_FROM:
        return None
    from kvlint.memory.tgi import tgi_version

    v, assumed = tgi_version(version)
    since = _TGI_SHORT_FROM[tok[1]]
    return None if assumed or v >= since else ".".join(map(str, since))


def _long_form(tok: str, version: str | None = None) -> str | None:
    """``tok`` written with the launcher's long option when it is one of its short options (:data:`_TGI_SHORT`)
    in TGI ``version`` (:func:`_short_missing`): ``-p`` -> ``--port``, ``-p8080``/``-p=8080`` -> ``--port=8080``,
    ``-e`` -> ``--env``; None otherwise."""
    if len(tok) < 2 or tok[0] != "-" or tok[1] not in _TGI_SHORT or _short_missing(tok, version):
        return None
    dest = _TGI_SHORT[tok[1]]
    rest = tok[2:]
    if not rest:
        return "--" + dest.replace("_", "-")
    if TGI_OPTIONS[dest] == "switch":
        return None  # -eX: clap would read X as more short flags, none of which the launcher has
    return f"--{dest.replace('_', '-')}={rest[1:] if rest.startswith('=') else rest}"


def _cluster(tok: str, version: str | None = None) -> list[str] | None:
    """A word of several of the launcher's short options (:data:`_TGI_SHORT`), as clap reads it: ``-ep 80`` is
    ``--env --port 80``, ``-ep80``/``-ep=80`` ``--env --port=80`` (clap's ``ArgMatcher`` reads a cluster letter by
    letter: a flag takes no value, the first option that takes one ends the cluster, its value the rest of the word,
    a leading ``=`` dropped, else the next word). The words as long options (all but the last are flags); None when
    ``tok`` is no such cluster (one option, a letter the launcher lacks in ``version``: then clap refuses it)."""
    if len(tok) < 3 or tok[0] != "-" or tok[1] == "-" or tok[1] not in _TGI_SHORT:
        return None
    if TGI_OPTIONS[_TGI_SHORT[tok[1]]] != "switch":
        return None  # -p8080: the rest is the value (_long_form)
    out: list[str] = []
    for k in range(1, len(tok)):
        letter = tok[k]
        if letter not in _TGI_SHORT or _short_missing("-" + letter, version) or letter in tok[1:k]:
            return None  # (a flag twice: clap 4 refuses "cannot be used multiple times")
        dest = _TGI_SHORT[letter]
        name = "--" + dest.replace("_", "-")
        if TGI_OPTIONS[dest] == "switch":
            out.append(name)
            continue
        rest = tok[k + 1 :]
        out.append(f"{name}={rest[1:] if rest.startswith('=') else rest}" if rest else name)
        break
    return out


def parse_tgi_argv(
    argv: Sequence[str],
    *,
    locs: Sequence[Loc | None] | None = None,
    version: str | None = None,
    env: Mapping[str, str] | None = None,
    env_locs: Mapping[str, Loc | None] | None = None,
    container: LDict | None = None,
    image: str = "",
    sources: Sequence[str] | None = None,
    runtime_template: bool = False,
) -> ServingConfig:
    """Parse ``text-generation-launcher`` arguments plus their env-var equivalents.

    ``flags`` are keyed by the launcher's field names (``num_shard``, ``max_total_tokens``,
    ``max_input_tokens`` — ``max_input_length`` is stored under ``max_input_tokens`` too, as the launcher
    treats it as the legacy alias — ``cuda_memory_fraction`` ...). Env vars (``MAX_TOTAL_TOKENS``) fill
    what the args do not set (``Value.source == "env"``, location = the env entry). The model comes from
    ``--model-id``/``MODEL_ID``. Unknown options -> KV205 (and, a warning, ``KV_CACHE_DTYPE`` in the env of a
    release before :data:`KV_CACHE_DTYPE_FROM`, which ignores it); bad ints/floats/choices -> KV206; repeated
    options with different values -> KV207. An env entry kvlint cannot read (``valueFrom`` a Secret, a field, a
    ConfigMap not among the inputs) gets a KV503 note when it sets NUM_SHARD (a warning: not sized) or one of
    the settings the memory model reads (:data:`_SIZING_ENV_DESTS`, info: the launcher default is assumed); clap
    reads every ``Args`` field from its env var (TGI launcher/src/main.rs, ``#[clap(long, env)]``).
    ``runtime_template``: the command is a serving-runtime template's, whose NUM_SHARD the using service sets
    (:attr:`kvlint.engines.options.Collector.layout_from_service`). Never raises.
    """
    argv = list(argv)
    locs = list(locs) if locs is not None else [None] * len(argv)
    locs += [None] * (len(argv) - len(locs))
    sources = list(sources) if sources is not None else ["arg"] * len(argv)
    env = dict(env or {})
    col = Collector("TGI", layout_from_service=runtime_template)
    where = f"TGI {version}" if version else "TGI"
    known = ["--" + d.replace("_", "-") for d in TGI_OPTIONS]
    kv_dtype_known = has_kv_cache_dtype(version)
    i, n = 0, len(argv)
    while i < n:
        tok, loc, src = argv[i], locs[i], sources[i]
        i += 1
        since = _short_missing(tok, version)
        if since is not None:
            # clap stops at an argument the launcher does not declare: "unexpected argument '-g' found"
            dest = _TGI_SHORT[tok[1]]
            col.unknown(
                tok,
                loc,
                where,
                [],
                extra=f" (the launcher's -{tok[1]}, --{dest.replace('_', '-')}, is in TGI {since} and later)",
            )
            takes_next = len(tok) == 2 and i < n and not argv[i].strip().startswith("-")
            if not any(c.isspace() for c in tok):  # a spaced word's KV205 says how to split it
                col.findings[-1] = dataclasses.replace(
                    col.findings[-1],
                    fix=f"remove {tok}"
                    + (" and its value" if takes_next else "")
                    + f", or use TGI {since} or later",
                )
            if takes_next:
                i += 1  # its value is not a second finding
            continue
        cluster = _cluster(tok, version)
        if cluster is not None:
            # `-ep 80`: the flags of the cluster, then its last option read as written alone
            for flag in cluster[:-1]:
                col.set(flag[2:].replace("-", "_"), Value(True, loc, tok, src), flag)
            tok = cluster[-1]
        tok = _long_form(tok, version) or tok
        if not tok.startswith("--"):
            if tok and not UNRESOLVED_RE.search(tok):
                spaced = tok.strip().startswith("--")  # " --max-total-tokens": clap takes it for a positional
                col.unknown(
                    tok, loc, where, known if spaced else [], extra=" (unexpected positional argument)"
                )
                bare = tok.strip()
                if (
                    spaced
                    and "=" not in bare
                    and not any(c.isspace() for c in bare)
                    and TGI_OPTIONS.get(bare[2:].replace("-", "_"), "switch") != "switch"
                    and i < n
                    and not argv[i].startswith("-")
                ):
                    i += 1  # its value, alone in the next item, is not a second finding
            continue
        opt, eq, explicit = tok.partition("=")
        dest = opt[2:].replace("-", "_")
        if dest == "kv_cache_dtype" and not kv_dtype_known:
            takes_next = not eq and i < n and not argv[i].strip().startswith("-")
            col.unknown(
                opt,
                loc,
                where,
                [k for k in known if k != "--kv-cache-dtype"],
                extra=" (TGI accepts it from 2.4.0; before, the KV cache has the model's dtype)",
            )
            if takes_next:
                i += 1
            continue
        if dest not in TGI_OPTIONS and UNRESOLVED_RE.search(opt):
            # `--$(EXTRA_OPT)` from a Secret: which option it is kvlint cannot know (not an unknown option); a word
            # after it that is no option may be its value, read with it
            takes_next = not eq and i < n and not argv[i].strip().startswith("-")
            col.note(
                f"{opt} contains a variable kvlint cannot resolve: the option it names is not known"
                + (f" (nor whether {argv[i]} is its value)" if takes_next else ""),
                loc,
            )
            if takes_next:
                i += 1
            continue
        if dest not in TGI_OPTIONS or "_" in opt[2:]:
            # clap matches a long option by its derived kebab-case name only (no underscore spelling, unlike
            # vLLM's argparse): `--max_total_tokens` stops the launcher with "unexpected argument ... found"
            takes_next = (
                not eq and i < n and not argv[i].strip().startswith("-") and not any(c.isspace() for c in opt)
            )
            col.unknown(opt, loc, where, known, value=explicit if eq else argv[i] if takes_next else None)
            if takes_next:
                i += 1
            continue
        kind = TGI_OPTIONS[dest]
        if kind == "switch" and not eq:
            col.set(dest, Value(True, loc, tok, src), opt)
            continue
        if eq:
            raw = explicit
        elif i < n:
            raw, loc, src = argv[i], locs[i] or loc, sources[i]
            i += 1
        else:
            col.invalid(opt, "", loc, "expected a value")
            continue
        if UNRESOLVED_RE.search(raw) and dest != "model_id":
            col.unresolved_value(
                dest, f"{opt} {raw}: the value comes from a variable kvlint cannot resolve", loc
            )
            continue
        ok, value = (True, raw) if dest == "model_id" else _convert(col, opt, dest, raw, loc)
        if ok:
            key = "max_input_tokens" if dest == "max_input_length" else dest
            col.set(key, Value(value, loc, raw, src), opt)
    # env-var equivalents (CLI wins)
    env_locs = env_locs or {}
    for dest in TGI_OPTIONS:
        name = dest.upper()
        if name not in env:
            continue
        if dest == "kv_cache_dtype" and not kv_dtype_known:
            # no Args field reads KV_CACHE_DTYPE before 2.4.0: clap ignores an env var it has no field for, so the
            # launcher starts and the KV cache silently keeps the model's dtype
            col.findings.append(
                Finding(
                    rule="KV205",
                    message=(
                        f"{where} does not read {name} (the launcher has --kv-cache-dtype / {name} from 2.4.0); "
                        "the setting is ignored and the KV cache has the model's dtype"
                    ),
                    loc=env_locs.get(name),
                    fix=f"remove {name}, or use a TGI image from 2.4.0 on for an fp8 KV cache",
                    severity="warning",
                )
            )
            continue
        key = "max_input_tokens" if dest == "max_input_length" else dest
        if key in col.flags:
            continue
        raw = env[name]
        ok, value = (True, raw) if dest == "model_id" else _convert(col, name, dest, raw, env_locs.get(name))
        if ok:
            # through Collector.set, as a flag is: an absurd NUM_SHARD is refused there (MAX_PARALLEL_SIZE)
            col.set(key, Value(value, env_locs.get(name), raw, "env"), name)
    for name, loc in _opaque_env(container, env).items():
        # NUM_SHARD from a Secret or a fieldRef: clap reads it (launcher/src/main.rs Args, ``#[clap(long,
        # env)]``), so the launcher's default of one shard per visible GPU does not apply
        dest = name.lower()
        if (
            dest in LAYOUT_DESTS
            and dest in TGI_OPTIONS
            and dest not in col.flags
            and dest not in col.unresolved
        ):
            col.unresolved_value(
                dest, f"{name}: the value comes from a Secret or field reference kvlint cannot read", loc
            )
        elif dest in _SIZING_ENV_DESTS:
            # MAX_TOTAL_TOKENS from a Secret or an unread ConfigMap: clap reads it too, but kvlint cannot, so the
            # plan uses the launcher default; say so, as for vLLM's unresolved --max-model-len (engines/vllm.py)
            key = "max_input_tokens" if dest == "max_input_length" else dest
            if key not in col.flags and key not in col.unresolved:
                col.unresolved_value(
                    key,
                    f"{name}: the value comes from a {_value_from_kind(container, name)} kvlint cannot read; "
                    "the engine default is assumed",
                    loc,
                )
    model = col.flags.pop("model_id", None)
    return col.serving_config("tgi", container, image, version, model, env, locs)


def tgi_option(serving: ServingConfig, dest: str, value: object | None = None) -> str:
    """TGI launcher setting ``dest`` (an ``Args`` field of ``launcher/src/main.rs``: ``max_total_tokens``,
    ``num_shard``...) as this container writes TGI's settings, for a message or a remedy; with ``value``, the
    setting assigned that value.

    Every field of the launcher's ``Args`` is ``#[clap(long, env)]`` (TGI ``launcher/src/main.rs::Args``, v1.4 to
    v3.3.7; its ``text-generation-launcher --help`` lists ``--max-total-tokens <MAX_TOTAL_TOKENS> [env:
    MAX_TOTAL_TOKENS=]``, ``docs/source/basic_tutorials/launcher.md``): clap's long option is the field in kebab
    case and its environment variable the field in capitals, so both spellings set the same value. The one
    written is the one the container uses: the environment variable (``MAX_TOTAL_TOKENS=8192``) when the
    container sets ``dest`` there, or, with ``dest`` unset, when it sets more of its TGI settings (the model id
    included) in its environment than on its command line; else the option (``--max-total-tokens 8192``, as a
    ``kvlint plan -- text-generation-launcher ...`` command types it). Never raises."""
    v = serving.flags.get(dest)
    if v is not None:
        env = v.source == "env"
    else:
        given = [*serving.flags.values(), *([serving.model] if serving.model is not None else [])]
        env = sum(g.source == "env" for g in given) > sum(g.source != "env" for g in given)
    if env:
        name = dest.upper()
        return name if value is None else f"{name}={value}"
    name = "--" + dest.replace("_", "-")
    return name if value is None else f"{name} {value}"
