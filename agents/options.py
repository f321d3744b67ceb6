"""The choices a user has among the agents' settings (``--prompt``, ``--decoding``), defined once and
light to import: the command line, the validation of a run and the sweep grid all use these. The
policies (``--policy``) are the registered ones (``tools/registry.py``)."""

PROMPT_STYLES = ("zs", "zs-cot")  # the benchmark's prompt styles (each is also a registered policy)
DECODING_MODES = ("free", "grammar")  # grammar: constrained to the format's answer grammar
