"""Engine config stage: a Kubernetes container -> :class:`~kvlint.types.ServingConfig`.

vLLM is parsed in depth (:mod:`kvlint.engines.vllm`); TGI (:mod:`kvlint.engines.tgi`) and SGLang
(:mod:`kvlint.engines.sglang`) with their main settings. :func:`parse_container` finds the engine
invocation in ``command``/``args`` (incl. ``sh -c`` scripts); :func:`parse_command_line` reads a command
as typed for ``kvlint plan``.
"""

from kvlint.engines.command import container_env, parse_command_line, parse_container

__all__ = ["parse_container", "parse_command_line", "container_env"]
