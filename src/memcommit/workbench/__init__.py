"""The retrieval workbench: a local web page over memcommit's recall().

It shows the teaching bank of seed 004 or any real store (read-only), and explains
every record that was not selected. ``make_server`` builds the HTTP server;
``memcommit workbench`` runs it.
"""

from memcommit.workbench.server import WorkbenchServer, make_server
from memcommit.workbench.source import BankSource, StoreSource, WorkbenchSource

__all__ = ["BankSource", "StoreSource", "WorkbenchServer", "WorkbenchSource", "make_server"]
