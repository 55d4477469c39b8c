"""Screenshot of the Dagster UI's asset graph with headless Chromium (README's picture).

Usage, with `make ui` running: `uv run python docs/screenshot.py [URL] [OUT.png]`. Drives
Chromium over its DevTools protocol: dismisses the first-visit dialog, waits for the
graph to render, captures the page.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import websockets

URL = "http://127.0.0.1:3000/locations/catlas/asset-groups/lake/lineage"
OUT = Path(__file__).with_name("asset-graph.png")
SIZE = (1600, 1000)
SETTLE_S = 20.0  # the UI renders the graph after its GraphQL queries return

SKIP_DIALOG = """
for (const b of document.querySelectorAll('button')) {
  if (['Skip', 'Dismiss', 'Close'].includes(b.textContent.trim())) b.click();
}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _capture(ws_url: str, url: str) -> bytes:
    async with websockets.connect(ws_url, max_size=None) as ws:
        counter = 0

        async def call(method: str, **params: object) -> dict:
            nonlocal counter
            counter += 1
            await ws.send(json.dumps({"id": counter, "method": method, "params": params}))
            while True:
                message = json.loads(await ws.recv())
                if message.get("id") == counter:
                    return message.get("result", {})

        await call("Page.enable")
        await call(
            "Emulation.setDeviceMetricsOverride",
            width=SIZE[0],
            height=SIZE[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        await call("Page.navigate", url=url)
        for _ in range(3):
            await asyncio.sleep(SETTLE_S / 3)
            await call("Runtime.evaluate", expression=SKIP_DIALOG)
        await asyncio.sleep(2)
        shot = await call("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])


def main(url: str = URL, out: Path = OUT) -> None:
    port = _free_port()
    with tempfile.TemporaryDirectory() as profile:
        browser = subprocess.Popen(
            [
                "chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--remote-debugging-port={port}",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(60):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
                        pages = [p for p in json.load(answer) if p["type"] == "page"]
                    if pages:
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            out.write_bytes(asyncio.run(_capture(pages[0]["webSocketDebuggerUrl"], url)))
        finally:
            browser.terminate()
            browser.wait(30)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*(sys.argv[1:2] or [URL]), *([Path(sys.argv[2])] if len(sys.argv) > 2 else []))
