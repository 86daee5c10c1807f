"""A model's real test: a fixed sentence through a translator, a fixed clip of speech through
a recogniser, and what the output says about the weights.

A file can pass every check of its header and its hash and still be damaged where no check
looks (flipped bytes in the tensor data): it loads, runs, and writes nothing, or one token
over and over. ``models verify`` and the pipeline's first load of a translator run this test
(one short translation, one recognition of 1.9 s: what it costs is in the callers' docs).
Only what no working model does counts as damage: nothing at all, or a decoding loop
(mt/output_rules.py's rule); a poor translation is not damage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from subtitler.repeats import LOOP, loops
from subtitler.resources import asset_path
from subtitler.types import EngineGone

SENTENCE = "A man is riding a bicycle."  # English, into the target (German by default)
SENTENCE_SRC = "en"
MAX_TOKENS = 16  # enough for a loop of any period the rule knows to show (1-4 tokens, 16)
CLIP = "LJ001-0002.flac"  # assets/selftest: 1.9 s of speech, "in being comparatively modern."
CLIP_LANGUAGE = "en"
DAMAGED = "damaged"  # the word every message here begins with


def clip_path() -> Path:
    return asset_path("selftest") / CLIP


def translation_damage(text: str, problem: str, looped: bool = False) -> str:
    """Why a translator's output of :data:`SENTENCE` shows damaged weights ("" when it does
    not); ``problem``: mt/output_rules.py's reason the output was no translation; ``looped``:
    its first decode looped (the translator then decodes once more without repeating itself,
    which hides the loop but not the damage)."""
    if problem == LOOP or looped:
        return f"{DAMAGED}: it translates a test sentence as one phrase over and over"
    if not problem and not text.strip():
        return f"{DAMAGED}: it translates a test sentence as nothing"
    return ""


def recognition_damage(words: Sequence[str]) -> str:
    """Why a recogniser's words for :data:`CLIP` show damaged weights ("" when they do not)."""
    # A "word" of punctuation alone (")))))))", "...") is what Whisper writes for noise.
    said = [w.strip().lower() for w in words if any(ch.isalnum() for ch in w)]
    if not said:
        return f"{DAMAGED}: it recognises no word of a clip of speech"
    if loops(said):
        return f"{DAMAGED}: it recognises one word over and over in a clip of speech"
    return ""


def naming(name: str, message: str) -> str:
    """A load failure says which file it is about."""
    return message if name in message else f"{name}: {message}"


class ModelCrashed(EngineGone):
    """A native engine died while loading or using a model; one line naming the file."""


class ModelDamaged(RuntimeError):
    """A model loads and runs but its output shows damaged weights; one line naming it."""
