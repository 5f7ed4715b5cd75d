"""Adversarial pass on the readers merged in session 45 (branch break45b): each test fails before its fix."""

from __future__ import annotations

import re

from kvlint.verify import logparse, parse_log

_UNAVAILABLE = "FlashInfer top-p/top-k sampling unavailable: "
_PREFIX = "(EngineCore_DP0 pid=1) WARNING 06-16 14:13:27 [topk_topp_sampler.py:69] "


def test_sampler_patterns_hold_no_unbounded_run_before_a_literal() -> None:
    # ``unavailable: .*; falling back\.`` ran ``.*`` to the line's end and back from every occurrence of its head:
    # a 180,000-character line repeating the head cost 4,000 scans of the line (quadratic; a 64 MiB log line of
    # it would hold `verify` for hours). Counted structurally: no ``.*``/``.+`` in the sampler patterns, which are
    # tried on every log line naming a sampler.
    for pattern in (logparse._SAMPLER_FLASHINFER, logparse._SAMPLER_NATIVE):
        assert not re.search(r"\.[*+]", pattern.pattern), pattern.pattern


def test_repeated_fallback_head_is_read_once_and_right() -> None:
    hostile = _PREFIX + _UNAVAILABLE * 4_000
    assert logparse._sampler_choice(hostile) is None
    assert logparse._sampler_choice(hostile + "x; falling back.") is False
    # the tail before the head is not the head's tail
    assert logparse._sampler_choice(_PREFIX + "; falling back. " + _UNAVAILABLE + "no module") is None
    log = parse_log(
        hostile + "no module; falling back.\n" + _PREFIX + "Using FlashInfer for top-p & top-k sampling.\n"
    )
    assert (log.flashinfer_sampler, log.sampler_line) == (False, 1)


def _pod_with_init_containers(serving: int, inits: int) -> str:
    containers = "".join(
        f"        - name: c{i}\n          image: vllm/vllm-openai:v0.11.0\n"
        f"          args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
        for i in range(serving)
    )
    init = "".join(f"        - {{name: i{i}, image: busybox, comand: [x{i}]}}\n" for i in range(inits))
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        f"      initContainers:\n{init}      containers:\n{containers}"
    )


def test_init_containers_are_walked_once_per_pod_with_one_guess_budget(monkeypatch) -> None:  # noqa: ANN001
    # KV005 on init containers walked every init container again for each serving container of the pod (the
    # pipeline then dropped the repeated findings), and each init container's walk had a budget of 64
    # closest-field guesses of its own: 32 serving containers beside 20,000 init containers with a misspelt
    # key each took 5.8 s of webhook worker CPU. Counted: the walks and the guesses.
    import difflib

    from kvlint.load import load_text
    from kvlint.pipeline import Options, run_documents
    from kvlint.rules.families import parse
    from kvlint.workloads import fields

    walks: list[int] = []
    guesses: list[int] = []
    walk, close = parse.unknown_field_paths, difflib.get_close_matches

    def counted_walk(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        walks.append(1)
        return walk(*args, **kwargs)

    def counted_close(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        guesses.append(1)
        return close(*args, **kwargs)

    monkeypatch.setattr(parse, "unknown_field_paths", counted_walk)
    monkeypatch.setattr(fields.difflib, "get_close_matches", counted_close)
    serving, inits = 4, 300
    result = run_documents(
        load_text(_pod_with_init_containers(serving, inits), "d.yaml"), Options(allow_hub=False)
    )
    kv005 = [d for d in result.diagnostics if d.rule == "KV005"]
    # one walk per serving container (its own keys) and one per init container, once for the pod
    assert len(walks) <= serving + inits, len(walks)
    assert len(guesses) <= fields.MAX_GUESSED_KEYS + serving * fields.MAX_GUESSED_KEYS, len(guesses)
    # still said: the first keys one by one with their guess, the rest counted once
    assert len(kv005) == parse.MAX_UNKNOWN_FIELDS + 1
    messages = [d.message for d in kv005]
    assert any(
        m.startswith("'comand' in init container 'i0' is not a Kubernetes field; did you mean 'command'?")
        for m in messages
    )
    assert any(f"{inits - parse.MAX_UNKNOWN_FIELDS:,} more keys from 'comand'" in d.message for d in kv005)
