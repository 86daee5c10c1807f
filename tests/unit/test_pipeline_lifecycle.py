"""The pipeline's life cycle against the UI's calls arriving at any time: settings applied
while loading or twice in a row, stop during start-up, an input switched while paused. Each
case forces the timing window with a slow fake (model load, device open) instead of luck."""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from pathlib import Path

from subtitler.config import AppConfig, MtConfig
from subtitler.mt.engine import LoadedModel, LocalEngine
from subtitler.pipeline.events import PipelineState, StatusEvent
from subtitler.pipeline.pipeline import Factories, Pipeline, replace_mt
from tests.helpers.fake_pipeline import FakeSource, ScriptedRecognizer, Step, echo_lm
from tests.unit.test_pipeline import Events, wait_for


class Models:
    """A model loader that records loads and closes; some paths load slowly."""

    def __init__(self, delays: dict[str, float] | None = None) -> None:
        self.delays = delays or {}
        self.loaded: list[str] = []
        self.closed: list[str] = []
        self.by_lm: dict[int, str] = {}
        self.lock = threading.Lock()

    def __call__(self, mt: MtConfig) -> LocalEngine:
        time.sleep(self.delays.get(mt.model_path, 0.0))
        lm, name = echo_lm(), mt.model_path
        with self.lock:
            self.loaded.append(name)
            self.by_lm[id(lm)] = name

        def close() -> None:
            with self.lock:
                self.closed.append(name)

        return LocalEngine(LoadedModel(lm, "chatml", close=close), mt)

    def in_use(self, p: Pipeline) -> str | None:
        stage = p._mt
        model = stage._next_model or stage._model
        return None if model is None else self.by_lm[id(model.lm)]


def speech() -> ScriptedRecognizer:
    return ScriptedRecognizer([Step(0.3 * i, i, [f"w{i}", "x."], final=True) for i in range(1, 99)])


def test_a_model_replaced_before_it_was_used_is_closed(tmp_path: Path) -> None:
    models = Models()
    cfg = AppConfig(mt=MtConfig(model_path="A.gguf"))
    quiet = ScriptedRecognizer([])  # nobody speaks: the translator never swaps models in
    p = Pipeline(
        cfg, Events(), Factories(lambda a, c: FakeSource(30, 5.0), lambda a: quiet, models)
    )
    p.start()
    assert wait_for(lambda: p.state == "running")
    p.apply_config(replace_mt(cfg, model_path="B.gguf"))
    assert wait_for(lambda: models.loaded == ["A.gguf", "B.gguf"])
    assert wait_for(lambda: models.closed == ["A.gguf"])  # not left open until the end
    assert p.stop()
    assert sorted(models.closed) == ["A.gguf", "B.gguf"]


def test_the_newest_model_wins_whatever_loads_first(tmp_path: Path) -> None:
    models = Models({"B.gguf": 0.4, "C.gguf": 0.05})
    cfg = AppConfig(mt=MtConfig(model_path="A.gguf", max_new_tokens=8))
    src = FakeSource(30.0, speed=5.0, live=True)
    p = Pipeline(cfg, Events(), Factories(lambda a, c: src, lambda a: speech(), models))
    p.start()
    assert wait_for(lambda: p.state == "running")
    p.apply_config(replace_mt(p.config, model_path="B.gguf"))  # slow
    p.apply_config(replace_mt(p.config, model_path="C.gguf"))  # fast, asked for last
    assert wait_for(lambda: len(models.loaded) == 3)
    assert wait_for(lambda: models.in_use(p) == "C.gguf" and "B.gguf" in models.closed)
    assert p.stop()


def test_settings_applied_while_loading_reach_audio_and_speech(tmp_path: Path) -> None:
    models = Models({"A.gguf": 0.3})
    seen: list[tuple[object, str]] = []

    def audio(a, c):  # type: ignore[no-untyped-def]
        seen.append(("audio", str(a.device)))
        return FakeSource(30.0, speed=5.0, live=True)

    def recognizer(a):  # type: ignore[no-untyped-def]
        seen.append(("asr", a.model))
        return speech()

    cfg = AppConfig(mt=MtConfig(model_path="A.gguf"))
    p = Pipeline(cfg, Events(), Factories(audio, recognizer, models))
    p.start()
    assert p.state == "loading"
    new = dataclasses.replace(
        cfg,
        audio=dataclasses.replace(cfg.audio, device="Headset"),
        asr=dataclasses.replace(cfg.asr, model="medium"),
    )
    p.apply_config(new)  # the settings pane is usable while models load
    assert wait_for(lambda: p.state == "running")
    # Start-up read the settings after the model had loaded: no detour via the old ones.
    assert seen == [("asr", "medium"), ("audio", "Headset")]
    assert p.stop()


class SlowToOpen(FakeSource):
    """A device that takes a while to open (a loopback input can take seconds)."""

    def __init__(self, delay: float) -> None:
        super().__init__(30.0, speed=5.0, live=True)
        self.delay = delay
        self.opening = threading.Event()

    def start(self) -> None:
        self.opening.set()
        time.sleep(self.delay)
        super().start()


def test_stop_while_the_input_opens_leaves_nothing_running(tmp_path: Path) -> None:
    src = SlowToOpen(0.3)
    ev = Events()
    p = Pipeline(
        AppConfig(mt=MtConfig(model_path="")),
        ev,
        Factories(lambda a, c: src, lambda a: speech(), Models()),
    )
    p.start()
    assert src.opening.wait(5)
    assert p.stop(timeout=2.0)
    assert not src.running and p.state == "stopped"
    time.sleep(0.1)
    assert [e.state for e in ev.of_status()][-1:] == ["stopped"]  # no "running" after stop


def test_an_input_switched_while_paused_starts_on_resume(tmp_path: Path) -> None:
    first, second = FakeSource(30.0, speed=5.0, live=True), FakeSource(30.0, speed=5.0, live=True)
    sources = iter([first, second])
    cfg = AppConfig(mt=MtConfig(model_path="x"))
    p = Pipeline(cfg, Events(), Factories(lambda a, c: next(sources), lambda a: speech(), Models()))
    p.start()
    assert wait_for(lambda: p.state == "running" and first.i > 0)
    p.pause()
    p.apply_config(dataclasses.replace(cfg, audio=dataclasses.replace(cfg.audio, device="B")))
    assert wait_for(lambda: p._asrs and p._asrs[0].source is second)
    time.sleep(0.1)
    assert not second.running and second.starts == 0  # paused means not listening
    p.resume()
    assert p.state == "running" and second.running and not first.running
    n = second.i
    assert wait_for(lambda: second.i > n)  # and it is being read
    assert p.stop()
    assert not first.running and not second.running


def test_pause_and_resume_from_many_threads_run_one_at_a_time_on_the_owner() -> None:
    """The lifecycle's commands queue up for one thread: calls from any number of threads
    leave a consistent state, each change announced once from that thread; after stop the
    owner is gone and late calls change nothing."""
    seen: list[tuple[str, str]] = []
    ev = Events()

    def on_event(e):  # type: ignore[no-untyped-def]
        ev(e)
        if isinstance(e, StatusEvent) and e.state in ("paused", "running"):
            seen.append((e.state, threading.current_thread().name))

    src = FakeSource(60.0, speed=1.0)
    p = Pipeline(
        AppConfig(mt=MtConfig(model_path="")),
        on_event,
        Factories(lambda a, c: src, lambda a: speech(), Models()),
    )
    p.start()
    assert wait_for(lambda: p.state == PipelineState.RUNNING)
    errors: list[BaseException] = []

    def flip(n: int) -> None:
        try:
            for i in range(20):
                p.pause() if (i + n) % 2 else p.resume()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=flip, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == [] and p.state in (PipelineState.RUNNING, PipelineState.PAUSED)
    states = [s for s, _ in seen]
    assert states[0] == "running" and all(a != b for a, b in itertools.pairwise(states))
    assert {name for _, name in seen[1:]} == {"pipeline"}  # every change on the owner
    assert p.stop(2.0)
    assert not p._owner.is_alive()
    p.resume()  # after stop: nothing happens, nothing waits
    assert p.state == PipelineState.STOPPED
