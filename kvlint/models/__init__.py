"""Model resolution: from a model reference to a :class:`~kvlint.types.ModelSpec`.

* :func:`parse_config` — pure ``config.json`` reader (:mod:`kvlint.models.config`).
* :func:`resolve_model` — model_paths / local dir / ``--model-dir`` / bundled catalogue / Hugging Face Hub
  (:mod:`kvlint.models.resolve`).
* :func:`describe` — ``(name, value)`` rows for ``kvlint models show`` (layer types, KV bytes/token).
* :mod:`kvlint.models.catalogue` — the bundled configs; :mod:`kvlint.models.weights` — parameter counts
  and weight bytes by quantization method.

Nothing heavy is imported here (``huggingface_hub`` only inside the hub lookup).
"""

from kvlint.models.config import parse_config
from kvlint.models.describe import describe
from kvlint.models.resolve import clear_cache, resolve_model

__all__ = ["parse_config", "resolve_model", "clear_cache", "describe"]
