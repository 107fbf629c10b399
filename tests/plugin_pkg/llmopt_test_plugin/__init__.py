"""A third-party llmopt plug-in (tests only): everything here uses llmopt's public API."""
