"""The ``kstp`` command line (click)."""
