"""Capacity planning from request shapes, on the same memory model as the linter.

* :mod:`kvlint.capacity.compare` -- ``kvlint plan --compare``: accelerators x TP sizes x KV dtypes.
* :mod:`kvlint.capacity.sweep` -- ``kvlint plan --sweep``: sensitivity of capacity to one engine setting.
* :mod:`kvlint.capacity.workload` -- request arrivals and prompt/output length distributions.
* :mod:`kvlint.capacity.simulate` -- a deterministic paged KV-cache scheduler simulation (vLLM V1 style).
* :mod:`kvlint.capacity.report` -- ``kvlint simulate``: plan + workload + simulation + sensitivity.
* :mod:`kvlint.capacity.render` / :mod:`kvlint.capacity.plot` -- text/Markdown tables, charts, optional PNG/SVG.
* :mod:`kvlint.capacity.cli` -- the click command ``simulate`` and :func:`run_plan_extras` for ``kvlint plan``.
"""
