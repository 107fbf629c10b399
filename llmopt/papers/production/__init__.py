"""Cross-paper comparisons against production schedulers (vLLM, Sarathi-Serve, Orca).

:mod:`llmopt.papers.production.vs_papers` holds the suites ``production-vs-papers`` (real traces, continuous
time, production batch limits and KV blocks) and ``production-vs-papers-discrete`` (small synthetic
instances with the certified hindsight bound beside every policy).
"""
