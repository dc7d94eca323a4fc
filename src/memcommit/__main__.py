"""``python -m memcommit``: the command line."""

from memcommit.cli import main

main(prog_name="memcommit")
