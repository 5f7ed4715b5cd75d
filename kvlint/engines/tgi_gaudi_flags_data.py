"""tgi-gaudi (Habana's TGI fork) launcher options per release, generated from the launcher source (do not edit by hand).

SOURCE: the fields of ``struct Args`` (clap ``#[derive(Parser)]``) in ``launcher/src/main.rs`` of
https://github.com/huggingface/tgi-gaudi (its own release tags, not TGI's) at each release tag in :data:`VERSIONS`
(commits in :data:`COMMITS`), read as text. Generator: ``tools/flag_tables/extract_tgi.py``. Each field
is the option ``--<field in kebab case>`` and, unless listed in :data:`NO_ENV`, the environment variable
``<FIELD>``; clap stops the launcher at an option its release does not declare and ignores an
environment variable no field reads.
"""

from __future__ import annotations

#: tgi-gaudi (Habana's TGI fork) releases read, oldest first; bit i of a field's mask means present in VERSIONS[i].
VERSIONS: tuple[str, ...] = (
    "1.2.1",
    "2.0.0",
    "2.0.1",
    "2.0.4",
    "2.0.5",
)

#: The tag's commit (abbreviated) for each of :data:`VERSIONS`.
COMMITS: tuple[str, ...] = (
    "d752317b",
    "1a8c7d0f",
    "91e678c8",
    "fde061cc",
    "0deebe70",
)

#: ``Args`` field -> release mask (bit i = VERSIONS[i]).
FIELD_MASKS: dict[str, int] = {
    "cors_allow_origin": 0x1F,
    "cuda_graphs": 0x1E,
    "cuda_memory_fraction": 0x1F,
    "disable_custom_kernels": 0x1F,
    "disable_grammar_support": 0x1E,
    "dtype": 0x1F,
    "env": 0x1F,
    "hostname": 0x1F,
    "huggingface_hub_cache": 0x1F,
    "json_output": 0x1F,
    "master_addr": 0x1F,
    "master_port": 0x1F,
    "max_batch_prefill_tokens": 0x1F,
    "max_batch_size": 0x1E,
    "max_batch_total_tokens": 0x1F,
    "max_best_of": 0x1F,
    "max_client_batch_size": 0x1C,
    "max_concurrent_requests": 0x1F,
    "max_input_length": 0x1F,
    "max_input_tokens": 0x1E,
    "max_stop_sequences": 0x1F,
    "max_top_n_tokens": 0x1F,
    "max_total_tokens": 0x1F,
    "max_waiting_tokens": 0x1F,
    "model_id": 0x1F,
    "ngrok": 0x1F,
    "ngrok_authtoken": 0x1F,
    "ngrok_edge": 0x1F,
    "num_shard": 0x1F,
    "otlp_endpoint": 0x1F,
    "port": 0x1F,
    "quantize": 0x1F,
    "revision": 0x1F,
    "rope_factor": 0x1F,
    "rope_scaling": 0x1F,
    "shard_uds_path": 0x1F,
    "sharded": 0x1F,
    "speculate": 0x1E,
    "tokenizer_config_path": 0x1E,
    "trust_remote_code": 0x1F,
    "validation_workers": 0x1F,
    "waiting_served_ratio": 0x1F,
    "watermark_delta": 0x1F,
    "watermark_gamma": 0x1F,
    "weights_cache_override": 0x1F,
}

#: ``Args`` field -> kind of its newest declaration (int | float | str | switch | boolvalue).
FIELD_KINDS: dict[str, str] = {
    "cors_allow_origin": "str",
    "cuda_graphs": "str",
    "cuda_memory_fraction": "float",
    "disable_custom_kernels": "switch",
    "disable_grammar_support": "switch",
    "dtype": "str",
    "env": "switch",
    "hostname": "str",
    "huggingface_hub_cache": "str",
    "json_output": "switch",
    "master_addr": "str",
    "master_port": "int",
    "max_batch_prefill_tokens": "int",
    "max_batch_size": "int",
    "max_batch_total_tokens": "int",
    "max_best_of": "int",
    "max_client_batch_size": "int",
    "max_concurrent_requests": "int",
    "max_input_length": "int",
    "max_input_tokens": "int",
    "max_stop_sequences": "int",
    "max_top_n_tokens": "int",
    "max_total_tokens": "int",
    "max_waiting_tokens": "int",
    "model_id": "str",
    "ngrok": "switch",
    "ngrok_authtoken": "str",
    "ngrok_edge": "str",
    "num_shard": "int",
    "otlp_endpoint": "str",
    "port": "int",
    "quantize": "str",
    "revision": "str",
    "rope_factor": "float",
    "rope_scaling": "str",
    "shard_uds_path": "str",
    "sharded": "boolvalue",
    "speculate": "int",
    "tokenizer_config_path": "str",
    "trust_remote_code": "switch",
    "validation_workers": "int",
    "waiting_served_ratio": "float",
    "watermark_delta": "float",
    "watermark_gamma": "float",
    "weights_cache_override": "str",
}

#: Fields declared without ``env`` (no environment variable reads them).
NO_ENV: frozenset[str] = frozenset({"env"})
