"""Skills in the open SKILL.md format: a folder with SKILL.md, listed in the system prompt."""
