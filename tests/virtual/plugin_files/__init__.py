"""Plugin files loaded by the tests (data, not tests)."""
