"""The ``structcrawl`` command line: :mod:`~structcrawl.commands.parser` (the parser and ``main``),
:mod:`~structcrawl.commands.errors` and one module per sub-command, each with ``run(args) -> exit status``.

Nothing else in the package imports this one (an import-linter contract in pyproject.toml): the other
layers raise their own exceptions, and the command modules turn them into a :class:`CommandError`.
"""
