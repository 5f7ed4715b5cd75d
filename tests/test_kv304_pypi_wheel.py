"""KV304 for vLLM that a container's script installs from PyPI on a plain Python image and runs on an AMD GPU:
PyPI's vllm wheel is vLLM's CUDA build (vLLM's ROCm install guide, kvlint.engines.images.VLLM_ROCM_WHEELS), so it
does not start there; kvlint planned it on the AMD Instinct fleet. A ROCm index or wheel, or a package source kvlint
cannot read, is not reported (kvlint.engines.images.pypi_cuda_wheel)."""

from __future__ import annotations

import pytest

from kvlint.engines.images import VLLM_ROCM_INDEX, VLLM_ROCM_WHEELS
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
{selector}      containers:
      - name: vllm
        image: {image}
        command: ["sh", "-c"]
        args: ["{script}"]
{env}        resources: {{limits: {{{resource}: 1}}}}
"""
SERVE = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
MI300X = "      nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM}\n"


def _run(
    install: str,
    *,
    image: str = "python:3.11",
    resource: str = "amd.com/gpu",
    selector: str = "",
    env: str = "",
):  # type: ignore[no-untyped-def]
    text = POD.format(
        image=image, script=f"{install} && {SERVE}", resource=resource, selector=selector, env=env
    )
    return run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize("selector", ["", MI300X])
@pytest.mark.parametrize(
    "install",
    ["pip install vllm", "pip install -q vllm==0.11.0", "uv pip install --system 'vllm[audio]>=0.9'"],
)
def test_pypi_vllm_on_an_amd_gpu_is_kv304(install: str, selector: str) -> None:
    res = _run(install, selector=selector)
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error"
    assert "installs vLLM from PyPI" in kv304.message and "CUDA build" in kv304.message, kv304.message
    assert kv304.loc is not None and kv304.loc.line == 13 + bool(selector)  # the script's pip command (args:)
    assert VLLM_ROCM_INDEX in (kv304.fix or "")
    if not selector:  # no GPU named: not planned on the AMD Instinct fleet (it was, with KV501's warning)
        assert summarise(res).not_sized == {"built for another GPU": 1}
        assert not [d for d in res.diagnostics if d.rule == "KV501"]


def test_the_remedy_keeps_a_pinned_release_the_rocm_index_has() -> None:
    variant, first, last = VLLM_ROCM_WHEELS
    assert first != last
    (kv304,) = [d for d in _run(f"pip install vllm=={first}").diagnostics if d.rule == "KV304"]
    assert f"pip install vllm=={first}+{variant} --extra-index-url {VLLM_ROCM_INDEX}{first}/{variant}" in (
        kv304.fix or ""
    )
    (kv304,) = [d for d in _run("pip install vllm==0.11.0").diagnostics if d.rule == "KV304"]
    assert f"vllm=={last}+{variant}" in (kv304.fix or "") and "vLLM 0.11.0 has no ROCm wheel" in (
        kv304.fix or ""
    )


@pytest.mark.parametrize(
    ("install", "env", "image", "resource"),
    [
        # vLLM's ROCm index, its pip form (exact version with the variant) and its uv form
        (
            "pip install vllm==0.18.0+rocm700 --extra-index-url https://wheels.vllm.ai/rocm/0.18.0/rocm700",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        (
            "uv pip install --system vllm --extra-index-url https://wheels.vllm.ai/rocm/",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        (
            "pip install /wheels/vllm-0.18.0+rocm700-cp312-cp312-linux_x86_64.whl",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        # a source kvlint cannot read: a private index, an index set in the environment, a requirements file
        ("pip install --index-url https://pypi.example.com/simple vllm", "", "python:3.11", "amd.com/gpu"),
        (
            "pip install vllm",
            "        env: [{name: PIP_EXTRA_INDEX_URL, value: https://pypi.example.com/simple}]\n",
            "python:3.11",
            "amd.com/gpu",
        ),
        ("pip install -r /app/requirements.txt vllm", "", "python:3.11", "amd.com/gpu"),
        # an image that may carry its own (ROCm) vLLM, and the control on NVIDIA
        (
            "pip install vllm",
            "",
            "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0",
            "amd.com/gpu",
        ),
        ("pip install vllm", "", "registry.example.com/team/llm-base:1", "amd.com/gpu"),
        ("pip install vllm", "", "python:3.11", "nvidia.com/gpu"),
    ],
)
def test_a_rocm_or_unknown_source_is_not_kv304(install: str, env: str, image: str, resource: str) -> None:
    res = _run(install, env=env, image=image, resource=resource)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], [
        (d.rule, d.message) for d in res.diagnostics if d.rule == "KV304"
    ]


# pip and uv read their sources from the environment and from configuration files as well as from the command line:
# a variable whose value kvlint does not have (a Secret's private index URL, a ConfigMap not among the inputs, an
# envFrom of a Secret) or a mounted pip.conf may name vLLM's ROCm index, so none is reported
SECRET_INDEX = "        env: [{name: PIP_INDEX_URL, valueFrom: {secretKeyRef: {name: pypi, key: url}}}]\n"
UNREAD_CONFIGMAP = (
    "        env: [{name: PIP_EXTRA_INDEX_URL, valueFrom: {configMapKeyRef: {name: pip, key: url}}}]\n"
)
ENVFROM_SECRET = "        envFrom: [{secretRef: {name: pip-settings}}]\n"
ENVFROM_CONFIGMAP = "        envFrom: [{configMapRef: {name: pip-settings}}]\n"
PIP_REQUIREMENT = "        env: [{name: PIP_REQUIREMENT, value: /etc/vllm/requirements.txt}]\n"
UV_CONFIG = "        env: [{name: UV_CONFIG_FILE, value: /etc/uv/rocm.toml}]\n"
PIP_CONF = "        volumeMounts: [{name: pip, mountPath: /etc/pip.conf, subPath: pip.conf}]\n"
XDG_PIP = "        volumeMounts: [{name: pip, mountPath: /root/.config/pip}]\n"


@pytest.mark.parametrize(
    "env",
    [
        SECRET_INDEX,
        UNREAD_CONFIGMAP,
        ENVFROM_SECRET,
        ENVFROM_CONFIGMAP,
        PIP_REQUIREMENT,
        UV_CONFIG,
        PIP_CONF,
        XDG_PIP,
    ],
)
def test_a_source_the_container_may_set_is_not_kv304(env: str) -> None:
    res = _run("pip install vllm", env=env)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], env


@pytest.mark.parametrize(
    "env",
    [
        "        env: [{name: PIP_NO_CACHE_DIR, value: '1'}, {name: UV_TORCH_BACKEND, value: auto}]\n",
        "        volumeMounts: [{name: cache, mountPath: /root/.cache/huggingface}]\n",
    ],
)
def test_pip_settings_that_name_no_source_still_report(env: str) -> None:
    res = _run("pip install vllm", env=env)
    assert [d for d in res.diagnostics if d.rule == "KV304"], env


# the script's other commands: an earlier install from vLLM's ROCm index or a requirements file leaves `pip install
# vllm` "Requirement already satisfied"; a variable set for the pip command, `pip config` or a pip.conf written
# sets its source; a local or VCS build is not PyPI's wheel
@pytest.mark.parametrize(
    "install",
    [
        "pip install vllm==0.18.0+rocm700 --extra-index-url https://wheels.vllm.ai/rocm/0.18.0/rocm700"
        " && pip install vllm",
        "pip install -r /app/requirements-rocm.txt && pip install vllm",
        "PIP_EXTRA_INDEX_URL=https://wheels.vllm.ai/rocm/0.18.0/rocm700 pip install vllm==0.18.0+rocm700"
        " && pip install -q vllm",
        "PIP_INDEX_URL=https://pypi.example.com/simple pip install vllm",
        "env UV_INDEX=https://pypi.example.com/simple uv pip install --system vllm",
        "pip config set global.extra-index-url https://pypi.example.com/simple && pip install vllm",
        "echo '[global]' > /etc/pip.conf && pip install vllm",
        "cd /src/vllm && pip install -e . && pip install vllm",
        "pip install /wheels/vllm-0.18.0-cp312-cp312-linux_x86_64.whl && pip install vllm",
        "pip install git+https://github.com/ROCm/vllm.git && pip install vllm",
        "cd /src/vllm && python3 setup.py install && pip install vllm",
    ],
)
def test_a_source_the_script_may_set_is_not_kv304(install: str) -> None:
    res = _run(install)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], install


@pytest.mark.parametrize(
    "install",
    [
        "pip install --upgrade pip && pip install vllm",
        "pip install --cache-dir /tmp/pip -q hf_transfer && pip install vllm",
        "PIP_NO_CACHE_DIR=1 pip install vllm",
        "pip install torch --index-url https://pypi.org/simple && pip install vllm",
        # a valued option's value is no requirement, for every option pip defines as valued
        # (kvlint.engines.pip_options): not a local path or URL to install from
        "pip install --proxy http://proxy.corp:3128 --cert /etc/ssl/corp-ca.pem -q hf_transfer && pip install vllm",
        "uv pip install --system --index https://pypi.org/simple ray && pip install vllm",
        # pip's options are case-sensitive: -I (--ignore-installed) and -C (--config-settings) are not -i and -c
        "pip install -I vllm",
        "pip install -C editable_mode=compat vllm",
    ],
)
def test_other_pypi_installs_still_report(install: str) -> None:
    res = _run(install)
    assert [d for d in res.diagnostics if d.rule == "KV304"], install


@pytest.mark.parametrize(
    ("image", "python"),
    [
        ("python:3.11", "3.11"),
        ("docker.io/library/python:3.10-slim-bookworm", "3.10"),
        ("python:3.12-slim", None),
    ],
)
def test_the_remedy_names_a_python_312_image(image: str, python: str | None) -> None:
    """vLLM's ROCm wheels are cp312 only: on python:3.11 the remedy's pip command finds no wheel, so it says which
    image to run it on."""
    (kv304,) = [d for d in _run("pip install vllm", image=image).diagnostics if d.rule == "KV304"]
    assert "Python 3.12" in (kv304.fix or "")
    if python is None:
        assert "not Python" not in (kv304.fix or ""), kv304.fix
    else:
        assert f"on a Python 3.12 image (python:3.12, not Python {python})" in (kv304.fix or ""), kv304.fix


# Python pointed at packages outside the image (a volume an init container filled, an activated environment): vLLM
# may be installed there, and `pip install vllm` is then "Requirement already satisfied"
@pytest.mark.parametrize(
    ("install", "env"),
    [
        ("pip install vllm", "        env: [{name: PYTHONPATH, value: /opt/rocm-vllm/site-packages}]\n"),
        ("pip install vllm", "        env: [{name: VIRTUAL_ENV, value: /opt/venv}]\n"),
        ("source /opt/venv/bin/activate && pip install vllm", ""),
        (". /shared/env/bin/activate && pip install vllm", ""),
        ("conda activate rocm && pip install vllm", ""),
    ],
)
def test_an_environment_outside_the_image_is_not_kv304(install: str, env: str) -> None:
    res = _run(install, env=env)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], (install, env)


def test_the_remedy_names_a_short_pin_by_its_full_release() -> None:
    # the ROCm index's directories are named by the release's three components (.../rocm/0.18.0/rocm700):
    # vllm==X.Y (PEP 440's X.Y.0) is named X.Y.0 in the remedy's URL, not X.Y
    variant, first, _ = VLLM_ROCM_WHEELS
    short = first.removesuffix(".0")
    assert short != first
    (kv304,) = [d for d in _run(f"pip install vllm=={short}").diagnostics if d.rule == "KV304"]
    fix = kv304.fix or ""
    assert (
        f"pip install vllm=={first}+{variant} --extra-index-url {VLLM_ROCM_INDEX}{first}/{variant}" in fix
    ), fix
    assert "has no ROCm wheel" not in fix


ROCM_INDEX_0180 = "https://wheels.vllm.ai/rocm/0.18.0/rocm700"


@pytest.mark.parametrize(
    "install",
    [
        f"pip install vllm --extra-index-url {ROCM_INDEX_0180}",
        f"pip install --no-cache-dir --extra-index-url={ROCM_INDEX_0180}/ -U 'vllm[audio]'",
        f"python3 -m pip install --extra-index-url {ROCM_INDEX_0180} vllm",
    ],
)
def test_an_unpinned_pip_install_beside_the_rocm_index_takes_pypis_cuda_wheel(install: str) -> None:
    # pip gives its indexes no priority and takes the highest version (pip's PackageFinder; pypa/pip#12587): PyPI's
    # later vLLM releases outrank 0.18.0+rocm700, the per-release index's one wheel (engines52)
    res = _run(install, image="python:3.12")
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error"
    assert "pip gives its indexes no priority and takes the highest version" in kv304.message, kv304.message
    assert f"outrank 0.18.0+rocm700, the one release on {ROCM_INDEX_0180}" in kv304.message, kv304.message
    assert f"pip install vllm==0.18.0+rocm700 --extra-index-url {ROCM_INDEX_0180}" in (kv304.fix or "")


@pytest.mark.parametrize(
    "install",
    [
        # uv takes the first index that has vllm, the extra one before PyPI (--index-strategy first-index)
        f"uv pip install --system vllm --extra-index-url {ROCM_INDEX_0180}",
        # a version named: 0.18.0 matches 0.18.0+rocm700, which outranks PyPI's 0.18.0 (its local label)
        f"pip install vllm==0.18.0 --extra-index-url {ROCM_INDEX_0180}",
        f"pip install 'vllm<0.19' --extra-index-url {ROCM_INDEX_0180}",
        # another source besides the index, or the ROCm index's root (not one release's directory)
        f"pip install vllm --extra-index-url {ROCM_INDEX_0180} --extra-index-url https://pypi.example.com/simple",
        f"pip install vllm --index-url https://pypi.example.com/simple --extra-index-url {ROCM_INDEX_0180}",
        "pip install vllm --extra-index-url https://wheels.vllm.ai/rocm/",
        # a release directory kvlint does not know to be older than PyPI's newest
        "pip install vllm --extra-index-url https://wheels.vllm.ai/rocm/9.0.0/rocm700",
    ],
)
def test_a_rocm_index_pip_may_take_is_not_kv304(install: str) -> None:
    res = _run(install, image="python:3.12")
    assert not [d for d in res.diagnostics if d.rule == "KV304"], install


@pytest.mark.parametrize(
    "install",
    [
        "pip install --no-binary vllm vllm",
        "pip install --no-binary=:all: vllm",
        "pip install --only-binary :all: --no-binary vllm,torch vllm==0.11.0",
    ],
)
def test_a_source_build_from_pypi_is_a_cuda_build(install: str) -> None:
    # pip builds PyPI's sdist (pip's FormatControl); vLLM's setup.py targets VLLM_TARGET_DEVICE ("cuda" unless set)
    # against the torch of the isolated build, PyPI's CUDA build pinned by pyproject.toml (vllm 0.11.0 sdist)
    res = _run(install, image="python:3.12")
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert "builds vLLM from PyPI's source distribution" in kv304.message, kv304.message
    assert "VLLM_TARGET_DEVICE, 'cuda' when unset" in kv304.message, kv304.message
    assert "PyPI's vllm wheel is" not in kv304.message


@pytest.mark.parametrize(
    ("install", "env"),
    [
        # the build's target set: any value (ROCm's own guide sets VLLM_TARGET_DEVICE=rocm)
        ("VLLM_TARGET_DEVICE=rocm pip install --no-binary vllm vllm", ""),
        ("pip install --no-binary :all: vllm", "        env: [{name: VLLM_TARGET_DEVICE, value: rocm}]\n"),
        # the environment's torch, not the isolated build's: it may be ROCm's
        ("pip install --no-build-isolation --no-binary vllm vllm", ""),
    ],
)
def test_a_source_build_for_a_target_the_container_sets_is_not_kv304(install: str, env: str) -> None:
    res = _run(install, image="python:3.12", env=env)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], install


def test_only_binary_after_no_binary_keeps_the_wheel() -> None:
    # pip's FormatControl: a later --only-binary vllm takes vllm back from the no-binary set: PyPI's wheel
    res = _run("pip install --no-binary :all: --only-binary vllm vllm", image="python:3.12")
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert "PyPI's vllm wheel is vLLM's CUDA build" in kv304.message, kv304.message


def test_the_outbid_index_keeps_the_variant_its_url_names() -> None:
    # a release directory of another ROCm variant (.../rocm/0.30.0/rocm723 holds 0.30.0+rocm723): the text and the
    # remedy name the wheel and the directory the script wrote, not VLLM_ROCM_WHEELS' rocm700 (review52B)
    index = "https://wheels.vllm.ai/rocm/0.30.0/rocm723"
    res = _run(f"pip install vllm --extra-index-url {index}", image="python:3.12")
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert f"outrank 0.30.0+rocm723, the one release on {index}" in kv304.message, kv304.message
    assert f"pip install vllm==0.30.0+rocm723 --extra-index-url {index}" in (kv304.fix or ""), kv304.fix
