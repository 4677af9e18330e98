"""`zorora web`: the same Textual app, served to a browser by textual-serve.

Each browser tab gets its own ``python -m zorora_tui`` process, so the web
view is the terminal app itself, not a second UI to keep in step. The server
binds loopback addresses only: the app reads and writes the user's research
store with no authentication, so it must never be reachable from the network.
"""

from __future__ import annotations

import ipaddress
import shlex
import sys

TITLE = "Zorora"


def app_command() -> str:
    """The shell command textual-serve runs per browser session (quoted: the venv path may hold spaces)."""
    return f"{shlex.quote(sys.executable)} -m zorora_tui"


def check_local_host(host: str) -> str:
    """Return ``host`` if it is a loopback name or address; otherwise raise ValueError."""
    name = host.strip()
    if name.lower() == "localhost":
        return name
    try:
        address = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        raise ValueError(f"zorora web serves on localhost only; {host!r} is not a loopback address") from None
    if not address.is_loopback:
        raise ValueError(f"zorora web serves on localhost only; {host!r} is not a loopback address")
    return name


def check_port(port: int) -> int:
    """Return ``port`` if it is a usable TCP port; otherwise raise ValueError."""
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError(f"port must be between 1 and 65535, got {port!r}")
    return port


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the TUI at http://host:port until interrupted (Ctrl+C or SIGTERM)."""
    host = check_local_host(host)
    port = check_port(port)
    from textual_serve.server import Server  # aiohttp is heavy; only `zorora web` needs it

    Server(command=app_command(), host=host, port=port, title=TITLE).serve()
