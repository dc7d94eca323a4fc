"""Ways in to memcommit besides the Python API: the MCP server for agents."""
