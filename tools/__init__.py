"""Pure tools: formats, counting, compilation, the sandbox. Importing the package serialises
``ast.parse`` on CPython 3.11 (see :mod:`autonesy.tools.pyast`): every thread that parses then
takes the same lock."""

from autonesy.tools import pyast as _pyast  # noqa: F401  (imported for its effect on ast.parse)
