"""The fake phone's `sync:` service (STAT, LIST, SEND, RECV): what `adb push`/`pull` and
adbutils' sync use (tests/device/fakephone.py).

Protocol reference: AOSP `packages/modules/adb/SYNC.TXT`.
"""

from __future__ import annotations

import stat
import struct
import time

from tests.device.fakephone_adb import _Stream
from tests.device.fakephone_state import PhoneState

SYNC_CHUNK = 64 * 1024


class SyncMixin:
    """Mixed into `FakePhone` (tests/device/fakephone.py)."""

    state: PhoneState

    async def _sync(self, stream: _Stream) -> None:
        st = self.state
        while True:
            head = await stream.read_exact(8)
            if head is None:
                return
            cmd, n = head[:4].decode("ascii", "replace"), struct.unpack("<I", head[4:])[0]
            arg = await stream.read_exact(n)
            if arg is None:
                return
            path = arg.decode()
            if cmd == "STAT":
                await stream.write(b"STAT" + self._stat(path))
            elif cmd == "LIST":
                prefix = path.rstrip("/") + "/"
                for f, data in st.files.items():
                    if f.startswith(prefix) and "/" not in f[len(prefix) :]:
                        name = f[len(prefix) :].encode()
                        entry = struct.pack("<IIII", stat.S_IFREG | 0o644, len(data), 0, len(name))
                        await stream.write(b"DENT" + entry + name)
                await stream.write(b"DONE" + bytes(16))
            elif cmd == "SEND":
                target = path.rsplit(",", 1)[0]
                data = bytearray()
                while True:
                    h = await stream.read_exact(8)
                    if h is None:
                        return
                    kind, size = h[:4], struct.unpack("<I", h[4:])[0]
                    if kind == b"DATA":
                        chunk = await stream.read_exact(size)
                        if chunk is None:
                            return
                        data += chunk
                    elif kind == b"DONE":
                        break
                    else:
                        return
                if st.sync_send_failure is not None:
                    msg = st.sync_send_failure.encode()
                    await stream.write(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                    continue
                st.files[target] = bytes(data)
                await stream.write(b"OKAY" + bytes(4))
            elif cmd == "RECV":
                data = self._read_file(path)
                if data is None:
                    msg = b"No such file or directory"
                    await stream.write(b"FAIL" + struct.pack("<I", len(msg)) + msg)
                else:
                    for i in range(0, len(data), SYNC_CHUNK):
                        chunk = data[i : i + SYNC_CHUNK]
                        await stream.write(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
                    await stream.write(b"DONE" + bytes(4))
            else:  # QUIT or unknown
                await stream.close()
                return

    def _read_file(self, path: str) -> bytes | None:
        if path in self.state.files:
            return self.state.files[path]
        for pkg in self.state.packages.values():
            if pkg.path == path:
                return pkg.apk
        return None

    def _stat(self, path: str) -> bytes:
        if path.rstrip("/") in self.state.dirs or path == "/":
            return struct.pack("<III", stat.S_IFDIR | 0o771, 4096, int(time.time()))
        data = self._read_file(path)
        if data is None:
            return bytes(12)
        return struct.pack("<III", stat.S_IFREG | 0o644, len(data), int(time.time()))
