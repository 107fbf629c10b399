"""Bad input as a user meets it, one table: every row is a command, the files it reads, the exit code and
a piece of the one line it must print on standard error (naming the file, field or option). No row may
print a traceback or leave an output file or results folder behind, half-written or not.

The Python API answers the same inputs with the same words (``test_api_answers_as_the_cli``), and an
Azure-layout trace of numeric timestamps reads with ``--time-unit`` (``test_azure_numeric_timestamps``).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from llmopt.cli.main import app

runner = CliRunner()

INSTANCE = json.dumps({"M": 10, "requests": [{"id": "a", "arrival": 0, "prompt": 2, "output": 3},
                                             {"id": "b", "arrival": 1, "prompt": 1, "output": 2}]})
SCHEDULE = json.dumps({"starts": {"a": 0, "b": 1}})
LMSYS = "question_length,answer_length\n10,20\n30,40\n50,60\n"
#: Azure layout with Unix-millisecond timestamps: arrivals 0, 0.5 and 2 s after the first.
AZURE_MS = "TIMESTAMP,ContextTokens,GeneratedTokens\n1700000000000,100,10\n1700000000500,200,20\n1700000002000,300,30\n"


def _suite(**fields: Any) -> str:
    base: dict[str, Any] = {"name": "tiny", "workloads": [{"workload": "jaillet-am1", "seeds": [0],
                                                           "params": {"n_range": [3, 3]}}],
                            "policies": ["mc-sf"], "reference": "mc-sf"}
    return json.dumps(base | fields)


def _entry(**fields: Any) -> str:
    return _suite(workloads=[{"workload": "jaillet-am1", "seeds": [0]} | fields])


def _truncated_gzip(text: str) -> bytes:
    data = gzip.compress(text.encode())
    return data[: len(data) // 2]


def _corrupt_gzip(text: str) -> bytes:
    data = bytearray(gzip.compress(text.encode()))
    for i in range(10, len(data) - 8):  # the deflate stream, between the header and the CRC trailer
        data[i] ^= 0x5A
    return bytes(data)


def _with_clock(text: str, clock: str) -> str:
    return json.dumps(json.loads(text) | {"clock": clock})


class Row(NamedTuple):
    """One bad input: ``args`` name files as ``{d}/NAME`` (``files`` gives their content), ``{port}`` is a
    local port nothing listens on, ``{garbage_port}`` one that accepts and answers bytes that are not
    HTTP/2 (so not a Ray head); ``outputs`` are the paths the command must not have created."""

    id: str
    args: list[str]
    files: dict[str, str | bytes]
    code: int
    needle: str
    outputs: tuple[str, ...] = ()
    env: dict[str, str] | None = None


GZIP_MSG = "cannot read file: corrupt or truncated gzip file"
BENCH = ["bench", "run", "--no-progress", "--out", "{d}/runs", "--suite-file", "{d}/suite.json"]

ROWS = [
    # --- corrupt or truncated gzip, in every command that reads a file (one reader: llmopt.model.textfile)
    Row("gzip-truncated-simulate", ["simulate", "{d}/in.json.gz"], {"in.json.gz": _truncated_gzip(INSTANCE)}, 2,
        f"in.json.gz: {GZIP_MSG}"),
    Row("gzip-corrupt-simulate", ["simulate", "{d}/in.json.gz"], {"in.json.gz": _corrupt_gzip(INSTANCE)}, 2,
        f"in.json.gz: {GZIP_MSG}"),
    Row("gzip-truncated-solve", ["solve", "{d}/in.json.gz", "--write-schedule", "{d}/out.json"],
        {"in.json.gz": _truncated_gzip(INSTANCE)}, 2, f"in.json.gz: {GZIP_MSG}", ("out.json",)),
    Row("gzip-truncated-check-instance", ["check", "{d}/in.json.gz", "{d}/s.json"],
        {"in.json.gz": _truncated_gzip(INSTANCE), "s.json": SCHEDULE}, 2, f"in.json.gz: {GZIP_MSG}"),
    Row("gzip-corrupt-check-schedule", ["check", "{d}/in.json", "{d}/s.json.gz"],
        {"in.json": INSTANCE, "s.json.gz": _corrupt_gzip(SCHEDULE)}, 2, f"s.json.gz: {GZIP_MSG}"),
    Row("gzip-truncated-trace", ["trace", "{d}/t.csv.gz", "-n", "1", "--seed", "0", "--rate", "1", "-o",
                                 "{d}/out.json"], {"t.csv.gz": _truncated_gzip(LMSYS * 50)}, 2,
        f"t.csv.gz: {GZIP_MSG}", ("out.json",)),
    Row("gzip-corrupt-trace-format-given", ["trace", "{d}/t.csv.gz", "--format", "lmsys", "-n", "1", "--seed", "0",
                                            "--rate", "1", "-o", "{d}/out.json"],
        {"t.csv.gz": _corrupt_gzip(LMSYS)}, 2, f"t.csv.gz: {GZIP_MSG}", ("out.json",)),
    Row("gzip-truncated-capacity", ["capacity", "{d}/t.csv.gz", "-n", "2"], {"t.csv.gz": _truncated_gzip(LMSYS)}, 2,
        f"t.csv.gz: {GZIP_MSG}"),
    Row("gzip-truncated-suite-file", BENCH, {"suite.json": _truncated_gzip(_suite())}, 2,
        "corrupt or truncated gzip file", ("runs",)),
    # --- suites refused at validation, before any folder exists
    Row("suite-empty-seeds", BENCH, {"suite.json": _entry(seeds=[])}, 2, "seeds is empty", ("runs",)),
    Row("suite-negative-seed", BENCH, {"suite.json": _entry(seeds=[-1])}, 2, "seed -1 is negative", ("runs",)),
    Row("suite-workloads-not-a-list", BENCH, {"suite.json": _suite(workloads=3)}, 2,
        "suite field 'workloads' must be a list", ("runs",)),
    Row("suite-name-escapes-runs", BENCH, {"suite.json": _suite(name="../elsewhere")}, 2,
        "must not start with / nor have a .. part", ("runs",)),
    Row("suite-name-absolute", BENCH, {"suite.json": _suite(name="/tmp/elsewhere")}, 2,
        "must not start with / nor have a .. part", ("runs",)),
    Row("suite-policy-param-type", BENCH, {"suite.json": _suite(policies=["mc-sf", "alpha-protection:alpha=abc"])},
        2, "parameter 'alpha' must be a number, got 'abc'", ("runs",)),
    Row("suite-policy-param-value", BENCH, {"suite.json": _suite(policies=["mc-sf", "alpha-protection:alpha=1"])},
        2, "alpha must be in [0, 1)", ("runs",)),
    Row("suite-workload-param-type", BENCH, {"suite.json": _entry(params={"n_range": "x"})}, 2,
        "workload 'jaillet-am1': parameter 'n_range' must be a list of 2 integers", ("runs",)),
    Row("suite-unknown-field-clock", BENCH, {"suite.json": _suite(clock="minutes")}, 2,
        "unknown suite field(s) 'clock'", ("runs",)),
    # --- RAY_ADDRESS at a dead head: refused before Ray is started or anything is written
    Row("ray-address-dead", [*BENCH, "--executor", "ray"], {"suite.json": _suite()}, 2,
        "RAY_ADDRESS 127.0.0.1:{port}: cannot reach 127.0.0.1:{port}", ("runs",), {"RAY_ADDRESS": "127.0.0.1:{port}"}),
    Row("ray-address-not-a-ray-head", [*BENCH, "--executor", "ray"], {"suite.json": _suite()}, 2,
        "RAY_ADDRESS 127.0.0.1:{garbage_port}: 127.0.0.1:{garbage_port} is open but is not a Ray head",
        ("runs", "runs/tiny/suite.json", "runs/tiny/run.lock"), {"RAY_ADDRESS": "127.0.0.1:{garbage_port}"}),
    Row("ray-client-address-not-a-ray-head", [*BENCH, "--executor", "ray", "--address",
                                              "ray://127.0.0.1:{garbage_port}"], {"suite.json": _suite()}, 2,
        "--address ray://127.0.0.1:{garbage_port}: 127.0.0.1:{garbage_port} is open but is not a Ray head",
        ("runs",)),
    Row("ray-address-malformed", [*BENCH, "--executor", "ray"], {"suite.json": _suite()}, 2,
        "RAY_ADDRESS 'nowhere' is not a Ray address", ("runs",), {"RAY_ADDRESS": "nowhere"}),
    # --- policy and router parameters: named, with the type they must have
    Row("policy-param-type-simulate", ["simulate", "{d}/in.json", "-p", "alpha-protection:alpha=abc"],
        {"in.json": INSTANCE}, 2, "--policy 'alpha-protection:alpha=abc': policy 'alpha-protection': parameter "
                                  "'alpha' must be a number, got 'abc'"),
    Row("policy-param-int-simulate", ["simulate", "{d}/in.json", "-p", "alpha-protection:seed=1.5"],
        {"in.json": INSTANCE}, 2, "parameter 'seed' must be an integer, got 1.5"),
    Row("policy-param-unknown-simulate", ["simulate", "{d}/in.json", "-p", "alpha-protection:gamma=1"],
        {"in.json": INSTANCE}, 2, "policy 'alpha-protection' has no parameter 'gamma'; its parameters: alpha, beta"),
    Row("policy-param-type-capacity", ["capacity", "{d}/t.csv", "-n", "2", "-p", "alpha-protection:alpha=abc"],
        {"t.csv": LMSYS}, 2, "parameter 'alpha' must be a number, got 'abc'"),
    Row("policy-param-value-capacity", ["capacity", "{d}/t.csv", "-n", "2", "-p", "alpha-protection:alpha=1"],
        {"t.csv": LMSYS}, 2, "--policy 'alpha-protection:alpha=1': alpha must be in [0, 1)"),
    Row("router-param-type-capacity", ["capacity", "{d}/t.csv", "-n", "2", "-r", "p2c:seed=x"],
        {"t.csv": LMSYS}, 2, "--router 'p2c:seed=x': router 'p2c': parameter 'seed' must be an integer, got 'x'"),
    # --- generate --param: invalid JSON, wrong types, names that are not the user's
    Row("param-invalid-json", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range={bad", "-o",
                               "{d}/out.json"], {}, 2, "--param 'n_range={bad': the value '{bad' is not valid JSON",
        ("out.json",)),
    Row("param-unclosed-list", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range=[1,", "-o",
                                "{d}/out.json"], {}, 2, "the value '[1,' is not valid JSON", ("out.json",)),
    Row("param-wrong-type", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range=abc", "-o",
                             "{d}/out.json"], {}, 2, "parameter 'n_range' must be a list of 2 integers, got 'abc'",
        ("out.json",)),
    Row("param-null", ["generate", "jaillet-am1", "--seed", "0", "--param", "M_range=null", "-o", "{d}/out.json"], {},
        2, "parameter 'M_range' must be a list of 2 integers, got None", ("out.json",)),
    Row("param-seed-is-an-option", ["generate", "jaillet-am1", "--seed", "0", "--param", "seed=3", "-o",
                                    "{d}/out.json"], {}, 2, "has no parameter 'seed'", ("out.json",)),
    # --- "clock": the allowed value, not a command that refuses it again
    Row("clock-minutes-instance", ["simulate", "{d}/in.json"], {"in.json": _with_clock(INSTANCE, "minutes")}, 2,
        "in.json: field 'clock' is 'minutes': the only accepted value is \"seconds\""),
    Row("clock-minutes-instance-solve", ["solve", "{d}/in.json"], {"in.json": _with_clock(INSTANCE, "minutes")}, 2,
        "the only accepted value is \"seconds\""),
    Row("clock-minutes-schedule", ["check", "{d}/in.json", "{d}/s.json"],
        {"in.json": INSTANCE, "s.json": _with_clock(SCHEDULE, "minutes")}, 2,
        "s.json: field 'clock' is 'minutes': the only accepted value is \"seconds\""),
    # --- traces: suggestions that leave rows to sample from
    Row("azure-all-timestamps-bad", ["trace", "{d}/az.csv", "-n", "1", "--seed", "0", "--timestamps", "-o",
                                     "{d}/out.json"],
        {"az.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\nabc,100,10\nxyz,200,20\n"}, 2,
        "all 2 rows have this problem, 'timestamp unparseable', so dropping them would leave nothing", ("out.json",)),
    Row("azure-all-dropped", ["trace", "{d}/az.csv", "-n", "1", "--seed", "0", "--timestamps", "--on-bad-row", "drop",
                              "-o", "{d}/out.json"],
        {"az.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\nabc,100,10\nxyz,200,20\n"}, 2,
        "--on-bad-row 'drop' dropped all 2 rows, so nothing is left", ("out.json",)),
    Row("all-rows-too-long", ["trace", "{d}/t.csv", "-n", "1", "--seed", "0", "--rate", "1", "--M", "20", "-o",
                              "{d}/out.json"], {"t.csv": LMSYS}, 2, "'clamp' ('drop' would leave no rows)",
        ("out.json",)),
    Row("trace-non-numeric-length", ["trace", "{d}/t.csv", "-n", "1", "--seed", "0", "--rate", "1", "-o",
                                     "{d}/out.json"], {"t.csv": "question_length,answer_length\n10,x\n3,4\n"}, 2,
        "t.csv: row 1 (line 2), column 'answer_length': value 'x' is not a number", ("out.json",)),
    Row("trace-header-only", ["trace", "{d}/t.csv", "-n", "1", "--seed", "0", "--rate", "1", "-o", "{d}/out.json"],
        {"t.csv": "question_length,answer_length\n"}, 2, "t.csv: no data rows", ("out.json",)),
    Row("trace-missing-columns", ["capacity", "{d}/t.csv", "-n", "1"], {"t.csv": "a,b\n1,2\n"}, 2,
        "t.csv: unknown trace layout (columns: a, b)"),
    # --- workload ranges: [low, high] with low <= high and low at least what the generator needs
    Row("range-negative-n", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range=[-1,3]", "-o",
                             "{d}/out.json"], {}, 2,
        "parameter 'n_range' must be [low, high] with 1 <= low <= high, got [-1, 3]", ("out.json",)),
    Row("range-zero-n", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range=[0,0]", "-o",
                         "{d}/out.json"], {}, 2, "parameter 'n_range' must be [low, high]", ("out.json",)),
    Row("range-reversed-n", ["generate", "jaillet-am1", "--seed", "0", "--param", "n_range=[5,2]", "-o",
                             "{d}/out.json"], {}, 2, "got [5, 2]", ("out.json",)),
    Row("range-M-below-prompts", ["generate", "jaillet-am1", "--seed", "0", "--param", "M_range=[5,9]", "-o",
                                  "{d}/out.json"], {}, 2,
        "parameter 'M_range' must be [low, high] with 6 <= low <= high, got [5, 9]", ("out.json",)),
    Row("range-reversed-M-am2", ["generate", "jaillet-am2", "--seed", "0", "--param", "M_range=[50,30]", "-o",
                                 "{d}/out.json"], {}, 2, "parameter 'M_range' must be [low, high]", ("out.json",)),
    Row("range-zero-T", ["generate", "jaillet-am2", "--seed", "0", "--param", "T_range=[0,0]", "-o",
                         "{d}/out.json"], {}, 2,
        "parameter 'T_range' must be [low, high] with 1 <= low <= high, got [0, 0]", ("out.json",)),
    Row("range-zero-rate", ["generate", "jaillet-am2", "--seed", "0", "--param", "rate_range=[0,0]", "-o",
                            "{d}/out.json"], {}, 2,
        "parameter 'rate_range' must be [low, high] with 0 <= low <= high and high > 0, got [0, 0]",
        ("out.json",)),
    Row("range-reversed-rate", ["generate", "jaillet-am2", "--seed", "0", "--param", "rate_range=[2,1]", "-o",
                                "{d}/out.json"], {}, 2, "parameter 'rate_range' must be [low, high]",
        ("out.json",)),
    # --- capacity --time-unit: the values and combinations `llmopt trace` refuses, refused the same way
    Row("capacity-time-unit-unknown", ["capacity", "{d}/az.csv", "-n", "3", "--timestamps", "--time-unit", "h"],
        {"az.csv": AZURE_MS}, 2, "--time-unit must be one of s, ms, us, got 'h'"),
    Row("capacity-time-unit-without-timestamps", ["capacity", "{d}/az.csv", "-n", "3", "--time-unit", "ms"],
        {"az.csv": AZURE_MS}, 2, "--time-unit applies to the trace's own timestamps (--timestamps), not to --rate"),
    Row("capacity-time-unit-date-times", ["capacity", "{d}/az.csv", "-n", "2", "--timestamps", "--time-unit", "ms"],
        {"az.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,100,10\n"
                   "2023-11-16 18:17:04.4799600,200,20\n"}, 2, "has date-time timestamps; a time unit does not apply"),
    # --- other bad files
    Row("instance-empty-file", ["simulate", "{d}/in.json"], {"in.json": ""}, 2, "in.json: invalid JSON at line 1"),
    Row("instance-not-utf8", ["solve", "{d}/in.json"], {"in.json": b"\xff\xfe\x00garbage"}, 2,
        "in.json: not UTF-8 text"),
    Row("instance-wrong-type", ["simulate", "{d}/in.json"],
        {"in.json": INSTANCE.replace('"prompt": 2', '"prompt": "x"')}, 2,
        "in.json: request #0: field 'prompt' must be an integer, got 'x'"),
    Row("instance-negative-arrival", ["simulate", "{d}/in.json"],
        {"in.json": INSTANCE.replace('"arrival": 1', '"arrival": -5')}, 2, "field 'arrival' must be >= 0, got -5"),
    Row("instance-missing-M", ["solve", "{d}/in.json"], {"in.json": json.dumps({"requests": []})}, 2,
        "in.json: missing field 'M'"),
    Row("schedule-starts-list", ["check", "{d}/in.json", "{d}/s.json"],
        {"in.json": INSTANCE, "s.json": json.dumps({"starts": [0, 1]})}, 2,
        "s.json: field 'starts' must be an object"),
    Row("unknown-policy", ["simulate", "{d}/in.json", "-p", "nope"], {"in.json": INSTANCE}, 2,
        "--policy: unknown policy 'nope'"),
]


@pytest.fixture(scope="module")
def dead_port() -> int:
    """A local port nothing listens on: bound, then closed (connecting to it is refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def garbage_port() -> Iterator[int]:
    """A local port that accepts connections and answers bytes that are not HTTP/2, then closes: a port
    that is open but is not a Ray head (the TCP check alone passes it)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:  # closed by the fixture's teardown
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    try:
        server.shutdown(socket.SHUT_RDWR)  # wakes the accept() in progress (close alone does not, on Linux)
    except OSError:  # not connected (elsewhere than Linux): close wakes it there
        pass
    server.close()
    thread.join(timeout=30)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_is_one_line_and_writes_nothing(row: Row, tmp_path: Path, dead_port: int, garbage_port: int) -> None:
    def fill(text: str) -> str:
        return (text.replace("{d}", str(tmp_path)).replace("{port}", str(dead_port))
                .replace("{garbage_port}", str(garbage_port)))

    for name, content in row.files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    env = {k: fill(v) for k, v in (row.env or {}).items()}
    result = runner.invoke(app, [fill(a) for a in row.args], env=env or None)
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == row.code, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fill(row.needle) in lines[0], lines[0]
    for out in row.outputs:
        assert not (tmp_path / out).exists(), f"{out} was written"


def test_azure_numeric_timestamps(tmp_path: Path) -> None:
    """Unix-millisecond timestamps in the Azure layout: read with --time-unit ms as 0, 0.5 and 2 s; read
    without it as seconds, with a warning that says to give the unit."""
    trace = tmp_path / "az.csv"
    trace.write_text(AZURE_MS)
    out = tmp_path / "ms.json"
    result = runner.invoke(app, ["trace", str(trace), "-n", "3", "--seed", "0", "--timestamps", "--time-unit", "ms",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(r["arrival"] for r in json.loads(out.read_text())["requests"]) == [0.0, 0.5, 2.0]
    assert "warning" not in result.stderr
    out_s = tmp_path / "s.json"
    result = runner.invoke(app, ["trace", str(trace), "-n", "3", "--seed", "0", "--timestamps", "-o", str(out_s)])
    assert result.exit_code == 0, result.output
    assert sorted(r["arrival"] for r in json.loads(out_s.read_text())["requests"]) == [0.0, 500.0, 2000.0]
    assert "column 'TIMESTAMP' holds numbers" in result.stderr and "--time-unit" in result.stderr


def test_azure_date_times_still_refuse_a_time_unit(tmp_path: Path) -> None:
    trace = tmp_path / "az.csv"
    trace.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,100,10\n"
                     "2023-11-16 18:17:04.4799600,200,20\n")
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trace", str(trace), "-n", "2", "--seed", "0", "--timestamps", "--time-unit", "ms",
                                 "-o", str(out)])
    assert result.exit_code == 2 and "has date-time timestamps; a time unit does not apply" in result.stderr
    assert not out.exists()


def test_api_answers_as_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dead_port: int,
                                garbage_port: int) -> None:
    """The same bad inputs through ``import llmopt``: the same words, as exceptions."""
    import llmopt
    from llmopt.bench.harness import HarnessError
    from llmopt.bench.suites import Suite
    from llmopt.model.instance import InstanceError
    from llmopt.workloads.traces import TraceError

    gz = tmp_path / "in.json.gz"
    gz.write_bytes(_truncated_gzip(INSTANCE))
    with pytest.raises(InstanceError, match="corrupt or truncated gzip file"):
        llmopt.load_instance(gz)
    tgz = tmp_path / "t.csv.gz"
    tgz.write_bytes(_corrupt_gzip(LMSYS))
    with pytest.raises(TraceError, match="corrupt or truncated gzip file"):
        llmopt.load_trace(tgz, "lmsys")
    inst = llmopt.Instance.from_dict(json.loads(INSTANCE)) if hasattr(llmopt.Instance, "from_dict") else None
    if inst is None:
        path = tmp_path / "in.json"
        path.write_text(INSTANCE)
        inst = llmopt.load_instance(path)
    with pytest.raises(ValueError, match="parameter 'alpha' must be a number, got 'abc'"):
        llmopt.simulate(inst, "alpha-protection:alpha=abc")
    with pytest.raises(ValueError, match="parameter 'n_range' must be a list of 2 integers"):
        llmopt.make_instance("jaillet-am1", 0, n_range="abc")
    with pytest.raises(ValueError, match=r"parameter 'n_range' must be \[low, high\] with 1 <= low <= high"):
        llmopt.make_instance("jaillet-am1", 0, n_range=[5, 2])
    with pytest.raises(ValueError, match="seeds is empty"):
        Suite.from_dict(json.loads(_entry(seeds=[])))
    az = tmp_path / "az.csv"
    az.write_text(AZURE_MS)
    assert list(llmopt.load_trace(az, time_unit="ms").timestamps) == [0.0, 0.5, 2.0]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{dead_port}")
    suite = Suite.from_dict(json.loads(_suite()))
    with pytest.raises(HarnessError, match=f"RAY_ADDRESS 127.0.0.1:{dead_port}: cannot reach"):
        llmopt.run_suite(suite, tmp_path / "runs", executor="ray", progress=False)
    assert not (tmp_path / "runs").exists()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{garbage_port}")
    with pytest.raises(HarnessError, match=f"RAY_ADDRESS 127.0.0.1:{garbage_port}: 127.0.0.1:{garbage_port} is open "
                                           "but is not a Ray head"):
        llmopt.run_suite(suite, tmp_path / "runs", executor="ray", progress=False)
    assert not (tmp_path / "runs").exists()


def test_capacity_reads_numeric_timestamps_in_the_time_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``capacity --timestamps --time-unit ms`` plans on arrivals 0, 0.5 and 2 s; without the unit it reads
    the Unix milliseconds as seconds and gives ``llmopt trace``'s warning (one rule: ``apply_time_unit``)."""
    import llmopt.capacity.planning as planning

    seen: list[list[float]] = []
    real = planning.plan_capacity

    def spy(inst: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(sorted(r.arrival for r in inst.requests))
        return real(inst, *args, **kwargs)

    monkeypatch.setattr(planning, "plan_capacity", spy)
    trace = tmp_path / "az.csv"
    trace.write_text(AZURE_MS)
    result = runner.invoke(app, ["capacity", str(trace), "-n", "3", "--timestamps", "--time-unit", "ms", "--json"])
    assert result.exit_code == 0, result.output
    assert seen[-1] == [0.0, 0.5, 2.0] and "warning" not in result.stderr
    result = runner.invoke(app, ["capacity", str(trace), "-n", "3", "--timestamps", "--json"])
    assert result.exit_code == 0, result.output
    assert seen[-1] == [0.0, 500.0, 2000.0]
    assert "column 'TIMESTAMP' holds numbers" in result.stderr and "--time-unit" in result.stderr


#: An instance with no request is valid (DESIGN §1 asks n >= 0 of nothing; a plug-in workload or a filter
#: may leave none): every command that takes it answers with exit 0, TEL 0 and strict JSON (no NaN).
EMPTY = json.dumps({"M": 10, "requests": []})
EMPTY_TIMED = json.dumps({"M": 100, "clock": "seconds", "requests": []})
EMPTY_ROWS = [
    ("simulate", ["simulate", "{d}/in.json", "--json"], EMPTY, ("tel", 0)),
    ("simulate-workers", ["simulate", "{d}/in.json", "--workers", "2", "--json"], EMPTY, ("verified", True)),
    ("simulate-continuous", ["simulate", "{d}/in.json", "--json"], EMPTY_TIMED, ("verified", True)),
    ("solve", ["solve", "{d}/in.json", "--json"], EMPTY, ("status", "optimal")),
    ("check", ["check", "{d}/in.json", "{d}/s.json", "--json"], EMPTY, ("tel", 0)),
]


@pytest.mark.parametrize(("cmd", "args", "instance", "field"), EMPTY_ROWS, ids=[r[0] for r in EMPTY_ROWS])
def test_an_empty_instance_is_answered(cmd: str, args: list[str], instance: str, field: tuple[str, Any],
                                       tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text(instance)
    (tmp_path / "s.json").write_text(json.dumps({"starts": {}}))
    result = runner.invoke(app, [a.replace("{d}", str(tmp_path)) for a in args])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
    assert data[field[0]] == field[1], data
    assert data.get("verified", True) is True and data.get("ok", True) is True, data


def test_capacity_refuses_an_empty_instance(tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text(EMPTY_TIMED)
    result = runner.invoke(app, ["capacity", str(tmp_path / "in.json")])
    assert result.exit_code == 2 and result.stderr.strip() == (
        f"error: {tmp_path / 'in.json'}: the instance has no requests; there is no latency to plan workers for")
