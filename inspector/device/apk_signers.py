"""Who signed an APK: the SHA-256 of each signer's certificate, read from the APK Signing Block.

The inspector hands its session token only to a relay signed with the same certificate as
the relay it ships (issue 11). The installed APK is pulled from the phone (`pm path`; the
package manager verified its signatures at install time) and its signer certificates are
read here, without verifying signatures again.

Format (AOSP apksig `ApkSigningBlockUtils`, https://source.android.com/docs/security/features/apksigning/v2):
the block sits right before the ZIP central directory and ends with the magic
"APK Sig Block 42"; it holds ID-value pairs; the v3 (0xf05368c0), v3.1 (0x1b93ad61) and
v2 (0x7109871a) values are length-prefixed lists of signers, each with signed data whose
second field is the length-prefixed list of DER X.509 certificates (the first is the
signer's). v1-only (JAR) signatures are not read: the relay targets API 34 and is v2/v3
signed, so an APK without a signing block is "not ours" (fail closed).
"""

from __future__ import annotations

import hashlib
import struct

EOCD_MAGIC = b"PK\x05\x06"
BLOCK_MAGIC = b"APK Sig Block 42"
# Preferred first: v3.1 and v3 carry the current (possibly rotated) signer.
SCHEME_IDS = (0x1B93AD61, 0xF05368C0, 0x7109871A)


class ApkFormatError(ValueError):
    """The bytes are not a v2/v3-signed APK."""


def _u32(data: bytes, at: int) -> int:
    if at + 4 > len(data):
        raise ApkFormatError("truncated length field")
    return int(struct.unpack_from("<I", data, at)[0])


def _prefixed(data: bytes, at: int) -> tuple[bytes, int]:
    """A uint32-length-prefixed slice at `at` and the offset after it."""
    n = _u32(data, at)
    end = at + 4 + n
    if end > len(data):
        raise ApkFormatError("length-prefixed field runs past its container")
    return data[at + 4 : end], end


def signing_block_pairs(apk: bytes) -> dict[int, bytes]:
    """The APK Signing Block's ID → value pairs."""
    eocd = apk.rfind(EOCD_MAGIC, max(0, len(apk) - 65_557))
    if eocd < 0 or eocd + 22 > len(apk):
        raise ApkFormatError("no ZIP end-of-central-directory record")
    cd_offset = _u32(apk, eocd + 16)
    if cd_offset < 32 or cd_offset > len(apk) or apk[cd_offset - 16 : cd_offset] != BLOCK_MAGIC:
        raise ApkFormatError("no APK Signing Block (v1-only or unsigned APK)")
    size = int(struct.unpack_from("<Q", apk, cd_offset - 24)[0])
    start = cd_offset - size - 8
    if start < 0 or int(struct.unpack_from("<Q", apk, start)[0]) != size:
        raise ApkFormatError("APK Signing Block sizes disagree")
    pairs: dict[int, bytes] = {}
    at, end = start + 8, cd_offset - 24
    while at + 12 <= end:
        length = int(struct.unpack_from("<Q", apk, at)[0])
        if length < 4 or at + 8 + length > end:
            raise ApkFormatError("malformed ID-value pair")
        pair_id = _u32(apk, at + 8)
        pairs[pair_id] = apk[at + 12 : at + 8 + length]
        at += 8 + length
    return pairs


def signer_certificates(apk: bytes) -> tuple[bytes, ...]:
    """Each signer's own certificate (DER) from the newest signature scheme present."""
    pairs = signing_block_pairs(apk)
    for scheme in SCHEME_IDS:
        if scheme not in pairs:
            continue
        signers, _ = _prefixed(pairs[scheme], 0)
        certs: list[bytes] = []
        at = 0
        while at < len(signers):
            signer, at = _prefixed(signers, at)
            signed_data, _ = _prefixed(signer, 0)
            _digests, after = _prefixed(signed_data, 0)
            cert_list, _ = _prefixed(signed_data, after)
            first, _ = _prefixed(cert_list, 0)
            certs.append(first)
        if certs:
            return tuple(certs)
    raise ApkFormatError("the APK Signing Block has no v2/v3 signer")


def signer_digests(apk: bytes) -> tuple[str, ...]:
    """SHA-256 (hex) of each signer certificate, sorted; () when they cannot be read."""
    try:
        return tuple(sorted(hashlib.sha256(c).hexdigest() for c in signer_certificates(apk)))
    except (ApkFormatError, struct.error):
        return ()


def fingerprint(digest: str) -> str:
    """A certificate digest as apksigner and keytool print it (AB:CD:…)."""
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2)).upper()
