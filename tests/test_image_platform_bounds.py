"""An image string longer than any image reference is read by its first characters only (hostile input: a 1 MB
``image`` was searched whole by every platform pattern on each of the ~13 calls a container makes)."""

from __future__ import annotations

from kvlint.engines.images import _MAX_REFERENCE_CHARS, image_platform


def test_a_platform_word_within_a_reference_is_read() -> None:
    assert image_platform("rocm/vllm:latest") == "rocm"
    assert image_platform("vllm/vllm-tpu:nightly") == "tpu"


def test_a_string_longer_than_any_reference_is_read_by_its_first_characters_only() -> None:
    junk = "a" * (2 * _MAX_REFERENCE_CHARS)
    assert image_platform(junk + " rocm") == "cuda"  # beyond what a reference can hold: not read
    assert image_platform("rocm/vllm " + junk) == "rocm"  # within it: read


def test_the_bound_is_above_the_longest_valid_reference() -> None:
    # distribution/reference: a 255-character name, a 128-character tag, "@sha512:" and 128 hex digits
    assert _MAX_REFERENCE_CHARS > 255 + 1 + 128 + 8 + 128
