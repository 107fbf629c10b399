"""Trace loaders, bad-row policies, trace workloads and ``llmopt trace``.

Bad-row rules are tested on small synthetic files written to ``tmp_path``; the real staged
files (``shared/data/traces``, see its SOURCES.md) are checked for row counts, units,
statistics and timestamp spans, and skipped with a reason when the data folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from llmopt.cli.main import app
from llmopt.model.instance import load_instance
from llmopt.model.registry import RegistryError
from llmopt.model.timed_instance import TimedInstance, TimedRequest, load_timed_instance, timed_instance_to_dict
from llmopt.workloads.traces import (
    TRACE_FORMATS,
    Trace,
    TraceError,
    detect_format,
    load_trace,
    sample_instance,
    to_discrete_instance,
)

runner = CliRunner()

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
TRACES = DATA / "traces"
needs_data = pytest.mark.skipif(not TRACES.is_dir(), reason=f"staged trace data not found at {TRACES}")

LMSYS_BIG = "lmsys_chat_1m_words_in256_out256.csv"
LMSYS_100K = "lmsys_chat_1m_words_sample100k_in499_out599.csv"
LMSYS_20K = "lmsys_chat_1m_words_sample20k_in199_out499.csv"
ARXIV = "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"
AZURE_CODE = "AzureLLMInferenceTrace_code.csv"
AZURE_CONV = "AzureLLMInferenceTrace_conv.csv"
VIDUR_CODE = "splitwise_code.csv"
VIDUR_CONV = "splitwise_conv.csv"
MOONCAKE = "conversation_trace.jsonl"


def _write(tmp_path: Path, text: str, name: str = "trace.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _lmsys(tmp_path: Path, rows: list[str], name: str = "lmsys_test.csv") -> Path:
    return _write(tmp_path, "question_length,answer_length\n" + "\n".join(rows) + "\n", name)


# --- bad rows: each kind names file, row, line and column ------------------------------------------------


@pytest.mark.parametrize(("rows", "M", "where", "fragment"), [
    (["5,6", ",7"], None, "row 2 (line 3), column 'question_length'", "missing"),
    (["5,6", "4,7", "5,abc"], None, "row 3 (line 4), column 'answer_length'", "'abc' is not a number"),
    (["5,6", "5.5,3"], None, "row 2 (line 3), column 'question_length'", "5.5 is not an integer"),
    (["5,6", "-3,4"], None, "row 2 (line 3), column 'question_length'", "-3 is negative"),
    (["5,6", "7,8", "9,0"], None, "row 3 (line 4), column 'answer_length'", "value 0"),
    (["5,4", "6,5"], 10, "row 2 (line 3), columns 'question_length' + 'answer_length'", "6 + 5 = 11 exceeds M = 10"),
    (["5,6", "", "7,8"], None, "row 2 (line 3), column 'question_length'", "missing"),
    (["5,6", "inf,3"], None, "row 2 (line 3), column 'question_length'", "not a number"),
    (["5,6", "1e30,3"], None, "row 2 (line 3), column 'question_length'", "above 2^53 - 1"),
    # the first bad row in file order wins, whatever its kind
    (["5,6", "4,x", "0,3"], None, "row 2 (line 3), column 'answer_length'", "not a number"),
    (["5,6", "0,3", "4,x"], None, "row 2 (line 3), column 'question_length'", "value 0"),
])
def test_bad_row_error_names_file_row_column(tmp_path, rows, M, where, fragment):
    p = _lmsys(tmp_path, rows)
    with pytest.raises(TraceError) as err:
        load_trace(p, M=M)
    msg = str(err.value)
    assert msg.startswith(f"{p}: {where}"), msg
    assert fragment in msg, msg


def test_decreasing_timestamp_is_an_error(tmp_path):
    p = _write(tmp_path, "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,5,6\n2.5,5,6\n1.0,5,6\n3.0,5,6\n")
    with pytest.raises(TraceError) as err:
        load_trace(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}: row 3 (line 4), column 'arrived_at'"), msg
    assert "earlier than row 2's 2.5" in msg


def test_bad_azure_timestamp(tmp_path):
    p = _write(tmp_path, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,10,2\n"
                         "yesterday,10,2\n", "azure.csv")
    with pytest.raises(TraceError, match=r"row 2 \(line 3\), column 'TIMESTAMP': value 'yesterday'"):
        load_trace(p)
    assert load_trace(p, on_bad_row="clamp").touched == {"clamped": 0, "dropped": 1, "timestamp unparseable": 1}


def test_jsonl_errors_name_real_lines(tmp_path):
    good = '{"timestamp": 0, "input_length": 5, "output_length": 6, "hash_ids": [1, 2]}'
    p = _write(tmp_path, good + "\n\n" + '{"timestamp": 5, "input_length": 5}\n', "t.jsonl")
    with pytest.raises(TraceError, match=r"row 2 \(line 3\), key 'output_length': value is missing"):
        load_trace(p)
    p = _write(tmp_path, good + "\n" + good + "\n  \n{oops\n", "u.jsonl")
    with pytest.raises(TraceError, match=r"row 3 \(line 4\): invalid JSON"):
        load_trace(p, "mooncake")


# --- clamp and drop: exact counts and values ------------------------------------------------------------

BAD_ROWS = [
    "5,4",    # 1 ok
    "0,6",    # 2 prompt zero
    "5,0",    # 3 output zero
    "0,0",    # 4 both zero
    "-2,3",   # 5 prompt negative
    ",4",     # 6 prompt missing (unfixable)
    "x,4",    # 7 prompt non-numeric (unfixable)
    "2.5,4",  # 8 prompt not an integer (unfixable)
    "8,5",    # 9 too long for M=10: output capped to 2
    "12,3",   # 10 prompt >= M: prompt 9, output 1
    "3,3.0",  # 11 ok (3.0 is an integer)
    "0,10",   # 12 prompt zero, then too long: (1, 9)
]
REASONS = {"prompt zero": 3, "output zero": 2, "prompt negative": 1, "prompt missing": 1, "prompt non-numeric": 1,
           "prompt not an integer": 1, "too long for M": 3}


def test_drop_counts_and_rows(tmp_path):
    tr = load_trace(_lmsys(tmp_path, BAD_ROWS), M=10, on_bad_row="drop")
    # row 12 (0 + 10) is not too long for M = 10 as read; under clamp it is, once its prompt is raised to 1
    assert tr.touched == {"clamped": 0, "dropped": 10, **REASONS, "too long for M": 2}
    assert tr.rows_read == 12
    assert tr.source_rows.tolist() == [1, 11]
    assert tr.prompt.tolist() == [5, 3] and tr.output.tolist() == [4, 3]


def test_clamp_counts_and_values(tmp_path):
    tr = load_trace(_lmsys(tmp_path, BAD_ROWS), M=10, on_bad_row="clamp")
    assert tr.touched == {"clamped": 7, "dropped": 3, **REASONS}
    assert tr.source_rows.tolist() == [1, 2, 3, 4, 5, 9, 10, 11, 12]
    assert tr.prompt.tolist() == [5, 1, 5, 1, 1, 8, 9, 3, 1]
    assert tr.output.tolist() == [4, 6, 1, 1, 3, 2, 1, 3, 9]
    assert (tr.prompt + tr.output <= 10).all() and (tr.prompt >= 1).all() and (tr.output >= 1).all()


def test_clamp_without_M_only_raises_lengths(tmp_path):
    tr = load_trace(_lmsys(tmp_path, ["12,3", "0,0"]), on_bad_row="clamp")
    assert tr.prompt.tolist() == [12, 1] and tr.output.tolist() == [3, 1]
    assert tr.touched == {"clamped": 1, "dropped": 0, "prompt zero": 1, "output zero": 1}


def test_decreasing_timestamps_drop_and_clamp(tmp_path):
    p = _write(tmp_path, "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                         + "".join(f"{t},{i + 1},1\n" for i, t in enumerate([10, 15, 13, 16, 14, 17])))
    dropped = load_trace(p, on_bad_row="drop")
    assert dropped.timestamps is not None and dropped.timestamps.tolist() == [0, 5, 6, 7]
    assert dropped.source_rows.tolist() == [1, 2, 4, 6]
    assert dropped.touched == {"clamped": 0, "dropped": 2, "timestamp decreasing": 2}
    clamped = load_trace(p, on_bad_row="clamp")
    assert clamped.timestamps is not None and clamped.timestamps.tolist() == [0, 5, 5, 6, 6, 7]
    assert clamped.touched == {"clamped": 2, "dropped": 0, "timestamp decreasing": 2}


def test_timestamps_are_seconds_since_first_kept_row(tmp_path):
    p = _write(tmp_path, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,0,2\n"
                         "2023-11-16 18:17:03.9799601,10,2\n2023-11-16 18:18:04.5,10,2\n", "azure.csv")
    tr = load_trace(p, on_bad_row="drop")
    assert tr.format == "azure" and tr.unit == "tokens"
    assert tr.timestamps is not None
    assert tr.source_rows.tolist() == [2, 3]
    assert tr.timestamps[0] == 0.0
    assert tr.timestamps[1] == pytest.approx(64.5 - 3.9799601, abs=1e-9)
    ms = _write(tmp_path, "".join(f'{{"timestamp": {t}, "input_length": 3, "output_length": 4}}\n'
                                  for t in (1500, 1500, 4000)), "m.jsonl")
    mt = load_trace(ms)
    assert mt.timestamps is not None and mt.timestamps.tolist() == [0.0, 0.0, 2.5]


def test_trailing_blank_lines_are_not_rows(tmp_path):
    p = _write(tmp_path, "question_length,answer_length\n1,2\n3,4\n\n\n", "lmsys_x.csv")
    tr = load_trace(p)
    assert tr.rows_read == 2 and tr.prompt.tolist() == [1, 3]


def test_trace_arrays_are_read_only(tmp_path):
    tr = load_trace(_lmsys(tmp_path, ["1,2"]))
    with pytest.raises(ValueError):
        tr.prompt[0] = 5


# --- formats ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "header", "fmt", "unit"), [
    ("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,1,2\n", "azure", "tokens"),
    ("b.csv", "question_length,answer_length\n1,2\n", "lmsys", "words"),
    ("c.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,1,2\n", "vidur", "tokens"),
    ("d.csv", "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n1,2,3,0.5\n", "arxiv", "tokens"),
    ("my_lmsys_sample.csv", "num_prefill_tokens,num_decode_tokens\n1,2\n", "lmsys", "words"),
    ("e.jsonl", '{"timestamp": 0, "input_length": 1, "output_length": 2}\n', "mooncake", "tokens"),
])
def test_detect_format(tmp_path, name, header, fmt, unit):
    p = _write(tmp_path, header, name)
    assert detect_format(p) == fmt
    tr = load_trace(p)
    assert (tr.format, tr.unit, tr.n) == (fmt, unit, 1)
    assert tr.prompt.tolist() == [1] and tr.output.tolist() == [2]


def test_unknown_layout_lists_formats(tmp_path):
    p = _write(tmp_path, "foo,bar\n1,2\n")
    with pytest.raises(TraceError) as err:
        load_trace(p)
    msg = str(err.value)
    assert msg.startswith(str(p)) and "foo" in msg
    for fmt in ("lmsys", "arxiv", "azure", "vidur", "mooncake", "question_length", "ContextTokens", "arrived_at"):
        assert fmt in msg
    with pytest.raises(TraceError, match="format 'azure' needs the columns"):
        load_trace(_lmsys(tmp_path, ["1,2"]), "azure")
    with pytest.raises(TraceError, match="no such file"):
        load_trace(tmp_path / "missing.csv")
    with pytest.raises(TraceError, match="unknown trace format 'nope'"):
        load_trace(p, "nope")


def test_trace_formats_registry():
    assert set(TRACE_FORMATS.names()) == {"lmsys", "arxiv", "azure", "vidur", "mooncake"}
    with pytest.raises(RegistryError):
        TRACE_FORMATS.register("lmsys", "llmopt.workloads.traces:load_lmsys")


# --- the real staged files -------------------------------------------------------------------------------

# file, format, rows, unit, prompt mean, output mean, prompt zeros, output zeros (SOURCES.md; means are over
# the raw values, which clamping zeros to 1 moves by less than 0.002)
REAL = [
    (LMSYS_BIG, "lmsys", 662_534, "words", 42.84, 94.10, 63, 1136),
    (LMSYS_100K, "lmsys", 100_000, "words", 59.11, 159.70, 4, 147),
    (LMSYS_20K, "lmsys", 20_000, "words", 34.81, 146.97, 2, 15),
    (ARXIV, "arxiv", 28_257, "tokens", 2588.08, 291.43, 0, 0),
    (AZURE_CODE, "azure", 8_819, "tokens", 2047.85, 27.88, 0, 0),
    (AZURE_CONV, "azure", 19_366, "tokens", 1154.70, 211.13, 0, 0),
    (VIDUR_CODE, "vidur", 8_819, "tokens", 2047.85, 27.88, 0, 0),
    (VIDUR_CONV, "vidur", 19_366, "tokens", 1154.70, 211.13, 0, 0),
    (MOONCAKE, "mooncake", 12_031, "tokens", 12035.06, 342.62, 0, 0),
]


@needs_data
@pytest.mark.parametrize(("name", "fmt", "rows", "unit", "mean_p", "mean_o", "zp", "zo"), REAL)
def test_real_files(name, fmt, rows, unit, mean_p, mean_o, zp, zo):
    tr = load_trace(TRACES / name, on_bad_row="clamp")
    assert (tr.format, tr.unit, tr.rows_read, tr.n) == (fmt, unit, rows, rows)
    assert tr.prompt.mean() == pytest.approx(mean_p, abs=0.006)
    assert tr.output.mean() == pytest.approx(mean_o, abs=0.006)
    assert tr.touched.get("prompt zero", 0) == zp and tr.touched.get("output zero", 0) == zo
    assert tr.touched["dropped"] == 0
    assert (tr.timestamps is None) == (fmt in ("lmsys", "arxiv"))
    if tr.timestamps is not None:  # the staged files are in arrival order
        assert tr.timestamps[0] == 0 and (np.diff(tr.timestamps) >= 0).all()
        assert load_trace(TRACES / name).n == rows  # so "error" accepts them


@needs_data
def test_real_lmsys_error_names_first_zero():
    with pytest.raises(TraceError, match=r"row 149 \(line 150\), column 'answer_length': value 0"):
        load_trace(TRACES / LMSYS_BIG)


@needs_data
@pytest.mark.parametrize(("azure", "vidur", "span"),
                         [(AZURE_CODE, VIDUR_CODE, 3435.95), (AZURE_CONV, VIDUR_CONV, 3501.72)])
def test_real_azure_timestamps_match_vidur(azure, vidur, span):
    a, v = load_trace(TRACES / azure), load_trace(TRACES / vidur)
    assert a.timestamps is not None and v.timestamps is not None
    assert a.timestamps[-1] == pytest.approx(span, abs=0.01)
    np.testing.assert_allclose(a.timestamps, v.timestamps, atol=1e-6)
    assert (a.prompt == v.prompt).all() and (a.output == v.output).all()


@needs_data
def test_real_mooncake_too_long_for_M():
    tr = load_trace(TRACES / MOONCAKE, M=16_492, on_bad_row="drop")
    assert tr.touched == {"clamped": 0, "dropped": 2798, "too long for M": 2798}
    assert tr.n == 12_031 - 2798 and (tr.prompt + tr.output <= 16_492).all()
    with pytest.raises(TraceError, match=r"row 7 \(line 7\), keys 'input_length' \+ 'output_length': prompt \+ "
                                         r"output = 23141 \+ 453"):
        load_trace(TRACES / MOONCAKE, M=16_492)


@needs_data
@pytest.mark.parametrize("name", [LMSYS_BIG, LMSYS_100K])
def test_real_lmsys_loads_with_m_and_clamp(name):
    """Loader speed is a benchmark claim (README, "Real traces"), not asserted here."""
    free = load_trace(TRACES / name, on_bad_row="clamp")
    capped = load_trace(TRACES / name, on_bad_row="clamp", M=16_492)
    assert capped.n == free.n > 10_000
    assert (capped.prompt + capped.output <= 16_492).all() and (capped.output >= 1).all()


# --- sampling ------------------------------------------------------------------------------------------


def _synthetic_trace(n: int = 5000, timestamps: bool = True) -> Trace:
    rng = np.random.default_rng(0)
    ts = np.cumsum(rng.exponential(0.1, n)) if timestamps else None
    if ts is not None:
        ts -= ts[0]
    return Trace(path="synthetic.csv", format="vidur", unit="tokens", prompt=np.arange(1, n + 1),
                 output=np.full(n, 3), timestamps=ts, rows_read=n, touched={"clamped": 0, "dropped": 0},
                 source_rows=np.arange(1, n + 1))


def test_sample_deterministic_and_seeded():
    tr = _synthetic_trace()
    a = timed_instance_to_dict(sample_instance(tr, 200, 3, rate=5.0))
    assert a == timed_instance_to_dict(sample_instance(tr, 200, 3, rate=5.0))
    assert a != timed_instance_to_dict(sample_instance(tr, 200, 4, rate=5.0))
    b = timed_instance_to_dict(sample_instance(tr, 200, 3, use_timestamps=True))
    assert b == timed_instance_to_dict(sample_instance(tr, 200, 3, use_timestamps=True))
    assert b != timed_instance_to_dict(sample_instance(tr, 200, 4, use_timestamps=True))


def test_request_seed_fixes_the_rows_and_redraws_only_the_arrivals():
    """J Table 1 "one request sample, arrivals redrawn" (issue 24): with ``request_seed`` every seed gets the
    rows ``seed = request_seed`` draws, in the same order, and its own arrivals.

    Breakage caught: the rows drawn from ``seed`` instead of ``request_seed``; the arrivals drawn from the
    request generator (then every seed would get the same arrivals).
    """
    tr = _synthetic_trace(timestamps=False)
    plain = sample_instance(tr, 300, 5, rate=5.0)
    fixed = [sample_instance(tr, 300, seed, rate=5.0, request_seed=5) for seed in (0, 1, 2)]
    rows = [(r.prompt, r.output) for r in plain.requests]
    for inst in fixed:
        assert [(r.prompt, r.output) for r in inst.requests] == rows
    arrivals = [tuple(r.arrival for r in inst.requests) for inst in fixed]
    assert len(set(arrivals)) == 3 and arrivals[0] != tuple(r.arrival for r in plain.requests)
    assert "requests=5" in fixed[0].name
    with pytest.raises(ValueError, match="request_seed"):
        sample_instance(_synthetic_trace(), 10, 0, use_timestamps=True, request_seed=1)


def test_sample_poisson_rate():
    tr = _synthetic_trace(20_000, timestamps=False)
    inst = sample_instance(tr, 10_000, 0, rate=50.0, M=30_000)
    arr = np.array([r.arrival for r in inst.requests])
    assert inst.n == 10_000 and inst.M == 30_000
    assert [r.id for r in inst.requests[:3]] == ["r0", "r1", "r2"]
    assert arr[0] > 0 and (np.diff(arr) >= 0).all()
    gaps = np.diff(np.concatenate(([0.0], arr)))
    assert gaps.mean() == pytest.approx(1 / 50, rel=0.05)
    assert gaps.std() == pytest.approx(1 / 50, rel=0.05)  # exponential: std = mean
    prompts = [r.prompt for r in inst.requests]
    assert len(set(prompts)) == 10_000  # rows drawn without replacement (prompts are distinct here)
    assert inst.name == "synthetic n=10000 rate=50 seed=0"


def test_sample_timestamps_keep_real_gaps():
    tr = _synthetic_trace()
    assert tr.timestamps is not None
    inst = sample_instance(tr, 300, 1, use_timestamps=True)
    start = inst.requests[0].prompt - 1  # prompt = row index + 1
    arr = np.array([r.arrival for r in inst.requests])
    np.testing.assert_allclose(arr, tr.timestamps[start:start + 300] - tr.timestamps[start], atol=1e-12)
    assert [r.prompt for r in inst.requests] == list(range(start + 1, start + 301))
    assert arr[0] == 0.0
    assert inst.name == "synthetic n=300 timestamps seed=1"
    starts = {sample_instance(tr, 300, s, use_timestamps=True).requests[0].prompt for s in range(5)}
    assert len(starts) > 1  # the offset is seeded


@needs_data
def test_sample_real_azure_window():
    tr = load_trace(TRACES / AZURE_CODE)
    assert tr.timestamps is not None
    inst = sample_instance(tr, 200, 2, use_timestamps=True)
    arr = np.array([r.arrival for r in inst.requests])
    key = np.array([(r.prompt, r.output) for r in inst.requests])
    pairs = np.stack([tr.prompt, tr.output], axis=1)
    starts = [s for s in range(tr.n - 199) if (pairs[s:s + 200] == key).all()]
    assert starts, "the sample is not a contiguous window of the trace"
    s = starts[0]
    np.testing.assert_allclose(np.diff(arr), np.diff(tr.timestamps[s:s + 200]), atol=1e-9)


def test_sample_errors():
    tr = _synthetic_trace(100, timestamps=False)
    with pytest.raises(TraceError, match="101 requests asked but the trace has only 100 rows"):
        sample_instance(tr, 101, 0, rate=1.0)
    with pytest.raises(TraceError, match="no timestamps"):
        sample_instance(tr, 10, 0, use_timestamps=True)
    with pytest.raises(ValueError, match="exactly one"):
        sample_instance(tr, 10, 0)
    with pytest.raises(ValueError, match="exactly one"):
        sample_instance(_synthetic_trace(100), 10, 0, rate=1.0, use_timestamps=True)
    with pytest.raises(ValueError, match="rate"):
        sample_instance(tr, 10, 0, rate=0.0)
    with pytest.raises(TraceError, match=r"synthetic.csv: row \d+: prompt \+ output = .* exceeds M = 50"):
        sample_instance(tr, 100, 0, rate=1.0, M=50)


def test_sample_10k_draws_distinct_rows_in_arrival_order():
    """Sampling speed is measured in benchmarks (results/perf/continuous-speed), not asserted here."""
    tr = _synthetic_trace(20_000, timestamps=False)
    inst = sample_instance(tr, 10_000, 0, rate=50.0, M=30_000)
    assert inst.n == 10_000 and len(set(inst.ids)) == 10_000
    arrivals = [r.arrival for r in inst.requests]
    assert arrivals == sorted(arrivals) and 0 < arrivals[0] < arrivals[-1]


def test_to_discrete_instance_floors():
    reqs = tuple(TimedRequest(f"q{i}", a, 1, 2) for i, a in enumerate([0.0, 0.09999, 0.1, 0.3, 0.35, 1.0, 0.7]))
    timed = TimedInstance(M=10, requests=reqs, name="t")
    inst = to_discrete_instance(timed, 0.1)
    assert [r.arrival for r in inst.requests] == [0, 0, 1, 3, 3, 10, 7]
    assert inst.ids == timed.ids and inst.M == 10 and inst.name == "t step=0.1s"
    assert [r.arrival for r in to_discrete_instance(timed, 0.25).requests] == [0, 0, 0, 1, 1, 4, 2]
    with pytest.raises(ValueError, match="step_seconds"):
        to_discrete_instance(timed, 0.0)


# --- the command line ---------------------------------------------------------------------------------


def _one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_cli_writes_timed_instance(tmp_path):
    src = _lmsys(tmp_path, [f"{i + 1},{i + 2}" for i in range(50)] + ["0,4"])
    out = tmp_path / "inst.json"
    result = runner.invoke(app, ["trace", str(src), "--n", "20", "--rate", "2", "--seed", "5",
                                 "--on-bad-row", "clamp", "-o", str(out)])
    assert result.exit_code == 0, result.output
    inst = load_timed_instance(out)
    assert inst.n == 20 and inst.M == 16_492
    assert inst.name == "lmsys_test n=20 rate=2 seed=5"
    trace = load_trace(src, M=16_492, on_bad_row="clamp")
    assert timed_instance_to_dict(inst) == timed_instance_to_dict(sample_instance(trace, 20, 5, rate=2.0))
    line = result.stdout.strip()
    assert len(line.splitlines()) == 1
    for part in ("51 rows read", "1 clamped", "prompt zero 1", "--on-bad-row clamp", "n=20", "word counts"):
        assert part in line, line


def test_cli_step_seconds_writes_discrete_instance(tmp_path):
    src = _write(tmp_path, "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                 + "".join(f"{0.25 * i},{i + 1},2\n" for i in range(40)), "v.csv")
    out = tmp_path / "d.json"
    result = runner.invoke(app, ["trace", str(src), "--n", "10", "--timestamps", "--seed", "0",
                                 "--step-seconds", "0.5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    inst = load_instance(out)
    assert [r.arrival for r in inst.requests] == [i // 2 for i in range(10)]
    assert "tokens" in result.stdout and "word counts" not in result.stdout


def test_cli_bad_row_error(tmp_path):
    src = _lmsys(tmp_path, ["1,2", "3,4", "5,x"])
    out = tmp_path / "inst.json"
    err = _one_line_error(runner.invoke(app, ["trace", str(src), "--n", "2", "--rate", "1", "--seed", "0",
                                              "-o", str(out)]))
    assert str(src) in err and "row 3 (line 4), column 'answer_length'" in err
    assert not out.exists()


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--rate", "1", "--timestamps"], "exactly one of --rate"),
    ([], "exactly one of --rate"),
    (["--timestamps"], "has no timestamps"),
    (["--rate", "0"], "--rate must be > 0"),
    (["--rate", "1", "--on-bad-row", "fix"], "--on-bad-row must be one of"),
    (["--rate", "1", "--format", "csv"], "unknown trace format 'csv'"),
    (["--rate", "1", "--n", "99"], "more than the 3 rows"),
])
def test_cli_option_errors(tmp_path, extra, fragment):
    src = _lmsys(tmp_path, ["1,2", "3,4", "5,6"])
    args = ["trace", str(src), "--n", "2", "--seed", "0", "-o", str(tmp_path / "o.json")]
    err = _one_line_error(runner.invoke(app, args + extra))
    assert fragment in err, err


def test_cli_missing_file(tmp_path):
    err = _one_line_error(runner.invoke(app, ["trace", str(tmp_path / "nope.csv"), "--n", "2", "--rate", "1",
                                              "--seed", "0", "-o", str(tmp_path / "o.json")]))
    assert "nope.csv: no such file" in err


def test_cli_never_overwrites_its_input_nor_an_existing_file(tmp_path, monkeypatch):
    """Issue 27: ``trace t.csv … -o t.csv`` replaced the trace with a 10-request JSON and exited 0."""
    src = _lmsys(tmp_path, [f"{i + 1},{i + 2}" for i in range(20)])
    before = src.read_bytes()
    args = ["trace", str(src), "--n", "5", "--rate", "2", "--seed", "0"]
    monkeypatch.chdir(tmp_path)
    for out in (str(src), f"./{src.name}"):  # the same file, by resolved path
        err = _one_line_error(runner.invoke(app, [*args, "-o", out, "--force"]))
        assert "is the input file" in err
    assert src.read_bytes() == before
    out = tmp_path / "inst.json"
    out.write_text("keep me")
    err = _one_line_error(runner.invoke(app, [*args, "-o", str(out)]))
    assert "exists; pass --force" in err and out.read_text() == "keep me"
    result = runner.invoke(app, [*args, "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    assert load_timed_instance(out).n == 5


def test_llmopt_data_naming_a_folder_without_traces_is_an_error(tmp_path, monkeypatch):
    """Issue 27: ``LLMOPT_DATA=/nonexistent`` was ignored (the staged data beside the clone was used)."""
    from llmopt.workloads.traces.data import data_dir

    monkeypatch.setenv("LLMOPT_DATA", str(tmp_path / "nonexistent"))
    with pytest.raises(FileNotFoundError, match=r"LLMOPT_DATA=.*nonexistent: does not exist"):
        data_dir()
    monkeypatch.setenv("LLMOPT_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="has no traces/ folder"):
        data_dir()
    (tmp_path / "traces").mkdir()
    assert data_dir() == tmp_path


@pytest.mark.parametrize("packing", ["bom", "gzip", "gzip+bom"])
def test_every_reader_takes_a_bom_and_gzip_alike(tmp_path, packing):
    """Issue 27: the JSON readers rejected a byte-order mark the CSV reader accepted, and gzip traces
    were "not UTF-8". Instance JSON, schedule JSON and CSV traces all go through one reader now."""
    import gzip
    import json

    from llmopt.model.instance import load_instance

    def pack(path: Path, text: str) -> Path:
        data = (b"\xef\xbb\xbf" if "bom" in packing else b"") + text.encode()
        path.write_bytes(gzip.compress(data) if "gzip" in packing else data)
        return path

    src = pack(tmp_path / "t.csv", "question_length,answer_length\n" + "".join(f"{i + 1},{i + 2}\n" for i in range(9)))
    assert load_trace(src, M=16_492).n == 9
    inst = pack(tmp_path / "inst.json", json.dumps({"M": 10, "requests": [{"arrival": 0, "prompt": 2, "output": 3}]}))
    assert load_instance(inst).n == 1
    sched = pack(tmp_path / "s.json", json.dumps({"starts": {"r0": 0}}))
    result = runner.invoke(app, ["check", str(inst), str(sched)])
    assert result.exit_code == 0 and "OK TEL=3" in result.stdout, result.output
    out = tmp_path / "o.json"
    result = runner.invoke(app, ["trace", str(src), "--n", "3", "--rate", "1", "--seed", "0", "-o", str(out)])
    assert result.exit_code == 0, result.output


def test_millisecond_timestamps_warn_and_time_unit_reads_them(tmp_path):
    """Issue 27: Unix-millisecond ``arrived_at`` values were read as seconds without a word."""
    src = _write(tmp_path, "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                 + "".join(f"{1_700_000_000_000 + 20 * i},{i + 1},2\n" for i in range(40)), "v.csv")
    base = ["trace", str(src), "--n", "10", "--timestamps", "--seed", "0"]
    out = tmp_path / "plain.json"
    result = runner.invoke(app, [*base, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "--time-unit ms" in result.stderr
    assert max(r.arrival for r in load_timed_instance(out).requests) == pytest.approx(9 * 20.0)
    out = tmp_path / "ms.json"
    result = runner.invoke(app, [*base, "--time-unit", "ms", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert max(r.arrival for r in load_timed_instance(out).requests) == pytest.approx(9 * 0.020)
    assert "--time-unit must be one of" in _one_line_error(runner.invoke(app, [*base, "--time-unit", "h", "-o",
                                                                               str(tmp_path / "h.json")]))
    err = _one_line_error(runner.invoke(app, ["trace", str(src), "--n", "3", "--rate", "1", "--seed", "0",
                                              "--time-unit", "ms", "-o", str(tmp_path / "r.json")]))
    assert "applies to the trace's own timestamps" in err


def test_an_output_hard_linked_to_the_input_is_refused(tmp_path):
    import os

    src = _lmsys(tmp_path, [f"{i + 1},{i + 2}" for i in range(20)])
    link = tmp_path / "other_name.csv"
    os.link(src, link)
    err = _one_line_error(runner.invoke(app, ["trace", str(src), "--n", "5", "--rate", "2", "--seed", "0",
                                              "-o", str(link), "--force"]))
    assert "is the input file" in err
