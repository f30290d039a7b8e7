"""The MCP bridge: a device's CETP providers and AndyClaw extensions served as MCP tools.

No Qt here. `naming` builds stable tool names, `catalog` maps descriptors onto MCP tools,
`calls` runs one bridged call through the consumer engine (inspector/consumer) and the
session layer (inspector/session), `bridge` ties them to an MCP server (official `mcp`
Python SDK), `http` serves it over streamable HTTP on localhost with a bearer token, and
`feed` writes/reads the bridge's events in the session journal (the window's Bridge view
tails it). See docs/mcp.md.
"""
