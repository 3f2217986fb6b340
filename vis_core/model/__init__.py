"""Shared data types and closed sets every layer uses; imports nothing else of Vis."""
