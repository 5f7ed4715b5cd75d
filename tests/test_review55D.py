"""Review of branch shell55 (review55D): what a sourced file kvlint does not read may set.

shell55 made every variable unknown after any ``. FILE`` / ``source FILE`` kvlint does not read. That is right for a
file of the manifest's author (``. /app/env.sh``), but a tool's or the system's own environment script sets only
that tool's names: Debian's ``/etc/profile`` (base-files) sets PATH (and PS1 in an interactive shell) and unsets its
loop variable; conda's ``etc/profile.d/conda.sh`` conda's own CONDA_*/_CE_* names and functions (conda
``conda/shell/etc/profile.d/conda.sh``); rustup's ``$HOME/.cargo/env`` PATH only (rust-lang/rustup
``src/cli/self_update/env.sh``). The script's own settings stay what they were, as bash and dash run them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands


def _words(script: str, sh: bool = False, env: dict[str, str] | None = None) -> list[tuple[str, bool]]:
    """The words (text, unresolved) kvlint reads for the ``vllm`` command of ``script``, after ``vllm``."""
    (words,) = [c for c in commands(script, env or {}, sh=sh) if c and c[0].text == "vllm"]
    return [(w.text, w.unresolved) for w in words[1:]]


def _ran(shell: str, script: str, tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The arguments the ``vllm`` of ``script`` gets when ``shell -c script`` runs (``$SHIM_DIR`` holds that ``vllm``,
    which the script puts on PATH itself: /etc/profile resets PATH)."""
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    out = tmp_path / "argv"
    out.unlink(missing_ok=True)
    full = {
        **env,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SHIM_DIR": str(bin_dir),
        "ARGV_OUT": str(out),
    }
    subprocess.run([path, "-c", script], env=full, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1] if out.exists() else []


_PROFILE = Path("/etc/profile")


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("read", [".", "source"])
def test_the_system_profile_keeps_the_scripts_settings(shell: str, read: str, tmp_path: Path) -> None:
    """``. /etc/profile`` (the machine's own, run by the real shell) leaves the script's TP and the container's MODEL
    as they were: the engine gets 2 and the model. kvlint made both unknown (KV503, not sized)."""
    if not _PROFILE.is_file() or "profile.d" not in _PROFILE.read_text(errors="replace"):
        pytest.skip("no system /etc/profile of the usual shape")
    if shell == "dash" and read == "source":
        pytest.skip("dash has no source")
    script = (
        f'TP=2; {read} /etc/profile; PATH="$SHIM_DIR:$PATH"; vllm serve $MODEL --tensor-parallel-size $TP'
    )
    got = _ran(shell, script, tmp_path, {"MODEL": "Qwen/Qwen2.5-7B-Instruct"})
    assert got[-3:] == ["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"]
    words = _words(script, sh=shell == "dash", env={"MODEL": "Qwen/Qwen2.5-7B-Instruct"})
    assert words[-3:] == [
        ("Qwen/Qwen2.5-7B-Instruct", False),
        ("--tensor-parallel-size", False),
        ("2", False),
    ]


@pytest.mark.parametrize(
    "source",
    [
        ". /opt/conda/etc/profile.d/conda.sh",
        "source /opt/conda/etc/profile.d/conda.sh && conda activate base",
        'source "$CONDA_DIR/etc/profile.d/conda.sh"',
        ". /opt/conda/etc/profile.d/mamba.sh",
        '. "$HOME/.cargo/env"',
        "source ~/.cargo/env",
    ],
)
def test_a_tools_environment_script_sets_only_its_own_names(source: str) -> None:
    """conda's profile script and rustup's cargo env set the tool's own names (and PATH), not the script's: TP and
    the container's MODEL stay known; CONDA_PREFIX after conda's is unknown."""
    script = f"TP=2; CONDA_PREFIX=/x; {source}; vllm serve $MODEL --tensor-parallel-size $TP $CONDA_PREFIX"
    words = _words(script, env={"MODEL": "Qwen/Qwen2.5-7B-Instruct"})
    assert words[1] == ("Qwen/Qwen2.5-7B-Instruct", False)
    assert words[-2] == ("2", False)
    if "conda" in source or "mamba" in source:
        assert words[-1] == ("$CONDA_PREFIX", True)


@pytest.mark.parametrize(
    "source",
    [
        ". /app/env.sh",
        "source ~/.bashrc",
        ". /etc/profile.d/env.sh",
        ". /opt/conda/etc/profile.d/conda.sh.bak",
        ". /etc/profile.local",
        ". /home/u/.cargo/env.sh",
    ],
)
def test_another_sourced_file_still_may_set_any_variable(source: str) -> None:
    """A file of the manifest's author (or a user's ``.bashrc``, which images append exports to) may set anything:
    unknown, as shell55 made it."""
    script = f"TP=2; {source}; vllm serve m --tensor-parallel-size $TP"
    assert _words(script)[-1] == ("$TP", True)


_POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    command: [bash, -c]
    env: [{{name: MODEL, value: Qwen/Qwen2.5-7B-Instruct}}]
    args:
    - |
      {source}
      vllm serve $MODEL --max-model-len 8192 --tensor-parallel-size ${{TP:-1}}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    "source", ["source /etc/profile", "source /opt/conda/etc/profile.d/conda.sh && conda activate vllm"]
)
def test_a_pod_that_sources_the_system_profile_is_sized(source: str, tmp_path: Path) -> None:
    """End to end: the pod's model and layout are read (sized on its L4), where kvlint said KV503 and did not size
    it."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check
    from kvlint.sizing import SIZED, sizing_of

    manifest = tmp_path / "pod.yaml"
    manifest.write_text(_POD.format(source=source))
    res = run_check([str(manifest)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.model is not None
    assert cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert not [d for d in res.diagnostics if d.rule == "KV503"]
    assert sizing_of(cr) in SIZED


_SOURCED_MODEL_POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    command: [bash, -c]
    env: [{{name: MODEL, {value}}}]
    args:
    - |
      {setup}
      vllm serve $MODEL --max-model-len 8192
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    ("setup", "value", "said"),
    [
        (". /app/env.sh", "value: Qwen/Qwen2.5-7B-Instruct", "a file it sources may"),
        ("MODEL=$(cat /etc/model)", "value: Qwen/Qwen2.5-7B-Instruct", "the script sets it"),
        ("true", "valueFrom: {secretKeyRef: {name: s, key: k}}", "no literal value in the container env"),
    ],
)
def test_kv503_says_why_a_literal_env_value_is_unknown(
    setup: str, value: str, said: str, tmp_path: Path
) -> None:
    """The container's env gives MODEL a literal value, and the script (or a file it sources) changes it: KV503 said
    "no literal value in the container env", which is false and points the user at the wrong fix."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    manifest = tmp_path / "pod.yaml"
    manifest.write_text(_SOURCED_MODEL_POD.format(setup=setup, value=value))
    res = run_check([str(manifest)], Options(allow_hub=False))
    (kv503,) = [d for d in res.diagnostics if d.rule == "KV503" and "$MODEL" in d.message]
    assert said in kv503.message


RAY_MISTRAL = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__mistral-7b__ray-service.yaml"
)


@pytest.mark.parametrize(("field", "kept"), [("pip", True), ("uv", False)])
def test_a_ray_uv_range_does_not_keep_the_images_vllm(tmp_path: Path, field: str, kept: bool) -> None:
    """GKE's Ray Serve sample on ray-llm 2.46.0 (which carries vLLM 0.8.5) with ``vllm>=0.8,<0.9``: pip in Ray's
    virtualenv (``--system-site-packages``) finds the image's 0.8.5 and keeps it; Ray's ``uv`` field runs ``uv pip
    install`` there, which does not see inherited packages (astral-sh/uv#4466) and installs the newest release in the
    range. shell55 read both as pip (no KV504 note for uv); the uv one now says the release comes from the range."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    text = RAY_MISTRAL.read_text()
    assert 'pip: ["vllm==0.4.3"]' in text and "image: rayproject/ray-ml:2.9.0" in text
    out = tmp_path / "ray-service.yaml"
    out.write_text(
        text.replace('pip: ["vllm==0.4.3"]', f'{field}: ["vllm>=0.8,<0.9"]').replace(
            "image: rayproject/ray-ml:2.9.0", "image: rayproject/ray-llm:2.46.0-py311-cu124"
        )
    )
    res = run_check([str(out)], Options(allow_hub=False))
    notes = [
        d.message for d in res.diagnostics if d.rule == "KV504" and "within the range >=0.8,<0.9" in d.message
    ]
    assert bool(notes) is not kept, notes
    if not kept:
        assert all(f"runtime_env.{field}" in n and "uv takes the newest release" in n for n in notes)


@pytest.mark.parametrize(
    "setup",
    [
        'eval "$(conda shell.bash hook 2>/dev/null)"',
        'eval "$(/opt/conda/bin/conda shell.bash hook 2> /dev/null)"',
        "eval \"$('/opt/conda/bin/conda' 'shell.bash' 'hook' 2> /dev/null)\"",
        "source activate vllm",
        ". activate vllm",
        "source deactivate",
    ],
)
def test_conda_set_up_as_its_docs_and_init_write_it_keeps_the_scripts_values(setup: str) -> None:
    """conda's hook with its error output dropped (the form ``conda init`` writes, quoted words and ``2> /dev/null``)
    and conda's legacy ``source activate ENV`` (the ``activate`` script bash's ``.`` finds on PATH, bash(1) ".": a
    name without a slash is looked up in PATH; dash the same) set conda's names only: TP stays 2. shell55 read these
    as any unread script (TP unknown)."""
    script = f"TP=2; CONDA_PREFIX=/x; {setup}; vllm serve m --tensor-parallel-size $TP $CONDA_PREFIX"
    assert _words(script)[-2:] == [("2", False), ("$CONDA_PREFIX", True)]


@pytest.mark.parametrize(
    "setup",
    [
        'eval "$(cat /etc/hook 2>/dev/null)"',
        'eval "$(conda shell.bash hook; cat /etc/x)"',
        "source activate.sh",
        ". ./activate",
    ],
)
def test_other_evals_and_activate_lookalikes_may_set_any_variable(setup: str) -> None:
    """Not conda's: TP unknown, as shell55 made it."""
    script = f"TP=2; {setup}; vllm serve m --tensor-parallel-size $TP"
    assert _words(script)[-1] == ("$TP", True)


def _reference_pod(tmp_path: Path, script: str, env: str) -> object:
    """run_check of a bash -c vLLM pod on an L4 running ``script``, with the container fields ``env`` (YAML lines)."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n    command: [bash, -c]\n"
        f"    args: ['{script}']\n{env}    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    return run_check([str(manifest)], Options(allow_hub=False))


def test_an_undefined_kubernetes_reference_in_a_script_expands_to_nothing(tmp_path: Path) -> None:
    """``$(VLLM_EXTRA)`` with no env entry: the kubelet leaves it, bash runs a command named VLLM_EXTRA (not found)
    and the substitution is empty, so vLLM gets no such word (checked with the real bash). kvlint read the text as a
    vLLM positional: a KV205 error the engine never raises."""
    path = shutil.which("bash")
    if path is not None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "vllm").write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
        (bin_dir / "vllm").chmod(0o755)
        out = tmp_path / "argv"
        subprocess.run(
            [path, "-c", "vllm serve m --max-model-len 8192 $(VLLM_EXTRA)"],
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "ARGV_OUT": str(out)},
            check=False,
            timeout=60,
            capture_output=True,
        )
        assert out.read_bytes().decode().split("\0")[:-1] == ["serve", "m", "--max-model-len", "8192"]
    res = _reference_pod(
        tmp_path, "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 $(VLLM_EXTRA)", ""
    )
    assert not [d for d in res.diagnostics if d.rule == "KV205"]  # type: ignore[attr-defined]
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]  # type: ignore[attr-defined]
    assert note.severity == "info" and "expands to nothing" in note.message


@pytest.mark.parametrize(
    "env",
    [
        "    env: [{name: VLLM_EXTRA, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n",
        "    envFrom: [{secretRef: {name: s}}]\n",
    ],
)
def test_a_kubernetes_reference_to_an_unknown_value_is_words_kvlint_cannot_see(
    tmp_path: Path, env: str
) -> None:
    """The kubelet expands ``$(VLLM_EXTRA)`` to the Secret's value, which the shell splits into the engine's words:
    the layout may be among them (KV503 warning, not sized), where kvlint said KV205 and sized the defaults."""
    from kvlint.sizing import SIZED, sizing_of

    res = _reference_pod(
        tmp_path, "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 $(VLLM_EXTRA)", env
    )
    assert not [d for d in res.diagnostics if d.rule == "KV205"]  # type: ignore[attr-defined]
    assert [d for d in res.diagnostics if d.rule == "KV503" and d.severity == "warning"]  # type: ignore[attr-defined]
    (cr,) = res.containers  # type: ignore[attr-defined]
    assert sizing_of(cr) not in SIZED
