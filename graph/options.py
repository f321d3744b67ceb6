"""The choices a user has among the application's runners (``--executor``, ``--formats`` of a report,
``--verifier``, ``--feedback``), defined once and light to import for the command line."""

EXECUTORS = ("local", "process", "ray")  # how a sweep runs its attempts (graph/sweep/executors.py)
REPORT_FORMATS = ("md", "latex", "csv")  # the report's table formats
VERIFIERS = ("nsvif", "nsvif-neu", "judge", "gepa-cot", "conv-cot")  # instruction-following verifiers
FEEDBACK_MODES = ("explanation", "boolean")  # what a failing checker tells the writer
