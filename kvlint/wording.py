"""Small wording helpers shared by the messages: the article before a word, and the names accelerator
families are written with by their vendors.

Message text only: nothing here changes what kvlint decides.
"""

from __future__ import annotations

import re
import shlex

__all__ = [
    "PLATFORM_NAMES",
    "article",
    "count",
    "idle",
    "platform_name",
    "shell_word",
    "vendor_name",
    "with_article",
]

#: The platform words of :func:`kvlint.engines.images.image_platform` and
#: :data:`kvlint.gpu_resources.NON_GPU_RESOURCES`, as their vendors write them (Huawei "Ascend", Intel
#: "Gaudi", AWS "Neuron" for Inferentia and Trainium, Google "TPU", IBM "Spyre").
PLATFORM_NAMES = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "tpu": "TPU",
    "neuron": "AWS Neuron",
    "gaudi": "Intel Gaudi",
    "hpu": "Intel Gaudi",
    "cpu": "CPU",
    "xpu": "Intel XPU",
    "openvino": "OpenVINO",
    "xeon": "Intel Xeon",
    "npu": "NPU",
    "ascend": "Ascend",
    "spyre": "IBM Spyre",
}

#: Accelerator catalogue vendors (``kvlint/data/accelerators.json``) as the vendors write their names.
_VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "google": "Google", "intel": "Intel", "aws": "AWS"}

#: Letters whose name starts with a vowel sound when an initialism is spelled out (an NPU, an XPU, an HBM).
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")

#: Words spelled with a vowel but said with a consonant sound first (a unified, a one-off, a user).
_CONSONANT_SOUND = re.compile(r"(?:uni|use|usu|uti|eu|one\b|once\b)", re.I)

#: Words spelled with a consonant but said with a vowel sound first (an hour, an honest).
_VOWEL_SOUND = re.compile(r"(?:hour|honest|honou?r|heir)", re.I)

#: All-caps words that are said as words, not spelled out (a CUDA build, a SAFE mode).
_ACRONYMS_SAID_AS_WORDS = frozenset({"CUDA", "NUMA", "RAM", "ROM", "SIMD", "LoRA", "LORA"})


def count(n: int, word: str) -> str:
    """``n`` and ``word`` in the number ``n`` takes: ``1 GPU``, ``2 GPUs``, ``0 NPUs`` (never ``GPU(s)``: the
    messages know the number they print). ``word`` is a unit that takes ``s`` (GPU, NPU, NeuronCore, node)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def idle(n: int, word: str) -> str:
    """``1 GPU sits idle``, ``2 GPUs sit idle`` (:func:`count`, and the verb agreeing with it)."""
    return f"{count(n, word)} {'sits' if n == 1 else 'sit'} idle"


def article(phrase: str) -> str:
    """``"a"`` or ``"an"`` for ``phrase`` by how its first word is said: an initialism (all capitals, ``NPU``,
    ``XPU``, ``HBM``) by the name of its first letter (an NPU, a TPU), other words by their first sound (an
    Ascend, an Intel Gaudi, a ROCm, a unified). Empty text gets ``"a"``."""
    word = re.split(r"[\s/(),;:-]+", phrase.strip(), maxsplit=1)[0] if phrase.strip() else ""
    if not word:
        return "a"
    letters = re.sub(r"[^A-Za-z0-9]", "", word)
    if not letters:
        return "a"
    if letters[0].isalpha() and letters.isupper() and letters not in _ACRONYMS_SAID_AS_WORDS:
        return "an" if letters[0] in _VOWEL_SOUND_LETTERS else "a"
    if letters[0].isdigit():
        # an 8-bit, an 80 GB, an 11B: "eight...", "eleven", "eighteen" start with a vowel sound
        num = re.match(r"\d+", letters).group(0)  # type: ignore[union-attr]
        lead = num[:2] if len(num) % 3 == 2 else num[:1]
        return "an" if num[0] == "8" or lead in ("11", "18") else "a"
    if _CONSONANT_SOUND.match(letters):
        return "a"
    if _VOWEL_SOUND.match(letters):
        return "an"
    return "an" if letters[0].lower() in "aeiou" else "a"


def with_article(phrase: str) -> str:
    """``phrase`` after its article (:func:`article`): ``an Ascend build``, ``a TPU accelerator``."""
    return f"{article(phrase)} {phrase}"


def platform_name(platform: str) -> str:
    """The vendor's name for a platform word (``ascend`` -> ``Ascend``, ``gaudi`` -> ``Intel Gaudi``,
    :data:`PLATFORM_NAMES`); an unknown word is written in capitals, as before."""
    return PLATFORM_NAMES.get(platform.lower(), platform.upper())


def vendor_name(vendor: str) -> str:
    """An accelerator catalogue vendor as the vendor writes it (``amd`` -> ``AMD``, ``intel`` -> ``Intel``)."""
    return _VENDOR_NAMES.get(vendor.lower(), vendor)


def shell_word(path: object) -> str:
    """``path`` as one word of a shell command kvlint suggests (a fix users copy and run): unchanged when it is
    made of characters a POSIX shell takes literally (letters, digits, ``@%+=:,./-_``), else single-quoted
    (:func:`shlex.quote`), so that a file or directory named by a pull request (``$(...)``, spaces, ``;``) is
    never run or split by the shell of whoever copies the fix."""
    return shlex.quote(str(path))
