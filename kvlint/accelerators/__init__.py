"""Accelerator resolution: the GPU catalogue, short aliases, node-label/instance-type tables, and
:func:`resolve_placement` (which GPU a pod lands on, how much memory CUDA reports for it, how many GPUs
the container gets). See :mod:`kvlint.accelerators.registry` for the alias table and
:mod:`kvlint.accelerators.placement` for the precedence rules."""

from kvlint.accelerators.placement import resolve_placement, workload_placement
from kvlint.accelerators.quantity import parse_quantity
from kvlint.accelerators.registry import (
    InstanceType,
    MigProfile,
    UnknownAccelerator,
    alias_notes,
    aliases,
    catalogue,
    close_names,
    did_you_mean,
    driver_reserve_mib,
    instance_type,
    lookup,
    require,
)

__all__ = [
    "InstanceType",
    "MigProfile",
    "UnknownAccelerator",
    "alias_notes",
    "aliases",
    "catalogue",
    "close_names",
    "did_you_mean",
    "driver_reserve_mib",
    "instance_type",
    "lookup",
    "parse_quantity",
    "require",
    "resolve_placement",
    "workload_placement",
]
