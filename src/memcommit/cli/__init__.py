"""The ``memcommit`` command line: one module per group of commands.

`app.main` is the root group; it imports a command's module (which registers the
command on it) only when that command runs, so ``memcommit --help`` stays fast.
"""

from memcommit.cli.app import main

__all__ = ["main"]
