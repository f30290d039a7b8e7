"""The `cetp-inspector` command line (docs/cli.md); entry point `inspector.cli.main:main`."""
