"""Task catalogues shipped with kstp (YAML), built from ../shared/data by tools/build_catalogues.py."""
