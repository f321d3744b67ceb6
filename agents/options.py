"""The choices a user has among the agents (``--policy``, ``--prompt``, ``--decoding``), defined once
and light to import: the command line, the validation of a run and the sweep grid all use these."""

ZERO_SHOT, ZERO_SHOT_COT, ORACLE_FEEDBACK, FEW_SHOT, EXPERT = POLICY_NAMES = (
    "zs",
    "zs-cot",
    "oracle-feedback",
    "few-shot",
    "expert",  # no LLM: the task's reference formalization
)
PROMPT_STYLES = (ZERO_SHOT, ZERO_SHOT_COT)  # the benchmark's prompt styles (each is also a policy)
DECODING_MODES = ("free", "grammar")  # grammar: constrained to the format's answer grammar
