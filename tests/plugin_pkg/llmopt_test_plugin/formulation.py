"""J0 App. B.1 style IP with running-status variables, adapted to llmopt's model (DESIGN §1).

J0 B.1 indexes a request by the batches it runs in (``t ∈ [k, k+o−1]``, peak ``s+o−1``), one token
below DESIGN §1 (DIGEST §1.5). Here the running status is at integer times, ``y_{i,t} = 1`` iff
``k_i + 1 <= t <= k_i + o_i`` (the request holds memory at ``t``), so the optimum is J's OPT:

    x_{i,k} ∈ {0,1}   start;   y_{i,t} ∈ {0,1}   running at t;   u_{i,t} >= 0   memory of i at t
    (1)  Σ_k x_{i,k} = 1
    (2)  y_{i,t} = Σ_{k = t−o_i}^{t−1} x_{i,k}                        (running status)
    (3)  u_{i,t} >= s_i + t − Σ_k k·x_{i,k} − B_{i,t}·(1 − y_{i,t})    (big-M linearisation of the
         bilinear (s + t − p_i)·y_{i,t}; B_{i,t} = s_i + t − lo_i makes it void when y = 0)
    (4)  Σ_i u_{i,t} <= M
    min  Σ_i Σ_k k·x_{i,k} + Σ_i (o_i − a_i)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from llmopt.model import Block, CanonicalModel
from llmopt.model.instance import Instance
from llmopt.model.windows import StartWindows


class RunningStatusIP:
    name = "j0-running-status"
    exact = True

    def build(self, instance: Instance, windows: StartWindows) -> CanonicalModel:
        n = instance.n
        origin = min((r.arrival for r in instance.requests), default=0)
        x_req, x_k = [], []
        for i in range(n):
            for k in range(windows.lo[i], windows.hi[i] + 1):
                x_req.append(i)
                x_k.append(k)
        times = sorted({t for i, r in enumerate(instance.requests)
                        for t in range(windows.lo[i] + 1, windows.hi[i] + r.output + 1)})
        yu = [(i, t) for i, r in enumerate(instance.requests)
              for t in range(windows.lo[i] + 1, windows.hi[i] + r.output + 1)]
        nx, ny = len(x_req), len(yu)
        y_of = {key: nx + j for j, key in enumerate(yu)}
        u_of = {key: nx + ny + j for j, key in enumerate(yu)}
        n_cols = nx + 2 * ny
        rows, cols, vals, lo, up = [], [], [], [], []
        r = 0
        # (1)
        for i in range(n):
            for j in range(nx):
                if x_req[j] == i:
                    rows.append(r); cols.append(j); vals.append(1.0)  # noqa: E702
            lo.append(1.0); up.append(1.0); r += 1  # noqa: E702
        # (2) y_{i,t} − Σ x_{i,k} = 0 and (3) u − Σ k x − B y >= s + t − B
        for (i, t) in yu:
            req = instance.requests[i]
            rows.append(r); cols.append(y_of[(i, t)]); vals.append(1.0)  # noqa: E702
            for j in range(nx):
                if x_req[j] == i and t - req.output <= x_k[j] <= t - 1:
                    rows.append(r); cols.append(j); vals.append(-1.0)  # noqa: E702
            lo.append(0.0); up.append(0.0); r += 1  # noqa: E702
            big = req.prompt + t - windows.lo[i]
            rows.append(r); cols.append(u_of[(i, t)]); vals.append(1.0)  # noqa: E702
            for j in range(nx):
                if x_req[j] == i:
                    rows.append(r); cols.append(j); vals.append(float(x_k[j] - origin))  # noqa: E702
            rows.append(r); cols.append(y_of[(i, t)]); vals.append(-float(big))  # noqa: E702
            lo.append(float(req.prompt + t - origin - big)); up.append(np.inf); r += 1  # noqa: E702
        n_link = r
        # (4)
        for t in times:
            for (i, tt) in yu:
                if tt == t:
                    rows.append(r); cols.append(u_of[(i, t)]); vals.append(1.0)  # noqa: E702
            lo.append(-np.inf); up.append(float(instance.M)); r += 1  # noqa: E702
        c = np.zeros(n_cols)
        c[:nx] = np.array(x_k, dtype=float) - origin
        offset = float(sum(req.output - (req.arrival - origin) for req in instance.requests))
        col_upper = np.concatenate([np.ones(nx + ny), np.full(ny, np.inf)])
        integer = np.concatenate([np.ones(nx + ny, dtype=bool), np.zeros(ny, dtype=bool)])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(r, n_cols))
        return CanonicalModel(
            name=f"j0-running-status[{instance.name}]", c=c, offset=offset, A=A,
            row_lower=np.array(lo), row_upper=np.array(up), col_lower=np.zeros(n_cols), col_upper=col_upper,
            integer=integer,
            row_blocks=(Block("assign_link", 0, n_link), Block("memory", n_link, r, {"t": np.array(times)})),
            col_blocks=(Block("x", 0, nx, {"request": np.array(x_req), "k": np.array(x_k)}),
                        Block("y", nx, nx + ny), Block("u", nx + ny, n_cols)),
        )

    def decode(self, instance: Instance, model: CanonicalModel, x: np.ndarray) -> dict[str, int]:
        block = model.cols("x")
        vals = np.round(np.asarray(x)[block.slice]).astype(int)
        starts = {}
        for j in np.flatnonzero(vals):
            starts[instance.requests[int(block.labels["request"][j])].id] = int(block.labels["k"][j])
        if len(starts) != instance.n:
            raise ValueError("not every request has a start")
        return starts
