"""consumer layer."""
