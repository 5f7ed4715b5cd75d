"""Real public manifests kvlint had not seen (new-user pass 11, fixtures/collected): what a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.engines.images import image_mentions_engine, is_nim_image
from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"


def _check(name: str, **opts):
    return run_check([str(COLLECTED / name)], Options(allow_hub=False, **opts))


def test_kaito_transformers_runtime_is_not_taken_for_tgi() -> None:
    """KAITO's custom-model example runs Hugging Face Transformers (``accelerate launch tfs/inference_api.py
    --pipeline text-generation``) on the kaito-base image. The pipeline task ``text-generation`` was taken for
    TGI: a KV503 warning 'engine command cannot be read' whose fix said to run ``text-generation-launcher``.
    Transformers is not an engine kvlint models, so the container is not a serving container, as Ollama's is."""
    res = _check("kaito-project__kaito__examples__custom-model-integration__custom-model-deployment.yaml")
    assert res.workloads == 1
    assert not res.containers
    assert not [d for d in res.diagnostics if d.rule == "KV503"]
    assert not any("text-generation-launcher" in (d.fix or "") for d in res.diagnostics)


def test_tgi_launcher_in_an_unreadable_script_still_names_tgi() -> None:
    """The TGI hint still comes from TGI's own names: a wrapper kvlint cannot follow whose words name
    ``text-generation-launcher`` gets the KV503 with TGI's direct command (a made-up container)."""
    from kvlint.engines import parse_container
    from kvlint.source import LDict

    c = LDict(
        {
            "name": "tgi",
            "image": "example.com/custom:1",
            "command": ["/opt/run.sh", "--config", "/etc/text-generation-launcher.toml"],
        }
    )
    cfg = parse_container(c)
    assert cfg is not None and cfg.engine == "tgi"
    (f,) = [f for f in cfg.findings if f.rule == "KV503"]
    assert "text-generation-launcher" in (f.fix or "")


def test_nim_image_naming_vllm_gets_only_the_nim_note() -> None:
    """NIM operator's endpoint-picker sample runs ``nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-...``: the
    ``vllm`` in the repository made the NIMService's container a vLLM container whose command could not be
    read (a KV503 warning 'no known engine entrypoint' telling to run ``vllm serve``, beside the NIM note, and
    'command unreadable' under --require-sizing). A NIM image starts the NIM launcher, as the sample's other
    NIMServices (``nvcr.io/nim/nvidia/llm-nim``) are read: only the note."""
    res = _check("NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__epp__nimservice.yaml")
    kv503 = [d for d in res.diagnostics if d.rule == "KV503"]
    assert [d.severity for d in kv503] == ["info"]
    assert "NIM launcher" in kv503[0].message
    assert not res.containers
    other = _check(
        "NVIDIA__k8s-nim-operator__config__samples__nim__serving__standalone__no-precaching__multi-llm-hf.yaml"
    )
    assert [(d.rule, d.severity) for d in other.diagnostics] == [("KV503", "info")]


def test_nim_images() -> None:
    assert is_nim_image("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3")
    assert is_nim_image("nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-4-devel-llama3.1-8b-instruct:2.0.0")
    assert not is_nim_image("nvcr.io/nvidia/vllm:25.09-py3")  # NGC's vLLM container runs vLLM itself
    assert not is_nim_image("example.com/nim/vllm:1")  # not NGC
    assert image_mentions_engine("nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-4-devel:2.0.0") is None
    assert image_mentions_engine("nvcr.io/nvidia/vllm:25.09-py3") == "vllm"


def _kv403(path: Path):
    res = run_check([str(path)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV403"]
    return d


def test_kv403_offers_only_parallel_sizes_the_engine_accepts(tmp_path: Path) -> None:
    """The Open WebUI stack's vLLM backend requests 3 GPUs for --tensor-parallel-size 2 (Qwen3-32B: 64
    attention heads, 8 KV heads). KV403's fix said 'raise tensor-parallel-size/data-parallel-size to use all 3':
    TP 3 stops vLLM ('Total number of attention heads (64) must be divisible by tensor parallel size (3)'), and
    no data-parallel size makes 2 x DP = 3. Only the size that works is offered; on 4 GPUs both TP 4 and DP 2
    are (that pod is the same manifest with the GPU count changed, made up for the test)."""
    real = COLLECTED / "uzunenes__k8s-ai-stack__k8s__vllm-dep.yaml"
    d = _kv403(real)
    assert "uses only 2" in d.message and d.fix == "request 2 GPUs"
    four = tmp_path / "four.yaml"
    four.write_text(real.read_text().replace("nvidia.com/gpu: '3'", "nvidia.com/gpu: '4'"))
    d = _kv403(four)
    # the option as the manifest writes it (--tensor-parallel-size 2): engines53
    assert d.fix == "request 2 GPUs, or set --tensor-parallel-size 4 or --data-parallel-size 2 to use all 4"


def test_kv403_on_neuron_says_the_raised_tp_must_divide_the_heads(tmp_path: Path) -> None:
    """vLLM on inf2.24xlarge: 12 NeuronCores requested, TP 8 used. Its --model path
    /models/Qwen3-Coder-30B-A3B-Instruct (where its init container downloads Qwen/Qwen3-Coder-30B-A3B-Instruct)
    names that catalogued model, whose attention heads 12 does not divide (vLLM's ModelConfig check holds on
    Neuron too): only the NeuronCore request is offered. With the model unknown (the same manifest with the path
    renamed, made up for the test), 'raise tensor-parallel-size to 12' cannot be checked against its heads: the
    fix says so instead of offering it as is."""
    from kvlint.models import catalogue

    real = (
        COLLECTED
        / "manu-joy__rosa-llm-driven-deployment__code-server-workbench__vllm-qwen3-coder-deployment.yaml"
    )
    entry = catalogue.lookup("Qwen/Qwen3-Coder-30B-A3B-Instruct")
    assert entry is not None and catalogue.load_config(entry)[0]["num_attention_heads"] % 12 != 0
    d = _kv403(real)
    assert d.fix == "request 8 NeuronCores (aws.amazon.com/neuroncore)"
    text = real.read_text()
    assert '--model="/models/Qwen3-Coder-30B-A3B-Instruct"' in text
    renamed = tmp_path / "renamed.yaml"
    renamed.write_text(
        text.replace('--model="/models/Qwen3-Coder-30B-A3B-Instruct"', '--model="/models/my-coder"')
    )
    d = _kv403(renamed)
    assert d.fix.endswith("raise tensor-parallel-size to 12 (if it divides the model's attention heads)")


def test_kv403_ray_executor_without_a_ray_cluster() -> None:
    """AIBrix's vineyard sample runs --tensor-parallel-size 4 --distributed-executor-backend ray in a one-GPU
    Deployment that neither starts a Ray cluster nor names one. KV403 was skipped ('a Ray cluster may contribute
    GPUs from other pods'); vLLM's ray.init() then starts a local instance with the pod's one GPU and the
    4-GPU placement group is never placed. Now the error, with the Ray reason; a LeaderWorkerSet leader that
    runs `ray start` (the same pod in a group, made up for the test) is still left to Ray."""
    path = COLLECTED / "vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml"
    d = _kv403(path)
    assert d.severity == "error" and "needs 4 GPUs but the pod requests 1" in d.message
    assert "no Ray cluster to join" in d.message and "Ray cluster" in (d.fix or "")
    text = path.read_text()
    assert "ray start" not in text.lower() and "RAY_ADDRESS" not in text


def test_kv403_ray_executor_with_a_ray_address_is_left_to_ray(tmp_path: Path) -> None:
    """The same Deployment given RAY_ADDRESS (made up for the test): vLLM joins that cluster, whose other nodes
    may hold the GPUs, so KV403 stays silent as before."""
    doc = (COLLECTED / "vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml").read_text()
    joined = doc.replace(
        "          env:\n",
        "          env:\n            - name: RAY_ADDRESS\n              value: ray-head:6379\n",
        1,
    )
    assert joined != doc
    p = tmp_path / "joined.yaml"
    p.write_text(joined)
    res = run_check([str(p)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV403"]
    assert [
        d
        for d in _check("vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml").diagnostics
        if d.rule == "KV403"
    ]


def test_a_command_that_only_sleeps_serves_nothing() -> None:
    """neuralmagic's debugging ServingRuntime sets ``command: [sleep]``, ``args: [infinity]`` on the vLLM image:
    the command replaces the image's entrypoint and only waits. It got a KV503 warning 'engine command cannot be
    read' (fix: run vllm serve), while the same wait written as ``sh -c 'sleep infinity'`` is no serving
    container. Now both are none; args alone (``args: [sleep, infinity]``) still go to the engine entrypoint."""
    from kvlint.engines import parse_container
    from kvlint.source import LDict

    res = _check("robertgshaw2-neuralmagic__vllm-k8s__vllm-kserve-pvc__serving-runtime.yml")
    assert not res.containers and not [d for d in res.diagnostics if d.rule == "KV503"]
    img = "vllm/vllm-openai:v0.11.0"
    assert (
        parse_container(LDict({"name": "c", "image": img, "command": ["sleep"], "args": ["infinity"]}))
        is None
    )
    assert parse_container(LDict({"name": "c", "image": img, "command": ["tail", "-f", "/dev/null"]})) is None
    assert parse_container(LDict({"name": "c", "image": img, "args": ["sleep", "infinity"]})) is not None


def _render_kit(name: str, prefix: str) -> str:
    """A sample-genai-on-eks-starter-kit template rendered as the kit's scripts render it (utils.mjs:
    KARPENTER_PREFIX is eks.amazonaws.com in EKS Auto Mode, else karpenter.k8s.aws; DOCKER_IMAGE_PREFIX empty
    without an ECR pull-through cache)."""
    text = (COLLECTED / name).read_text()
    return text.replace("{{{KARPENTER_PREFIX}}}", prefix).replace("{{DOCKER_IMAGE_PREFIX}}", "")


def test_ec2_instance_family_label_names_the_gpu() -> None:
    """The EKS starter kit pins its SGLang and TGI Deployments with ``<prefix>/instance-family: g6e`` (Karpenter
    or EKS Auto Mode). kvlint read neither label: KV501 'cannot tell which GPU' and a fleet plan. Every g6e
    instance type has L40S GPUs, so the family names the L40S, and the SGLang pod (context 32,768 at
    mem-fraction-static 0.90 for Qwen3-32B-FP8) is planned on it."""
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents

    name = "aws-samples__sample-genai-on-eks-starter-kit__components__llm-model__sglang__model-qwen3-32b-fp8.template.yaml"
    for prefix in ("eks.amazonaws.com", "karpenter.k8s.aws"):
        res = run_documents(
            load_text(_render_kit(name, prefix), "qwen3-32b-fp8.yaml"), Options(allow_hub=False)
        )
        (cr,) = res.containers
        assert cr.placement is not None and cr.placement.accelerator is not None
        assert cr.placement.accelerator.id == "nvidia-l40s", prefix
        assert cr.plan is not None and not [d for d in res.diagnostics if d.rule == "KV501"]


def test_instance_family_table() -> None:
    from kvlint.accelerators.registry import instance_family

    acc, n = instance_family("p5")
    assert acc is not None and acc.id == "nvidia-h100-sxm5-80gb" and n >= 2
    assert instance_family("g6f")[0] is None  # fractional L4 slices, not whole L4s
    assert instance_family("c5") == (None, 0)  # not a GPU family of the table
    assert instance_family("inf2")[0] is None  # Inferentia: no GPU


def test_serve_in_args_quotes_the_words_argparse_leaves_over() -> None:
    """The Open WebUI stack's backend passes ``args: [serve, qwen/qwen3-32B, ...]`` to vllm/vllm-openai, whose
    entrypoint is ``vllm serve``. KV205 quoted 'unrecognized arguments: serve', but ``vllm serve`` takes
    ``serve`` as its one positional (the model tag) and stops at the model left over; the older api_server
    entrypoint leaves both words over."""
    res = _check("uzunenes__k8s-ai-stack__k8s__vllm-dep.yaml")
    (d,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert "'unrecognized arguments: qwen/qwen3-32B'" in d.message
    assert "'unrecognized arguments: serve qwen/qwen3-32B'" in d.message


def test_require_sizing_does_not_pass_a_nim_service_it_could_not_read() -> None:
    """A NIMService's engine and its settings come from the NIM launcher's profile, which kvlint does not read,
    so no serving container is sized; --require-sizing passed it anyway (exit 0: its note was not counted as
    'not read' as the RayService's and KAITO MultiRoleInference's are). Now it is 'operator settings not
    read'."""
    from kvlint.sizing import unread

    for name in (
        "NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__epp__nimservice.yaml",
        "NVIDIA__k8s-nim-operator__config__samples__nim__serving__standalone__no-precaching__multi-llm-hf.yaml",
    ):
        res = _check(name)
        assert [why for _d, why in unread(res)] == ["operator settings not read"], name


def test_kv404_is_left_to_the_lone_ray_kv403(tmp_path: Path) -> None:
    """AIBrix's vineyard sample (one GPU, TP 4 on a lone Ray executor) got KV404 '4 GPU workers communicate
    through /dev/shm' beside KV403, whose placement group is never placed: the workers never start in this pod,
    and the /dev/shm matters only once the pod has their 4 GPUs, one of KV403's remedies. KV403's fix now says
    so and KV404 is not reported; with the 4 GPUs (the test's edit), the workers start and KV404 is."""
    path = COLLECTED / "vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml"
    res = run_check([str(path)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV403"]
    assert (
        "request 4 GPUs per pod (nvidia.com/gpu), plus an emptyDir {medium: Memory} mounted at /dev/shm"
        in (d.fix or "")
    )
    assert not [d for d in res.diagnostics if d.rule == "KV404"]
    text = path.read_text()
    four = text.replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "4"')
    assert four != text
    p = tmp_path / "four.yaml"
    p.write_text(four)
    res = run_check([str(p)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV403" and d.severity == "error"]
    assert [d for d in res.diagnostics if d.rule == "KV404"]


def test_lone_ray_kv403_beyond_one_node_still_gives_the_dev_shm_advice(tmp_path: Path) -> None:
    """The same sample at TP 4 x PP 4: 16 GPU workers exceed one node, so KV403's remedy spans nodes instead of
    requesting the GPUs, and had no /dev/shm note while KV404 stayed hidden beside it: the advice was shown
    nowhere. The remedy now names it; with a memory-backed /dev/shm in the pod it does not."""
    path = COLLECTED / "vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml"
    text = path.read_text()
    tp = '            - --tensor-parallel-size\n            - "4"\n'
    assert text.count(tp) == 1
    pp16 = text.replace(tp, tp + '            - --pipeline-parallel-size\n            - "4"\n')
    p = tmp_path / "pp.yaml"
    p.write_text(pp16)
    res = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV403"]
    assert "16 GPUs do not fit one node" in (d.fix or "")
    assert "emptyDir {medium: Memory} mounted at /dev/shm, which KV404 requires" in (d.fix or "")
    assert not [d for d in res.diagnostics if d.rule == "KV404"]
    # a pod that already has a memory-backed /dev/shm is not told to add one
    vols, mounts = "      volumes:\n", "          volumeMounts:\n"
    assert pp16.count(vols) == 1 and pp16.count(mounts) == 1
    shm = pp16.replace(vols, vols + "        - {name: dshm, emptyDir: {medium: Memory}}\n").replace(
        mounts, mounts + "            - {name: dshm, mountPath: /dev/shm}\n"
    )
    p.write_text(shm)
    res = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV403"]
    assert "16 GPUs do not fit one node" in (d.fix or "") and "/dev/shm" not in (d.fix or "")
