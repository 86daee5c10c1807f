"""Steadiness: an open line does not go blank or back without cause.

What was shown and is still the start of the new translation stays, and a line the mask would
empty shows the words its last two translations agree on. :class:`OpenLines` keeps, per target
language, what the open line shows, and decides what each new translation of it shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from subtitler.display.masking import inside_word, shown_by_k, word_safe
from subtitler.mt.lm import common_prefix_len

ELLIPSIS = "…"  # ends a finished line its translation's length limit cut


def steady(
    shown: Sequence[str],
    full: str,
    before: tuple[str, Sequence[str]] | None,
) -> tuple[str, ...]:
    """What each k shows of an open line, given what the same line showed before.

    ``shown``: the mask-k texts of ``full`` (k = 0, 1, ...); ``before``: the line's previous
    full translation and its shown texts (None for a line's first translation). A text that
    was shown and still starts the new translation stays (hiding it again would only make the
    line flicker); if the mask leaves nothing, the words the last two translations agree on
    are shown (a line shorter than k tokens is not left blank once it has stable words).
    """
    if before is None:
        return tuple(shown)
    prev_full, prev_shown = before
    agreed = word_safe(full, common_prefix_len(prev_full, full))
    out = []
    for k, text in enumerate(shown):
        old = prev_shown[k] if k < len(prev_shown) else ""
        if len(old) > len(text) and full.startswith(old) and not inside_word(full, len(old)):
            text = old
        if not text:
            text = agreed
        out.append(text)
    return tuple(out)


class OpenLines:
    """What the open (unfinished) line of each target language shows, k = 0..MAX_K: each new
    translation of the line is masked and kept steady against what the line showed before."""

    def __init__(self) -> None:
        # Per target language: the open line on screen (segment, its full translation, shown
        # by k).
        self._open: dict[str, tuple[int, str, tuple[str, ...]]] = {}

    def show(
        self,
        lang: str,
        segment_id: int,
        text: str,
        pieces: Sequence[bytes],
        final: bool,
        *,
        cut: bool = False,
        whole: Sequence[str] = (),
    ) -> tuple[str, ...]:
        """What each k shows of a translation (``text``, as its token ``pieces``) of line
        ``segment_id``: an open one masked and steady; a final one in full, which ends the
        line's history (``cut``: its translation stopped at the length limit, so it ends in
        "…" rather than mid-phrase; ``whole``: the line's fixed translations, shown whole or
        not at all)."""
        shown = shown_by_k(pieces, final, whole=whole)
        if final:
            self._open.pop(lang, None)
            return tuple(f"{x}{ELLIPSIS}" for x in shown) if cut else shown
        prev = self._open.get(lang)
        before = (prev[1], prev[2]) if prev is not None and prev[0] == segment_id else None
        out = steady(shown, text, before)
        self._open[lang] = (segment_id, text, out)
        return out

    def show_prefix(
        self,
        lang: str,
        segment_id: int,
        text: str,
        pieces: Sequence[bytes],
        whole: Sequence[str] = (),
    ) -> tuple[str, ...] | None:
        """What each k shows of a decode's prefix so far (a slow one as it goes, or one given
        up for a newer update), as the open line; None where it would show nothing new
        (empty, or the text the line shows now)."""
        prev = self._open.get(lang)
        if not text or (prev is not None and prev[0] == segment_id and prev[1] == text):
            return None
        return self.show(lang, segment_id, text, pieces, final=False, whole=whole)

    def segment(self, lang: str) -> int | None:
        """The line (segment) open on screen in ``lang``, if any."""
        prev = self._open.get(lang)
        return None if prev is None else prev[0]

    def close(self, lang: str) -> None:
        """The open line in ``lang`` is shown finished (it has no history any more)."""
        self._open.pop(lang, None)
