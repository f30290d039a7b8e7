"""A plugin that forgets to define register()."""

X = 1
