"""Start-up time to the first painted frame, and key latency while a research streams in.

Targets (issue 3): first frame < 1.0 s after process start, measured in the
same run against ``python -c "import textual"`` (the floor any Textual app
pays); a key press handled within 50 ms (p95) while 300 sources, checkpoints
and the synthesis stream into the app.

Start-up: the parent reads the monotonic clock (CLOCK_MONOTONIC, shared by all
processes on Linux) right before spawning; the child prints the same clock
once its first frame has been rendered (``call_after_refresh`` from the
screen's mount, headless driver) and exits. Median of RUNS.

Responsiveness: in one process, a thread posts engine messages exactly as the
research worker does (SourcesFound in small batches, a checkpoint per phase,
synthesis chunks) while another thread presses a key every few milliseconds;
the latency is the time from posting the key to its binding's action running
on the event loop.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RUNS = 5
SOURCES = 300
BATCH = 5  # sources per SourcesFound event
KEY_INTERVAL = 0.02  # seconds between probe key presses
TARGET_FIRST_FRAME_S = 1.0
TARGET_KEY_P95_MS = 50.0
REPO = Path(__file__).resolve().parent.parent

FIRST_FRAME_HARNESS = """
import sys, time
from pathlib import Path
from zorora_tui.app import ZororaApp
from zorora_tui.pipeline.settings import Settings

class FirstFrame(ZororaApp):
    def on_mount(self) -> None:
        self.screen.call_after_refresh(self._painted)

    def _painted(self) -> None:
        heavy = sorted(m for m in ("torch", "chromadb", "sentence_transformers", "umap") if m in sys.modules)
        print(time.monotonic(), ",".join(heavy) or "-", flush=True)
        self.exit()

FirstFrame(Settings(home=Path(sys.argv[1]))).run(headless=True, size=(120, 40))
"""

IMPORT_TEXTUAL = "import time, textual; print(time.monotonic(), '-', flush=True)"


def _spawn_until_print(code: str, *args: str) -> tuple[float, str]:
    """Seconds from spawning ``python -c code`` to the timestamp it prints, and what else it printed."""
    env = dict(os.environ, TEXTUAL_ANIMATIONS="none")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"child failed: {result.stderr.strip().splitlines()[-1:] or result.returncode}")
    stamp, extra = result.stdout.strip().splitlines()[-1].split(" ", 1)
    return float(stamp) - started, extra


def measure_startup(home: Path) -> tuple[float, float, str]:
    """(median first frame s, median import textual s, heavy modules seen at first frame)."""
    frames, imports, heavy = [], [], set()
    for _ in range(RUNS):
        seconds, loaded = _spawn_until_print(IMPORT_TEXTUAL)
        imports.append(seconds)
        seconds, loaded = _spawn_until_print(FIRST_FRAME_HARNESS, str(home))
        frames.append(seconds)
        heavy.update(m for m in loaded.split(",") if m != "-")
    return statistics.median(frames), statistics.median(imports), ",".join(sorted(heavy)) or "none"


def _sources() -> list:
    from zorora_tui.pipeline.models import Source

    kinds = ("academic", "web", "newsroom", "academic", "academic")
    return [
        Source.create(
            title=f"Study {i} of attention mechanisms in large language models and their limits",
            doi=f"10.5555/bench.{i}" if i % 3 else "", url="" if i % 3 else f"https://example.org/{i}",
            origin="openalex", source_type=kinds[i % len(kinds)], publication_date=str(1990 + i % 35),
            cited_by_count=(i * 37) % 5000, authors=[f"Author {i}", "Second Author"],
            content_snippet="An abstract sentence about attention. " * 8,
        )
        for i in range(SOURCES)
    ]


def _stream(app, token: int, done: threading.Event) -> None:
    """Post what a 300-source research posts, from a thread, at a realistic pace."""
    from zorora_tui.messages import CheckpointSaved, EngineEvent
    from zorora_tui.pipeline.events import PhaseFinished, PhaseStarted, Progress, SourcesFound, SynthesisChunk
    from zorora_tui.pipeline.models import PHASES, ResearchState, Source

    screen = app.main_screen
    sources = _sources()
    state = ResearchState(original_query="attention in language models", research_id="bench_stream_0001")
    post = screen.post_message
    post(EngineEvent(token, PhaseStarted(PHASES[0], 1)))
    for start in range(0, SOURCES, BATCH):
        batch = tuple(sources[start:start + BATCH])
        for source in batch:
            state.add_source(source)
        copies = tuple(Source.from_dict(s.to_dict()) for s in batch)  # as the worker's emit() does
        post(EngineEvent(token, SourcesFound("openalex", start + BATCH, 40, copies)))
        post(EngineEvent(token, Progress(PHASES[0], "searching", start + BATCH, SOURCES)))
        time.sleep(0.004)
    for index in range(0, len(state.sources) - 1, 2):
        state.add_citation(state.sources[index].source_id, state.sources[index // 7].source_id)
    for number, phase in enumerate(PHASES, 1):
        post(EngineEvent(token, PhaseFinished(phase, "done", 100)))
        for source in state.sources:
            source.credibility_score = ((number * 0.13) + (len(source.title) % 10) / 10) % 1
            source.credibility_category = "academic"
        post(CheckpointSaved(token, ResearchState.from_dict(state.to_dict())))
        if number < len(PHASES):
            post(EngineEvent(token, PhaseStarted(PHASES[number], number + 1)))
        time.sleep(0.02)
    for index in range(400):
        post(EngineEvent(token, SynthesisChunk(f"Claim {index} is supported by sources [{index % SOURCES + 1}]. ")))
        if index % 40 == 39:
            post(EngineEvent(token, SynthesisChunk("\n\n## Theme\n\n")))
        time.sleep(0.003)
    done.set()


def measure_key_latency() -> tuple[list[float], float]:
    """Key-to-action latencies (ms) while the stream runs, and how long the stream took (s)."""
    from textual import events
    from textual.binding import Binding

    from zorora_tui.app import ZororaApp
    from zorora_tui.pipeline.settings import Settings
    from zorora_tui.screens.main import ResearchRun

    handled = threading.Event()
    stamps: list[float] = []

    class ProbeApp(ZororaApp):
        BINDINGS = [Binding("f12", "probe", "Probe", show=False)]

        def action_probe(self) -> None:
            stamps.append(time.perf_counter())
            handled.set()

    latencies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="zorora-bench-") as tmp:
        app = ProbeApp(Settings(home=Path(tmp)))

        def press_keys(done: threading.Event) -> None:
            while not done.is_set():
                handled.clear()
                sent = time.perf_counter()
                app.post_message(events.Key("f12", None))
                if handled.wait(5):
                    latencies.append((stamps[-1] - sent) * 1000)
                time.sleep(KEY_INTERVAL)

        async def drive() -> float:
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                main = app.main_screen
                main.current_run = ResearchRun(1, "bench", 2, threading.Event())
                done = threading.Event()
                streamer = threading.Thread(target=_stream, args=(app, 1, done), name="bench-stream")
                presser = threading.Thread(target=press_keys, args=(done,), name="bench-keys")
                started = time.perf_counter()
                streamer.start()
                presser.start()
                while streamer.is_alive() or presser.is_alive():
                    await asyncio.sleep(0.01)
                await pilot.pause()
                elapsed = time.perf_counter() - started
                if main.sources_table.row_count != SOURCES:
                    raise RuntimeError(f"stream incomplete: {main.sources_table.row_count} rows")
                main.current_run = None
                return elapsed

        elapsed = asyncio.run(drive())
    return latencies, elapsed


def run() -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="zorora-bench-") as tmp:
        frame_s, import_s, heavy = measure_startup(Path(tmp))
    latencies, stream_s = measure_key_latency()
    p50 = statistics.median(latencies)
    p95 = statistics.quantiles(latencies, n=20, method="inclusive")[18]
    frame_ok = "meets" if frame_s < TARGET_FIRST_FRAME_S else "MISSES"
    key_ok = "meets" if p95 < TARGET_KEY_P95_MS else "MISSES"
    return {
        "first painted frame (median of 5, headless 120x40)":
            f"{frame_s:.2f} s ({frame_ok} target < {TARGET_FIRST_FRAME_S:.1f} s); heavy modules loaded: {heavy}",
        'baseline: python -c "import textual" (median of 5)': f"{import_s:.2f} s",
        "first frame / import textual": f"{frame_s / import_s:.1f}x",
        f"key press latency while {SOURCES} sources + synthesis stream in":
            f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(latencies):.1f} ms over {len(latencies)} presses "
            f"in {stream_s:.1f} s ({key_ok} target p95 < {TARGET_KEY_P95_MS:.0f} ms)",
    }


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
