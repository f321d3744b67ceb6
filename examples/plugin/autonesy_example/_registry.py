"""The entry point: importing this module registers everything the plugin offers."""

from autonesy_example import shifts, vote  # noqa: F401 - each module registers with a decorator
