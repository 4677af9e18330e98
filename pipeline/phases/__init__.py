"""The six phases of a research, one module each, run in order by the orchestrator."""
