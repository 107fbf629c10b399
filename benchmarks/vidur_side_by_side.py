"""llmopt and Vidur side by side on the same request files (issue "production schedulers", item 4).

For each trace (LMSYS, arXiv), request count ``n`` and Poisson rate λ, one instance is drawn with
llmopt's sampler (seed 0), written as a Vidur request file (``arrived_at, num_prefill_tokens,
num_decode_tokens``) with :func:`llmopt.workloads.traces.writers.write_vidur_trace`, read back
by llmopt's ``vidur`` trace reader (the benchmark stops if it does not give the same arrivals and
lengths), and simulated by

* llmopt's continuous engine with the registered ``vllm`` policy (its default on this clock: vLLM v0's
  prefill-first batches, as Vidur's vLLM) and ``sarathi``, and, beside the ``vidur-mixed`` diagnostic
  (Vidur's vLLM with prompts joining the decode batch), ``vllm:batching=mixed`` (rows ``llmopt-mixed``),
  ``max_num_seqs = 128`` (Vidur's ``batch_size_cap``), ``max_num_batched_tokens = 4096`` (Vidur
  vLLM's ``max_tokens_in_batch``), ``block_size = 16`` and ``M = vidur_kv_capacity_tokens()`` =
  53,248 tokens (Vidur's 3,328 blocks), batch times from llmopt's fitted cost model;
* Vidur 0.0.26 (``benchmarks/vidur_driver.py`` run by the Python of Vidur's own virtual environment,
  never imported here) with its ``vllm`` / ``sarathi`` (chunk 512) replica scheduler and the same
  caps, twice: **same** — every Vidur batch timed by llmopt's cost model (llmopt's batch times fed to
  Vidur), and **own** — Vidur's linear-regression predictor trained on its public Llama-2-70B TP2
  A100 profiles (attention, whose profile is public nowhere, from llmopt's first-principles terms).

CPU seconds are ``time.process_time`` of the simulation alone on both sides (llmopt: one
``simulate_continuous`` call; Vidur: building and running its ``Simulator``, start-up and predictor
training reported apart). Metrics use the same definitions on both sides (llmopt's
``llmopt.model.metrics``): latency = completion − arrival, TTFT to the first token of the final run,
mean TBT per request ``(completion − first token) / (o − 1)``, nearest-rank percentiles.

    nice -n 10 python benchmarks/vidur_side_by_side.py --out results/perf/vidur
    nice -n 10 python benchmarks/vidur_side_by_side.py --out results/perf/vidur --large   # adds n = 10,000

The first run installs Vidur into ``--venv`` (default ``~/.cache/llmopt/vidur-venv``): ``pip install
vidur==0.0.26`` (no PyTorch needed). Needs the staged data (``../shared/data`` or ``LLMOPT_DATA``).
Writes ``results.csv``, ``results.json``, ``manifest.json`` and the table block of ``README.md``.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from llmopt.engine.continuous import simulate_continuous
from llmopt.engine.cost_model import load_cost_model
from llmopt.engine.hardware import vidur_kv_capacity_tokens
from llmopt.model.metrics import percentiles, timed_request_rows
from llmopt.model.timed_instance import TimedInstance
from llmopt.policies import POLICIES, make_policy_spec
from llmopt.workloads.traces import load_vidur, sample_instance, trace_workload
from llmopt.workloads.traces.writers import write_vidur_trace

ROOT = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).resolve().parent / "vidur_driver.py"
VIDUR_VERSION = "0.0.26"
DEFAULT_VENV = Path.home() / ".cache" / "llmopt" / "vidur-venv"
TRACES = {
    "lmsys": ("lmsys_chat_1m_words_in256_out256.csv", "lmsys"),
    "arxiv": ("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", "arxiv"),
}
MAX_NUM_SEQS = 128  # Vidur's batch_size_cap default
MAX_BATCHED_TOKENS = 4096  # Vidur vLLM's max_tokens_in_batch default (vLLM v0: max(max_model_len, 2048))
BLOCK_SIZE = 16
CHUNK_SIZE = 512  # Sarathi's token budget per batch
SEED = 0
LLMOPT_REPEATS = 3
MIXED_SPEC = "vllm:batching=mixed"  # llmopt's vLLM with vLLM v1-like mixed batches, beside vidur-mixed
LLMOPT_SIMS = ("llmopt", "llmopt-mixed")
TABLE_START, TABLE_END = "<!-- table:start -->", "<!-- table:end -->"
METRICS = ("latency", "ttft", "tbt")


def ensure_vidur(venv: Path) -> Path:
    """The Python of Vidur's own virtual environment, creating it (``pip install vidur==0.0.26``) if absent."""
    python = venv / "bin" / "python"
    if python.exists():
        ok = subprocess.run([str(python), "-c", f"import importlib.metadata as m; "
                             f"assert m.version('vidur') == '{VIDUR_VERSION}'"], capture_output=True)
        if ok.returncode == 0:
            return python
    print(f"installing vidur=={VIDUR_VERSION} into {venv} (its own virtual environment)", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"vidur=={VIDUR_VERSION}"], check=True)
    return python


def same_requests(a: TimedInstance, b: TimedInstance) -> bool:
    """Whether ``b`` has ``a``'s arrivals (shifted to start at 0), prompts and outputs, in arrival order."""
    ra = sorted(a.requests, key=lambda r: r.arrival)
    rb = sorted(b.requests, key=lambda r: r.arrival)
    if len(ra) != len(rb):
        return False
    origin = ra[0].arrival
    return all(x.arrival - origin == y.arrival and x.prompt == y.prompt and x.output == y.output
               for x, y in zip(ra, rb))


def instance_for(trace: str, n: int, rate: float, folder: Path) -> tuple[TimedInstance, Path]:
    """The instance of ``(trace, n, λ)`` as llmopt reads it back from the Vidur request file it wrote."""
    file, fmt = TRACES[trace]
    M = vidur_kv_capacity_tokens()
    drawn = trace_workload(SEED, file, n, rate=rate, format=fmt, M=M)
    path = write_vidur_trace(drawn, folder / f"{trace}-n{n}-rate{rate:g}.csv")
    back = sample_instance(load_vidur(path, M=M), n, SEED, use_timestamps=True, M=M,
                           name=f"{trace} n={n} rate={rate:g} seed={SEED}")
    if not same_requests(drawn, back):
        raise SystemExit(f"{path}: the Vidur request file does not read back to the instance drawn")
    return back, path


def summarise(latency: list[float], ttft: list[float], tbt: list[float | None]) -> dict[str, Any]:
    """Mean, p50 and p99 (nearest rank) of each metric, as ``{metric}_{stat}``."""
    out: dict[str, Any] = {}
    series: tuple[list[float | None], ...] = (list(latency), list(ttft), tbt)
    for name, values in zip(METRICS, series):
        p = percentiles(values)
        out.update({f"{name}_mean": p.mean, f"{name}_p50": p.p50, f"{name}_p99": p.p99})
    return out


def run_llmopt(inst: TimedInstance, policy: str, cost: Any) -> dict[str, Any]:
    """One llmopt run; CPU of ``simulate_continuous`` alone, the median of :data:`LLMOPT_REPEATS` runs
    (a run of 1,000 requests takes a few hundredths of a second, where one run's noise is large)."""
    cpus = []
    for _ in range(LLMOPT_REPEATS):
        pol = make_policy_spec(policy)
        c0 = time.process_time()
        sched = simulate_continuous(inst, pol, cost, max_num_seqs=MAX_NUM_SEQS,
                                    max_num_batched_tokens=MAX_BATCHED_TOKENS, block_size=BLOCK_SIZE)
        cpus.append(time.process_time() - c0)
    cpu = sorted(cpus)[len(cpus) // 2]
    rows = timed_request_rows(inst, sched)
    if len(rows) != len(inst.requests):
        raise SystemExit(f"llmopt {policy}: {len(inst.requests) - len(rows)} requests did not complete")
    out = summarise([r["latency_s"] for r in rows], [r["ttft_s"] for r in rows], [r["mean_tbt_s"] for r in rows])
    out.update(batches=len(sched.batch_duration), preemptions=len(sched.evictions), cpu_s=cpu,
               busy_s=float(sched.batch_duration.sum()), startup_cpu_s=None)
    return out


def run_vidur(python: Path, trace_file: Path, inst: TimedInstance, scheduler: str, batch_time: str,
              coefficients: Path, profiles: Path, workdir: Path, mixed: bool = False) -> dict[str, Any]:
    """One Vidur run through the driver in Vidur's own environment (``mixed``: the diagnostic vLLM
    scheduler that adds new prompts to the decode batch, as llmopt's ``vllm``)."""
    out = workdir / f"{trace_file.stem}-{scheduler}-{batch_time}{'-mixed' if mixed else ''}.json"
    cmd = [str(python), str(DRIVER), "--trace", str(trace_file), "--out", str(out), "--scheduler", scheduler,
           "--chunk-size", str(CHUNK_SIZE), "--batch-cap", str(MAX_NUM_SEQS),
           "--max-tokens-in-batch", str(MAX_BATCHED_TOKENS), "--block-size", str(BLOCK_SIZE),
           "--num-blocks", str(vidur_kv_capacity_tokens() // BLOCK_SIZE), "--batch-time", batch_time,
           "--coefficients", str(coefficients), "--profiles", str(profiles), *(["--mixed-batches"] if mixed else [])]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        raise SystemExit(f"vidur {scheduler}/{batch_time} on {trace_file.name} failed:\n" + "\n".join(tail))
    data = json.loads(out.read_text(encoding="utf-8"))
    reqs = data["requests"]
    by_arrival = sorted(inst.requests, key=lambda r: r.arrival)
    if len(reqs) != len(by_arrival) or not all(r["completed"] for r in reqs):
        raise SystemExit(f"vidur {scheduler}/{batch_time} on {trace_file.name}: not every request completed")
    lat, ttft, tbt = [], [], []
    for r, mine in zip(reqs, by_arrival):  # the driver keeps file order = arrival order
        lat.append(r["completion"] - r["arrival"])
        ttft.append(r["first_token"] - r["arrival"])
        tbt.append((r["completion"] - r["first_token"]) / (mine.output - 1) if mine.output > 1 else None)
    res = summarise(lat, ttft, tbt)
    res.update({k: data[k] for k in ("batches", "preemptions", "cpu_s", "busy_s", "startup_cpu_s", "predictor_cpu_s",
                                     "prefill_only_batches", "prefill_only_s", "paused_request_s", "mixed_batches",
                                     "fixes")})
    res["num_blocks"] = int(data["num_blocks"])
    return res


def rel(a: float | None, b: float | None) -> float | None:
    """``a / b − 1`` (``None`` when either is missing or ``b`` is 0)."""
    if a is None or b is None or b == 0:
        return None
    return a / b - 1


def fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.1f} %"


def markdown(rows: list[dict[str, Any]]) -> str:
    """The README's table block: one line per (trace, n, λ, scheduler, simulator)."""
    head = ("| trace | n | λ | scheduler | simulator | batch times | mean / p50 / p99 latency (s) | "
            "mean / p50 / p99 TTFT (s) | mean / p50 / p99 TBT (ms) | batches | preemptions | CPU (s) | "
            "Δ mean latency / TTFT / TBT vs llmopt | llmopt's lead |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if r.get("pending"):
            lines.append(f"| {r['trace']} | {r['n']:,} | {r['rate']:g} | {r['scheduler']} | {r['simulator']} | "
                         f"{r['batch_time']} | pending: {r['pending']} | | | | | | | |")
            continue
        d = " / ".join(pct(r.get(f"d_{m}_mean")) for m in METRICS) if r["simulator"] not in LLMOPT_SIMS else "–"
        lead = fmt(r.get("lead"), 1) + "×" if r.get("lead") is not None else "–"
        lines.append(
            f"| {r['trace']} | {r['n']:,} | {r['rate']:g} | {r['scheduler']} | {r['simulator']} | {r['batch_time']} | "
            f"{fmt(r['latency_mean'])} / {fmt(r['latency_p50'])} / {fmt(r['latency_p99'])} | "
            f"{fmt(r['ttft_mean'], 3)} / {fmt(r['ttft_p50'], 3)} / {fmt(r['ttft_p99'], 3)} | "
            f"{fmt(1e3 * r['tbt_mean'], 1)} / {fmt(1e3 * r['tbt_p50'], 1)} / {fmt(1e3 * r['tbt_p99'], 1)} | "
            f"{r['batches']:,} | {r['preemptions']:,} | {fmt(r['cpu_s'], 3)} | {d} | {lead} |")
    return "\n".join(lines)


def causes(rows: list[dict[str, Any]]) -> str:
    """The README's second block: each Vidur-vs-llmopt difference split into its measured causes.

    Per (trace, n, λ, scheduler): **scheduler** = Vidur (llmopt's batch times) against llmopt;
    **mixed batches** = Vidur's vLLM with prompts joining the decode batch (``vidur-mixed``) against
    llmopt's ``vllm:batching=mixed`` (``llmopt-mixed``), the same rule on both sides; **prefill-only
    batches** of Vidur's vLLM and the request-seconds of decodes they paused; **batch times** = Vidur with its own
    predictor against Vidur with llmopt's (same scheduler), and the ratio of their busy times.
    """
    by = {(r["trace"], r["n"], r["rate"], r["scheduler"], r["simulator"], r["batch_time"]): r for r in rows}
    head = ("| trace | n | λ | scheduler | scheduler: Δ mean latency / TTFT / TBT | mixed batches: Δ vs llmopt-mixed | "
            "prefill-only batches (s) | decode request-s paused | batch times: Δ mean latency / TBT | "
            "busy time own / llmopt's |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for (trace, n, rate, sched, sim, _bt), r in by.items():
        if sim != "llmopt" or r.get("pending"):
            continue
        same = by.get((trace, n, rate, sched, "vidur", "llmopt"))
        own = by.get((trace, n, rate, sched, "vidur", "vidur"))
        mixed = by.get((trace, n, rate, sched, "vidur-mixed", "llmopt"))
        mine_mixed = by.get((trace, n, rate, sched, "llmopt-mixed", "llmopt"), r)

        def d(a: dict[str, Any] | None, b: dict[str, Any] | None, ms: tuple[str, ...]) -> str:
            if a is None or b is None:
                return "–"
            return " / ".join(pct(rel(a[f"{m}_mean"], b[f"{m}_mean"])) for m in ms)

        po = "–" if same is None else f"{same['prefill_only_batches']:,} ({fmt(same['prefill_only_s'], 1)})"
        paused = "–" if same is None else fmt(same["paused_request_s"], 0)
        busy = "–" if same is None or own is None else fmt(own["busy_s"] / same["busy_s"], 3)
        lines.append(f"| {trace} | {n:,} | {rate:g} | {sched} | {d(same, r, METRICS)} | "
                     f"{d(mixed, mine_mixed, METRICS) if sched == 'vllm' else 'n/a'} | {po} | {paused} | "
                     f"{d(own, same, ('latency', 'tbt'))} | {busy} |")
    return "\n".join(lines)


def write_outputs(out: Path, rows: list[dict[str, Any]], meta: dict[str, Any], command: str,
                  keep_manifest: bool = False) -> None:
    """Write ``results.csv``, ``results.json``, ``manifest.json`` (unless ``keep_manifest``) and the table
    block of ``README.md`` (between its markers; the rest of the README is kept)."""
    out.mkdir(parents=True, exist_ok=True)
    cols = ["trace", "n", "rate", "scheduler", "simulator", "policy", "batch_time",
            *[f"{m}_{s}" for m in METRICS for s in ("mean", "p50", "p99")],
            "batches", "preemptions", "busy_s", "cpu_s", "startup_cpu_s", "predictor_cpu_s",
            "prefill_only_batches", "prefill_only_s", "paused_request_s",
            *[f"d_{m}_mean" for m in METRICS], "lead", "pending"]
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in cols})
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    manifest = {"vidur": {
        "kind": "benchmark", "command": command, "arguments": {"out": "results/perf/vidur"},
        "commit": commit, "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "files": ["README.md", "results.csv", "results.json"], "regenerated": True,
        "note": "results.csv, results.json and README.md's table block are written by the command itself",
    }}
    if not keep_manifest:
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    readme = out / "README.md"
    block = f"{TABLE_START}\n{markdown(rows)}\n\n{causes(rows)}\n{TABLE_END}"
    if readme.exists():
        text = readme.read_text(encoding="utf-8")
        if TABLE_START in text and TABLE_END in text:
            text = text[:text.index(TABLE_START)] + block + text[text.index(TABLE_END) + len(TABLE_END):]
        else:
            text += "\n" + block + "\n"
    else:
        text = f"# llmopt and Vidur side by side\n\nCommand: `{command}`\n\n{block}\n"
    readme.write_text(text, encoding="utf-8")


VARIANT_FILE = "llmopt_variant"  # + .csv / .md: an llmopt policy spec against the committed Vidur rows


def run_variant(out: Path, spec: str, scheduler: str, ns: list[int]) -> int:
    """llmopt's ``spec`` (e.g. ``vllm:batching=prefill-first``) on every committed ``(trace, n, λ)`` of
    ``scheduler`` in ``out/results.json``, beside Vidur's row run with llmopt's batch times (same
    requests, same caps); Vidur is not rerun. Writes ``llmopt_variant.csv`` / ``.md`` and the
    ``vidur-variant`` manifest entry."""
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))["rows"]
    cost = load_cost_model()
    keys = sorted({(r["trace"], r["n"], r["rate"]) for r in saved
                   if r["scheduler"] == scheduler and r["simulator"] == "vidur" and r.get("batch_time") == "llmopt"
                   and r["n"] in ns})
    if not keys:
        raise SystemExit(f"{out / 'results.json'}: no Vidur {scheduler} rows with llmopt's batch times for n in {ns}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="llmopt-vidur-") as tmp:
        for trace, n, rate in keys:
            inst, _ = instance_for(trace, n, rate, Path(tmp))
            base = {"trace": trace, "n": n, "rate": rate, "scheduler": scheduler}
            vid = next(r for r in saved if {k: r[k] for k in base} == base and r["simulator"] == "vidur"
                       and r.get("batch_time") == "llmopt")
            for policy in (scheduler, spec):
                mine = run_llmopt(inst, policy, cost)
                row = {**base, "llmopt_policy": policy, **{f"llmopt_{m}_mean": mine[f"{m}_mean"] for m in METRICS},
                       "llmopt_batches": mine["batches"], "llmopt_preemptions": mine["preemptions"],
                       **{f"vidur_{m}_mean": vid[f"{m}_mean"] for m in METRICS},
                       "vidur_batches": vid["batches"], "vidur_preemptions": vid["preemptions"],
                       **{f"d_{m}_mean": rel(vid[f"{m}_mean"], mine[f"{m}_mean"]) for m in METRICS},
                       "llmopt_cpu_s": mine["cpu_s"], "vidur_cpu_s": vid["cpu_s"],
                       "lead": vid["cpu_s"] / mine["cpu_s"] if mine["cpu_s"] > 0 else None}
                rows.append(row)
                print(f"{trace} n={n} λ={rate:g} {policy}: latency {mine['latency_mean']:.3f} s, "
                      f"Vidur {pct(row['d_latency_mean'])}", flush=True)
    cols = list(rows[0])
    with (out / f"{VARIANT_FILE}.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    lines = ["| trace | n | λ | llmopt policy | llmopt mean latency (s) | Vidur (s) | Δ latency | Δ TTFT | Δ TBT "
             "| batches llmopt / Vidur | preemptions llmopt / Vidur | CPU s llmopt / Vidur (lead) |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['trace']} | {r['n']:,} | {r['rate']:g} | `{r['llmopt_policy']}` | "
                     f"{fmt(r['llmopt_latency_mean'], 3)} | {fmt(r['vidur_latency_mean'], 3)} | "
                     f"{pct(r['d_latency_mean'])} | {pct(r['d_ttft_mean'])} | {pct(r['d_tbt_mean'])} | "
                     f"{r['llmopt_batches']:,} / {r['vidur_batches']:,} | "
                     f"{r['llmopt_preemptions']} / {r['vidur_preemptions']} | "
                     f"{fmt(r['llmopt_cpu_s'], 3)} / {fmt(r['vidur_cpu_s'], 2)} ({fmt(r['lead'], 1)}×) |")
    command = (f"nice -n 10 python benchmarks/vidur_side_by_side.py --out results/perf/vidur --llmopt-variant {spec} "
               f"--n {' '.join(map(str, ns))}")
    (out / f"{VARIANT_FILE}.md").write_text(
        f"# llmopt `{spec}` beside Vidur's {scheduler} (same batch times)\n\nCommand: `{command}` (llmopt only; "
        "the Vidur rows are the committed ones of `results.json`). Δ = Vidur ÷ llmopt − 1.\n\n"
        + "\n".join(lines) + "\n", encoding="utf-8")
    path = out / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    manifest["vidur-variant"] = {
        "kind": "benchmark", "command": command, "arguments": {"out": "results/perf/vidur", "variant": spec},
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "files": [f"{VARIANT_FILE}.csv", f"{VARIANT_FILE}.md"], "regenerated": True,
        "note": "llmopt side only; the Vidur rows it compares with come from results.json (the vidur entry)"}
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "results" / "perf" / "vidur")
    p.add_argument("--n", type=int, nargs="+", default=[1000], help="request counts (default 1000)")
    p.add_argument("--large", action="store_true", help="add n = 10,000")
    p.add_argument("--rates", type=float, nargs="+", default=[5.0, 10.0, 50.0])
    p.add_argument("--traces", nargs="+", choices=sorted(TRACES), default=["lmsys", "arxiv"])
    p.add_argument("--schedulers", nargs="+", choices=("vllm", "sarathi"), default=["vllm", "sarathi"])
    p.add_argument("--batch-times", nargs="+", choices=("same", "own"), default=["same", "own"],
                   help="same: Vidur runs llmopt's batch times; own: Vidur's predictor")
    p.add_argument("--no-diagnostic", action="store_true",
                   help="skip the vidur-mixed rows (Vidur's vLLM with mixed prefill+decode batches) and the "
                        "llmopt-mixed rows")
    p.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="Vidur's own virtual environment")
    p.add_argument("--profiles", type=Path, default=None, help="Vidur profiles folder (default: data/profiles)")
    p.add_argument("--render", action="store_true",
                   help="rewrite README.md's table block and results.csv from --out's results.json (no simulation)")
    p.add_argument("--llmopt-variant", metavar="SPEC", default=None,
                   help="run only llmopt's SPEC (e.g. vllm:batching=prefill-first) beside the committed Vidur rows "
                        "of its scheduler (same batch times); writes llmopt_variant.csv/.md")
    args = p.parse_args(argv)
    if args.llmopt_variant:
        return run_variant(args.out, args.llmopt_variant, args.llmopt_variant.split(":")[0], sorted(set(args.n)))
    if args.render:
        saved = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
        path = args.out / "manifest.json"
        manifest = json.loads(path.read_text(encoding="utf-8"))
        entry = manifest["vidur"]
        entry.setdefault("regenerated", True)
        entry.setdefault("note", "results.csv, results.json and README.md's table block are written by the command "
                                 "itself")
        path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        write_outputs(args.out, saved["rows"], saved["meta"], entry["command"], keep_manifest=True)
        return 0
    ns = sorted(set(args.n + ([10_000] if args.large else [])))

    from llmopt.workloads.traces.data import data_dir

    profiles = args.profiles or data_dir() / "profiles"
    python = ensure_vidur(args.venv)
    cost = load_cost_model()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="llmopt-vidur-") as tmp:
        work = Path(tmp)
        coefficients = work / "coefficients.json"
        coefficients.write_text(json.dumps(cost.to_dict()), encoding="utf-8")
        for trace in args.traces:
            for n in ns:
                for rate in args.rates:
                    inst, trace_file = instance_for(trace, n, rate, work)
                    for scheduler in args.schedulers:
                        key = {"trace": trace, "n": n, "rate": rate, "scheduler": scheduler}
                        first = len(rows)
                        runs = [("vidur", "llmopt" if bt == "same" else "vidur", False) for bt in args.batch_times]
                        diagnostic = scheduler == "vllm" and "same" in args.batch_times and not args.no_diagnostic
                        if diagnostic:
                            runs.append(("vidur-mixed", "llmopt", True))
                        mine: dict[str, Any] | None = None
                        mine_mixed: dict[str, Any] | None = None
                        if scheduler in POLICIES:
                            mine = run_llmopt(inst, scheduler, cost)
                            rows.append({**key, "simulator": "llmopt", "batch_time": "llmopt", **mine})
                            if diagnostic:  # what vidur-mixed is compared with: the same batch rule in llmopt
                                mine_mixed = run_llmopt(inst, MIXED_SPEC, cost)
                                rows.append({**key, "simulator": "llmopt-mixed", "batch_time": "llmopt",
                                             "policy": MIXED_SPEC, **mine_mixed})
                        else:
                            rows.append({**key, "simulator": "llmopt", "batch_time": "llmopt",
                                         "pending": f"policy {scheduler!r} not registered in llmopt yet"})
                        for label, bt, mixed in runs:
                            res = run_vidur(python, trace_file, inst, scheduler, bt, coefficients, profiles, work,
                                            mixed)
                            row = {**key, "simulator": label, "batch_time": bt, **res}
                            ref = mine_mixed if mixed and mine_mixed is not None else mine
                            if ref is not None:
                                for m in METRICS:
                                    row[f"d_{m}_mean"] = rel(res[f"{m}_mean"], ref[f"{m}_mean"])
                                row["lead"] = res["cpu_s"] / ref["cpu_s"] if ref["cpu_s"] > 0 else None
                            rows.append(row)
                        print("\n".join(markdown(rows[first:]).splitlines()[2:]), flush=True)
    meta = {"machine": platform.platform(), "python": platform.python_version(), "vidur": VIDUR_VERSION,
            "M": vidur_kv_capacity_tokens(), "block_size": BLOCK_SIZE, "max_num_seqs": MAX_NUM_SEQS,
            "max_num_batched_tokens": MAX_BATCHED_TOKENS, "chunk_size": CHUNK_SIZE, "seed": SEED,
            "cost_model": cost.to_dict(), "cpu_count": os.cpu_count()}
    command = "nice -n 10 python benchmarks/vidur_side_by_side.py --out results/perf/vidur" + (
        " --large" if args.large else "")
    write_outputs(args.out, rows, meta, command)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
