"""The 18 auto-nesy-bench tasks, registered in the published order (docs/tasks.md: by variable
count) through the public ``@task`` decorator, each named after its builder (``bdd_oia_2`` is
``bdd-oia-2``). Importing the modules is cheap; a task is built on first use."""

from autonesy.tasks.catalogue import (
    classification,
    digits,
    driving,
    medical,
    ranking,
    sentiment,
    sudoku,
    visual,
    warcraft,
)
from autonesy.tools.registry import task

for _builder in (
    medical.chx,
    classification.fashion,
    driving.bdd_oia_2,
    visual.cle4evr,
    classification.cifar10,
    digits.mn_add_bin,
    digits.mn_mul_bin,
    ranking.sushi,
    visual.kand_logic_2,
    warcraft.warcraft,
    driving.bdd_oia,
    sentiment.cebab,
    visual.kand_logic,
    digits.mn_add,
    driving.road_r,
    sudoku.sudoku,
    classification.cifar100,
    digits.mn_mul,
):
    task(_builder.__name__.replace("_", "-"))(_builder)
