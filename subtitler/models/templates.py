"""Which prompt template a translation model file uses: named in its metadata, known by its
name, its own chat template, or (a base model) example translations.

The names a setting may give are subtitler.config.TEMPLATES: the NAMED ones (their prompts are
mt/prompts.py's BUILTIN), "gguf" (the file's own chat template), "fewshot" (a base model is
shown example translations, then the line) and "auto" (decided here from the metadata).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from subtitler.config import TEMPLATES

NAMED = ("tower", "qwen3", "chatml")
FEWSHOT = "fewshot"
# A GGUF may name its prompt template in this metadata key (our own models do).
TEMPLATE_KEY = "subtitler.prompt_template"


class TemplateError(ValueError):
    pass


# Google publishes Gemma's instruction-tuned models under a marked name ("gemma-3-270m-it") and
# its pretrained base models with the chat template in their tokenizer files, which converters
# copy into the GGUF: a Gemma without the mark is a base model, whatever its metadata says.
_BASE_FAMILY = re.compile(r"\bgemma[-\s]?\d")
_INSTRUCT = re.compile(r"(^|[\s_.-])(it|instruct|chat|sft|dpo|rlhf)($|[\s_.-])")


def is_base_model(metadata: Mapping[str, str]) -> bool:
    """A pretrained-only model of a family that marks its instruction-tuned models."""
    keys = ("general.name", "general.basename", "general.finetune")
    name = " ".join(metadata.get(k, "") for k in keys).lower()
    return _BASE_FAMILY.search(name) is not None and not _INSTRUCT.search(name)


def detect_template(metadata: Mapping[str, str]) -> str:
    """Pick the template for a GGUF from its metadata: Table 5 when known, else its own chat
    template, else (a base model) example translations."""
    named = metadata.get(TEMPLATE_KEY, "")
    if named in (*NAMED, FEWSHOT):
        return named
    name = (metadata.get("general.name", "") + " " + metadata.get("general.basename", "")).lower()
    arch = metadata.get("general.architecture", "").lower()
    if "tower" in name:
        return "tower"
    if arch.startswith("qwen3") or "qwen3" in name:
        return "qwen3"
    if metadata.get("tokenizer.chat_template") and not is_base_model(metadata):
        return "gguf"
    # No chat template: a base (pretrained-only) model, which continues text. Shown a few
    # translations, it translates the next line.
    return FEWSHOT


def resolve_template(requested: str, metadata: Mapping[str, str]) -> str:
    if requested not in TEMPLATES:
        raise TemplateError(f"unknown prompt template {requested!r} (one of {TEMPLATES})")
    if requested == "auto":
        return detect_template(metadata)
    if requested == "gguf" and not metadata.get("tokenizer.chat_template"):
        raise TemplateError("the model has no chat template in its GGUF metadata")
    return requested
