"""Every code folder is installed: a package missing from pyproject.toml vanishes from `pip install .`."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("agents", "graph", "tools", "nesy", "tasks")


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = dict(config["package-dir"])
    assert set(config["packages"]) == set(listed)
    found = {
        "autonesy." + ".".join(init.parent.relative_to(ROOT).parts): init.parent.relative_to(ROOT).as_posix()
        for top in TOP
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert (ROOT / "api" / "__init__.py").is_file() and not list((ROOT / "api").glob("*/__init__.py"))
    found["autonesy"] = "api"  # the top-level package itself: the Python API, flat (its modules are api/_*.py)
    assert found == listed
