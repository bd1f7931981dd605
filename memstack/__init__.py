"""memstack: persistent memory for AI agents, kept in a git repository."""

__version__ = "0.2.0"
