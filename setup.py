"""Package list for setuptools: `resources/` at the top ships as `inspector.resources`.

Data folders (icons, themes, the relay APK, the virtual apps' sample data) are listed as
namespace packages so their files are shipped in wheels and found by importlib.resources.
"""

from setuptools import find_namespace_packages, setup

RESOURCES = [
    "inspector.resources",
    *(f"inspector.resources.{p}" for p in find_namespace_packages(where="resources")),
]

setup(
    packages=[
        *find_namespace_packages(include=["inspector", "inspector.*"], exclude=["*.__pycache__"]),
        *RESOURCES,
    ],
    package_dir={"inspector.resources": "resources"},
)
