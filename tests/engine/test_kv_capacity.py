"""KV capacity from the hardware (the papers' 16,492 by utilisation, Vidur's 53,248 by its rule) and the
``simulate`` command's ``--kv-capacity-from`` / ``--kv-capacity`` / batch-limit options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.engine.hardware import (
    GIB,
    PAPER_M,
    VIDUR_M,
    kv_capacity_from_hardware,
    kv_capacity_tokens,
    memory_utilization_for,
    parse_kv_capacity_spec,
    vidur_kv_capacity_tokens,
    vidur_parameters_per_device,
)
from llmopt.model.instance import Instance, Request, save_instance

runner = CliRunner()


def test_papers_m_by_utilisation() -> None:
    u = memory_utilization_for(PAPER_M)
    assert 0.895 < u < 0.897
    assert kv_capacity_from_hardware(memory_utilization=u) == 16_492
    assert kv_capacity_from_hardware(memory_utilization=0.9) == kv_capacity_tokens(gpu_memory_utilization=0.9) == 18_453
    # in blocks of 16: whole blocks only (16,492 = 1,030 blocks + 12 tokens)
    assert kv_capacity_from_hardware(memory_utilization=u, block_size=16) == 1_030 * 16


def test_vidur_rule_gives_53248_tokens() -> None:
    assert vidur_parameters_per_device() == 34_225_520_640  # 427,819,008 per layer × 80, no embeddings
    assert vidur_kv_capacity_tokens() == VIDUR_M == 53_248 == 3_328 * 16
    # 13 slots of 4,096 tokens: with a 4,096-token slot more memory, 14 slots
    assert vidur_kv_capacity_tokens(gpu_memory_bytes=80 * GIB + 671_088_640 / 0.9) == 14 * 4096
    # the same inputs in vLLM's rule (no rounding to whole request slots)
    assert kv_capacity_from_hardware(gpu_memory_bytes=80 * GIB, parameters=2 * 34_225_520_640,
                                     memory_utilization=0.9, block_size=16) == 54_064


def test_spec_parsing() -> None:
    assert parse_kv_capacity_spec("paper")[0] == 16_492
    assert parse_kv_capacity_spec("vidur")[0] == 53_248
    assert parse_kv_capacity_spec("gpu_mem=80GB,tp=2,util=0.9")[0] == 18_453
    with pytest.raises(ValueError, match="gpu_mem='80 furlongs'"):
        parse_kv_capacity_spec("gpu_mem=80 furlongs")
    with pytest.raises(ValueError, match="'gpus=2': expected paper, vidur, or key=value"):
        parse_kv_capacity_spec("gpus=2")


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.json"
    save_instance(Instance(40, tuple(Request(f"r{i}", 0, 3, 4) for i in range(6))), path)
    return path


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["simulate", *args])
    return result.exit_code, result.stdout + (result.stderr or "")


def test_cli_kv_capacity_and_limits(small: Path) -> None:
    code, out = _run(str(small), "--policy", "vllm", "--kv-capacity-from", "vidur", "--block-size", "16",
                     "--max-num-seqs", "4", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["M"] == 53_248 and data["kv_capacity_source"].startswith("Vidur's rule")
    assert data["limits"] == {"max_num_seqs": 4, "max_num_batched_tokens": None, "block_size": 16}
    assert data["verified"] is True
    assert data["starts"] == {"r0": 0, "r1": 0, "r2": 0, "r3": 0, "r4": 4, "r5": 4}
    # --kv-capacity wins over --kv-capacity-from, and the text summary names the M used
    code, out = _run(str(small), "--kv-capacity-from", "vidur", "--kv-capacity", "14")
    assert code == 0, out
    assert "KV capacity: M = 14 tokens (--kv-capacity)" in out and "peak memory = 14/14" in out


def test_cli_bad_options_are_one_line(small: Path) -> None:
    code, out = _run(str(small), "--kv-capacity", "6")  # 3 + 4 = 7 tokens do not fit
    assert code == 2 and out.count("\n") == 1 and "M = 6" in out and "'r0'" in out
    code, out = _run(str(small), "--kv-capacity-from", "gpu_mem=lots")
    assert code == 2 and "--kv-capacity-from" in out and "gpu_mem='lots'" in out
    code, out = _run(str(small), "--max-num-seqs", "0")
    assert code == 2 and "--max-num-seqs must be >= 1" in out
    code, out = _run(str(small), "--block-size", "0", "--workers", "2")
    assert code == 2 and "--block-size must be >= 1" in out
    code, out = _run(str(small), "--max-num-batched-tokens", "2")  # prompts of 3
    assert code == 1 and "prompt of 3 tokens > max_num_batched_tokens = 2" in out and "Traceback" not in out
