"""Zorora TUI: a keyboard-driven deep-research workbench for the terminal."""
