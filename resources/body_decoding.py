"""Content-Encoding decoding with a cap on the decoded size (no decompression bombs).

httpx would inflate a gzip or brotli body without any limit; a few kilobytes on the wire
can expand to gigabytes. Here each decoder is asked for at most the bytes still allowed,
so memory stays bounded and an over-cap body stops as soon as it crosses the cap.
"""

from __future__ import annotations

import zlib

import brotli

ACCEPT_ENCODING = "gzip, deflate, br"


class BodyTooLarge(Exception):
    pass


class UndecodableBody(Exception):
    pass


class _Identity:
    def feed(self, data: bytes, limit: int) -> bytes:
        return data

    def flush(self, limit: int) -> bytes:
        return b""


class _Zlib:
    def __init__(self, wbits: int, fallback_raw: bool = False) -> None:
        self._wbits = wbits
        self._fallback_raw = fallback_raw  # "deflate" is sent both with and without a header
        self._started = False
        self._obj = zlib.decompressobj(wbits)

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            out = self._obj.decompress(data, limit + 1)
        except zlib.error as exc:
            if self._fallback_raw and not self._started:
                self._fallback_raw = False
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, limit)
            raise UndecodableBody(f"bad compressed data: {exc}") from None
        self._started = True
        if len(out) > limit:
            raise BodyTooLarge
        # A bomb keeps its input in unconsumed_tail; ask for more only while under the cap.
        while self._obj.unconsumed_tail:
            more = self._obj.decompress(self._obj.unconsumed_tail, limit - len(out) + 1)
            out += more
            if len(out) > limit:
                raise BodyTooLarge
            if not more:
                break
        return out

    def flush(self, limit: int) -> bytes:
        out = self._obj.flush(limit + 1) if limit >= 0 else b""
        if len(out) > limit:
            raise BodyTooLarge
        return out


class _Brotli:
    def __init__(self) -> None:
        self._obj = brotli.Decompressor()

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            out = self._obj.process(data, output_buffer_limit=limit + 1)
            while len(out) <= limit and not self._obj.can_accept_more_data():
                more = self._obj.process(b"", output_buffer_limit=limit - len(out) + 1)
                if not more:
                    break
                out += more
        except brotli.error as exc:
            raise UndecodableBody(f"bad brotli data: {exc}") from None
        if len(out) > limit:
            raise BodyTooLarge
        return out

    def flush(self, limit: int) -> bytes:
        return b""


def _decoder(name: str) -> _Identity | _Zlib | _Brotli:
    if name in ("", "identity"):
        return _Identity()
    if name in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if name == "deflate":
        return _Zlib(zlib.MAX_WBITS, fallback_raw=True)
    if name == "br":
        return _Brotli()
    raise UndecodableBody(f"unsupported Content-Encoding {name!r}")


class CappedDecoder:
    """Decode a body encoded with `content_encoding`, refusing more than `max_bytes` of output."""

    def __init__(self, content_encoding: str | None, max_bytes: int) -> None:
        names = [n.strip().lower() for n in (content_encoding or "").split(",") if n.strip()]
        # Encodings are listed in the order applied: undo them last-first.
        self._chain = [_decoder(n) for n in reversed(names)] or [_Identity()]
        self.max_bytes = max_bytes
        self.size = 0

    def _run(self, data: bytes, final: bool) -> bytes:
        for decoder in self._chain:
            limit = self.max_bytes - self.size
            out = decoder.feed(data, limit) if data else b""
            if final:
                out += decoder.flush(limit - len(out))
            data = out
        self.size += len(data)
        if self.size > self.max_bytes:
            raise BodyTooLarge
        return data

    def feed(self, chunk: bytes) -> bytes:
        return self._run(chunk, final=False)

    def finish(self) -> bytes:
        return self._run(b"", final=True)
