"""The instruction-following verifier's graph layer: the verification state machine (:mod:`.graph`), its runner
(:mod:`.run`), and VifBench's data and evaluation (:mod:`.vifbench`)."""
