"""virtual layer."""
