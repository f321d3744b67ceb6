"""The task ``example/shifts``: a task file shipped as package data, registered with ``@autonesy.task``."""

from importlib.resources import as_file, files

import autonesy


@autonesy.task("shifts")
def shifts() -> autonesy.Task:
    """Three people, two shifts (the file names its ground truth, shifts.cnf, beside it)."""
    with as_file(files("autonesy_example") / "shifts.toml") as path:
        return autonesy.load_task(str(path))
