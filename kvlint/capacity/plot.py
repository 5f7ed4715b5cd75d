"""Optional pictures (``--plot FILE.png|.svg``) with matplotlib, imported lazily.

Install the ``plot`` extra (``pip install 'kvlint-k8s[plot]'``) to enable; without matplotlib :func:`available` is False
and callers print the text charts of :mod:`kvlint.capacity.render` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kvlint.types import MemoryPlan

GiB = 1 << 30


class PlotError(ValueError):
    """The plot cannot be written (matplotlib missing, unsupported extension, unwritable file)."""


def available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotError(
            "--plot needs matplotlib (pip install 'kvlint-k8s[plot]'); text charts printed instead"
        ) from exc
    return plt


def _save(fig: Any, path: str) -> None:
    if not path.lower().endswith((".png", ".svg")):
        raise PlotError(f"--plot {path}: use a .png or .svg file name")
    try:
        fig.savefig(path, bbox_inches="tight")
    except OSError as exc:
        raise PlotError(f"--plot {path}: {exc}") from exc


def plot_figure(
    path: str,
    *,
    plan: MemoryPlan | None = None,
    sweep: tuple[str, Sequence[object], Sequence[float]] | None = None,
    occupancy: tuple[Sequence[int], Sequence[int], int] | None = None,
) -> None:
    """Write one figure with up to three panels: the per-GPU memory breakdown bar (GiB) of ``plan``, the sweep
    curve ``(setting, values, concurrency)`` and the occupancy timeline ``(steps, blocks, capacity blocks)``.
    Raises :class:`PlotError`."""
    plt = _pyplot()
    panels = [x for x in (plan, sweep, occupancy) if x is not None]
    if not panels:
        raise PlotError("nothing to plot")
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3 * len(panels)), squeeze=False)
    i = 0
    if plan is not None:
        ax = axes[i][0]
        i += 1
        parts = [
            ("weights", plan.weights_bytes),
            ("activation", plan.activation_bytes),
            ("non-torch", plan.non_torch_bytes),
            ("CUDA graphs", plan.cudagraph_bytes),
            ("KV cache", max(0, plan.kv_cache_bytes)),
            ("outside budget", plan.total_bytes - plan.budget_bytes),
        ]
        left = 0.0
        for name, b in parts:
            ax.barh([0], [b / GiB], left=left, label=name)
            left += b / GiB
        ax.set_xlabel("GiB per GPU")
        ax.set_yticks([])
        ax.legend(ncol=3, fontsize="small")
        ax.set_title("Memory per GPU")
    if sweep is not None:
        ax = axes[i][0]
        i += 1
        name, xs, ys = sweep
        ax.plot([str(x) for x in xs], list(ys), marker="o")
        ax.set_xlabel(name)
        ax.set_ylabel("concurrency at max_model_len")
    if occupancy is not None:
        ax = axes[i][0]
        steps, vals, cap = occupancy
        ax.plot(list(steps), list(vals), linewidth=0.8)
        ax.axhline(cap, color="red", linestyle="--", label="usable blocks")
        ax.set_xlabel("scheduler step")
        ax.set_ylabel("KV blocks in use")
        ax.legend()
    _save(fig, path)
    plt.close(fig)
