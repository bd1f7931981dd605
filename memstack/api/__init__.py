"""The verbs as plain functions returning documents: what the command line and the MCP server both call."""
