"""Phase 6: write the synthesis, streamed from an LLM when one is configured.

Without an LLM, or when it fails in any way, the synthesis is extractive and
deterministic. Either way the text arrives as ``SynthesisChunk`` events. When
the LLM fails, possibly mid-stream, a ``SynthesisReset`` comes first: displays
drop whatever LLM text they show, then the extractive chunks follow.
"""

from __future__ import annotations

from ..events import Progress, SynthesisChunk, SynthesisReset
from ..llm import LLMError, model_name, stream_chat
from ..models import ResearchState
from ..synthesis import build_llm_prompt, extractive_synthesis, validate_citations
from .context import Cancelled, PhaseTimer, RunContext

PHASE = "synthesis"
EXTRACTIVE = "extractive"


def _emit_extractive(state: ResearchState, ctx: RunContext) -> None:
    """Write the extractive synthesis and emit it paragraph by paragraph (the chunks join back into it)."""
    text = extractive_synthesis(state)
    state.synthesis = text
    state.synthesis_model = EXTRACTIVE
    blocks = text.split("\n\n")
    for i, block in enumerate(blocks):
        ctx.check_cancel()
        ctx.emit(SynthesisChunk(block + ("\n\n" if i < len(blocks) - 1 else "")))


def _stream_llm(state: ResearchState, ctx: RunContext) -> str:
    """The LLM's synthesis, emitted as it arrives; raises LLMError on any failure."""
    parts: list[str] = []
    for chunk in stream_chat(ctx.settings, build_llm_prompt(state), ctx.cancel):
        parts.append(chunk)
        ctx.emit(SynthesisChunk(chunk))
    text = "".join(parts)
    if ctx.cancel.is_set():
        state.synthesis = text  # keep what arrived; the run is being cancelled
        ctx.check_cancel()
    if not text.strip():
        raise LLMError("the LLM returned an empty answer")
    return text


def run(state: ResearchState, ctx: RunContext) -> None:
    """Set ``state.synthesis`` and ``state.synthesis_model``."""
    with PhaseTimer(state, ctx, PHASE):
        ctx.check_cancel()
        if not ctx.settings.llm_url:
            _emit_extractive(state, ctx)
            return
        ctx.emit(Progress(PHASE, f"Asking {model_name(ctx.settings)} for a synthesis"))
        try:
            text = _stream_llm(state, ctx)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - any LLM trouble falls back to the extractive text
            reason = str(exc) if isinstance(exc, LLMError) else f"{type(exc).__name__}: {exc}"
            reason = reason.splitlines()[0][:200] if reason else type(exc).__name__
            ctx.emit(Progress(PHASE, f"LLM synthesis failed ({reason}); writing an extractive synthesis instead"))
            ctx.emit(SynthesisReset(reason))
            _emit_extractive(state, ctx)
            return
        cleaned, dropped = validate_citations(text, len(state.sources))
        if dropped:
            listed = ", ".join(map(str, dropped))
            ctx.emit(Progress(PHASE, f"Dropped citations to sources that do not exist: {listed}"))
        state.synthesis = cleaned
        state.synthesis_model = model_name(ctx.settings)
