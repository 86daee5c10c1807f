"""Train a small English -> German/Chinese/Japanese translator and export it as a llama GGUF.

A decoder-only llama (RMSNorm, interleaved-pair RoPE, SwiGLU, tied embeddings) learns the
project's "chatml" prompt (subtitler/mt/prompts.py) followed by the translation and <|im_end|>;
the loss covers the target tokens and EOS only. A byte-level BPE (``tokenizers``, GPT-2 regex
pre-tokenizer) covers Latin and CJK text and is exported as a "gpt2" tokenizer with the "gpt-2"
pre-tokenizer, so llama.cpp tokenizes exactly like training did.

Data (see fixtures/translator/README.md): Multi30k train+val (en-de) and Tatoeba v2021-08-07
deu-eng / eng-zho (Mandarin lines) / eng-jpn, minus the last ``--holdout`` lines of each Tatoeba
file (evaluation; their English sentences are removed from training too). WMT sets are never read.

    python tools/train_translator.py --out runs/tr --steps 6000          # train (resumes)
    python tools/train_translator.py --out runs/tr --export model.gguf   # export the checkpoint
    python tools/train_translator.py --out runs/tr --eval model.gguf     # chrF with llama.cpp

Deterministic given --seed (same machine and thread count): data order, prefix augmentation and
initialisation all derive from it, and a resumed run continues the same batch sequence.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "data" / "corpora"
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|pad|>"]
IM_START, IM_END, PAD = 0, 1, 2
TARGETS = {"de": "German", "zh": "Chinese", "ja": "Japanese"}
CHATML_JINJA = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def prompt(source: str, tgt: str) -> str:
    """Exactly PromptBuilder("chatml", "en", tgt).build(source) (checked by the test)."""
    text = " ".join(source.split())
    return (
        f"<|im_start|>system\nTranslate English to {TARGETS[tgt]}.<|im_end|>\n"
        f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n"
    )


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
Pair = tuple[str, str, str]  # (target language, english, target)


def _lines(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8").splitlines()


def load_corpora(corpora: Path, holdout: int) -> tuple[list[Pair], dict[str, list[Pair]]]:
    """(training pairs, held-out pairs per language). Never reads wmt_dev."""
    m = corpora / "multi30k_train"
    train: list[Pair] = []
    for split in ("train", "val"):
        for en, de in zip(_lines(m / f"{split}.en"), _lines(m / f"{split}.de"), strict=True):
            train.append(("de", en, de))
    t = corpora / "tatoeba_test"
    held: dict[str, list[Pair]] = {}
    files = {"de": ("deu-eng", "deu"), "zh": ("eng-zho", "zho"), "ja": ("eng-jpn", "jpn")}
    for lang, (pair, ext) in files.items():
        stem = t / f"{pair}.tatoeba-test-v2021-08-07"
        en, tg = _lines(Path(f"{stem}.eng")), _lines(Path(f"{stem}.{ext}"))
        labels = _lines(Path(f"{stem}.{ext}.labels")) if lang == "zh" else ["cmn"] * len(en)
        keep = [lab.startswith("cmn") for lab in labels]  # Mandarin only (no Cantonese, Wu, ...)
        rows = [(lang, a.strip(), b.strip()) for a, b, k in zip(en, tg, keep, strict=True) if k]
        # The files are grouped by script label, so the held-out lines are a fixed random sample
        # (seed 1234, independent of --seed) rather than the last lines.
        pick = set(random.Random(1234).sample(range(len(rows)), holdout))
        held[lang] = [r for i, r in enumerate(rows) if i in pick]
        held_src = {r[1] for r in held[lang]}
        train += [r for i, r in enumerate(rows) if i not in pick and r[1] not in held_src]
    train = [r for r in train if r[1] and r[2]]
    return train, held


def truncate_pair(en: str, tgt: str, lang: str, frac: float) -> tuple[str, str]:
    """A source prefix and the proportional target prefix (words; characters for zh/ja)."""
    ew = en.split()
    k = max(1, int(len(ew) * frac))
    src = " ".join(ew[:k])
    if lang in ("zh", "ja"):
        chars = list(tgt)
        return src, "".join(chars[: max(1, round(len(chars) * k / len(ew)))])
    tw = tgt.split()
    return src, " ".join(tw[: max(1, round(len(tw) * k / len(ew)))])


# --------------------------------------------------------------------------------------------
# tokenizer
# --------------------------------------------------------------------------------------------
def train_tokenizer(texts: Sequence[str], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        # llama-cpp-python detokenizes through a 32-byte buffer: a longer token would print empty
        max_token_length=32,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def tokenizer_tables(tok: Any) -> tuple[list[str], list[int], list[str]]:
    """(tokens by id, GGUF token types, merges "a b") of a trained byte-level BPE."""
    model = json.loads(tok.to_str())["model"]
    vocab: dict[str, int] = model["vocab"]
    tokens = [""] * len(vocab)
    for s, i in vocab.items():
        tokens[i] = s
    added = {a["id"]: a["content"] for a in json.loads(tok.to_str())["added_tokens"]}
    for i, s in added.items():
        if i < len(tokens):
            tokens[i] = s
    types = [3 if i in added else 1 for i in range(len(tokens))]  # CONTROL / NORMAL
    merges = [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in model["merges"]]
    return tokens, types, merges


def encode(tok: Any, texts: Sequence[str]) -> list[list[int]]:
    return [e.ids for e in tok.encode_batch(list(texts), add_special_tokens=False)]


# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    n_vocab: int = 12000
    d: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_ff: int = 704
    n_ctx: int = 512
    eps: float = 1e-5
    rope_base: float = 10000.0


def build_model(cfg: Config) -> Any:
    import torch
    import torch.nn.functional as F
    from torch import nn

    class RMSNorm(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg.eps) * self.weight

    hd = cfg.d // cfg.n_head

    def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # llama.cpp's LLAMA_ROPE_TYPE_NORM: rotate adjacent pairs (x[2i], x[2i+1]).
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn_norm = RMSNorm(cfg.d)
            self.wq = nn.Linear(cfg.d, cfg.d, bias=False)
            self.wk = nn.Linear(cfg.d, cfg.d, bias=False)
            self.wv = nn.Linear(cfg.d, cfg.d, bias=False)
            self.wo = nn.Linear(cfg.d, cfg.d, bias=False)
            self.ffn_norm = RMSNorm(cfg.d)
            self.w_gate = nn.Linear(cfg.d, cfg.n_ff, bias=False)
            self.w_up = nn.Linear(cfg.d, cfg.n_ff, bias=False)
            self.w_down = nn.Linear(cfg.n_ff, cfg.d, bias=False)

        def forward(
            self,
            x: torch.Tensor,
            cos: torch.Tensor,
            sin: torch.Tensor,
            past: tuple[torch.Tensor, torch.Tensor] | None = None,
            rows: torch.Tensor | None = None,
        ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
            """``past``: keys/values of shared prompt prefixes, ``rows``: which one per row."""
            b, t, _ = x.shape
            h = self.attn_norm(x)
            q = self.wq(h).view(b, t, cfg.n_head, hd).transpose(1, 2)
            k = self.wk(h).view(b, t, cfg.n_head, hd).transpose(1, 2)
            v = self.wv(h).view(b, t, cfg.n_head, hd).transpose(1, 2)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            if past is None:
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                assert rows is not None
                pk, pv = past[0][rows], past[1][rows]
                p = pk.shape[2]
                allow = torch.ones(t, p + t, dtype=torch.bool).tril(diagonal=p)
                kk, vv = torch.cat((pk, k), dim=2), torch.cat((pv, v), dim=2)
                a = F.scaled_dot_product_attention(q, kk, vv, attn_mask=allow)
            x = x + self.wo(a.transpose(1, 2).reshape(b, t, cfg.d))
            h = self.ffn_norm(x)
            return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h)), (k, v)

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cfg = cfg
            self.embed = nn.Embedding(cfg.n_vocab, cfg.d)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.n_layer))
            self.norm = RMSNorm(cfg.d)
            inv = cfg.rope_base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
            ang = torch.arange(cfg.n_ctx, dtype=torch.float64)[:, None] * inv[None, :]
            self.register_buffer("cos", ang.cos().float(), persistent=False)
            self.register_buffer("sin", ang.sin().float(), persistent=False)
            nn.init.normal_(self.embed.weight, std=0.02)
            for blk in self.blocks:
                for lin in (blk.wq, blk.wk, blk.wv, blk.w_gate, blk.w_up):
                    nn.init.normal_(lin.weight, std=0.02)
                for lin in (blk.wo, blk.w_down):
                    nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

        def hidden(self, ids: torch.Tensor) -> torch.Tensor:
            t = ids.shape[1]
            x = self.embed(ids)
            cos, sin = self.cos[:t], self.sin[:t]
            for blk in self.blocks:
                x, _ = blk(x, cos, sin)
            return self.norm(x)

        def hidden_shared(
            self, prefix: torch.Tensor, rows: torch.Tensor, ids: torch.Tensor
        ) -> torch.Tensor:
            """Hidden states of ``ids`` that continue ``prefix[rows]`` (prefixes run once)."""
            p, t = prefix.shape[1], ids.shape[1]
            xp, x = self.embed(prefix), self.embed(ids)
            for blk in self.blocks:
                xp, kv = blk(xp, self.cos[:p], self.sin[:p])
                x, _ = blk(x, self.cos[p : p + t], self.sin[p : p + t], past=kv, rows=rows)
            return self.norm(x)

        def logits(self, h: torch.Tensor) -> torch.Tensor:
            return h @ self.embed.weight.T  # tied output, as llama.cpp does without output.weight

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.logits(self.hidden(ids))

    return LM()


def greedy_torch(model: Any, prompt_ids: Sequence[int], max_new: int) -> list[int]:
    """Greedy decoding without a cache (reference for the llama.cpp equality test)."""
    import torch

    ids = list(prompt_ids)
    out: list[int] = []
    with torch.no_grad():
        for _ in range(max_new):
            row = model(torch.tensor([ids]))[0, -1]
            nxt = int(torch.argmax(row))
            if nxt == IM_END:
                break
            out.append(nxt)
            ids.append(nxt)
    return out


# --------------------------------------------------------------------------------------------
# GGUF export
# --------------------------------------------------------------------------------------------
def state_arrays(model: Any) -> dict[str, np.ndarray]:
    """The model's weights under GGUF tensor names (numpy float32, PyTorch's [out, in] layout)."""
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    out = {"token_embd.weight": sd["embed.weight"], "output_norm.weight": sd["norm.weight"]}
    names = {
        "attn_norm.weight": "attn_norm.weight",
        "wq.weight": "attn_q.weight",
        "wk.weight": "attn_k.weight",
        "wv.weight": "attn_v.weight",
        "wo.weight": "attn_output.weight",
        "ffn_norm.weight": "ffn_norm.weight",
        "w_gate.weight": "ffn_gate.weight",
        "w_up.weight": "ffn_up.weight",
        "w_down.weight": "ffn_down.weight",
    }
    for i in range(model.cfg.n_layer):
        for ours, theirs in names.items():
            out[f"blk.{i}.{theirs}"] = sd[f"blocks.{i}.{ours}"]
    return out


def quantized_roundtrip(arrays: dict[str, np.ndarray], qtype: str) -> dict[str, np.ndarray]:
    """Weights as llama.cpp will see them after export with ``qtype`` (2-D tensors only)."""
    import gguf

    if qtype == "f32":
        return dict(arrays)
    q = gguf.GGMLQuantizationType.Q8_0 if qtype == "q8_0" else gguf.GGMLQuantizationType.F16
    return {
        k: (gguf.quants.dequantize(gguf.quants.quantize(a, q), q) if a.ndim == 2 else a)
        for k, a in arrays.items()
    }


def load_arrays(model: Any, arrays: dict[str, np.ndarray]) -> None:
    """Inverse of :func:`state_arrays` (used to run torch on dequantized weights)."""
    import torch

    inv = {v: k for k, v in _names(model).items()}
    sd = {inv[k]: torch.from_numpy(np.ascontiguousarray(a)) for k, a in arrays.items()}
    model.load_state_dict(sd, strict=False)


def _names(model: Any) -> dict[str, str]:
    names = {"embed.weight": "token_embd.weight", "norm.weight": "output_norm.weight"}
    pairs = [
        ("attn_norm", "attn_norm"),
        ("wq", "attn_q"),
        ("wk", "attn_k"),
        ("wv", "attn_v"),
        ("wo", "attn_output"),
        ("ffn_norm", "ffn_norm"),
        ("w_gate", "ffn_gate"),
        ("w_up", "ffn_up"),
        ("w_down", "ffn_down"),
    ]
    for i in range(model.cfg.n_layer):
        for a, b in pairs:
            names[f"blocks.{i}.{a}.weight"] = f"blk.{i}.{b}.weight"
    return names


def export_gguf(
    model: Any, tok: Any, out: Path, *, qtype: str = "q8_0", name: str = "subtitler-translator"
) -> Path:
    sys.path.insert(0, str(ROOT))  # subtitler_research runs from the checkout (not installed)
    from subtitler_research.bench.gguf_llama import (
        BpeVocab,
        Shape,
        add_weight,
        finish,
        llama_writer,
    )

    cfg: Config = model.cfg
    tokens, types, merges = tokenizer_tables(tok)
    if len(tokens) != cfg.n_vocab:
        raise ValueError(f"tokenizer has {len(tokens)} tokens, model {cfg.n_vocab}")
    shape = Shape(cfg.n_layer, cfg.d, cfg.n_head, cfg.n_head, cfg.n_ff, cfg.n_ctx)
    vocab = BpeVocab(tokens, types, merges, bos=IM_START, eos=IM_END)
    w = llama_writer(
        out, shape, vocab, name=name, qtype=qtype, eps=cfg.eps, rope_base=cfg.rope_base
    )
    w.add_pad_token_id(PAD)
    w.add_add_eos_token(False)
    w.add_chat_template(CHATML_JINJA)
    w.add_string("subtitler.prompt_template", "chatml")
    for k, a in state_arrays(model).items():
        add_weight(w, k, a, qtype)
    finish(w)
    return out


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainArgs:
    seed: int = 0
    steps: int = 6000
    batch_tokens: int = 3072  # padded tokens per batch (about 64 sentences)
    lr: float = 2e-3
    warmup: int = 100
    weight_decay: float = 0.05
    prefix_frac: float = 0.2  # fraction of examples replaced by a source prefix + target prefix
    ckpt_every: int = 250
    share_prefix: bool = True
    threads: int = 1  # on 2 shared cores one thread was 3x faster than two


def make_example(tok_prompt: list[int], tok_tgt: list[int]) -> tuple[list[int], int]:
    """(token ids, index of the first supervised position in the labels)."""
    return tok_prompt + tok_tgt + [IM_END], len(tok_prompt)


class Stream:
    """The deterministic batch sequence: epoch e uses rng(seed, e) for augmentation and order."""

    def __init__(self, pairs: list[Pair], tok: Any, a: TrainArgs, n_ctx: int) -> None:
        self.pairs, self.tok, self.a, self.n_ctx = pairs, tok, a, n_ctx
        self.full = self._encode([(lang, en, tg) for lang, en, tg in pairs])

    def _encode(self, pairs: Sequence[Pair]) -> list[list[int]]:
        ps = encode(self.tok, [prompt(en, lang) for lang, en, _ in pairs])
        ts = encode(self.tok, [tg for _, _, tg in pairs])
        return [[*(p + t + [IM_END])[: self.n_ctx], len(p)] for p, t in zip(ps, ts, strict=True)]

    def epoch(self, e: int) -> list[list[list[int]]]:
        rng = random.Random(self.a.seed * 1_000_003 + e)
        ex = list(self.full)
        aug_idx = [i for i in range(len(ex)) if rng.random() < self.a.prefix_frac]
        aug = []
        for i in aug_idx:
            lang, en, tg = self.pairs[i]
            if len(en.split()) < 2:
                continue
            s, t = truncate_pair(en, tg, lang, rng.uniform(0.2, 0.9))
            aug.append((i, (lang, s, t)))
        for (i, _), enc in zip(aug, self._encode([p for _, p in aug]), strict=True):
            ex[i] = enc
        order = list(range(len(ex)))
        rng.shuffle(order)
        batches: list[list[list[int]]] = []
        chunk = 100 * 64
        for c in range(0, len(order), chunk):
            part = sorted(order[c : c + chunk], key=lambda i: len(ex[i]))
            cur: list[list[int]] = []
            for i in part:
                longest = max([len(ex[i]) - 1] + [len(x) - 1 for x in cur])
                if cur and longest * (len(cur) + 1) > self.a.batch_tokens:
                    batches.append(cur)
                    cur = []
                cur.append(ex[i])
            if cur:
                batches.append(cur)
        rng.shuffle(batches)
        return batches


def collate(batch: list[list[int]], prefixes: Sequence[list[int]] = ()) -> dict[str, Any]:
    """Padded ids and the labels of target + EOS positions. With ``prefixes`` (equal-length
    constant prompt heads, one per language) the rows are split into a prefix index and the
    rest, so the shared head is computed once per batch (about 30% fewer tokens)."""
    import torch

    p = len(prefixes[0]) if prefixes else 0
    heads = {tuple(x): i for i, x in enumerate(prefixes)}
    t = max(len(x) - 1 for x in batch) - p
    ids = torch.full((len(batch), t), PAD, dtype=torch.long)
    labels = torch.full((len(batch), t), -100, dtype=torch.long)
    rows = torch.zeros(len(batch), dtype=torch.long)
    for r, x in enumerate(batch):
        seq, start = x[:-1], x[-1]
        if p:
            rows[r] = heads[tuple(seq[:p])]
            seq, start = seq[p:], start - p
        ids[r, : len(seq)] = torch.tensor(seq)
        # position j predicts token j+1; supervise targets and EOS: tokens start..len-1
        labels[r, start - 1 : len(seq) - 1] = torch.tensor(seq[start:])
    mask = labels >= 0
    out = {"ids": ids, "labels": labels[mask], "mask": mask}
    if p:
        out["prefix"], out["rows"] = torch.tensor(prefixes), rows
    return out


def shared_prefixes(tok: Any) -> list[list[int]]:
    """The constant prompt heads (up to "user\n") per target language, if equally long."""
    heads = [encode(tok, [prompt("", lang).split("user\n")[0] + "user\n"])[0] for lang in TARGETS]
    return heads if len({len(h) for h in heads}) == 1 else []


def loss_fn(model: Any, b: dict[str, Any]) -> Any:
    import torch.nn.functional as F

    if "prefix" in b:
        h = model.hidden_shared(b["prefix"], b["rows"], b["ids"])
    else:
        h = model.hidden(b["ids"])
    h = h[b["mask"]]  # logits only where there is a label
    return F.cross_entropy(model.logits(h), b["labels"])


def train(
    run: Path,
    pairs: list[Pair],
    tok: Any,
    cfg: Config,
    a: TrainArgs,
    log_every: int = 50,
) -> Any:
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = build_model(cfg)
    decay = [p for n, p in model.named_parameters() if p.ndim == 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": a.weight_decay}, {"params": no_decay}],
        lr=a.lr,
        betas=(0.9, 0.98),
        eps=1e-9,
    )
    step = 0
    ck = run / "ckpt.pt"
    if ck.exists():
        state = torch.load(ck, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print(f"resumed at step {step}", flush=True)
    stream = Stream(pairs, tok, a, cfg.n_ctx)
    heads = shared_prefixes(tok) if a.share_prefix else []
    # Walk the batch sequence to ``step`` (cheap: no compute) so a resumed run is identical.
    epoch, batches, bi = 0, stream.epoch(0), 0
    for _ in range(step):
        bi += 1
        if bi == len(batches):
            epoch, batches, bi = epoch + 1, stream.epoch(epoch + 1), 0
    print(f"{len(pairs)} pairs, {len(batches)} batches/epoch, {count(model) / 1e6:.2f}M params")

    def lr_at(s: int) -> float:
        # Warmup, constant, then linear decay over the last 20% (WSD): a run stopped and resumed
        # with a smaller --steps before its decay began equals a fresh run with that --steps.
        if s < a.warmup:
            return a.lr * (s + 1) / a.warmup
        d0 = int(0.8 * a.steps)
        if s < d0:
            return a.lr
        return a.lr * (0.05 + 0.95 * max(0.0, (a.steps - s) / max(1, a.steps - d0)))

    model.train()
    t0, toks, losses = time.perf_counter(), 0, []
    while step < a.steps:
        b = collate(batches[bi], heads)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss = loss_fn(model, b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        toks += int(b["ids"].numel())
        losses.append(float(loss.detach()))
        bi += 1
        if bi == len(batches):
            epoch, batches, bi = epoch + 1, stream.epoch(epoch + 1), 0
        if step % log_every == 0 or step == a.steps:
            dt = time.perf_counter() - t0
            print(
                f"step {step} epoch {epoch} loss {np.mean(losses):.3f} lr {lr_at(step):.2e} "
                f"{toks / dt:.0f} tok/s",
                flush=True,
            )
            t0, toks, losses = time.perf_counter(), 0, []
        if step % a.ckpt_every == 0 or step == a.steps:
            tmp = run / "ckpt.pt.tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
            os.replace(tmp, ck)
    model.eval()
    return model


def count(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def load_run(run: Path) -> tuple[Any, Any, Config]:
    import torch
    from tokenizers import Tokenizer

    meta = json.loads((run / "run.json").read_text())
    cfg = Config(**meta["config"])
    tok = Tokenizer.from_file(str(run / "tokenizer.json"))
    model = build_model(cfg)
    model.load_state_dict(torch.load(run / "ckpt.pt", weights_only=False)["model"])
    model.eval()
    return model, tok, cfg


# --------------------------------------------------------------------------------------------
# evaluation with llama.cpp (the project's own decoder, RT on full sentences)
# --------------------------------------------------------------------------------------------
def translate_llama(
    gguf_path: Path, sources: Sequence[str], tgt: str, threads: int = 2
) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from subtitler.mt.llama_backend import LlamaLM, LlamaSettings
    from subtitler.mt.prompts import PromptBuilder
    from subtitler.mt.ssbd import DecodeOptions, Method
    from subtitler.mt.translator import StreamTranslator

    lm = LlamaLM(LlamaSettings(str(gguf_path), n_ctx=1024, n_threads=threads))
    try:
        tr = StreamTranslator(lm, PromptBuilder("chatml", "en", tgt), DecodeOptions(Method.RT))
        outs = []
        for i, s in enumerate(sources):
            tr.reset()
            outs.append(tr.update(i, s, True).text)
        return outs
    finally:
        lm.close()


def chrf(hyps: Sequence[str], refs: Sequence[str], tgt: str) -> float:
    import sacrebleu

    return float(sacrebleu.corpus_chrf(list(hyps), [list(refs)]).score)


def evaluate(
    gguf_path: Path, corpora: Path, holdout: int, limit: int, threads: int
) -> dict[str, Any]:
    _, held = load_corpora(corpora, holdout)
    res: dict[str, Any] = {}
    mt = corpora / "multi30k_test"
    src = _lines(mt / "task1_test_2016_flickr.en")[:limit]
    ref = _lines(mt / "task1_test_2016_flickr.de")[:limit]
    sets = {"multi30k_test2016_en-de": ("de", src, ref)}
    for lang, rows in held.items():
        rows = rows[:limit]
        sets[f"tatoeba_heldout_en-{lang}"] = (lang, [r[1] for r in rows], [r[2] for r in rows])
    for name, (lang, s, r) in sets.items():
        t0 = time.perf_counter()
        hyp = translate_llama(gguf_path, s, lang, threads)
        res[name] = {
            "n": len(s),
            "chrF": round(chrf(hyp, r, lang), 2),
            "seconds": round(time.perf_counter() - t0, 1),
            "examples": [[a, b, c] for a, b, c in zip(s[:3], hyp[:3], r[:3], strict=True)],
        }
        print(name, json.dumps(res[name], ensure_ascii=False), flush=True)
    return res


# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="run directory (checkpoints)")
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--holdout", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=TrainArgs.steps)
    ap.add_argument("--batch-tokens", type=int, default=TrainArgs.batch_tokens)
    ap.add_argument("--lr", type=float, default=TrainArgs.lr)
    ap.add_argument("--prefix-frac", type=float, default=TrainArgs.prefix_frac)
    ap.add_argument("--threads", type=int, default=TrainArgs.threads)
    ap.add_argument("--vocab", type=int, default=Config.n_vocab)
    ap.add_argument("--d", type=int, default=Config.d)
    ap.add_argument("--layers", type=int, default=Config.n_layer)
    ap.add_argument("--heads", type=int, default=Config.n_head)
    ap.add_argument("--ff", type=int, default=Config.n_ff)
    ap.add_argument("--limit-pairs", type=int, default=0, help="train on the first N pairs only")
    ap.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="start a new run with this tokenizer.json instead of training one (a draft model "
        "must share its target's vocabulary)",
    )
    ap.add_argument("--export", type=Path, default=None, help="write the GGUF here and stop")
    ap.add_argument("--qtype", choices=["q8_0", "f16", "f32"], default="q8_0")
    ap.add_argument("--eval", type=Path, default=None, help="chrF of this GGUF, then stop")
    ap.add_argument("--eval-limit", type=int, default=500)
    a = ap.parse_args(argv)
    run: Path = a.out
    if a.eval is not None:
        res = evaluate(a.eval, a.corpora, a.holdout, a.eval_limit, a.threads)
        (run / f"eval_{a.eval.stem}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1))
        return 0
    if a.export is not None:
        model, tok, _ = load_run(run)
        export_gguf(model, tok, a.export, qtype=a.qtype)
        print(a.export, a.export.stat().st_size)
        return 0

    run.mkdir(parents=True, exist_ok=True)
    random.seed(a.seed)
    pairs, _ = load_corpora(a.corpora, a.holdout)
    if a.limit_pairs:
        pairs = pairs[: a.limit_pairs]
    targs = TrainArgs(
        seed=a.seed,
        steps=a.steps,
        batch_tokens=a.batch_tokens,
        lr=a.lr,
        prefix_frac=a.prefix_frac,
        threads=a.threads,
    )
    meta_path = run / "run.json"
    tok_path = run / "tokenizer.json"
    if tok_path.exists():
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(tok_path))
        cfg = Config(**json.loads(meta_path.read_text())["config"])
    else:
        if a.tokenizer is not None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(a.tokenizer))
        else:
            texts = [en for _, en, _ in pairs] + [tg for _, _, tg in pairs]
            texts += [prompt("", lang) for lang in TARGETS] * 100
            tok = train_tokenizer(texts, a.vocab)
        cfg = Config(
            n_vocab=tok.get_vocab_size(),
            d=a.d,
            n_layer=a.layers,
            n_head=a.heads,
            n_ff=a.ff,
        )
        tok.save(str(tok_path))
        meta = {"config": asdict(cfg), "train": asdict(targs), "argv": sys.argv[1:]}
        meta_path.write_text(json.dumps(meta, indent=1))
    t0 = time.perf_counter()
    train(run, pairs, tok, cfg, targs)
    print(f"trained in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
