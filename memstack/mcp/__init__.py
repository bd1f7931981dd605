"""`memstack mcp`: the Model Context Protocol server (official SDK), its tools and its prompts."""
