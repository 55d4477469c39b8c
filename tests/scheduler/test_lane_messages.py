"""The lanes' socket framing: however the bytes arrive, the messages come out whole and in
order, and an end cut short is the end (a real socket pair, a real event loop)."""

from __future__ import annotations

import asyncio
import pickle
import socket
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.services.lanes import _HEADER, _Receiver

MESSAGES = st.lists(
    st.tuples(
        st.sampled_from(["run", "done", "error"]),
        st.integers(min_value=0, max_value=2**40),
        st.binary(max_size=3000),
    ),
    max_size=12,
)


def _framed(messages: list[tuple[Any, ...]]) -> bytes:
    out = b""
    for message in messages:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        out += _HEADER.pack(len(data)) + data
    return out


async def _received(chunks: list[bytes]) -> list[tuple[Any, ...]]:
    ours, theirs = socket.socketpair()
    reader, _writer = await asyncio.open_connection(sock=ours)
    receiver = _Receiver(reader)

    def send() -> None:
        for chunk in chunks:
            theirs.sendall(chunk)
        theirs.close()

    sending = asyncio.get_running_loop().run_in_executor(None, send)
    got = []
    while (message := await receiver.next()) is not None:
        got.append(message)
    await sending
    _writer.close()
    return got


@settings(max_examples=60, deadline=None)
@given(MESSAGES, st.lists(st.integers(min_value=1, max_value=5000), max_size=8), st.booleans())
def test_messages_come_out_whole_and_in_order_however_the_bytes_are_cut(
    messages: list[tuple[Any, ...]], cuts: list[int], cut_short: bool
) -> None:
    data = _framed(messages)
    # The last message loses its last byte: the other end went away in the middle of it.
    sent = data[:-1] if cut_short and messages else data
    chunks, start = [], 0
    for size in cuts:
        chunks.append(sent[start : start + size])
        start += size
    chunks.append(sent[start:])
    expected = messages[:-1] if cut_short and messages else messages
    assert asyncio.run(_received([c for c in chunks if c])) == expected
