"""The choices a user has among the tools (``--format``, ``--method``), defined once and light to
import: the command line builds its options and help from them without loading the tools."""

FORMATS = ("dimacs", "nat", "pysat", "cpmpy", "sympy")  # output formats of a formalization
COUNT_METHODS = ("auto", "enumeration", "sdd", "ganak", "approxmc")  # model counters
