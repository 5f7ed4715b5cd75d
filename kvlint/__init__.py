"""kvlint: prove before deploy that an LLM serving workload fits the GPUs it lands on."""

__version__ = "0.1.0"

#: The distribution name on PyPI (``pip install kvlint-k8s``). The command and the import package are
#: ``kvlint``; the PyPI project called ``kvlint`` is an unrelated tool.
DISTRIBUTION = "kvlint-k8s"
