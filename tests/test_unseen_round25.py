"""Real public manifests kvlint had not seen (new-user pass 25, fixtures/collected: GKE samples, AI-Hypercomputer
gpu-recipes values, NIM operator samples, LWS DisaggregatedSet and SGLang examples, vLLM on Gaudi 3 under KServe).
What a first run on them showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.sizing import sizing_of

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
TPU_RAYCLUSTER = COLLECTED / (
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__tpu__ray-cluster.tpu-v6e-"
    "singlehost.yaml"
)


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _kv503(res) -> list:  # type: ignore[no-untyped-def]
    return [d for d in res.diagnostics if d.rule == "KV503"]


def test_a_raycluster_container_with_no_command_runs_kuberays_ray_start() -> None:
    """GKE's vLLM-on-TPU RayCluster: head and worker run ``$VLLM_IMAGE`` with no command, as KubeRay samples do;
    KubeRay's operator gives the Ray container ``ulimit ...; ray start ...`` and the engine runs in the Ray job or
    Serve application submitted later. kvlint said the image "has no known engine entrypoint" and told the user to
    "run the engine directly (command: [vllm, serve, MODEL, ...])", which in a Ray pod would replace nothing but
    prefix ``ray start`` (KubeRay keeps a user command before its own). The note now says KubeRay starts the
    container and points at ``kvlint plan`` for the engine the Ray application starts."""
    text = TPU_RAYCLUSTER.read_text()
    assert text.count("image: $VLLM_IMAGE") == 2 and "command:" not in text and "args:" not in text
    res = _run(TPU_RAYCLUSTER)
    notes = _kv503(res)
    assert len(notes) == 2
    for d in notes:
        assert "KubeRay starts this Ray container with the `ray start` command" in d.message
        assert "Ray job submitted to the cluster, configured by its Python code" in d.message
        assert "run the engine directly" not in (d.fix or "")
        assert "kvlint plan -- vllm serve MODEL" in (d.fix or "")
        assert d.severity == "info"
    assert sorted(d.loc.line for d in notes) == [34, 100]  # each container's image: line
    # the head's command is the reason it is not sized; the worker runs on a TPU v6e, which reading its command
    # would not change (test_sizing.py: a reason no command would change comes first)
    assert [sizing_of(cr) for cr in res.containers] == ["command unreadable", "not a CUDA/ROCm GPU"]


def test_a_raycluster_on_the_vllm_image_is_not_the_images_entrypoint(tmp_path: Path) -> None:
    """The same RayCluster with the vLLM release image (vllm/vllm-openai, whose ENTRYPOINT is vLLM's API server):
    kvlint read the containers as that entrypoint with no arguments and said "the vLLM command names no model:
    vLLM would start its built-in default model", which KubeRay never runs. Both containers get the KubeRay note."""
    manifest = tmp_path / "raycluster.yaml"
    manifest.write_text(TPU_RAYCLUSTER.read_text().replace("$VLLM_IMAGE", "vllm/vllm-openai:v0.10.0"))
    res = _run(manifest)
    notes = _kv503(res)
    assert len(notes) == 2
    assert all("names no model" not in d.message and "KubeRay starts" in d.message for d in notes)
    assert [sizing_of(cr) for cr in res.containers] == ["command unreadable", "not a CUDA/ROCm GPU"]


def test_kuberay_keeps_the_image_entrypoint_when_told_to_and_for_sidecars(tmp_path: Path) -> None:
    """What KubeRay does not rewrite is read as before: with ``ray.io/overwrite-container-cmd: "true"`` on the pod
    template the container runs its own command (here the image's ENTRYPOINT, which names no model), and a second
    container of a Ray pod (a sidecar) is not the Ray container (KubeRay's RayContainerIndex is 0)."""
    head = (
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: rc}\nspec:\n  headGroupSpec:\n"
        "    rayStartParams: {}\n    template:\n{meta}      spec:\n        containers:\n{first}"
        "        - name: engine\n          image: vllm/vllm-openai:v0.10.0\n"
    )
    told = tmp_path / "told.yaml"
    told.write_text(
        head.replace(
            "{meta}", '      metadata:\n        annotations: {ray.io/overwrite-container-cmd: "true"}\n'
        ).replace("{first}", "")
    )
    sidecar = tmp_path / "sidecar.yaml"
    sidecar.write_text(
        head.replace("{meta}", "").replace(
            "{first}", "        - name: ray-head\n          image: rayproject/ray:2.46.0\n"
        )
    )
    for path in (told, sidecar):
        (d,) = _kv503(_run(path))
        assert "names no model" in d.message and "KubeRay" not in d.message


SCOUT = COLLECTED / (
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-llama__vllm__vllm-llama4-scout-17b-16e.yaml"
)


def test_an_unquoted_mustache_placeholder_read_as_a_mapping_key_is_a_template_to_render() -> None:
    """GKE's Llama 4 samples end with a Secret ``hf_api_token: {{HF_TOKEN}}`` that the reader replaces before
    ``kubectl apply``. Unquoted, YAML reads ``{{HF_TOKEN}}`` as a mapping whose key is the mapping ``{HF_TOKEN}``:
    the file parses, so there was no KV001, and kvlint's loader kept the key as text and said nothing: a clean
    pass, while kubectl refuses the document ("invalid map key"). It is now a KV002 at the placeholder, with the
    template remedies; the Deployment in the same file is still sized."""
    lines = SCOUT.read_text().splitlines()
    assert lines[95] == "  hf_api_token: {{HF_TOKEN}}"
    res = _run(SCOUT)
    (d,) = [d for d in res.diagnostics if d.rule in ("KV001", "KV002")]
    assert d.rule == "KV002" and d.severity == "warning"
    assert "{{HF_TOKEN}}" in d.message and "invalid map key" in d.message
    assert d.loc is not None and (d.loc.line, d.loc.column) == (96, 18)
    assert '"{{HF_TOKEN}}"' in (d.fix or "")
    assert [sizing_of(cr) for cr in res.containers] == ["plan"]


def test_a_mapping_or_list_as_a_key_is_refused_and_helm_templates_keep_their_own_note(tmp_path: Path) -> None:
    """Any other key that is a mapping or a list is the KV001 kubectl's refusal is; a Helm template's
    ``{{ .Values.x }}`` (a mapping key too, unquoted) keeps the one KV002 saying to render the chart."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ? [a, b]\n  : x\n")
    (d,) = [d for d in _run(bad).diagnostics if d.rule in ("KV001", "KV002")]
    assert d.rule == "KV001" and "invalid map key" in d.message and d.loc is not None and d.loc.line == 5
    helm = tmp_path / "helm.yaml"
    helm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n")
    found = [d for d in _run(helm).diagnostics if d.rule in ("KV001", "KV002")]
    assert [d.rule for d in found] == ["KV002"] and "Helm/Go template" in found[0].message


def test_kvlint_plan_given_a_manifest_points_at_kvlint_check() -> None:
    """A new user's first try, ``kvlint plan deploy.yaml`` (or a directory, or ``-``), was refused with "not an
    engine command: deploy.yaml" and the engine forms only. The usage error (exit 2) now says kvlint plan takes an
    engine command and names ``kvlint check`` with what was typed; an engine command is planned as before."""
    from click.testing import CliRunner

    from kvlint.cli import main

    gemma = (
        COLLECTED
        / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-3-12b-it.yaml"
    )
    runner = CliRunner()
    for word, what in (
        (str(gemma), "is a manifest file"),
        (str(COLLECTED), "is a directory"),
        ("-", "standard input"),
    ):
        res = runner.invoke(main, ["plan", "--offline", word])
        assert res.exit_code == 2, res.output
        text = " ".join(res.output.split())
        assert "not an engine command" not in text and what in text
        assert f"`kvlint check {word}`" in text and "kvlint plan -- vllm serve MODEL" in text
    res = runner.invoke(
        main, ["plan", "--offline", "--accelerator", "l4", "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
    )
    assert res.exit_code in (0, 1) and "verdict:" in res.output


GEMMA = (
    COLLECTED
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-3-12b-it.yaml"
)


#: The two args of :data:`GEMMA` the tests below write otherwise
_GEMMA_ARGS = "        - --max-model-len=16384\n        - --max-num-seqs=4\n"


def _gemma_kv205(tmp_path: Path, args: str) -> dict:  # type: ignore[type-arg]
    """KV205 of :data:`GEMMA` with its two :data:`_GEMMA_ARGS` lines written as ``args``, by the message's head."""
    text = GEMMA.read_text()
    assert _GEMMA_ARGS in text
    manifest = tmp_path / "gemma.yaml"
    manifest.write_text(text.replace(_GEMMA_ARGS, args))
    return {d.message.split(":")[0]: d for d in _run(manifest).diagnostics if d.rule == "KV205"}


def test_an_option_word_with_white_space_says_so(tmp_path: Path) -> None:
    """A list item the engine gets as one word, spaces included: ``"--max-model-len 16384"`` (an option and its
    value in one item, a mistake seen in tutorials' args lists) or a quoted ``"--max-num-seqs "``. argparse takes a
    word with a space in it for a positional argument, so vLLM exits; kvlint's KV205 said "unknown vLLM 0.10.0
    option --max-model-len 16384; did you mean --max-model-len?" and "fix: use --max-model-len", and for the trailing
    space "did you mean --max-num-seqs?" about the same-looking word. Shown on GKE's Gemma 3 sample with its args so
    edited: the word is quoted, the reason given, and the fix splits or strips it."""
    found = _gemma_kv205(tmp_path, '        - "--max-model-len 16384"\n        - "--enforce-eager "\n')
    joined = found["unknown vLLM 0.10.0 option '--max-model-len 16384'"]
    assert "one list item holds --max-model-len and its value" in joined.message
    assert (
        joined.fix
        == "split it into two list items ('--max-model-len', '16384') or write --max-model-len=16384"
    )
    spaced = found["unknown vLLM 0.10.0 option '--enforce-eager '"]
    assert (
        "white space at an end" in spaced.message and spaced.fix == "remove the white space: --enforce-eager"
    )
    assert all(d.severity == "error" for d in found.values()) and len(found) == 2


def test_a_leading_blank_or_a_short_alias_with_its_value_gets_the_specific_fix(tmp_path: Path) -> None:
    """The same sample with ``" --max-model-len"`` then ``"16384"`` (a blank before the dash: argparse takes the
    word for a positional) and ``"-tp 1"`` (vLLM's short alias of --tensor-parallel-size with its value in one
    item). kvlint's fix was the generic "remove ' --max-model-len', or write each option and each value as its own
    list item" for the first, "remove 16384" for the value left alone after it, and the same generic fix for -tp
    (short aliases were not looked up), which also took the next item for its value."""
    found = _gemma_kv205(
        tmp_path,
        '        - " --max-model-len"\n        - "16384"\n        - "-tp 1"\n        - " --max-num-seqs=4"\n',
    )
    lead = found["unknown vLLM 0.10.0 option ' --max-model-len' (unexpected positional argument)"]
    assert "white space at an end" in lead.message and lead.fix == "remove the white space: --max-model-len"
    alias = found["unknown vLLM 0.10.0 option '-tp 1'"]
    assert "one list item holds -tp and its value" in alias.message
    assert alias.fix == "split it into two list items ('-tp', '1') or write -tp=1"
    joined = found["unknown vLLM 0.10.0 option ' --max-num-seqs=4' (unexpected positional argument)"]
    assert joined.fix == "remove the white space: --max-num-seqs=4"
    assert len(found) == 3  # no "remove 16384": the value belongs to the blank-led option


def test_tgi_leading_blank_option_gets_the_specific_fix() -> None:
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", " --max-total-tokens", "4096", " --trust-remote-code", "x"])
    found = [f for f in cfg.findings if f.rule == "KV205"]
    assert [f.fix for f in found] == [
        "remove the white space: --max-total-tokens",
        "remove the white space: --trust-remote-code",
        "remove x",  # a switch takes no value: the word after it stays a finding
    ]
