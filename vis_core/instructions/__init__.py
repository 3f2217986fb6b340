"""Project instructions: AGENTS.md (or CLAUDE.md / GEMINI.md) read into the system prompt."""
