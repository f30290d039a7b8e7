"""`sync:` SEND that keeps the phone's reason when the write fails.

adbutils' `sync.push` turns adbd's `FAIL <message>` answer into `AdbError("FAIL")`, dropping
"write failed: No space left on device" (adb daemon file_sync_service.cpp `handle_send_file`
→ SendSyncFailErrno). This sends the same frames (AOSP `SYNC.TXT`: SEND path,mode / DATA… /
DONE mtime, answer OKAY or FAIL+length+message) and reads the message.
"""

from __future__ import annotations

import struct
import time

from adbutils import AdbDevice
from adbutils.errors import AdbError

CHUNK = 64 * 1024


class SyncFailure(AdbError):
    """adbd refused the file; `reason` is its own text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def push_bytes(dev: AdbDevice, data: bytes, path: str, mode: int = 0o644,
               timeout: float = 120.0) -> int:
    """Write `data` to `path` on the phone (blocking; run it through run_blocking)."""
    with dev.open_transport(timeout=timeout) as c:
        c.send_command("sync:")
        c.check_okay()
        target = f"{path},{mode}".encode()
        c.conn.sendall(b"SEND" + struct.pack("<I", len(target)) + target)
        for i in range(0, len(data), CHUNK):
            chunk = data[i : i + CHUNK]
            c.conn.sendall(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        c.conn.sendall(b"DONE" + struct.pack("<I", int(time.time())))
        status = c.read(4)
        if status == b"OKAY":
            c.read(4)
            return len(data)
        if status == b"FAIL":
            size = struct.unpack("<I", c.read(4))[0]
            raise SyncFailure(c.read(min(size, 4096)).decode("utf-8", "replace"))
        raise AdbError(f"unexpected sync answer {status!r}")
