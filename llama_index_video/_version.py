"""The package version, read by the build (pyproject.toml) and by ``--version``."""

__version__ = "0.1.0"
