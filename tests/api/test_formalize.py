"""``autonesy.formalize`` names the task its run directory records: a name or a path, or a task loaded by
its name (a task from a file has no name that loads it again, so it is refused with what to give instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

import autonesy


def test_formalize_takes_a_task_loaded_by_name_but_not_one_from_a_file(tmp_path):
    from autonesy.tasks.examples import __file__ as examples

    task = autonesy.load_task("chx")
    run = autonesy.formalize(task, policy="expert", format="dimacs", out=tmp_path / "run", data=False)
    assert run.task == "chx" and run.accepted
    pizza = autonesy.load_task(Path(examples).parent / "pizza.toml")
    with pytest.raises(autonesy.AutonesyError, match="give formalize its path"):
        autonesy.formalize(pizza, policy="expert", format="dimacs", out=tmp_path / "pizza", data=False)
    by_path = autonesy.formalize(
        Path(examples).parent / "pizza.toml", policy="expert", format="dimacs", out=tmp_path / "pizza", data=False
    )
    assert by_path.task == "pizza" and by_path.metrics.relation == "equal"
