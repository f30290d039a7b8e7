"""Virtual-device plugin files the GUI tests load (data, not tests)."""
