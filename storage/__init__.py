"""Persistence: SQLite index, JSON findings files, retraction table, chat and feedback.

Never imports textual.
"""
