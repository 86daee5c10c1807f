"""SSBD, RT and CD on a real llama-cpp-python server (``llama_cpp.server``) started here on
127.0.0.1, serving the fixture translator with the bit-exact settings, against the same model
loaded locally with the same settings."""

from __future__ import annotations

import codecs
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from subtitler.config import MtConfig
from subtitler.display.masking import shown_by_k
from subtitler.models.templates import TemplateError
from subtitler.mt.completions import CompletionsClient, ServerError, ServerSettings
from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
from subtitler.mt.prompts import PromptBuilder
from subtitler.mt.remote import RemoteEngine, RemoteTranslator, ServerAbilities, ServerRoute
from subtitler.mt.ssbd import DecodeOptions, Method
from subtitler.mt.streaming import LengthCap
from subtitler.mt.translator import StreamTranslator
from subtitler_research.bench.streams import prefixes
from tests.helpers.completion_server import API_KEY, FIXTURE, FaultyProxy, LlamaServer, free_port

pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] (the dev extra)")

DATA = Path(__file__).resolve().parents[1] / "data"
CAP = LengthCap(ratio=1.5, slack=4, hard=40)
WORDS = (
    "a man woman dog child in the park with red blue ball is running sitting on bench near "
    "water two people are playing football street young girl wearing hat"
).split()


def sentences() -> list[str]:
    """The fixture's own kind of sentence (fluent output) and random word salads (not)."""
    pairs = (DATA / "translator_pairs.tsv").read_text(encoding="utf-8").splitlines()
    de = [line.split("\t")[1] for line in pairs if line.startswith("de\t")]
    rng = random.Random(19)
    salad = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 11))) + "." for _ in range(4)]
    return de + salad


STREAMS = [prefixes(s, 2) for s in sentences()]


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    s = LlamaServer().start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def local_lm() -> Iterator[LlamaLM]:
    lm = LlamaLM(
        LlamaSettings(
            str(FIXTURE), n_ctx=1024, n_batch=256, n_ubatch=32, n_threads=1, flash_attn=True
        )
    )
    yield lm
    lm.close()


@pytest.fixture()
def client(server: LlamaServer) -> Iterator[CompletionsClient]:
    c = CompletionsClient(ServerSettings(server.url, api_key=API_KEY, timeout_s=60))
    yield c
    c.close()


PROMPTS = PromptBuilder("chatml", "en", "de")


def pieces_of(lm: LlamaLM, tokens: Sequence[int]) -> list[str]:
    """Each token's text, a character split over tokens on the token that completes it."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return [dec.decode(lm.piece(t)) for t in tokens]


def texts(pieces: Sequence[str]) -> list[str]:
    """Token texts without the empty parts of split characters (the server's stream sends a
    split character's tokens as one chunk)."""
    return [p for p in pieces if p]


def remote(client: CompletionsClient, method: Method, beta: float = 0.0) -> RemoteTranslator:
    return RemoteTranslator(
        client, PROMPTS, DecodeOptions(method=method, beta=beta, max_new_tokens=40), cap=CAP
    )


def local(lm: LlamaLM, method: Method, beta: float = 0.0) -> StreamTranslator:
    return StreamTranslator(
        lm, PROMPTS, DecodeOptions(method=method, beta=beta, max_new_tokens=40), cap=CAP
    )


def test_beta_zero_on_the_server_is_local_rt_token_for_token(
    client: CompletionsClient, local_lm: LlamaLM
) -> None:
    ssbd, rt, ref = (
        remote(client, Method.SSBD),
        remote(client, Method.RT),
        local(local_lm, Method.RT),
    )
    accepted = verified = 0
    for i, stream in enumerate(STREAMS):
        for tr in (ssbd, rt, ref):
            tr.reset()
        for j, src in enumerate(stream):
            final = j == len(stream) - 1
            want = ref.update(i, src, final)
            got_ssbd = ssbd.update(i, src, final)
            got_rt = rt.update(i, src, final)
            expected = texts(pieces_of(local_lm, want.tokens))
            assert texts(got_ssbd.pieces) == expected, (src, got_ssbd.pieces)
            assert texts(got_rt.pieces) == expected, (src, got_rt.pieces)
            assert got_ssbd.text == want.text
            accepted += got_ssbd.stats.accepted
            verified += got_ssbd.stats.verified_tokens
    # The drafts were verified on the server and most of them kept: SSBD really ran.
    assert verified > 50 and accepted > verified // 2


@pytest.mark.parametrize("method,beta", [(Method.SSBD, 0.5), (Method.SSBD, 1.0), (Method.CD, 0.0)])
def test_beta_one_half_and_cd_never_rewrite_and_match_local(
    client: CompletionsClient, local_lm: LlamaLM, method: Method, beta: float
) -> None:
    tr, ref = remote(client, method, beta), local(local_lm, method, beta)
    for i, stream in enumerate(STREAMS):
        tr.reset()
        ref.reset()
        previous = ""
        for j, src in enumerate(stream):
            got = tr.update(i, src, j == len(stream) - 1)
            assert "".join(got.pieces).startswith(previous)  # nothing shown is ever rewritten
            previous = "".join(got.pieces)
            assert got.text == ref.update(i, src, j == len(stream) - 1).text


def test_between_zero_and_one_half_the_server_keeps_more_than_rt(
    client: CompletionsClient,
) -> None:
    tr = remote(client, Method.SSBD, 0.3)
    drafted = kept = 0
    for i, stream in enumerate(STREAMS):
        tr.reset()
        for j, src in enumerate(stream):
            st = tr.update(i, src, j == len(stream) - 1).stats
            drafted += st.draft_len
            kept += st.accepted
    assert drafted and kept / drafted > 0.8


def mt_for(url: str, **kw: object) -> MtConfig:
    base: dict[str, object] = {
        "backend": "server",
        "server_url": url,
        "server_api_key": API_KEY,
        "template": "chatml",
        "max_new_tokens": 40,
    }
    return MtConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_engine_translates_with_the_display_masks(server: LlamaServer) -> None:
    mt = mt_for(server.url, beta=0.0)
    engine = RemoteEngine(mt)
    try:
        assert engine.notice == "" and "model.gguf" in engine.name
        # Found to verify drafts (prompt log-probabilities) with its own tokenizer.
        assert engine.abilities == ServerAbilities(ServerRoute.VERIFY, tokenizer=True)
        r = engine.translate(0, "A little girl climbing into", False, mt.tgt_lang, "en")
        shown = shown_by_k(r.pieces, final=False)
        assert r.text and shown[0] == r.text
        assert len(shown[3]) < len(r.text)  # display-only mask-3 hides the tail
        done = engine.translate(
            0, "A little girl climbing into a wooden playhouse.", True, mt.tgt_lang, "en"
        )
        assert done.stats.draft_len and b"".join(done.pieces).decode().strip() == done.text
        assert shown_by_k(done.pieces, final=True)[10] == done.text  # a final line: all
    finally:
        engine.close()


def test_connect_failures_are_one_line(server: LlamaServer) -> None:
    with pytest.raises(ServerError, match=r"refused the API key \(HTTP 401\)"):
        RemoteEngine(mt_for(server.url, server_api_key="wrong"))
    with pytest.raises(ServerError, match="serves no model 'tower'"):
        RemoteEngine(mt_for(server.url, server_model="tower"))
    with pytest.raises(ServerError, match=r"connection refused \(is the server running\?\)"):
        RemoteEngine(mt_for(f"http://127.0.0.1:{free_port()}/v1"))
    with pytest.raises(ServerError, match="not an http"):
        RemoteEngine(mt_for("gpu-box:8000"))
    with pytest.raises(TemplateError, match="choose its prompt template in Settings"):
        RemoteEngine(mt_for(server.url, template="auto"))


def test_a_connection_closed_before_any_answer_is_retried_a_bounded_number_of_times(
    server: LlamaServer,
) -> None:
    left = [0]

    def fault(path: str, body: dict[str, object]) -> str:
        if path.endswith("/models") and left[0] > 0:
            left[0] -= 1
            return "reset"
        return "pass"

    proxy = FaultyProxy(server.url, fault)
    client = CompletionsClient(ServerSettings(proxy.url, api_key=API_KEY, retries=2))
    try:
        left[0] = 2  # two failed connections, then the answer: the caller sees none of it
        assert [m["id"] for m in client.list_models()] and left[0] == 0
        assert [m for _p, m in proxy.seen] == ["reset", "reset", "pass"]
        left[0] = 3  # one more than the retries: one line, and the next call may try again
        with pytest.raises(
            ServerError, match=r"127\.0\.0\.1:\d+: the connection was dropped$"
        ) as e:
            client.list_models()
        assert e.value.transient  # the engine asks again later rather than giving up
        assert [m for _p, m in proxy.seen][3:] == ["reset"] * 3
        assert client.list_models()
    finally:
        client.close()
        proxy.close()


def test_a_server_without_prompt_logprobs_translates_with_rt_and_says_so(
    server: LlamaServer, local_lm: LlamaLM
) -> None:
    proxy = FaultyProxy(server.url, lambda path, body: "no-logprobs")
    mt = mt_for(proxy.url, beta=0.2)
    engine = RemoteEngine(mt)
    try:
        assert "no log-probabilities" in engine.notice and "RT instead of SSBD" in engine.notice
        ref = local(local_lm, Method.RT)
        for j, src in enumerate(STREAMS[0]):
            final = j == len(STREAMS[0]) - 1
            got = engine.translate(0, src, final, mt.tgt_lang, "en")
            assert got.text == ref.update(0, src, final).text and got.stats.method == "RT"
    finally:
        engine.close()
        proxy.close()


def test_bench_on_the_server_prints_the_local_table_with_the_local_outputs(
    server: LlamaServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m subtitler_research.bench --server URL``: the same runs and tables as
    ``--model``; RT and beta = 0 give the local RT outputs, beta = 0.5 and CD the local CD
    outputs."""
    from subtitler_research.bench.cli import main

    pairs = [line.split("\t") for line in sentences_file().splitlines()]
    src, ref = tmp_path / "src.en", tmp_path / "ref.de"
    src.write_text("".join(p[1] + "\n" for p in pairs[:3]), encoding="utf-8")
    ref.write_text("".join(p[2] + "\n" for p in pairs[:3]), encoding="utf-8")
    common = [
        "--source", str(src), "--reference", str(ref), "--src-lang", "en", "--tgt-lang", "de",
        "--step", "3", "--betas", "0,0.2,0.5", "--ks", "3", "--template", "chatml",
        "--max-new-tokens", "40", "--no-progress",
    ]  # fmt: skip
    tables: dict[str, list[str]] = {}
    runs: dict[str, dict[tuple[object, ...], dict[str, object]]] = {}
    for where, args in (
        ("server", ["--server", server.url, "--api-key", API_KEY]),
        # the server's settings (tests/helpers/completion_server.py), on this process
        ("local", ["--model", str(FIXTURE), "--threads", "1", "--n-ctx", "1024", "--n-batch",
                   "256", "--n-ubatch", "32"]),
    ):  # fmt: skip
        out = tmp_path / f"{where}.json"
        assert main([*args, *common, "--json", str(out)]) == 0
        printed = capsys.readouterr().out
        tables[where] = [line.split("|")[1].strip() for line in printed.splitlines() if "|" in line]
        data = json.loads(out.read_text(encoding="utf-8"))
        runs[where] = {(r["method"], r["beta"], r["mask"], r["k"]): r for r in data["runs"]}
    assert tables["server"] == tables["local"]  # the same rows of the same two tables
    assert set(runs["server"]) == set(runs["local"])
    rt, cd = ("RT", None, "none", 0), ("CD", None, "none", 0)
    srv, loc = runs["server"], runs["local"]
    assert srv[rt]["finals"] == loc[rt]["finals"] and len(loc[rt]["finals"]) == 3
    assert srv[("SSBD", 0.0, "none", 0)]["finals"] == loc[rt]["finals"]
    assert srv[("SSBD", 0.5, "none", 0)]["finals"] == srv[cd]["finals"] == loc[cd]["finals"]
    assert srv[("SSBD", 0.2, "none", 0)]["ad"] > 50  # drafts were verified on the server


def sentences_file() -> str:
    lines = (DATA / "translator_pairs.tsv").read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if line.startswith("de\t"))
