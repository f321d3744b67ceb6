"""The instruction-following verifier's pure tools: reference checkers (VifBench's and IFEval's), running
generated checkers in the sandbox, user checkers, the three-valued solver, and the metrics."""
