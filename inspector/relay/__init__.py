"""The relay protocol (docs/relay-protocol.md): frames, typed-value codec, the operation
interface the consumer engine calls, and the asyncio client and server cores.

Pure Python over asyncio streams; no Qt and no adb. `inspector.device` adds the adb path,
`inspector.virtual` serves the same protocol from the built-in virtual device.
"""
