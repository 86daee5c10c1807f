"""ISO 639-1 codes to the English language names that translation prompts use."""

from __future__ import annotations

LANGUAGES: dict[str, str] = {
    "ar": "Arabic",
    "bg": "Bulgarian",
    "ca": "Catalan",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "et": "Estonian",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "hr": "Croatian",
    "hu": "Hungarian",
    "id": "Indonesian",
    "is": "Icelandic",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "ms": "Malay",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sr": "Serbian",
    "sv": "Swedish",
    "sw": "Swahili",
    "th": "Thai",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "vi": "Vietnamese",
    "zh": "Chinese",
}

# Scripts written without spaces between words: metrics count characters, not words.
UNSEGMENTED = frozenset({"ja", "zh", "th"})


class UnknownLanguageError(ValueError):
    pass


def language_name(code: str) -> str:
    """English name for an ISO 639-1 code ("de" -> "German"); regional suffixes are ignored."""
    base = code.strip().lower().replace("_", "-").split("-")[0]
    try:
        return LANGUAGES[base]
    except KeyError:
        known = ", ".join(sorted(LANGUAGES))
        raise UnknownLanguageError(f"unknown language code {code!r} (known: {known})") from None


def normalize_code(code: str) -> str:
    language_name(code)
    return code.strip().lower().replace("_", "-").split("-")[0]
