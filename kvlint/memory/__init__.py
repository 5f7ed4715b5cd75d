"""Engine memory models: what vLLM, TGI and SGLang do with each GPU's memory at start-up.

Per engine and release: vLLM (:mod:`~kvlint.memory.vllm`), TGI (:mod:`~kvlint.memory.tgi`), SGLang
(:mod:`~kvlint.memory.sglang`), with the shared KV arithmetic (:mod:`~kvlint.memory.kv`), version switches
(:mod:`~kvlint.memory.versions`), defaults (:mod:`~kvlint.memory.defaults`), calibrated reserve terms
(:mod:`~kvlint.memory.calibration`) and fp8 KV-cache support (:mod:`~kvlint.memory.fp8kv`).
:mod:`~kvlint.memory.stage` is the pipeline's plan stage over them. The formulas and their sources are
restated in ``docs/engine-memory-model.md``.
"""
