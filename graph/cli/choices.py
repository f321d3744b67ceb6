"""The names the options offer, spelled out here so that building the command line (and ``--help``)
imports no library; the modules that own them are imported only by the commands that run.

tests/graph/test_cli_startup.py checks that each tuple equals the one of the module named beside it.
"""

FORMATS = ("dimacs", "nat", "pysat", "cpmpy", "sympy")  # autonesy.tools.formats.base.FORMATS
COUNT_METHODS = ("auto", "enumeration", "sdd", "ganak", "approxmc")  # autonesy.tools.counting.COUNT_METHODS
DETAIL_LEVELS = ("detailed", "not-detailed")  # autonesy.tasks.task.DETAIL_LEVELS
POLICIES = ("zs", "zs-cot", "oracle-feedback", "few-shot", "expert")  # autonesy.agents.policies.POLICIES
EXECUTORS = ("local", "process", "ray")  # autonesy.graph.sweep.executors.EXECUTORS
REPORT_FORMATS = ("md", "latex", "csv")  # autonesy.graph.report.REPORT_FORMATS
VERIFIERS = ("nsvif", "nsvif-neu", "judge", "gepa-cot", "conv-cot")  # autonesy.graph.verify.VERIFIERS
FEEDBACK_MODES = ("explanation", "boolean")  # autonesy.graph.verify.FEEDBACK_MODES


def listed(names: tuple[str, ...]) -> str:
    """Options as a comma list for help texts."""
    return ", ".join(names)
