"""Packages: vis_core, vis_tui, blockether (the SDK's spec name), and ``extensions/`` as
``vis_extensions``."""

from setuptools import find_packages, setup

BUNDLED = "extensions"  # the folder in the repository; installed under a name that cannot clash

setup(
    packages=[
        *find_packages(include=["vis_core", "vis_core.*", "vis_tui", "vis_tui.*"]),
        # the spec's import name, `import blockether.vis.extension as vis`: the same SDK
        *find_packages(include=["blockether", "blockether.*"]),
        "vis_extensions",
        *(f"vis_extensions.{name}" for name in find_packages(BUNDLED)),
    ],
    package_dir={"vis_extensions": BUNDLED},
)
