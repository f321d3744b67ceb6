"""Compatibility shim: the oracle test moved to :mod:`autonesy.tasks.oracle_test` (it needs a task)."""

from autonesy.tasks.oracle_test import Counterexample, OracleTestResult, oracle_test

__all__ = ["Counterexample", "OracleTestResult", "oracle_test"]
