"""Translation prompts: the paper's Table 5 templates, the model's own GGUF chat template, and
few-shot examples for base models (mt/fewshot.py)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from subtitler.models.templates import FEWSHOT, NAMED, TemplateError
from subtitler.mt.fewshot import fewshot_prompt
from subtitler.mt.languages import language_name
from subtitler.mt.terms import present

log = logging.getLogger(__name__)
INSTRUCTION = (
    "Translate the {src} source text to {tgt}. "
    "Return only the translation, without any additional explanations or commentary."
)

# Table 5 of the SSBD paper, with the line breaks of each model's chat format.
TOWER = (
    "<start_of_turn>user\n" + INSTRUCTION + "\n{src}: {text}\n{tgt}: <end_of_turn>\n"
    "<start_of_turn>model\n"
)
QWEN3 = (
    "<|im_start|>system\n" + INSTRUCTION + "<|im_end|>\n"
    "<|im_start|>user\n{src}: {text}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\n{tgt}:"
)
# A short ChatML prompt for small models trained here (fixtures/translator): every prompt token
# costs training time, so the instruction is one line; the target language is still named.
CHATML = (
    "<|im_start|>system\nTranslate {src} to {tgt}.<|im_end|>\n"
    "<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n"
)
BUILTIN: dict[str, str] = {"tower": TOWER, "qwen3": QWEN3, "chatml": CHATML}
assert tuple(BUILTIN) == NAMED  # (models/templates.py names them for the model files)
CONTEXT_LINE = "(Previous {src} sentence, for context only, do not translate: {context})"
# The glossary's fixed translations of terms in the text, told to instruction-following
# models after the text (see build()). Not for "chatml": the small models trained here follow
# no instruction and would translate the line; the decoder keeps the terms (mt/terms.py).
GLOSSARY_LINE = "(Glossary, use these {tgt} translations: {pairs})"
TELLS_GLOSSARY = ("tower", "qwen3", "gguf")


# Stands for the user's words while a template is rendered: private-use characters, which no
# template writes, so that where the words land in the prompt is known (Prompt.plain).
_USER = "\ue000\ue001user\ue001\ue000"


# Words shaped like a special token ("<eos>", "</s>", "<|im_end|>", "<end_of_turn>", Llama 2's
# "<<SYS>>"), or like Mistral's control tokens ("[INST]", "[/INST]", "[SYSTEM_PROMPT]",
# "[TOOL_CALLS]": capitals in brackets): a server reads them as the model's control tokens
# wherever they stand in a prompt or a message, and cannot be told which text is the user's. A
# zero-width space after the "<" or the "[" keeps them text.
_SPECIAL_SHAPED = re.compile(r"<(?=\|?/?[\w.-]+\|?>)|\[(?=/?[A-Z][A-Z_]+\])")


def as_text(words: str) -> str:
    """``words`` that no server reads as special tokens (see _SPECIAL_SHAPED)."""
    return _SPECIAL_SHAPED.sub(lambda m: m.group(0) + "\u200b", words)


def for_server(prompt: str) -> str:
    """A prompt as sent to a server: the user's words in it (``Prompt.plain``) as text."""
    plain = prompt.plain if isinstance(prompt, Prompt) else None
    if plain is None:
        return prompt
    start, end = plain
    return prompt[:start] + as_text(prompt[start:end]) + prompt[end:]


class Prompt(str):
    """A prompt's text, and where the user's words are in it (``plain``: start and end; None:
    not known): the line, the previous lines and the glossary are read as text by the
    tokenizer, whatever they spell, while the template's own markers are control tokens."""

    plain: tuple[int, int] | None

    def __new__(cls, text: str, plain: tuple[int, int] | None) -> Prompt:
        self = super().__new__(cls, text)
        self.plain = plain
        return self


def _placed(render: Callable[[str], str], words: str) -> Prompt:
    """The prompt ``render`` makes of ``words``, with where they are in it."""
    rendered = render(_USER)
    if rendered.count(_USER) != 1:  # a chat template that changed or repeated them
        log.debug("the user's words could not be placed in the prompt")
        return Prompt(render(words), None)
    at = rendered.index(_USER)
    return Prompt(rendered[:at] + words + rendered[at + len(_USER) :], (at, at + len(words)))


class ChatFormatter(Protocol):
    """Renders chat messages with a model's own template (the llama backend implements it)."""

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str: ...


@dataclass(frozen=True)
class PromptBuilder:
    """Builds the prompt text for a source prefix in a fixed language pair."""

    template: str  # "tower", "qwen3", "chatml", "gguf" or "fewshot"
    src_lang: str
    tgt_lang: str
    formatter: ChatFormatter | None = None
    # The glossary's (term, fixed translation) pairs for this language pair.
    terms: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.template not in (*BUILTIN, "gguf", FEWSHOT):
            raise TemplateError(f"unknown prompt template {self.template!r}")
        if self.template == "gguf" and self.formatter is None:
            raise TemplateError("the 'gguf' template needs the model's chat formatter")
        language_name(self.src_lang)
        language_name(self.tgt_lang)

    def build(self, text: str, context: str = "") -> Prompt:
        """The prompt for ``text``; ``context`` (the previous sentence, already translated) is
        shown to the model before the source line, marked as context only."""
        text = " ".join(text.split())
        if self.template == FEWSHOT:
            # A base model would translate a context or glossary line as one more line to
            # translate: it gets the examples and the line only (the decoder still keeps the
            # glossary's translations, mt/terms.py).
            return _placed(lambda t: fewshot_prompt(self.src_lang, self.tgt_lang, t), text)
        return _placed(self._render, self._with_lines(text, context))

    def _render(self, words: str) -> str:
        """The template around ``words`` (the line with its context and glossary lines)."""
        src, tgt = language_name(self.src_lang), language_name(self.tgt_lang)
        if self.template in BUILTIN:
            return BUILTIN[self.template].format(src=src, tgt=tgt, text=words)
        assert self.formatter is not None
        user = INSTRUCTION.format(src=src, tgt=tgt) + f"\n{src}: {words}\n{tgt}:"
        return self.formatter.apply_chat_template([{"role": "user", "content": user}])

    def _with_lines(self, text: str, context: str) -> str:
        """``text`` with the context line before it and the glossary line after it."""
        src, tgt = language_name(self.src_lang), language_name(self.tgt_lang)
        context = " ".join(context.split())
        found = present(text, self.terms) if self.template in TELLS_GLOSSARY else ()
        if context:
            # The context line sits inside the user turn, before the text to translate, so the
            # shared prefix (and its KV cache) stays the same for every update of a segment.
            text = f"{CONTEXT_LINE.format(src=src, context=context)}\n{text}"
        if found:
            # After the text: the text grows at its end between updates, so the glossary line
            # costs only its own tokens and the shared prefix (its KV cache) stays as long as
            # without a glossary.
            pairs = "; ".join(f"{t} = {x}" for t, x in found)
            text = f"{text}\n{GLOSSARY_LINE.format(tgt=tgt, pairs=pairs)}"
        return text

    def chat_messages(self, text: str, context: str = "") -> list[dict[str, str]]:
        """The prompt as chat messages, for a server that answers chat requests only and puts
        them in the model's own chat template itself: each template's instruction, context and
        glossary lines, without its markers. Qwen3 is asked not to think (its ``/no_think``
        switch: the template's empty thinking block cannot be sent as a message)."""
        if self.template == FEWSHOT:
            raise TemplateError(
                "a base model (the fewshot prompt) continues text: it needs a server with a "
                "completions route, not chat only"
            )
        src, tgt = language_name(self.src_lang), language_name(self.tgt_lang)
        text = as_text(self._with_lines(" ".join(text.split()), context))
        instruction = INSTRUCTION.format(src=src, tgt=tgt)
        if self.template == "qwen3":
            return [
                {"role": "system", "content": instruction},
                {"role": "user", "content": f"{src}: {text} /no_think"},
            ]
        if self.template == "chatml":
            return [
                {"role": "system", "content": f"Translate {src} to {tgt}."},
                {"role": "user", "content": text},
            ]
        return [{"role": "user", "content": f"{instruction}\n{src}: {text}\n{tgt}:"}]

    @property
    def target_label(self) -> str:
        """How the prompts name the target language before its text ("German:")."""
        return f"{language_name(self.tgt_lang)}:"
