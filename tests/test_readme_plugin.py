"""The README's worked formulation plug-in (section "Extending") runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llmopt.bench.plugins.conformance import check_formulation
from llmopt.formulations import FORMULATIONS
from llmopt.model.instance import Instance
from llmopt.opt.hindsight import solve_hindsight

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture()
def per_request_ip():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    code = next(b for b in blocks if "class PerRequestIP" in b)
    namespace: dict = {}
    exec(compile(code, "README.md (PerRequestIP)", "exec"), namespace)
    FORMULATIONS.register("per-request-ip", namespace["PerRequestIP"])
    yield namespace["PerRequestIP"]
    FORMULATIONS.unregister("per-request-ip")


def test_the_readme_formulation_conforms_and_solves(per_request_ip):
    assert check_formulation("per-request-ip") == []
    t5 = Instance.from_tuples(5, [(0, 1, 1), (0, 1, 1), (0, 1, 3), (0, 1, 3)])  # OPT 12 (tests/cli)
    res = solve_hindsight(t5, formulation="per-request-ip", bounds=("sum-of-outputs",), upper_bounds=("fcfs",),
                          search_evals=0)
    assert res.opt == res.incumbent == 12 and res.incumbent_source.startswith("ip/")
