"""CETP Inspector: a desktop inspector and debugger for on-device tool providers."""

__version__ = "0.1.0"
