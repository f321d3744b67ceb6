"""Sweeps: a grid of formalization attempts (LLMs × tasks × formats × prompts × details × repeats),
run concurrently, resumable after a kill, gathered into one results table.

    autonesy-agent sweep --llm SPEC --tasks all --formats all --prompts zs,zs-cot --details both --out DIR

- ``grid``: the ``SweepSpec`` and the attempts it means, each with an id hashed from its identity;
- ``worker``: the unit of work, one attempt run (or resumed) in its directory;
- ``executors``: local threads, a process pool or Ray, at most N attempts per LLM endpoint;
- ``run``: ``run_sweep``, which records the grid, runs what is unfinished and rebuilds the table.

The sweep directory and its rows are read through ``graph/results.py`` (the read model).
"""
