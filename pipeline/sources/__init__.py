"""Source adapters, one module per service.

Each module has a pure ``parse...`` function tested on recorded responses and a
``search(ctx)`` that fetches with ``pipeline.http`` and returns Sources.
"""
