"""llmopt: scheduling LLM inference under KV-cache memory limits."""

__version__ = "0.1.0"
