"""Agents as users: the Model Context Protocol server over the product's questions
(`/mcp/`, `manage.py mcp`) and `/llms.txt`."""
