"""The installed version of Steward."""

from importlib.metadata import PackageNotFoundError, version


def steward_version() -> str:
    try:
        return version("steward")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0+unknown"
