"""Hindsight OPT and certified bounds.

* :mod:`~llmopt.opt.hindsight` — the pipeline (upper bounds → windows → formulation → solver →
  decode → certify) behind ``llmopt solve``;
* :mod:`~llmopt.opt.upper_bounds`, :mod:`~llmopt.opt.local_search`, :mod:`~llmopt.opt.lns`,
  :mod:`~llmopt.opt.cp_sat` — the upper-bound (schedule-finding) stages;
* :mod:`~llmopt.opt.bounds` — the lower-bound stages (LP family, column generation, zones, energy);
* :mod:`~llmopt.opt.relaxation` — the uncertified LP of any formulation (``llmopt solve --relax``).
"""
