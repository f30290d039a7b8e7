"""Deterministic, streamable JSON history documents of any size (the large-result fixture).

`export_history` must be able to hand out hundreds of MiB without holding them in memory:
the document is built from fixed-width records, 1000 at a time, by substituting the block
number into a precomputed template (one C-speed `bytes.replace` per block), so producing
the bytes costs about as much as copying them. The same bytes always come out for the same
(rows, padding), so the sha256 is computed once and cached.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator

from inspector.virtual.app import FileSource

PREFIX = b'{"history":['
SUFFIX = b'{"end":true}]}'
RECORD = 128  # bytes per record, including its trailing comma
BLOCK = 1000  # records per template block
PIECE = 1 << 20  # bytes handed to the relay core at a time
_SYMBOLS = (b"ACME", b"GLOBX", b"INITECH", b"UMBRL", b"STARK", b"WAYNE", b"CYBDN")
_PLACEHOLDER = b"KKKKKKK"
_digests: dict[tuple[int, int], str] = {}


def _template() -> bytes:
    out = bytearray()
    for j in range(BLOCK):
        sym = _SYMBOLS[j % len(_SYMBOLS)]
        cents = 1000 + (j * 7919) % 90000
        side = b"buy" if j % 3 else b"sell"
        rec = (
            b'{"i":"'
            + _PLACEHOLDER
            + b"%03d" % j
            + b'","symbol":"'
            + sym
            + b'","price":"%d.%02d"' % (cents // 100, cents % 100)
            + b',"side":"'
            + side
            + b'","ts":"2026-11-%02dT%02d:%02d:00Z"}' % (1 + j % 28, j % 24, j % 60)
        )
        out += rec.ljust(RECORD - 1) + b","
    return bytes(out)


_TEMPLATE = _template()
_PARTS = _TEMPLATE.split(_PLACEHOLDER)  # block k = b"%07d" % k joined between the parts


def _partial(k: int, records: int) -> bytes:
    return _TEMPLATE[: records * RECORD].replace(_PLACEHOLDER, b"%07d" % k)


def overhead() -> int:
    return len(PREFIX) + len(SUFFIX)


def layout_for_bytes(size: int) -> tuple[int, int]:
    """(records, padding) giving a document of exactly `size` bytes."""
    if size < overhead():
        raise ValueError(f"a history document is at least {overhead()} bytes")
    body = size - overhead()
    return body // RECORD, body % RECORD


def iter_document(records: int, padding: int) -> Iterator[bytes]:
    """The document in pieces of at most one block (128 000 bytes)."""
    yield PREFIX
    full, rest = divmod(records, BLOCK)
    for k in range(full):
        yield (b"%07d" % k).join(_PARTS)
    if rest:
        yield _partial(full, rest)
    if padding:
        yield b" " * padding
    yield SUFFIX


def document_size(records: int, padding: int) -> int:
    return overhead() + records * RECORD + padding


def document_sha256(records: int, padding: int) -> str:
    key = (records, padding)
    if key not in _digests:
        h = hashlib.sha256()
        for piece in iter_document(records, padding):
            h.update(piece)
        _digests[key] = h.hexdigest()
    return _digests[key]


def history_file(records: int, padding: int = 0) -> FileSource:
    """A FileSource streaming the document (pieces are split to chunk size by the relay)."""

    async def chunks(chunk_size: int) -> AsyncIterator[bytes]:
        # ~1 MiB pieces: fewer hand-offs per byte (the relay core splits them into frames)
        batch: list[bytes] = []
        held = 0
        for piece in iter_document(records, padding):
            batch.append(piece)
            held += len(piece)
            if held >= PIECE:
                yield b"".join(batch)
                batch.clear()
                held = 0
        if batch:
            yield b"".join(batch)

    return FileSource(document_size(records, padding), chunks, document_sha256(records, padding))
