"""Memory plans per engine and version: vLLM (vllm.py), TGI (tgi.py), SGLang (sglang.py), with the shared
KV arithmetic (kv.py), version switches (versions.py), defaults (defaults.py) and calibrated reserve terms
(calibration.py)."""
