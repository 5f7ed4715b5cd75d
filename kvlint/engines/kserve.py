"""KServe's Hugging Face model server (``python -m huggingfaceserver``) read as the vLLM engine it starts.

The server parses its own options and, when its vLLM backend is enabled, vLLM's engine arguments with
the same parser (``maybe_add_vllm_cli_parser``), then starts vLLM with ``model = --model_id or
--model_dir`` and ``revision = --model_revision``. The vLLM backend is used when ``--backend`` is
``auto`` (the default) or ``vllm``, vLLM is installed (it is in the ``kserve/huggingfaceserver`` image)
and the model's architecture is one vLLM supports; ``--backend=huggingface`` runs transformers instead.

Source: kserve/kserve python/huggingfaceserver/huggingfaceserver/__main__.py
@f205bbff5110710ad5bee1fc903fce0eefb041e0 (options ``--model_dir`` default ``/mnt/models``, ``--model_id``,
``--model_revision``, ``--tokenizer_revision``, ``--max_length`` (dest ``max_model_len``), ``--backend``,
``--disable_lower_case``, ``--disable_special_tokens``, ``--trust_remote_code``, ``--tensor_input_names``,
``--return_token_type_ids``, ``--return_probabilities``, ``--disable_log_requests``; ``load_model``) and
python/kserve/kserve/model_server.py@7299b03d950f0eb18c45c3e685ea18504f124486 (the model-server options
``--http_port`` ... ``--enable_predictor_health_check``). kvlint drops the server's own options and
hands the rest to its vLLM parser; architectures vLLM does not support are not checked (kvlint sizes the
vLLM path).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["HF_SERVER_MODULE", "huggingface_backend", "model_id_given", "to_vllm_argv"]

#: ``python -m`` module of KServe's Hugging Face model server.
HF_SERVER_MODULE = "huggingfaceserver"

# the server's and the KServe model server's options that take a value (spelled with underscores)
_VALUED = frozenset(
    {
        "model_dir",
        "model_id",
        "model_revision",
        "tokenizer_revision",
        "max_length",
        "tensor_input_names",
        "backend",
        "http_port",
        "grpc_port",
        "workers",
        "max_threads",
        "max_asyncio_workers",
        "enable_grpc",
        "enable_docs_url",
        "enable_latency_logging",
        "configure_logging",
        "log_config_file",
        "access_log_format",
        "model_name",
        "predictor_host",
        "protocol",
        "predictor_protocol",
        "predictor_use_ssl",
        "predictor_request_timeout_seconds",
        "grpc_max_send_message_length",
        "grpc_max_receive_message_length",
        "predictor_request_retries",
    }
)
# the server's store_true options
_FLAGS = frozenset(
    {
        "disable_lower_case",
        "disable_special_tokens",
        "trust_remote_code",
        "return_token_type_ids",
        "return_probabilities",
        "disable_log_requests",
        "enable_predictor_health_check",
    }
)
#: ``--model_dir`` default: where KServe's storage initializer puts the ``storageUri`` model.
DEFAULT_MODEL_DIR = "/mnt/models"


def _option(word: str) -> tuple[str, str | None] | None:
    """``(name with underscores, inline value or None)`` for a ``--long`` option word, else None."""
    if not word.startswith("--") or len(word) < 3:
        return None
    name, eq, value = word[2:].partition("=")
    return name.replace("-", "_"), (value if eq else None)


def model_id_given(word: str) -> bool:
    """``word`` is a ``--model_id`` option (``--model_id=X``, ``--model-id``, or its value-less form)."""
    opt = _option(word)
    return opt is not None and opt[0] == "model_id"


def huggingface_backend(words: Sequence[str]) -> str:
    """The ``--backend`` value in ``words`` (``auto`` when absent), lower-case."""
    for i, w in enumerate(words):
        opt = _option(w)
        if opt and opt[0] == "backend":
            value = opt[1] if opt[1] is not None else (words[i + 1] if i + 1 < len(words) else "")
            return value.strip().lower()
    return "auto"


def to_vllm_argv(words: Sequence[str]) -> list[tuple[str, int | None]]:
    """The vLLM arguments the server starts vLLM with, each with the index of the word it comes from.

    ``--model X`` first (``--model_id``, else ``--model_dir``, else the default ``/mnt/models`` with no
    source word), ``--max_length`` as ``--max-model-len`` and ``--model_revision`` as ``--revision``; the
    server's own options are dropped; everything else is passed on unchanged (vLLM's parser accepts
    underscores in option names). Never raises.
    """
    out: list[tuple[str, int | None]] = []
    model: tuple[str, int] | None = None
    model_dir: tuple[str, int] | None = None
    i = 0
    while i < len(words):
        w = words[i]
        opt = _option(w)
        if opt is None:
            out.append((w, i))
            i += 1
            continue
        name, inline = opt
        if name in _FLAGS:
            i += 1
            continue
        if name in _VALUED:
            if inline is not None:
                value, vi, step = inline, i, 1
            else:
                value, vi, step = (words[i + 1] if i + 1 < len(words) else ""), i + 1, 2
            if name == "model_id" and value:
                model = (value, vi)
            elif name == "model_dir" and value:
                model_dir = (value, vi)
            elif name == "max_length":
                out += [("--max-model-len", i), (value, vi)]
            elif name == "model_revision":
                out += [("--revision", i), (value, vi)]
            i += step
            continue
        out.append((w, i))
        i += 1
    chosen = model or model_dir
    head: list[tuple[str, int | None]] = (
        [("--model", chosen[1]), (chosen[0], chosen[1])]
        if chosen
        else [("--model", None), (DEFAULT_MODEL_DIR, None)]
    )
    return head + out
