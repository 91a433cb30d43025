"""Speed benchmarks of kstp (see README.md)."""
