"""Screens of the Zorora TUI."""
