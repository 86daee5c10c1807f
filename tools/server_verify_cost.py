"""What one SSBD verify request costs on a completions server: ``echo`` + ``logprobs`` over
prompt + draft against a plain 1-token completion over the same text, median of 7, for
prompts of growing length (docs/BENCHMARKS.md, "Translation on a server").

    python tools/server_verify_cost.py http://127.0.0.1:8731/v1
"""

import statistics
import sys
import time

from subtitler.mt.completions import CompletionsClient, ServerSettings
from subtitler.mt.prompts import PromptBuilder

url = sys.argv[1]
c = CompletionsClient(ServerSettings(url, timeout_s=60))
c.model = c.list_models()[0]["id"]
pb = PromptBuilder("chatml", "en", "de")
src = "A man in a blue shirt is standing on a ladder cleaning a window"
draft = "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt ein Fenster."
for words in (3, 8, 13):
    prompt = pb.build(" ".join(src.split()[:words]))
    text = prompt + draft
    ids = c.tokenize(text)
    m = len(ids) - len(c.tokenize(prompt))
    v, g = [], []
    for _ in range(7):
        t = time.perf_counter()
        c.verify(prompt, draft, ids, m)
        v.append(time.perf_counter() - t)
        t = time.perf_counter()
        c.generate(text, 1)
        g.append(time.perf_counter() - t)
    mv, mg = statistics.median(v) * 1e3, statistics.median(g) * 1e3
    print(f"| {len(ids)} | {mv:.1f} | {mg:.1f} | {(mv - mg) / len(ids):.2f} |")
c.close()
