"""JupyterLab on a loopback port driven by headless Chromium over the DevTools protocol
(tornado's websocket client, which JupyterLab already needs): open a notebook, run it, read
and type into the page."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from browser import CHROMIUM, OFFLINE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A JupyterLab server rooted at ``root`` (the app exposed as ``window.jupyterapp``)."""

    def __init__(self, root: Path):
        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        log = (root / "lab.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
             "--ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={root}", "--allow-root",
             "--LabApp.expose_app_in_browser=True"],
            stdout=log, stderr=subprocess.STDOUT, cwd=root,
            env={**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
                 "JUPYTER_RUNTIME_DIR": str(root / ".runtime")})
        self._wait()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"

    def _wait(self, seconds: float = 90) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.process.poll() is None:
            try:
                urllib.request.urlopen(self.url("api/status"), timeout=2).read()
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("JupyterLab did not start: " + (self.root / "lab.log").read_text())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Page:
    """One headless Chromium tab, commanded over the DevTools protocol."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 1600):
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             OFFLINE + ", EXCLUDE 127.0.0.1", "--no-proxy-server",  # only the server
             "--remote-debugging-port=0", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        end = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.monotonic() > end:
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        tabs = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json").read())
        self.ws_url = next(t for t in tabs if t["type"] == "page")["webSocketDebuggerUrl"]
        self.loop = asyncio.new_event_loop()
        self.ids = 0
        self.conn = self.loop.run_until_complete(self._connect())

    async def _connect(self):
        from tornado.websocket import websocket_connect

        return await websocket_connect(self.ws_url, max_message_size=256 * 2**20)

    async def _call(self, method: str, params: dict) -> dict:
        self.ids += 1
        ident = self.ids
        await self.conn.write_message(json.dumps({"id": ident, "method": method,
                                                  "params": params}))
        while True:
            message = json.loads(await self.conn.read_message())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def call(self, method: str, **params) -> dict:
        return self.loop.run_until_complete(self._call(method, params))

    def evaluate(self, script: str):
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.call("Runtime.evaluate", expression=script, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{script[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, script: str, seconds: float = 120):
        """Poll a JavaScript expression until it is truthy; its value."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            value = self.evaluate(script)
            if value:
                return value
            time.sleep(0.5)
        raise TimeoutError(f"waited {seconds:.0f} s for: {script}")

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element and type ``text`` as keyboard input."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.loop.close()
