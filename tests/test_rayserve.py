"""Ray Serve LLM applications of a KubeRay RayService (kvlint.workloads.rayserve): each ``llm_configs[]`` entry
becomes the vLLM engine Ray Serve LLM starts, located inside the ``serveConfigV2`` block scalar; what is not
modelled stays a located KV503 counted as not read; hostile shapes are bounded and located."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.images import RAY_LLM_VLLM, engine_version, ray_llm_vllm
from kvlint.load import load_text
from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise
from kvlint.workloads import find_workloads
from kvlint.workloads.rayserve import MAX_LLM_CONFIGS

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
SERVE_LLM = sorted(p for p in COLLECTED.rglob("*.yaml") if "ray.serve.llm:build_openai_app" in p.read_text())
OPTS = Options(allow_hub=False)


def _line_of(path: Path, text: str, start: int = 0) -> int:
    """1-based number of the first line of ``path`` (from line ``start`` on) that contains ``text``."""
    lines = path.read_text().split("\n")
    return next(i + 1 for i, line in enumerate(lines) if i >= start and text in line)


def _block_lines(path: Path) -> tuple[int, int]:
    """First and last line of the serveConfigV2 block scalar."""
    lines = path.read_text().split("\n")
    start = next(i + 1 for i, line in enumerate(lines) if "serveConfigV2: |" in line)
    end = next(i + 1 for i, line in enumerate(lines) if "rayClusterConfig:" in line)
    return start, end


def _serving(result):
    return [cr for cr in result.containers if cr.serving is not None]


RAY_SERVICE = """apiVersion: ray.io/v1
kind: RayService
metadata:
  name: svc
spec:
  serveConfigV2: |
    applications:
    - name: llm
      import_path: ray.serve.llm:build_openai_app
      args:
        llm_configs:
{entries}
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray-llm:2.52.0-py311-cu128
    workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      template:
        spec:
          nodeSelector:
            cloud.google.com/gke-accelerator: nvidia-l4
          containers:
          - name: ray-worker
            image: rayproject/ray-llm:2.52.0-py311-cu128
            resources:
              limits:
                nvidia.com/gpu: "2"
"""

ENTRY = """        - model_loading_config:
            model_id: m{i}
            model_source: Qwen/Qwen2.5-7B-Instruct
          engine_kwargs:
            max_model_len: 4096
            tensor_parallel_size: 2
"""


def _write(tmp_path: Path, text: str, name: str = "svc.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ------------------------------------------------------------------------------------------------ versions


def test_ray_llm_releases_2_57_to_2_60() -> None:
    """The ``ray`` wheels 2.57.0 - 2.60.0 on PyPI pin ``vllm[audio]==`` 0.25.1, 0.26.0, 0.27.0 and 0.29.0 for the
    ``llm`` extra (their METADATA ``Requires-Dist``; the .1 patch releases pin the same), so their ray-llm images
    name those releases, read as exact pins (no KV504 assumption)."""
    from kvlint.engines.images import RAY_LLM_PINNED

    for ray, vllm in (("2.57", "0.25.1"), ("2.58", "0.26.0"), ("2.59", "0.27.0"), ("2.60", "0.29.0")):
        assert engine_version(f"rayproject/ray-llm:{ray}.0-py312-cu128") == vllm
        assert ray in RAY_LLM_PINNED


def test_ray_llm_image_tag_names_the_vllm_release_of_that_ray() -> None:
    assert ray_llm_vllm("rayproject/ray-llm:2.52.0-py311-cu128") == RAY_LLM_VLLM["2.52"]
    assert engine_version("rayproject/ray-llm:2.56.0-py312-cu130") == RAY_LLM_VLLM["2.56"] == "0.22.0"
    assert engine_version("anyscale/ray-llm:2.46.0-py311-cu124") == RAY_LLM_VLLM["2.46"]
    for unknown in (
        "rayproject/ray-llm:nightly-py311-cu128",
        "rayproject/ray-llm:2.99.0",
        "rayproject/ray:2.52.0",
    ):
        assert ray_llm_vllm(unknown) is None, unknown
    assert engine_version("rayproject/ray:2.52.0-py311-gpu") is None


# ------------------------------------------------------------------------------------------------ real files


def test_collected_ray_serve_llm_files_are_read_and_sized() -> None:
    """Every collected Ray Serve LLM RayService gives one vLLM container per llm_configs entry, started as Ray
    Serve LLM starts it, with its findings inside the serveConfigV2 block or at the worker's resources; none is
    left 'not read'."""
    assert len(SERVE_LLM) >= 5
    for path in SERVE_LLM:
        result = run_check([str(path)], OPTS)
        serving = _serving(result)
        assert serving, path
        assert summarise(result).not_read == 0, path
        start, end = _block_lines(path)
        for cr in serving:
            s = cr.serving
            assert s.engine == "vllm" and s.get("distributed_executor_backend") == "ray", path
            assert s.get("served_model_name") is not None, path
            assert s.command_loc is not None and start <= s.command_loc.line <= end, path
        for d in result.diagnostics:
            if d.object and d.loc is not None and d.rule not in ("KV501",):
                assert d.loc.file == str(path)


def test_tensor_and_pipeline_sizes_come_from_engine_kwargs_at_their_lines() -> None:
    path = next(p for p in SERVE_LLM if "d0b6337" in str(p))
    result = run_check([str(path)], OPTS)
    (cr,) = _serving(result)
    s = cr.serving
    assert s.version == RAY_LLM_VLLM["2.46"]  # rayproject/ray-llm:2.46.0
    assert s.get("tensor_parallel_size") == 8 and s.get("pipeline_parallel_size") == 2
    assert s.loc("tensor_parallel_size").line == _line_of(path, "tensor_parallel_size:")
    assert s.loc("pipeline_parallel_size").line == _line_of(path, "pipeline_parallel_size:")
    # accelerator_type: H100 -> the catalogue's H100, decided at that line
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-h100-sxm5-80gb"
    assert cr.placement.loc is not None and cr.placement.loc.line == _line_of(path, "accelerator_type:")
    # the GPUs are the worker container's, at its resources
    assert cr.placement.gpus == 8
    assert cr.placement.gpus_loc is not None and cr.placement.gpus_loc.line > _block_lines(path)[1]


def test_an_engine_kwarg_the_release_lacks_is_reported_at_its_key() -> None:
    """KubeRay's llm-serve sample passes ``device: auto``, an option vLLM dropped after 0.9 (Ray 2.52's image
    runs a later vLLM): the finding is at that key inside serveConfigV2."""
    path = COLLECTED / "ray-project__kuberay__ray-operator__config__samples__ray-service.llm-serve.yaml"
    result = run_check([str(path)], OPTS)
    unknown = [d for d in result.diagnostics if d.rule == "KV205"]
    assert unknown and unknown[0].loc.line == _line_of(path, "device: auto")
    # Ray Serve LLM does not strip it: from_llm_config refuses a key AsyncEngineArgs lacks, so the error stands
    assert unknown[0].severity == "error"
    assert "Unknown engine argument: device" in unknown[0].message
    assert unknown[0].fix == "remove device from engine_kwargs"
    old = COLLECTED / "versions" / "280902f" / path.name  # Ray 2.46 -> vLLM 0.8.5 still had --device
    assert not [d for d in run_check([str(old)], OPTS).diagnostics if d.rule == "KV205"]


def test_nightly_image_leaves_the_vllm_release_to_the_user() -> None:
    path = next(p for p in SERVE_LLM if "dc203e2" in str(p))
    result = run_check([str(path)], OPTS)
    kv208 = [d for d in result.diagnostics if d.rule == "KV208"]
    assert kv208 and "ray-llm:nightly" in kv208[0].message


# ------------------------------------------------------------------------------------------------ built pod


def test_engine_container_carries_ray_defaults_runtime_env_and_the_worker_pod(tmp_path: Path) -> None:
    text = RAY_SERVICE.format(entries=ENTRY.format(i=0)).replace(
        "      import_path: ray.serve.llm:build_openai_app\n",
        "      import_path: ray.serve.llm:build_openai_app\n      runtime_env:\n        env_vars:\n"
        "          VLLM_USE_V1: '1'\n",
    )
    path = _write(tmp_path, text)
    (w,) = find_workloads(load_text(text, str(path)).documents)
    c = w.pod_spec["containers"][0]
    assert c["image"] == "rayproject/ray-llm:2.52.0-py311-cu128"
    assert list(c["command"]) == ["vllm", "serve"]
    args = list(c["args"])
    assert args[:5] == [
        "Qwen/Qwen2.5-7B-Instruct",
        "--served-model-name",
        "m0",
        "--distributed-executor-backend",
        "ray",
    ]
    assert {"name": "VLLM_USE_V1", "value": "1"} in [dict(e) for e in c["env"]]
    assert w.pod_spec["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    result = run_check([str(path)], OPTS)
    (cr,) = _serving(result)
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-l4"
    assert cr.serving.get("tensor_parallel_size") == 2


def test_build_llm_deployment_takes_one_llm_config_as_args(tmp_path: Path) -> None:
    text = RAY_SERVICE.format(entries="").replace(
        "      import_path: ray.serve.llm:build_openai_app\n      args:\n        llm_configs:\n",
        "      import_path: ray.serve.llm:build_llm_deployment\n      args:\n"
        "        model_loading_config: {model_id: x, model_source: Qwen/Qwen2.5-7B-Instruct}\n",
    )
    result = run_check([str(_write(tmp_path, text))], OPTS)
    (cr,) = _serving(result)
    assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct"


# ------------------------------------------------------------------------------------------------ not modelled


def test_file_path_entries_and_python_apps_stay_located_not_read(tmp_path: Path) -> None:
    entries = "        - models/qwen.yaml\n" + ENTRY.format(i=1)
    text = RAY_SERVICE.format(entries=entries).replace(
        "    applications:\n",
        "    applications:\n    - name: own\n      import_path: my_module:app\n",
    )
    path = _write(tmp_path, text)
    result = run_check([str(path)], OPTS)
    assert len(_serving(result)) == 1  # the inline entry is read
    notes = [
        d for d in result.diagnostics if d.rule == "KV503" and d.message.startswith("kvlint does not read")
    ]
    lines = sorted(d.loc.line for d in notes)
    assert lines == [_line_of(path, "import_path: my_module:app"), _line_of(path, "models/qwen.yaml")]
    assert summarise(result).not_read == 2


def test_other_ray_serve_llm_builders_are_a_located_note(tmp_path: Path) -> None:
    text = RAY_SERVICE.format(entries=ENTRY.format(i=0)).replace("build_openai_app", "build_pd_openai_app")
    path = _write(tmp_path, text)
    result = run_check([str(path)], OPTS)
    assert not _serving(result)
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert note.loc.line == _line_of(path, "build_pd_openai_app") and "not modelled" in note.message


def test_a_python_only_rayservice_keeps_the_object_note() -> None:
    """A RayService whose serve config never names ray.serve.llm, nor a sample program kvlint restates
    (kvlint.workloads.rayserve._SAMPLE_PROGRAMS), is read as before (the object's note)."""
    from kvlint.workloads.rayserve import _SAMPLE_PROGRAMS

    path = next(
        p
        for p in sorted(COLLECTED.glob("*.yaml"))
        if "kind: RayService" in p.read_text()
        and "ray.serve.llm" not in p.read_text()
        and not any(program in p.read_text() for program in _SAMPLE_PROGRAMS)
    )
    result = run_check([str(path)], OPTS)
    assert any(d.rule == "KV503" and "serveConfigV2" in d.message for d in result.diagnostics)


# ------------------------------------------------------------------------------------------------ hostile


@pytest.mark.parametrize(
    ("fragment", "where"),
    [
        ("      args:\n        llm_configs: 7\n", "llm_configs: 7"),
        ("      args:\n        llm_configs:\n        - [1, 2]\n", "- [1, 2]"),
        ("      args:\n        llm_configs:\n        - {engine_kwargs: {}}\n", "engine_kwargs: {}"),
        (
            "      args:\n        llm_configs:\n        - model_loading_config: {model_id: a}\n"
            "          engine_kwargs: [1]\n",
            "engine_kwargs: [1]",
        ),
        (
            "      args:\n        llm_configs:\n        - model_loading_config: {model_id: a}\n"
            "          engine_kwargs: {model: b}\n",
            "engine_kwargs: {model: b}",
        ),
    ],
)
def test_wrong_types_are_a_located_kv002(tmp_path: Path, fragment: str, where: str) -> None:
    text = RAY_SERVICE.format(entries="").replace("      args:\n        llm_configs:\n", fragment)
    path = _write(tmp_path, text)
    result = run_check([str(path)], OPTS)
    kv002 = [d for d in result.diagnostics if d.rule == "KV002" and "serveConfigV2" in d.message]
    assert kv002 and kv002[0].loc.line == _line_of(path, where)


def test_serve_config_that_does_not_parse_is_a_kv002(tmp_path: Path) -> None:
    text = RAY_SERVICE.format(entries="        - {unclosed: [\n")
    result = run_check([str(_write(tmp_path, text))], OPTS)
    assert any(d.rule == "KV002" and "serveConfigV2 cannot be read" in d.message for d in result.diagnostics)


def test_entries_are_capped_and_the_rest_reported(tmp_path: Path) -> None:
    n = MAX_LLM_CONFIGS + 5
    entries = "".join(f"        - {{model_loading_config: {{model_id: m{i}}}}}\n" for i in range(n))
    text = RAY_SERVICE.format(entries=entries)
    docs = load_text(text, str(_write(tmp_path, text))).documents
    ws = find_workloads(docs)
    assert len(ws) == MAX_LLM_CONFIGS
    capped = [f for f in ws[0].findings if f.rule == "KV002" and "more than" in f.message]
    assert len(capped) == 1


def test_without_the_file_positions_fall_back_to_the_serve_config(tmp_path: Path) -> None:
    """Read from standard input (no file to map the block scalar into), every position is serveConfigV2's."""
    text = RAY_SERVICE.format(entries=ENTRY.format(i=0))
    (w,) = find_workloads(load_text(text, "-").documents)
    args = w.pod_spec["containers"][0]["args"]
    assert {loc.line for loc in args.locs} == {_line_of(_write(tmp_path, text), "serveConfigV2:")}


def test_many_llm_configs_through_the_webhook_path() -> None:
    """The admission webhook's path (the object as JSON, serveConfigV2 a JSON string without a file to map
    positions into) reads every one of 200 llm_configs (its time is measured in bench/, not here)."""
    import yaml

    from kvlint.webhook.worker import lint_object

    entries = "".join(ENTRY.format(i=i) for i in range(200))
    obj = yaml.safe_load(RAY_SERVICE.format(entries=entries))
    result = lint_object(obj, "<admission RayService/svc>.json", OPTS)
    assert len(_serving(result)) == 200


@pytest.mark.parametrize(("max_replicas", "reported"), [(1, True), (2, False)])
def test_more_gpu_bundles_than_the_worker_group_has_is_kv403(
    tmp_path: Path, max_replicas: int, reported: bool
) -> None:
    """TP 2 x PP 2 is 4 GPU bundles: one worker pod of 2 GPUs never holds them, two do."""
    entry = ENTRY.format(i=0) + "            pipeline_parallel_size: 2\n"
    text = RAY_SERVICE.format(entries=entry).replace(
        "      replicas: 1\n", f"      replicas: 1\n      maxReplicas: {max_replicas}\n"
    )
    path = _write(tmp_path, text)
    kv403 = [d for d in run_check([str(path)], OPTS).diagnostics if d.rule == "KV403"]
    assert bool(kv403) == reported
    if reported:
        assert "placement group of 4 GPU bundles" in kv403[0].message
        assert kv403[0].loc.line in (
            _line_of(path, "tensor_parallel_size"),
            _line_of(path, "pipeline_parallel_size"),
        )


def test_false_kwargs_follow_the_release_options(tmp_path: Path) -> None:
    """``false`` is the ``--no-`` form vLLM accepts, and an argument the release lacks (Ray: "Unknown engine
    argument") is a KV205 at its key whatever its value."""
    entry = ENTRY.format(i=0) + "            enable_prefix_caching: false\n            no_such_arg: false\n"
    path = _write(tmp_path, RAY_SERVICE.format(entries=entry))
    result = run_check([str(path)], OPTS)
    (cr,) = _serving(result)
    assert cr.serving.get("enable_prefix_caching") is False
    kv205 = [d for d in result.diagnostics if d.rule == "KV205"]
    assert [d.loc.line for d in kv205] == [_line_of(path, "no_such_arg")]


def test_assumptions_are_a_located_kv504(tmp_path: Path) -> None:
    """Ray 2.52's wheel asks vllm>=0.11.0 (an assumption, at the worker image); Ray 2.56 pins it (none); custom
    placement group bundles are not modelled (at placement_group_config)."""
    entry = ENTRY.format(i=0) + "          placement_group_config:\n            bundles: [{GPU: 0.5}]\n"
    path = _write(tmp_path, RAY_SERVICE.format(entries=entry))
    notes = [d for d in run_check([str(path)], OPTS).diagnostics if d.rule == "KV504"]
    worker_image = _line_of(path, "image:", _line_of(path, "name: ray-worker"))
    assert sorted(d.loc.line for d in notes) == sorted(
        [worker_image, _line_of(path, "placement_group_config")]
    )
    pinned = _write(
        tmp_path, RAY_SERVICE.format(entries=ENTRY.format(i=0)).replace("2.52.0", "2.56.0"), "p.yaml"
    )
    assert not [d for d in run_check([str(pinned)], OPTS).diagnostics if d.rule == "KV504"]


# ------------------------------------------------------------------------------------------------ import paths

#: ``import_path`` spellings of ``ray.serve.llm:build_openai_app`` that Ray Serve imports (KubeRay reads
#: serveConfigV2 as YAML, so double-quoted escapes are decoded; ray._private.utils.import_attr splits a path
#: without a colon at its last dot).
BUILDER_SPELLINGS = (
    '"ray.serve\\x2Ellm:build_openai_app"',
    '"ray\\u002eserve.llm:build_openai_app"',
    '"ray.serve.\\\n        llm:build_openai_app"',
    "ray.serve.llm.build_openai_app",
)


@pytest.mark.parametrize("spelling", BUILDER_SPELLINGS)
def test_every_spelling_of_the_builder_is_read(tmp_path: Path, spelling: str) -> None:
    """A RayService whose import_path spelled Ray Serve LLM's builder with YAML escapes was not read at all (the
    text did not hold ``ray.serve.llm``: no finding, the engine passing as checked), and the dotted form was a
    KV503 'builder not modelled' info; both are read now, as the plain spelling is."""
    entry = ENTRY.format(i=0) + "            no_such_arg: 1\n"
    plain = RAY_SERVICE.format(entries=entry)
    text = plain.replace("import_path: ray.serve.llm:build_openai_app", f"import_path: {spelling}")
    assert text != plain
    want = sorted(
        (d.rule, d.loc.line) for d in run_check([str(_write(tmp_path, plain, "a.yaml"))], OPTS).diagnostics
    )
    got = run_check([str(_write(tmp_path, text, "b.yaml"))], OPTS)
    assert any(d.rule == "KV205" and "no_such_arg" in d.message for d in got.diagnostics), got.diagnostics
    shift = text.count("\n") - plain.count("\n")
    assert sorted((d.rule, d.loc.line - (shift if d.loc.line > 9 else 0)) for d in got.diagnostics) == want


def test_a_backslash_alone_does_not_read_user_code_applications(tmp_path: Path) -> None:
    """A serveConfigV2 parsed for its escapes whose applications are the user's own code is left as before
    (no KV503 per application, no KV002 when it does not parse)."""
    for serve in (
        '    applications:\n    - name: a\n      import_path: "app\\x2emain:deployment"\n',
        '    applications: [ "\\x2e\n',
    ):
        text = RAY_SERVICE.format(entries="").split("  serveConfigV2: |\n")
        text = (
            text[0]
            + "  serveConfigV2: |\n"
            + serve
            + "  rayClusterConfig:"
            + text[1].split("  rayClusterConfig:")[1]
        )
        result = run_check([str(_write(tmp_path, text))], OPTS)
        assert not [d for d in result.diagnostics if d.rule in ("KV002", "KV503")], result.diagnostics


def test_entries_copying_the_worker_pod_are_bounded(tmp_path: Path) -> None:
    """Each entry runs in a copy of the Ray worker pod: past MAX_COPIED_VALUES copied values (here a worker of
    2,000 env variables, 6,000 values a copy) the rest are not read and one KV001 error, at the first entry
    left, says so, in the CLI as in the webhook; the entries read are sized as before."""
    from kvlint.workloads.rayserve import MAX_COPIED_VALUES

    env = "            env:\n" + "".join(f"            - {{name: E{i}, value: v{i}}}\n" for i in range(2000))
    text = RAY_SERVICE.format(entries="".join(ENTRY.format(i=i) for i in range(100)))
    text = text.replace(
        '                nvidia.com/gpu: "2"\n', '                nvidia.com/gpu: "2"\n' + env
    )
    path = _write(tmp_path, text)
    result = run_check([str(path)], OPTS)
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert kv001.severity == "error" and "too large to read" in kv001.message
    read = len(_serving(result))
    assert 1 < read < 100 and (read - 1) * 6000 <= MAX_COPIED_VALUES < read * 6000
    assert f"it read the first {read} entries" in kv001.message
    assert kv001.loc.line == _line_of(path, f"model_id: m{read}") - 1


KUBERAY_LLM = COLLECTED / "ray-project__kuberay__ray-operator__config__samples__ray-service.llm-serve.yaml"
#: base64 of "ray.serve.llm:build_openai_app"
_B64_BUILDER = "cmF5LnNlcnZlLmxsbTpidWlsZF9vcGVuYWlfYXBw"


def _kuberay_llm_with_import_path(tmp_path: Path, value: str) -> Path:
    """KubeRay's Ray Serve LLM sample (fixtures/collected) with its import_path written as ``value``."""
    plain = KUBERAY_LLM.read_text()
    text = plain.replace("import_path: ray.serve.llm:build_openai_app", f"import_path: {value}")
    assert text != plain
    return _write(tmp_path, text)


def test_a_binary_import_path_is_read_as_kuberay_decodes_it(tmp_path: Path) -> None:
    """KubeRay reads serveConfigV2 with Go's YAML decoder, which turns ``!!binary`` into the decoded text: the
    builder below is Ray Serve LLM's, and the engine runs. It was not read at all (no finding, no container)."""
    want = sorted((d.rule, d.loc.line) for d in run_check([str(KUBERAY_LLM)], OPTS).diagnostics)
    path = _kuberay_llm_with_import_path(tmp_path, f"!!binary {_B64_BUILDER}")
    got = run_check([str(path)], OPTS)
    assert len(_serving(got)) == len(_serving(run_check([str(KUBERAY_LLM)], OPTS))) == 1
    (note,) = [d for d in got.diagnostics if d.rule == "KV504" and "!!binary" in d.message]
    assert "'ray.serve.llm:build_openai_app'" in note.message and note.severity == "info"
    assert note.loc.line == _line_of(path, "import_path: !!binary")
    assert sorted((d.rule, d.loc.line) for d in got.diagnostics if d is not note) == want


def test_a_binary_import_path_that_is_not_base64_is_a_kv002(tmp_path: Path) -> None:
    # Go's base64.StdEncoding refuses the '*', so KubeRay cannot read the config (PyYAML would skip it)
    path = _kuberay_llm_with_import_path(tmp_path, f"!!binary {_B64_BUILDER[:10]}*{_B64_BUILDER[10:]}")
    got = run_check([str(path)], OPTS)
    (d,) = [d for d in got.diagnostics if d.rule == "KV002"]
    assert "invalid base64" in d.message and "import_path" in d.message
    assert not _serving(got)


@pytest.mark.parametrize(
    "value",
    [
        # the tag written with a URI escape, and through a %TAG handle whose prefix holds half the name: neither
        # spells "binary", and both are the binary tag for Go's YAML reader (go-yaml scans tags as libyaml does)
        f"!!bin%61ry {_B64_BUILDER}",
        f"!<tag:yaml.org,2002:binary> {_B64_BUILDER}",
    ],
)
def test_every_spelling_of_the_binary_tag_is_decoded(tmp_path: Path, value: str) -> None:
    path = _kuberay_llm_with_import_path(tmp_path, value)
    got = run_check([str(path)], OPTS)
    assert len(_serving(got)) == 1, got.diagnostics
    (note,) = [d for d in got.diagnostics if d.rule == "KV504" and "!!binary" in d.message]
    assert "'ray.serve.llm:build_openai_app'" in note.message


def test_a_tag_handle_spelling_binary_in_halves_is_decoded(tmp_path: Path) -> None:
    plain = KUBERAY_LLM.read_text()
    text = plain.replace(
        "  serveConfigV2: |\n",
        "  serveConfigV2: |\n    %TAG !h! tag:yaml.org,2002:bi\n    ---\n",
    ).replace("import_path: ray.serve.llm:build_openai_app", f"import_path: !h!nary {_B64_BUILDER}")
    got = run_check([str(_write(tmp_path, text))], OPTS)
    assert len(_serving(got)) == 1, got.diagnostics


def test_binary_values_are_found_without_composing_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The !!binary values were found by composing the whole serveConfigV2 again with PyYAML's pure-Python
    composer: 6 CPU s for a 1 MB config (a review's budget is 2 s), whatever its !!binary values, a mention of
    "binary" sufficing. They are found in one pass over the parser's events: no node is composed, however long
    the config. An alias of a !!binary scalar is decoded too, a shared mapping's values once, and a note quotes
    at most 200 characters of a decoded value."""
    import base64

    import yaml

    composed = []
    real = yaml.composer.Composer.compose_node

    def counting(self, parent, index):  # type: ignore[no-untyped-def]
        composed.append(1)
        return real(self, parent, index)

    monkeypatch.setattr(yaml.composer.Composer, "compose_node", counting)
    long_text = "x" * 5000
    extra = (
        f"    anchored: &b !!binary {_B64_BUILDER}\n"
        f"    again: *b\n"
        f"    shared: &m {{k: !!binary {base64.b64encode(long_text.encode()).decode()}}}\n"
        "    copy: *m\n"
        "    filler: [" + ",".join(["1"] * 20000) + "]\n"
    )
    plain = KUBERAY_LLM.read_text()
    text = plain.replace("  serveConfigV2: |\n", "  serveConfigV2: |\n" + extra)
    path = _write(tmp_path, text.replace("import_path: ray.serve.llm:build_openai_app", "import_path: *b"))
    got = run_check([str(path)], OPTS)
    assert not composed
    assert len(_serving(got)) == 1, got.diagnostics
    notes = [d for d in got.diagnostics if d.rule == "KV504" and "!!binary" in d.message]
    assert sorted(d.loc.line for d in notes) == [
        _line_of(path, "anchored: &b"),
        _line_of(path, "again: *b"),
        _line_of(path, "shared: &m"),
        _line_of(path, "import_path: *b"),
    ]
    (long,) = [d for d in notes if "xxx" in d.message]
    assert f"{'x' * 200!r}..." in long.message and len(long.message) < 500
