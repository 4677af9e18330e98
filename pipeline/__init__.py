"""The research engine: models, events, the six phases, source adapters, LLM client.

Never imports textual; storage is reached only through small callables passed in.
"""
