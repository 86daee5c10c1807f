"""The ASR research replay takes the app's speech settings from the one schema (each field a
flag, checked by its declaration, mapped to the policy and the recogniser by the app's own
mapping); its research knobs stay separate."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from subtitler.asr.faster_whisper import WhisperSettings
from subtitler.asr.streaming import StreamingOptions
from subtitler.config import SECTIONS, AsrConfig, given_settings, setting
from subtitler_research.asr import replay


@dataclass(frozen=True)
class AsrWithHint(AsrConfig):
    """AsrConfig and one field more, declared the way every setting is."""

    cadence_hint: float = setting(1.0, "Cadence hint", "a setting added for this test",
                                  range=(0.5, 2.0))  # fmt: skip


def test_an_added_speech_setting_is_a_flag_of_the_replay(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SECTIONS, "asr", AsrWithHint)
    a = replay.parser().parse_args(["talk.wav", "--asr-cadence-hint", "1.5"])
    assert given_settings(a) == {"asr.cadence_hint": 1.5}
    with pytest.raises(SystemExit):
        replay.parser().parse_args(["talk.wav", "--asr-cadence-hint", "3"])
    assert "Cadence hint must be 0.5..2 (is 3.0)" in capsys.readouterr().err


def test_the_replays_defaults_are_the_apps() -> None:
    a = replay.parser().parse_args(["talk.wav"])
    cfg = replay.settings(a)
    assert replay.streaming_options(a, cfg.asr) == StreamingOptions.from_config(AsrConfig())
    assert replay.whisper_settings(a, cfg.asr) == WhisperSettings.from_config(AsrConfig())
    assert (cfg.audio.block_ms, cfg.audio.queue_blocks) == (100, 600)


def test_settings_and_research_knobs_reach_the_policy_and_the_recogniser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    a = replay.parser().parse_args(
        ["--oracle", "w.tsv", "--asr-speech-pad-s", "0.4", "--fixed-chunk", "--language",
         "EN-us", "--max-chunk", "2", "--beam-size", "1", "--max-new-tokens", "4"]
    )  # fmt: skip
    cfg = replay.settings(a)
    want = dataclasses.replace(
        StreamingOptions(), speech_pad_s=0.4, adaptive=False, language="en", max_chunk_s=2.0
    )
    assert replay.streaming_options(a, cfg.asr) == want
    ws = replay.whisper_settings(a, cfg.asr)
    assert (ws.beam_size, ws.max_new_tokens) == (1, 4)
    with pytest.raises(SystemExit):  # checked by the declaration, as in the settings file
        replay.parser().parse_args(["talk.wav", "--threads", "0"])
    assert "Processor cores for speech (speech threads) must be 1..64" in capsys.readouterr().err


def test_an_unknown_language_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert replay.main(["--oracle", "none.tsv", "--language", "xx"]) == 2
    assert capsys.readouterr().err.startswith("error: --language: unknown language code 'xx'")
