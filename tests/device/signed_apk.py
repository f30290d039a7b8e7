"""APK-shaped bytes with an APK Signing Block naming a chosen certificate (test factory).

Signatures are not computed (the inspector reads who signed, Android verified it); the
structure follows AOSP apksig so `inspector.device.apk_signers` reads it like a real APK.
"""

from __future__ import annotations

import io
import struct
import zipfile

from inspector.device.apk_signers import BLOCK_MAGIC, EOCD_MAGIC, signer_certificates

V2_ID = 0x7109871A


def _p(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def signing_block(certs: list[bytes], scheme: int = V2_ID) -> bytes:
    signers = b""
    for der in certs:
        signed_data = _p(b"") + _p(_p(der)) + _p(b"")  # digests, certificates, attributes
        signers += _p(_p(signed_data) + _p(b"") + _p(b"pubkey"))
    value = _p(signers)
    pair = struct.pack("<QI", len(value) + 4, scheme) + value
    size = len(pair) + 8 + 16
    return struct.pack("<Q", size) + pair + struct.pack("<Q", size) + BLOCK_MAGIC


def signed_apk(cert_der: bytes, payload: bytes = b"classes", scheme: int = V2_ID) -> bytes:
    """A ZIP with one entry and a signing block whose only signer has `cert_der`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("classes.dex", payload)
    raw = buf.getvalue()
    eocd = raw.rfind(EOCD_MAGIC)
    cd_offset = struct.unpack_from("<I", raw, eocd + 16)[0]
    block = signing_block([cert_der], scheme)
    eocd_new = bytearray(raw[eocd:])
    struct.pack_into("<I", eocd_new, 16, cd_offset + len(block))
    return raw[:cd_offset] + block + raw[cd_offset:eocd] + bytes(eocd_new)


def certificate_of(apk: bytes) -> bytes:
    """The first signer certificate of a real APK (to forge "our key, newer build")."""
    return signer_certificates(apk)[0]
