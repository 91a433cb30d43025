"""The package version, in a module of its own so that every floor can read it without
importing the public API of :mod:`kstp`."""

__version__ = "0.1.0"
