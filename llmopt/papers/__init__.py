"""Each reproduced paper's suites, reports, theory and studies, in one place per paper.

* :mod:`llmopt.papers.jaillet` — Jaillet et al. (J, J0);
* :mod:`llmopt.papers.wang` — Wang, Ye and Zhou (W);
* :mod:`llmopt.papers.chen` — Chen, Ye and Zhou (C).
"""
