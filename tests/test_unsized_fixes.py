"""Each "not sized" finding's fix names what to add with its exact syntax, and what it says to write sizes the
container: KV501 (GPU unknown: a nodeSelector, the kvlint.io/accelerator annotation, a .kvlint.yaml
accelerators.node_labels entry, --accelerator; no GPU requested: resources.limits), KV502 (a model path: a
.kvlint.yaml model_paths entry) and KV503 (a parallel size from a variable: the size or the variable's value).
The forms are read out of the fix text itself and applied to the rule fixtures, so a fix that names a form or a
value kvlint does not read fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "fixtures" / "rules"


def _first_doc(path: Path) -> str:
    """The first (failing) document of a rule fixture."""
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[0] + "\n"


def _run(tmp_path: Path, text: str, *args: str) -> dict:
    f = tmp_path / "w.yaml"
    f.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(
        main, ["check", "--offline", "--fail-on", "never", "--format", "json", *args, str(f)]
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _only(report: dict, rule: str) -> dict:
    (d,) = [d for d in report["diagnostics"] if d["rule"] == rule]
    return d


def _sizing(report: dict) -> tuple[str, str | None]:
    (w,) = report["workloads"]
    return w["sizing"], w["accelerator"]


def test_gpu_unknown_fix_each_form_sizes_the_workload(tmp_path: Path) -> None:
    base = _first_doc(RULES / "KV501" / "vllm.yaml")
    report = _run(tmp_path, base, "--no-config")
    assert _sizing(report)[0] == "fleet"
    fix = _only(report, "KV501")["fix"]
    gpu = re.search(r"--accelerator (\S+) ", fix).group(1)
    selectors = [
        (k, v)
        for k, v in re.findall(r"([a-z0-9.]+/[a-z0-9.-]+): ([A-Za-z0-9_.-]+)", fix)
        if k != "kvlint.io/accelerator"
    ]
    annotation = re.search(r"the annotation kvlint\.io/accelerator: (\S+) ", fix).group(1)
    mapped = re.search(r"\(accelerators: \{node_labels: \{LABEL: \{VALUE: (\S+?)\}\}\}\)", fix).group(1)
    assert len(selectors) >= 2 and annotation == mapped == gpu
    pod = "    spec:\n      containers:\n"
    assert pod in base
    sized = []
    for label, value in selectors:
        text = base.replace(
            pod, f"    spec:\n      nodeSelector:\n        {label}: {value}\n      containers:\n", 1
        )
        sized.append(_sizing(_run(tmp_path, text, "--no-config")))
    text = base.replace(
        "metadata:\n", f"metadata:\n  annotations:\n    kvlint.io/accelerator: {annotation}\n", 1
    )
    sized.append(_sizing(_run(tmp_path, text, "--no-config")))
    # the cluster's own label (LABEL, VALUE) mapped in .kvlint.yaml with the fix's syntax
    cfg = tmp_path / "kvlint.yaml"
    cfg.write_text(f"accelerators: {{node_labels: {{pool: {{gpu-a: {mapped}}}}}}}\n", encoding="utf-8")
    text = base.replace(pod, "    spec:\n      nodeSelector:\n        pool: gpu-a\n      containers:\n", 1)
    sized.append(_sizing(_run(tmp_path, text, "--config", str(cfg))))
    sized.append(_sizing(_run(tmp_path, base, "--no-config", "--accelerator", gpu)))
    assert len({acc for _, acc in sized}) == 1 and all(how == "plan" for how, _ in sized), sized


def test_no_gpu_requested_fix_sizes_the_workload(tmp_path: Path) -> None:
    selector = "      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L4\n"
    base = _first_doc(RULES / "KV405" / "vllm.yaml")
    assert selector in base
    base = base.replace(selector, "", 1)  # no GPU requested and none named
    report = _run(tmp_path, base, "--no-config")
    assert _sizing(report)[0] == "no GPU requested"
    fix = next(d["fix"] for d in report["diagnostics"] if d["rule"] == "KV501")
    # the fix gives the count the engine's layout uses (sizing54; "N" before it)
    found = re.search(r"resources\.limits: \{(\S+): (\d+)\}", fix)
    assert found is not None, fix
    resource, count = found.groups()
    label, value = re.search(r"a nodeSelector (\S+): (\S+) or", fix).groups()
    limits = "          resources:\n            limits:\n"
    pod = "    spec:\n      containers:\n"
    assert limits in base and pod in base
    text = base.replace(limits, f"{limits}              {resource}: {count}\n", 1)
    text = text.replace(
        pod, f"    spec:\n      nodeSelector:\n        {label}: {value}\n      containers:\n", 1
    )
    assert _sizing(_run(tmp_path, text, "--no-config"))[0] == "plan"


def test_model_path_fix_is_the_fix_and_its_model_paths_entry_sizes_it(tmp_path: Path) -> None:
    base = _first_doc(RULES / "KV502" / "vllm.yaml")
    report = _run(tmp_path, base, "--no-config")
    d = _only(report, "KV502")
    # the remedy is the fix, not repeated in the message
    assert "model_paths" not in d["message"]
    m = re.search(r"\(model_paths: \{(\S+): <org>/<name>\}\)", d["fix"])
    assert m is not None, d["fix"]
    cfg = tmp_path / "kvlint.yaml"
    cfg.write_text(f"model_paths: {{{m.group(1)}: meta-llama/Llama-3.1-8B-Instruct}}\n", encoding="utf-8")
    assert _sizing(_run(tmp_path, base, "--config", str(cfg)))[0] == "plan"


def test_parallel_size_from_a_variable_has_a_fix_that_sizes_it(tmp_path: Path) -> None:
    base = _first_doc(RULES / "KV502" / "vllm.yaml").replace(
        '"--model", "/models/chat-assistant"',
        '"--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "$(TP)"',
    )
    secret = "          env:\n            - name: TP\n              valueFrom: {secretKeyRef: {name: s, key: tp}}\n"
    text = base.replace("          resources:\n", secret + "          resources:\n", 1)
    report = _run(tmp_path, text, "--no-config")
    assert _sizing(report)[0] == "parallel size unknown"
    (d,) = [d for d in report["diagnostics"] if d["rule"] == "KV503" and "not sized" in d["message"]]
    m = re.search(r'\(env: \[\{name: (\w+), value: "N"\}\]\)', d["fix"])
    assert m is not None and m.group(1) == "TP", d["fix"]
    assert "(--tensor-parallel-size N)" in d["fix"]
    fixed = text.replace(secret, f'          env:\n            - {{name: {m.group(1)}, value: "1"}}\n')
    assert _sizing(_run(tmp_path, fixed, "--no-config"))[0] == "plan"


def test_a_shell_style_variable_is_told_to_be_written_as_kubernetes_expands_it() -> None:
    """``${VAR}`` in an exec-form command reaches the engine as written (Kubernetes expands only ``$(VAR)``): the fix
    says to write it ``$(VAR)``; a ``$(VAR)`` is not told so."""
    from kvlint.engines.options import layout_fix

    shell = layout_fix(
        "--tensor-parallel-size ${VLLM_GPU_COUNT}: the value comes from a variable kvlint cannot resolve"
    )
    assert 'env: [{name: VLLM_GPU_COUNT, value: "N"}]) and write it $(VLLM_GPU_COUNT),' in shell
    k8s = layout_fix("--tp-size $(TP): the value comes from a variable kvlint cannot resolve")
    assert '(env: [{name: TP, value: "N"}]), so kvlint' in k8s and "write it" not in k8s


def _model_doc(model: str) -> str:
    return _first_doc(RULES / "KV502" / "vllm.yaml").replace('"/models/chat-assistant"', f'"{model}"')


def test_model_unknown_fix_forms_size_the_workload(tmp_path: Path) -> None:
    """A hub id kvlint has no config for: the fix offers `kvlint models pull`, a --model-dir layout (which, with a
    config.json there, sizes it) and no model_paths entry (one is read for the manifest's own reference only);
    a reference that is no hub id: the model_paths entry it writes sizes it."""
    hub = "acme-ai/llama-3.1-8b-support"
    report = _run(tmp_path, _model_doc(hub), "--no-config")
    assert _sizing(report)[0] == "model unknown"
    fix = _only(report, "KV502")["fix"]
    assert f"`kvlint models pull {hub}`" in fix and "model_paths" not in fix, fix
    layout = re.search(r"--model-dir DIR holding (\S+/config\.json)", fix).group(1)
    model_dir = tmp_path / "models"
    (model_dir / layout).parent.mkdir(parents=True)
    config = ROOT / "kvlint" / "data" / "models" / "meta-llama--Llama-3.1-8B" / "config.json"
    (model_dir / layout).write_bytes(config.read_bytes())
    assert _sizing(_run(tmp_path, _model_doc(hub), "--no-config", "--model-dir", str(model_dir)))[0] == "plan"

    report = _run(tmp_path, _model_doc("chat-assistant"), "--no-config")
    fix = _only(report, "KV502")["fix"]
    entry = re.search(r"\(model_paths: \{(\S+): <org>/<name>\}\)", fix)
    assert entry is not None and entry.group(1) == "chat-assistant", fix
    cfg = tmp_path / "kvlint.yaml"
    cfg.write_text(f"model_paths: {{{entry.group(1)}: meta-llama/Llama-3.1-8B-Instruct}}\n", encoding="utf-8")
    assert _sizing(_run(tmp_path, _model_doc("chat-assistant"), "--config", str(cfg)))[0] == "plan"


def test_a_reference_yaml_would_misread_is_quoted_in_the_model_paths_entry() -> None:
    import yaml

    from kvlint.models.resolve import yaml_key

    for ref in ("/models/chat assistant", "s3://bucket/m", "/models/x: y", "#tag"):
        (key,) = yaml.safe_load(f"{{{yaml_key(ref)}: org/name}}")
        assert key == ref
    assert yaml_key("/models/chat-assistant") == "/models/chat-assistant"


def test_the_rules_fix_texts_write_configuration_kvlint_reads(tmp_path: Path) -> None:
    """`kvlint explain KV501/KV502`'s "How to fix" writes .kvlint.yaml entries: each one is a configuration kvlint
    loads (the key names and the nesting as written)."""
    from kvlint.config import load_config
    from kvlint.rules.catalog import get_rule

    snippets = [
        m
        for rule in ("KV501", "KV502")
        for m in re.findall(
            r"`((?:model_paths|accelerators|default_accelerator): [^`]+)`",
            " ".join(get_rule(rule).fix.split()),
        )
    ]
    assert len(snippets) >= 3, snippets
    for i, snippet in enumerate(snippets):
        cfg = tmp_path / f"c{i}.yaml"
        cfg.write_text(snippet + "\n", encoding="utf-8")
        load_config(str(cfg))  # raises ConfigError on an unknown key or a value of the wrong shape


def _fleet_verdicts(message: str) -> dict[str, str]:
    """``{GPU name: verdict}`` of a KV501 fleet message ("fits on A (...), B (...); fails on C and D (both: ...)":
    GPUs with the same figures are named together, kvlint.rules.families.resolution.fleet_entries)."""
    out: dict[str, str] = {}
    for part in re.split(r"; (?=(?:fits|risky|fails|unknown) on )", message.split(" per pod: ", 1)[1]):
        verdict, _, names = part.partition(" on ")
        for group in re.findall(r"(?:^|\), )([^(]+?) \(", names):
            for name in re.split(r", | and ", group):
                out[name.strip()] = verdict
    return out


def test_gpu_unknown_fix_names_a_gpu_the_container_fits_on(tmp_path: Path) -> None:
    """The fix's example GPU was l4 whatever the fleet plan said: a 32B model on one GPU, which the same KV501
    says fails on NVIDIA L4, was told "name the GPU (l4 in these examples) ... --accelerator l4". The example is
    now one it fits on (the smallest of the examples that fits), and naming it sizes the container there."""
    from kvlint.accelerators.registry import lookup

    text = _first_doc(RULES / "KV501" / "vllm.yaml").replace(
        "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-32B-Instruct"
    )
    report = _run(tmp_path, text, "--no-config")
    kv501 = _only(report, "KV501")
    verdicts = _fleet_verdicts(kv501["message"])
    assert verdicts["NVIDIA L4"] == "fails"
    gpu = re.search(r"--accelerator (\S+) ", kv501["fix"]).group(1)
    acc = lookup(gpu)
    assert acc is not None and verdicts[acc.name] == "fits" and gpu != "l4"
    assert _sizing(_run(tmp_path, text, "--no-config", "--accelerator", gpu)) == ("plan", acc.id)
    # the 8B model fits on L4: the example stays l4
    small = _run(tmp_path, _first_doc(RULES / "KV501" / "vllm.yaml"), "--no-config")
    assert "--accelerator l4 " in _only(small, "KV501")["fix"]


def _example_sizes(
    tmp_path: Path, text: str, *args: str
) -> tuple[dict[str, str], str, tuple[str, str | None]]:
    """KV501's fleet verdicts, the GPU its fix names, and how the container is sized once the fix's first
    nodeSelector label (else its annotation) names that GPU, with the same ``args``."""
    from kvlint.accelerators.registry import lookup

    kv501 = _only(_run(tmp_path, text, *args), "KV501")
    gpu = re.search(r"--accelerator (\S+) ", kv501["fix"]).group(1)
    label = re.search(r"a nodeSelector ([a-z0-9.]+/[a-z0-9.-]+): ([A-Za-z0-9_.-]+)", kv501["fix"])
    pod = "    spec:\n      containers:\n"
    assert pod in text
    if label is not None:
        named = text.replace(
            pod, f"    spec:\n      nodeSelector:\n        {label[1]}: {label[2]}\n      containers:\n", 1
        )
    else:
        named = text.replace("metadata:", f"metadata:\n  annotations: {{kvlint.io/accelerator: {gpu}}}\n", 1)
    acc = lookup(gpu)
    assert acc is not None
    return _fleet_verdicts(kv501["message"]), acc.name, _sizing(_run(tmp_path, named, *args))


_AMD_SGLANG = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers:\n"
    "        - name: sglang\n          image: IMAGE\n          command: [python3, -m, sglang.launch_server, "
    "--model-path, Qwen/Qwen2.5-7B-Instruct, --context-length, '8192']\n"
    "          resources: {limits: {amd.com/gpu: 1}}\n"
)


def test_gpu_unknown_fix_names_a_gpu_of_a_single_architecture_rocm_image(tmp_path: Path) -> None:
    """SGLang's ...-rocm700-mi35x image is built for gfx950 alone, and KV501 plans it on the MI355X only ("it runs
    on no other AMD architecture"); its fix said "name the GPU (mi300x in these examples)", a gfx942 GPU the image
    does not run on. The example is a GPU of the fleet plan, and naming it sizes the container."""
    text = _AMD_SGLANG.replace("IMAGE", "lmsysorg/sglang:v0.5.8-rocm700-mi35x")
    verdicts, name, sized = _example_sizes(tmp_path, text, "--no-config")
    assert verdicts == {"AMD Instinct MI355X": "fits"}
    assert name == "AMD Instinct MI355X" and sized[0] == "plan", (name, sized)


def test_gpu_unknown_fix_names_a_gpu_of_the_configured_fleet(tmp_path: Path) -> None:
    """A .kvlint.yaml fleet of A10G and L40S, on both of which the 8B model fits: the fix named l4, a GPU of no
    node in that fleet. It names the smallest fleet GPU the container fits on, as the catalogue labels it."""
    cfg = tmp_path / "kvlint.yaml"
    cfg.write_text("fleet: [l40s, a10g]\n", encoding="utf-8")
    text = _first_doc(RULES / "KV501" / "vllm.yaml")
    verdicts, name, sized = _example_sizes(tmp_path, text, "--config", str(cfg))
    assert set(verdicts) == {"NVIDIA A10G", "NVIDIA L40S"} and set(verdicts.values()) == {"fits"}
    assert name == "NVIDIA A10G" and sized[0] == "plan", (name, sized)


def test_gpu_unknown_fix_of_a_container_that_fits_no_gpu_names_the_largest(tmp_path: Path) -> None:
    """A 405B model on one GPU fits none of the default fleet: the example was l4, the GPU it fails on by the
    most. It is the largest GPU of the fleet plan, the one it comes nearest fitting on."""
    from kvlint.accelerators.registry import catalogue

    text = _first_doc(RULES / "KV501" / "vllm.yaml").replace(
        "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-405B"
    )
    verdicts, name, _ = _example_sizes(tmp_path, text, "--no-config")
    assert "fits" not in verdicts.values() and name in verdicts
    by_name = {a.name: a.memory_bytes for a in catalogue().values()}
    assert by_name[name] == max(by_name[n] for n in verdicts), (name, verdicts)
