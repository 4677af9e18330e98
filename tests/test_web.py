"""`zorora web`: textual-serve on loopback serves the app's page; other hosts are refused."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from zorora_tui.web import app_command, check_local_host, check_port, serve


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _, err = proc.communicate(timeout=2)
            pytest.fail(f"server exited early ({proc.returncode}): {err.decode(errors='replace')[-500:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"server did not listen on port {port} within {timeout}s")


def test_serve_returns_textual_page_on_loopback(zhome: Path) -> None:
    port = _free_port()
    code = f"from zorora_tui.web import serve; serve('127.0.0.1', {port})"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        _wait_listening(port, proc)
        response = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert response.status_code == 200
        assert "text/html" in response.headers["content-type"]
        body = response.text
        assert "textual.js" in body
        assert "Zorora" in body
        assert f"ws://127.0.0.1:{port}/ws" in body
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    assert proc.returncode is not None


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com", ""])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    with pytest.raises(ValueError, match="localhost only"):
        check_local_host(host)
    with pytest.raises(ValueError):
        serve(host, 8000)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_hosts_are_accepted(host: str) -> None:
    assert check_local_host(host) == host


@pytest.mark.parametrize("port", [0, -1, 65536, True])
def test_bad_ports_are_refused(port: int) -> None:
    with pytest.raises(ValueError, match="port"):
        check_port(port)


def test_app_command_runs_the_tui_module_with_this_interpreter() -> None:
    command = app_command()
    assert command.endswith(" -m zorora_tui")
    assert sys.executable in command
