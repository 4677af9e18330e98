"""Zorora TUI: a keyboard-driven deep-research workbench for the terminal."""

__version__ = "0.1.0"
