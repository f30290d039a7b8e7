"""Package list for setuptools: `resources/` at the top ships as `inspector.resources`."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["inspector", "inspector.*"]), "inspector.resources"],
    package_dir={"inspector.resources": "resources"},
)
