"""The ``structcrawl`` command line: one module per sub-command."""
