"""wang's studies: measurements behind the paper's claims that no suite expresses (see ``llmopt study list``)."""
