"""Time from a subtitle event to its text in the browser page (headless Chromium).

    python tools/bench_web.py --events 300 [--json OUT.json]

Starts the page server on 127.0.0.1, opens the page in headless Chromium (the system's
``chromium``, driven over the DevTools pipe as the tests do) and publishes subtitle events
the way the pipeline's translation thread does. For each event it measures, on one clock:
  publish  the time publish() took on the calling (pipeline) thread;
  dom      publish() called -> the page's DOM holds the event's text (a MutationObserver in
           the page reports it through a DevTools binding, so this includes that report);
  frame    publish() called -> the first animation frame after that DOM change.
Events alternate between growing open lines (display-only mask-3 hides their last 3 words)
and finished lines, 50-150 ms apart (faster than the pipeline's updates). ``--stalled N``
also keeps N connections open that read nothing after the headers (a hung client).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the headless-Chromium driver is the tests' own

from subtitler.config import DisplayConfig, WebConfig  # noqa: E402
from subtitler.web.server import WebSubtitles  # noqa: E402
from tests.helpers.chromium import Chromium  # noqa: E402
from tests.helpers.web import EventStream, subtitle  # noqa: E402

OBSERVER = """
(() => {
  const box = document.getElementById("lines");
  let last = "";
  new MutationObserver(() => {
    const tags = box.textContent.match(/M\\d+Z/g);
    if (!tags || tags[tags.length - 1] === last) return;
    last = tags[tags.length - 1];
    const tag = last;
    benchSeen("dom " + tag);
    requestAnimationFrame(() => benchSeen("frame " + tag));
  }).observe(box, {childList: true, subtree: true, characterData: true});
  return true;
})()
"""

WORDS = "die Sitzung beginnt heute mit einem kurzen Bericht über das Budget".split()


def percentiles(xs: list[float]) -> dict[str, float]:
    s = sorted(xs)
    q = statistics.quantiles(s, n=100, method="inclusive")
    return {
        "n": len(s),
        "p50_ms": 1000 * statistics.median(s),
        "p90_ms": 1000 * q[89],
        "p99_ms": 1000 * q[98],
        "max_ms": 1000 * s[-1],
    }


def run(events: int, seed: int, stalled: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    server = WebSubtitles(WebConfig(share="local", port=0), DisplayConfig(mask_k=3, lines=2))
    server.start()
    hung = [EventStream(server.port, rcvbuf=4096) for _ in range(stalled)]
    for h in hung:
        h.open()
    seen: dict[str, float] = {}
    arrived = threading.Condition()

    def on_message(t: float, msg: dict[str, Any]) -> None:
        if msg.get("method") == "Runtime.bindingCalled":
            with arrived:
                seen[msg["params"]["payload"]] = t
                arrived.notify_all()

    def wait(key: str) -> float:
        with arrived:
            if not arrived.wait_for(lambda: key in seen, timeout=10):
                raise TimeoutError(f"the page never showed {key}")
            return seen[key]

    publish_s: list[float] = []
    dom_s: list[float] = []
    frame_s: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, Chromium(Path(tmp) / "profile") as browser:
        browser.listeners.append(on_message)
        page = browser.open(server.url)
        page.send("Runtime.addBinding", {"name": "benchSeen"})
        page.go()
        page.wait_for("document.body && document.body.dataset.state === 'live'")
        page.evaluate(OBSERVER)
        seg = 0
        for i in range(events):
            final = i % 4 == 3
            if i % 4 == 0:
                seg += 1
            tag = f"M{i}Z"
            grown = WORDS[: 3 + i % 4 * 2]
            # The tag leads; mask-3 hides only the last three words, so the tag is shown.
            ev = subtitle(seg, f"source {i}", " ".join([tag, *grown]), final)
            time.sleep(rng.uniform(0.05, 0.15))
            t0 = time.perf_counter()
            server.publish(ev)
            publish_s.append(time.perf_counter() - t0)
            dom_s.append(wait(f"dom {tag}") - t0)
            frame_s.append(wait(f"frame {tag}") - t0)
    dropped = server.dropped
    server.stop()
    for h in hung:
        h.close()
    return {
        "events": events,
        "stalled": stalled,
        "stalled_dropped": dropped,
        "publish": percentiles(publish_s),
        "dom": percentiles(dom_s),
        "frame": percentiles(frame_s),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=300)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--stalled", type=int, default=0, help="connections that never read")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    result = run(args.events, args.seed, args.stalled)
    print(f"{args.events} events, page server on 127.0.0.1, headless Chromium")
    if args.stalled:
        print(f"{args.stalled} stalled connections, {result['stalled_dropped']} dropped")
    print(f"{'':28} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    for key, label in (
        ("publish", "publish() on the pipeline"),
        ("dom", "event -> text in the DOM"),
        ("frame", "event -> next frame"),
    ):
        r = result[key]
        print(
            f"{label:28} {r['p50_ms']:7.2f}  {r['p90_ms']:7.2f}  {r['p99_ms']:7.2f}  "
            f"{r['max_ms']:7.2f}  ms"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
