"""A real webhook receiver on 127.0.0.1 for the notifier's tests (aiohttp in a thread)."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web as aioweb


class Receiver:
    """A local webhook; with `refuse_first` it refuses the first delivery of each key."""

    def __init__(self, *, refuse_first: bool = True) -> None:
        self.refuse_first = refuse_first
        self.received: list[tuple[str, dict]] = []
        self.refused: set[str] = set()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _handle(self, request: aioweb.Request) -> aioweb.Response:
        key = request.headers["Idempotency-Key"]
        body = await request.json()
        if self.refuse_first and key not in self.refused:
            self.refused.add(key)
            return aioweb.Response(status=503)
        self.received.append((key, body))
        return aioweb.Response(status=200, text="ok")

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = aioweb.Application()
        app.router.add_post("/hook", self._handle)
        self.runner = aioweb.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = aioweb.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> Receiver:
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"
