"""kvlint: prove before deploy that an LLM serving workload fits the GPUs it lands on."""

__version__ = "0.1.0"
