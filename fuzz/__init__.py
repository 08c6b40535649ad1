"""Long-running fuzzers (not part of the test suite): `python -m fuzz.importers --seconds 120`."""
