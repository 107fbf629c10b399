"""Chen, Ye and Zhou (C): theory (closed forms), the §5 theory suite and the §6 LMSYS study."""
