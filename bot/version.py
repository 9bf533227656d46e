"""The installed version of Steward."""

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache  # reading the installed metadata costs a few milliseconds; the version does not change while running
def steward_version() -> str:
    try:
        return version("steward")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0+unknown"
