"""How an engine spreads one serving replica over GPUs, and which of its flags set the memory fraction and
the context limit: engine-neutral facts the rules read, each with the engine's own flag names.

* vLLM: ``--tensor-parallel-size`` x ``--pipeline-parallel-size`` GPUs per engine, times the data-parallel
  ranks that run in this pod (``--data-parallel-size-local``, else ``--data-parallel-size``)
  (vllm@0.11.0: ``vllm/config/parallel.py::ParallelConfig.world_size``; ``--nnodes`` spreads them over pods).
* TGI: one shard per GPU, ``--num-shard``/``NUM_SHARD``, else every visible GPU
  (TGI v3.3.6 ``launcher/src/main.rs::find_num_shards``); no pipeline or data parallelism.
* SGLang: ``--tp-size`` x ``--pp-size`` GPUs per data-parallel replica and ``--dp-size`` replicas, each on
  its own GPUs unless ``--enable-dp-attention`` runs the replicas inside the tensor-parallel group
  (sglang@0.5.5: ``srt/managers/data_parallel_controller.py::launch_dp_schedulers`` advances the base GPU by
  ``tp_size * pp_size`` per replica; ``launch_dp_attention_schedulers`` does not). ``--pp-size`` exists from
  0.4.8 (the sampled wheels' ``ServerArgs``: 0.4.6 has no such option, 0.4.8 and 0.4.10 have it; see
  :mod:`kvlint.engines.sglang_flags_data`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.fastinit import direct_init, replaced
from kvlint.source import Loc
from kvlint.types import ServingConfig
from kvlint.values import as_int
from kvlint.wording import count

__all__ = ["MEMORY_FRACTION", "Parallelism", "parallelism", "unresolved_sizes"]

#: Per engine: (setting name, flag as the user writes it, default when unset or None if it depends on the
#: release) of the fraction of each GPU's memory the engine claims.
MEMORY_FRACTION: dict[str, tuple[str, str, float | None]] = {
    "vllm": ("gpu_memory_utilization", "--gpu-memory-utilization", None),
    "tgi": ("cuda_memory_fraction", "--cuda-memory-fraction", 1.0),
    "sglang": ("mem_fraction_static", "--mem-fraction-static", None),
}


@direct_init
@dataclass(frozen=True)
class Parallelism:
    """The GPU workers of one engine instance, as its flags declare them.

    Attributes:
        engine: ``vllm`` | ``tgi`` | ``sglang``.
        tp, pp: tensor- and pipeline-parallel sizes (TGI: shards, pp 1).
        dp: data-parallel replicas of the engine in total; ``dp_local`` those whose GPUs are in this pod
            (SGLang with ``--enable-dp-attention``: 1, the replicas share the tensor-parallel GPUs).
        nnodes: pods (nodes) the engine spans (``--nnodes``), 1 unless set.
        ray: workers may be placed by Ray on GPUs of other pods (vLLM ``--distributed-executor-backend ray``).
        explicit: the sizes come from flags the user set (TGI's default shard count follows the visible GPUs, so
            it can never ask for more GPUs than the pod has).
        described: the sizes as the engine's flags spell them (``--tensor-parallel-size 2 x
            --pipeline-parallel-size 2``, ``--num-shard 2``, ``--tp-size 2 x --dp-size 2``).
        loc: where the governing flag is written (None when unset).
        known: False when a size is given with a value kvlint cannot resolve (``--tp-size $(TP)``): the
            layout is then unknown, not the defaults the other fields show.
    """

    engine: str
    tp: int
    pp: int
    dp: int
    dp_local: int
    nnodes: int
    ray: bool
    explicit: bool
    described: str
    loc: Loc | None
    known: bool = True

    @property
    def workers(self) -> int:
        """GPU worker processes the engine starts in this pod's group: tp x pp x dp_local."""
        return self.tp * self.pp * self.dp_local


def _flag_loc(serving: ServingConfig, *names: str) -> Loc | None:
    """Where the first of ``names`` that the command sets is written; None when none is set."""
    for name in names:
        v = serving.flags.get(name)
        if v is not None:
            return v.loc or serving.command_loc
    return None


def _size(serving: ServingConfig, name: str) -> int:
    v = as_int(serving.get(name))
    return v if v is not None and v > 0 else 1


def parallelism(serving: ServingConfig, *, gpus: int | None = None, ray_kind: bool = False) -> Parallelism:
    """The engine's GPU layout from its parsed flags.

    Args:
        serving: the parsed engine command (flags keyed by the engine's setting names).
        gpus: GPUs the container is given (TGI's default shard count), None when unknown.
        ray_kind: the workload is a Ray object (RayService/RayCluster/RayJob): Ray places the workers.
    """
    known = not unresolved_sizes(serving)
    lay = _parallelism(serving, gpus, ray_kind)
    return lay if known else replaced(lay, known=False)


def unresolved_sizes(serving: ServingConfig) -> list[str]:
    """The settings among those that size ``serving``'s GPU layout (:data:`_SIZES`) whose value kvlint could
    not resolve (``--tensor-parallel-size $(TP)`` with ``TP`` from a Secret, or a KV206 implausible size), in
    :data:`_SIZES` order. Non-empty means :func:`parallelism` is not ``known``: the container is not planned on
    the engine default of 1 (:func:`kvlint.memory.stage.plan_container`) and is counted "parallel size
    unknown" (:func:`kvlint.sizing.sizing_of`)."""
    return [k for k in _SIZES.get(serving.engine, ()) if k in serving.unresolved]


#: The settings that size each engine's layout.
_SIZES = {
    "vllm": (
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "data_parallel_size_local",
    ),
    "tgi": ("num_shard",),
    "sglang": ("tp_size", "pp_size", "dp_size"),
}


def _parallelism(serving: ServingConfig, gpus: int | None, ray_kind: bool) -> Parallelism:
    e = serving.engine
    if e == "tgi":
        shards = as_int(serving.get("num_shard"))
        if shards is not None and shards > 0:
            return Parallelism(
                e,
                shards,
                1,
                1,
                1,
                1,
                ray_kind,
                True,
                # as the container writes it: the option (--num-shard 2) or clap's variable (NUM_SHARD=2)
                f"NUM_SHARD={shards}"
                if serving.written.get("num_shard") == "NUM_SHARD"
                else f"--num-shard {shards}",
                _flag_loc(serving, "num_shard"),
            )
        n = gpus if gpus and gpus > 0 else 1
        return Parallelism(
            e, n, 1, 1, 1, 1, ray_kind, False, f"{count(n, 'shard')}, one per visible GPU", None
        )
    if e == "sglang":
        tp, pp, dp = _size(serving, "tp_size"), _size(serving, "pp_size"), _size(serving, "dp_size")
        dp_local = 1 if serving.get("enable_dp_attention") else dp
        # each size under the option word the command line spelled it with (--tensor-parallel-size is --tp-size)
        said = serving.written
        parts = [f"{said.get('tp_size', '--tp-size')} {tp}"]
        parts += [f"{said.get('pp_size', '--pp-size')} {pp}"] if pp > 1 else []
        parts += [f"{said.get('dp_size', '--dp-size')} {dp}"] if dp_local > 1 else []
        explicit = any(k in serving.flags for k in ("tp_size", "pp_size", "dp_size"))
        loc = _flag_loc(serving, "tp_size", "pp_size", "dp_size")
        return Parallelism(
            e, tp, pp, dp, dp_local, _size(serving, "nnodes"), ray_kind, explicit, " x ".join(parts), loc
        )
    tp = _size(serving, "tensor_parallel_size")
    pp = _size(serving, "pipeline_parallel_size")
    dp = _size(serving, "data_parallel_size")
    local = as_int(serving.get("data_parallel_size_local"))
    if local is not None and local > 0:
        dp_local = local
    elif (
        "data_parallel_rank" in serving.flags
        or "data_parallel_rank" in serving.unresolved
        or serving.get("data_parallel_external_lb")
    ):
        # external load balancing: a pod given its --data-parallel-rank runs that one rank
        # (vllm/engine/arg_utils.py EngineArgs.create_engine_config: data_parallel_size_local = 1, read in
        # 0.10.1, 0.11.0, 0.11.1 and 0.13.0)
        dp_local = 1
    else:
        dp_local = dp
    ray = ray_kind or str(serving.get("distributed_executor_backend", "")).lower() == "ray"
    # each size under the option word the command line spelled it with (-tp 4, --tensor-parallel-size=4 is
    # --tensor-parallel-size 4); a size not written on it (the default, or a --config file's) by its name
    said = serving.written
    parts = [f"{said.get('tensor_parallel_size', 'tensor-parallel-size')} {tp}"]
    parts += [f"{said.get('pipeline_parallel_size', 'pipeline-parallel-size')} {pp}"] if pp > 1 else []
    if dp_local > 1:
        dp_key = "data_parallel_size_local" if local is not None and local > 0 else "data_parallel_size"
        parts += [f"{said.get(dp_key, dp_key.replace('_', '-'))} {dp_local}"]
    loc = _flag_loc(serving, "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
    explicit = loc is not None
    return Parallelism(
        e, tp, pp, dp, dp_local, _size(serving, "nnodes"), ray, explicit, " x ".join(parts), loc
    )
