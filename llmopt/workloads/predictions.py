"""Prediction intervals of output lengths: generators, their registry, and spec strings.

A *prediction generator* takes an :class:`~llmopt.model.instance.Instance` or a
:class:`~llmopt.model.timed_instance.TimedInstance` and returns the same type with every
request's prediction interval ``[ℓ_i, u_i]`` set (C §2: policies such as A_max and A_min
see the interval, never ``o_i``). Ids, request order and all other fields are kept; the
instance name gets the suffix ``" predictions=<spec>"`` with the canonical spec string of
the generator and its parameters (an earlier suffix is replaced), so a name says which
predictions it carries.

The generators reproduce the three prediction settings of C §6 (DIGEST §5.3) and add a
predictor that can be wrong:

==============  ===============================  =================================================
name            function                         intervals
==============  ===============================  =================================================
``none``        :func:`clear_intervals`          none (removes any intervals)
``shared``      :func:`shared_interval`          one interval for all (C Exp. 1: ``[1, 1000]``)
``bins``        :func:`bin_intervals`            the bin of width ``w`` holding ``o_i`` (C Exp. 2:
                                                 ``[1,100], [101,200], …, [901,1000]``)
``relative``    :func:`relative_intervals`       ``[(1−x)o_i, (1+x)o_i]`` rounded inward (C Exp. 3)
``noisy``       :func:`noisy_intervals`          a relative interval around a log-normally
                                                 perturbed ``o_i``; may miss (seeded)
==============  ===============================  =================================================

Only ``noisy`` (and ``shared`` with ``may_miss=True``) can produce an interval that misses
``o_i``; those instances get ``predictions_may_miss=True``. Every other generator returns
intervals that contain ``o_i``, and the instance's validation checks it again.

Spec strings (:func:`apply_prediction_spec`) use the policy-spec syntax
(:func:`llmopt.model.registry.parse_spec`): ``"shared:lower=1,upper=1000"``,
``"bins:width=100,count=10"``, ``"relative:x=0.95"``, ``"noisy:sigma=0.5,width=0.2"``,
``"none"``. Third-party generators register in :data:`PREDICTIONS` or through the
entry-point group ``llmopt.predictions``; a generator is a callable
``(instance, **params) -> instance`` and receives ``seed`` when it accepts one.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from llmopt.model.instance import Instance, InstanceError
from llmopt.model.registry import Registry, parse_spec
from llmopt.model.timed_instance import TimedInstance

__all__ = [
    "PREDICTIONS",
    "PredictionError",
    "apply_prediction_spec",
    "bin_intervals",
    "clear_intervals",
    "noisy_intervals",
    "prediction_summary",
    "relative_bounds",
    "relative_intervals",
    "shared_interval",
]

InstanceT = TypeVar("InstanceT", Instance, TimedInstance)

#: Second entry of the seed sequence of :func:`noisy_intervals` (fixed forever: changing it changes every instance).
_NOISY_TAG = 31

_SUFFIX = " predictions="


class PredictionError(InstanceError):
    """A prediction setting that does not fit an instance; the message names the request and field."""


# --- helpers ------------------------------------------------------------------------------------------


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_real(value: Any, name: str) -> Fraction:
    """A finite real ``>= 0`` as an exact fraction; a float is read as its shortest decimal (``0.1`` is 1/10)."""
    exact: Fraction | None = None
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        exact = Fraction(repr(float(value)))
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        exact = Fraction(int(value))
    elif isinstance(value, Fraction):
        exact = value
    if exact is None or exact < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return exact


def _number_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else repr(float(value))


def _where(pos: int, request: Any) -> str:
    return f"request #{pos} {request.id!r}"


def _with_intervals(instance: InstanceT, bounds: Sequence[tuple[int, int] | None], spec: str,
                    may_miss: bool) -> InstanceT:
    """``instance`` with request ``i``'s interval set to ``bounds[i]`` and the name suffix ``spec``."""
    reqs = tuple(dataclasses.replace(r, lower=None if b is None else b[0], upper=None if b is None else b[1])
                 for r, b in zip(instance.requests, bounds))
    base = "" if instance.name.startswith("predictions=") else instance.name.split(_SUFFIX)[0]
    name = f"{base}{_SUFFIX}{spec}" if base else f"predictions={spec}"
    return dataclasses.replace(instance, requests=reqs, name=name, predictions_may_miss=may_miss)


# --- generators ---------------------------------------------------------------------------------------


def clear_intervals(instance: InstanceT) -> InstanceT:
    """Remove every prediction interval (spec ``"none"``); an instance without any is returned as is.

    Parameters
    ----------
    instance : Instance or TimedInstance

    Returns
    -------
    Instance or TimedInstance
        The same type; ``predictions_may_miss`` false; name suffix ``" predictions=none"`` if
        intervals were removed.
    """
    if all(r.lower is None for r in instance.requests) and not instance.predictions_may_miss:
        return instance
    return _with_intervals(instance, [None] * instance.n, "none", False)


def shared_interval(instance: InstanceT, lower: int = 1, upper: int = 1000, *, may_miss: bool = False) -> InstanceT:
    """Give every request the same interval ``[lower, upper]`` (C §6 Experiment 1: ``[1, 1000]``).

    This is also C's basic setting (§2–§5): every output lies in a known ``[ℓ, u]``.

    Parameters
    ----------
    instance : Instance or TimedInstance
    lower, upper : int
        ``1 <= lower <= upper``. Defaults are C Experiment 1's ``[1, 1000]``.
    may_miss : bool
        If false (default), an output outside ``[lower, upper]`` is an error. If true, it
        is allowed and the instance gets ``predictions_may_miss=True``.

    Returns
    -------
    Instance or TimedInstance
        The same type, name suffix ``" predictions=shared:lower=…,upper=…"``.

    Raises
    ------
    PredictionError
        An output outside the interval (without ``may_miss``); the message names the first
        such request, the field (``lower`` or ``upper``) and how many requests miss.
    ValueError
        Bad ``lower`` / ``upper``.
    """
    lower, upper = _check_int(lower, "lower", 1), _check_int(upper, "upper", 1)
    if upper < lower:
        raise ValueError(f"upper = {upper} is below lower = {lower}")
    if not may_miss:
        misses = [(pos, r) for pos, r in enumerate(instance.requests) if not lower <= r.output <= upper]
        if misses:
            pos, r = misses[0]
            field, side = ("lower", "below") if r.output < lower else ("upper", "above")
            raise PredictionError(
                f"{_where(pos, r)}: field '{field}': output {r.output} lies {side} the shared interval "
                f"[{lower}, {upper}] ({len(misses)} of {instance.n} requests do); widen the interval, drop those "
                "requests, or pass may_miss=True (spec ',may_miss=true') to allow predictions that miss")
    spec = f"shared:lower={lower},upper={upper}" + (",may_miss=true" if may_miss else "")
    return _with_intervals(instance, [(lower, upper)] * instance.n, spec, bool(may_miss))


def bin_intervals(instance: InstanceT, width: int = 100, count: int = 10, *, overflow: str = "error") -> InstanceT:
    """Classify each request into the bin holding its output (C §6 Experiment 2).

    The bins are ``[1, w], [w+1, 2w], …, [(count−1)w+1, count·w]``; request ``i`` gets the
    bin ``k = (o_i − 1) // w``, i.e. ``[k·w + 1, (k+1)·w]``. With the defaults these are
    exactly C's ten bins ``[1,100], [101,200], …, [901,1000]``. The classifier is perfect
    (C: "by true o_i"), so every interval contains its output.

    Outputs above ``count·w`` have no bin in C's setting (C's sample has maximum 883, so the
    case never arises there). A researcher reproducing C expects exactly C's ten bins, so
    by default such an output is an **error** naming the request, rather than a silently
    changed bin layout: filter the data first (e.g. ``chen-lmsys``'s ``max_output=1000``),
    raise ``count``, or pass ``overflow="extend"``, which stretches the last bin to
    ``[(count−1)w+1, max_i o_i]`` (the bins are unchanged when nothing overflows).

    Parameters
    ----------
    instance : Instance or TimedInstance
    width, count : int
        Bin width ``w >= 1`` and number of bins ``>= 1``.
    overflow : {"error", "extend"}

    Returns
    -------
    Instance or TimedInstance
        The same type, name suffix ``" predictions=bins:width=…,count=…"`` (plus
        ``",overflow=extend"`` if set).

    Raises
    ------
    PredictionError
        An output above ``count·w`` with ``overflow="error"``; the message names the first
        such request, the count, and the remedies.
    ValueError
        Bad ``width``, ``count`` or ``overflow``.
    """
    width, count = _check_int(width, "width", 1), _check_int(count, "count", 1)
    if overflow not in ("error", "extend"):
        raise ValueError(f"overflow must be 'error' or 'extend', got {overflow!r}")
    top = width * count
    over = [(pos, r) for pos, r in enumerate(instance.requests) if r.output > top]
    last_upper = top
    if over and overflow == "error":
        pos, r = over[0]
        raise PredictionError(
            f"{_where(pos, r)}: field 'upper': output {r.output} is above the last bin "
            f"[{top - width + 1}, {top}] of {count} bins of width {width} ({len(over)} of {instance.n} requests "
            f"are); drop outputs above {top} (chen-lmsys: max_output), raise count, or pass overflow='extend' "
            "to stretch the last bin")
    if over:
        last_upper = max(r.output for _, r in over)
    bounds = []
    for r in instance.requests:
        k = min((r.output - 1) // width, count - 1)
        bounds.append((k * width + 1, last_upper if k == count - 1 else (k + 1) * width))
    spec = f"bins:width={width},count={count}" + (",overflow=extend" if overflow == "extend" else "")
    return _with_intervals(instance, bounds, spec, False)


def relative_bounds(center: Fraction, x: Fraction, rounding: str = "inward") -> tuple[int, int]:
    """Integer ends of the real interval ``[(1−x)·center, (1+x)·center]``, computed exactly.

    ``"inward"``: ``ℓ = max(1, ⌈(1−x)c⌉)``, ``u = max(ℓ, ⌊(1+x)c⌋)`` — the integers inside the
    real interval. ``"outward"``: ``ℓ = max(1, ⌊(1−x)c⌋)``, ``u = ⌈(1+x)c⌉``. For an integer
    ``c >= 1`` both contain ``c``. (``u`` is raised to ``ℓ`` only when the real interval holds
    no integer ``>= 1``, which happens only for a non-integer center.)
    """
    lo, hi = (1 - x) * center, (1 + x) * center
    if rounding == "inward":
        lower = max(1, math.ceil(lo))
        return lower, max(lower, math.floor(hi))
    if rounding == "outward":
        lower = max(1, math.floor(lo))
        return lower, max(lower, math.ceil(hi))
    raise ValueError(f"rounding must be 'inward' or 'outward', got {rounding!r}")


def relative_intervals(instance: InstanceT, x: float = 0.1, *, rounding: str = "inward") -> InstanceT:
    """Give request ``i`` the interval ``[(1−x)o_i, (1+x)o_i]`` rounded to integers (C §6 Experiment 3).

    C uses ``x ∈ {0.1, 0.95, 0.99}``; a smaller ``x`` is a more accurate prediction (DIGEST
    I-36). C's interval is real-valued. The default rounding is **inward** (DIGEST I-36):

    ``ℓ_i = max(1, ⌈(1−x)·o_i⌉)``, ``u_i = ⌊(1+x)·o_i⌋``.

    These are the integers inside C's real interval, so for integer output lengths they
    carry exactly C's information: a rule that compares a bound with an integer token
    count (A_max's ``u_i >= t' − p_i``, A_min's ``õ_i >= t' − p_i``) decides the same with
    the rounded and the real bound. Both contain ``o_i`` (``(1−x)o_i <= o_i <= (1+x)o_i``
    and ``o_i`` is an integer); e.g. ``x = 0.99, o = 1`` gives ``[1, 1]`` (C: ``[0.01,
    1.99]``), ``x = 0.1, o = 10`` gives ``[9, 11]``. ``rounding="outward"``
    (``ℓ_i = max(1, ⌊(1−x)o_i⌋)``, ``u_i = ⌈(1+x)o_i⌉``) widens each interval to the next
    integers instead (``x = 0.99, o = 1`` gives ``[1, 2]``).

    The arithmetic is exact: ``x`` is read as the decimal it prints as (``0.1`` is 1/10),
    so ``(1 − 0.1)·10`` is 9, not ``9.000000000000002``.

    The intervals leak information C's algorithms are not meant to have: ``u_i`` is
    (up to rounding) proportional to ``o_i``, so sorting by ``u_i`` sorts by ``o_i`` (DIGEST
    I-36); policies break ties at random.

    Parameters
    ----------
    instance : Instance or TimedInstance
    x : float
        Relative half-width, ``x >= 0`` (``x >= 1`` gives ``ℓ_i = 1``).
    rounding : {"inward", "outward"}

    Returns
    -------
    Instance or TimedInstance
        The same type, name suffix ``" predictions=relative:x=…"`` (plus
        ``",rounding=outward"`` if set).

    Raises
    ------
    ValueError
        Bad ``x`` or ``rounding``.
    """
    frac = _check_real(x, "x")
    if rounding not in ("inward", "outward"):
        raise ValueError(f"rounding must be 'inward' or 'outward', got {rounding!r}")
    bounds = [relative_bounds(Fraction(r.output), frac, rounding) for r in instance.requests]
    spec = f"relative:x={_number_text(frac)}" + (",rounding=outward" if rounding == "outward" else "")
    return _with_intervals(instance, bounds, spec, False)


def noisy_intervals(instance: InstanceT, sigma: float = 0.5, width: float = 0.5, seed: int = 0) -> InstanceT:
    """A seeded, imperfect predictor: a relative interval around a log-normally perturbed output.

    For robustness experiments (predictions that can be wrong). With ``rng =
    numpy.random.default_rng([seed, 31])`` and one standard normal ``Z_i`` per request in
    instance order, the point prediction is ``ô_i = o_i · exp(σ·Z_i)`` and the interval is
    :func:`relative_bounds` of ``ô_i`` with half-width ``width``, rounded inward:
    ``ℓ_i = max(1, ⌈(1−w)·ô_i⌉)``, ``u_i = max(ℓ_i, ⌊(1+w)·ô_i⌋)``. It misses ``o_i`` when
    the noise is large compared with ``width``; the instance gets
    ``predictions_may_miss=True`` whether or not any interval misses. With ``sigma = 0``
    the intervals are exactly those of :func:`relative_intervals` with ``x = width``.

    Parameters
    ----------
    instance : Instance or TimedInstance
    sigma : float
        Standard deviation of the log-ratio ``ln(ô_i / o_i)``, ``>= 0``.
    width : float
        Relative half-width of the interval around ``ô_i``, ``>= 0``.
    seed : int
        ``>= 0``; the same seed and instance give the same intervals.

    Returns
    -------
    Instance or TimedInstance
        The same type, ``predictions_may_miss=True``, name suffix
        ``" predictions=noisy:sigma=…,width=…,seed=…"``.

    Raises
    ------
    ValueError
        Bad ``sigma``, ``width`` or ``seed``.
    """
    sig, w = _check_real(sigma, "sigma"), _check_real(width, "width")
    seed = _check_int(seed, "seed", 0)
    rng = np.random.default_rng([seed, _NOISY_TAG])
    z = rng.standard_normal(instance.n)
    # the exponent is clipped so that a huge sigma cannot overflow to inf, and the point guess is
    # capped at M (no output exceeds M − s), so the bounds stay exact integers far below 2^53
    outputs = np.array([r.output for r in instance.requests], dtype=np.float64)
    centers = np.minimum(outputs * np.exp(np.minimum(float(sig) * z, 30.0)), float(instance.M))
    bounds = [relative_bounds(Fraction(float(c)), w) for c in centers]
    spec = f"noisy:sigma={_number_text(sig)},width={_number_text(w)},seed={seed}"
    return _with_intervals(instance, bounds, spec, True)


# --- summary ------------------------------------------------------------------------------------------


def prediction_summary(instance: Instance | TimedInstance) -> dict[str, Any]:
    """Coverage and sharpness of an instance's intervals.

    Returns
    -------
    dict
        ``with_interval`` (requests that have one), ``covered`` (of those, how many contain
        ``o_i``), ``mean_width`` (mean ``u_i − ℓ_i``), ``min_alpha`` (smallest ``ℓ_i / u_i``,
        C's ``α``), ``may_miss``. Means and ``min_alpha`` are ``None`` without intervals.
    """
    rows = [(r.lower, r.upper, r.output) for r in instance.requests if r.lower is not None and r.upper is not None]
    return {
        "with_interval": len(rows),
        "covered": sum(1 for lo, up, o in rows if lo <= o <= up),
        "mean_width": float(np.mean([up - lo for lo, up, _ in rows])) if rows else None,
        "min_alpha": min(lo / up for lo, up, _ in rows) if rows else None,
        "may_miss": instance.predictions_may_miss,
    }


# --- registry and spec strings ------------------------------------------------------------------------

#: Prediction generators by name: ``(instance, **params) -> instance`` (``seed`` passed when accepted).
PREDICTIONS: Registry[Callable[..., Any]] = Registry("prediction", "llmopt.predictions")
PREDICTIONS.register("none", "llmopt.workloads.predictions:clear_intervals", "no prediction intervals (removes any)")
PREDICTIONS.register("shared", "llmopt.workloads.predictions:shared_interval",
                     "one interval [lower, upper] for all (C Exp. 1: lower=1, upper=1000); may_miss=false")
PREDICTIONS.register("bins", "llmopt.workloads.predictions:bin_intervals",
                     "the bin of width w holding o (C Exp. 2: width=100, count=10); overflow=error|extend")
PREDICTIONS.register("relative", "llmopt.workloads.predictions:relative_intervals",
                     "[(1-x)o, (1+x)o] rounded inward (C Exp. 3: x in 0.1, 0.95, 0.99); rounding=inward|outward")
PREDICTIONS.register("noisy", "llmopt.workloads.predictions:noisy_intervals",
                     "relative interval (half-width width) around o·exp(sigma·Z), seeded; may miss")


def apply_prediction_spec(instance: InstanceT, spec: str, seed: int = 0) -> InstanceT:
    """Apply the prediction generator named by a spec string, e.g. ``"bins:width=100,count=10"``.

    The syntax is :func:`llmopt.model.registry.parse_spec`'s: ``"name"`` or
    ``"name:key=value,…"``, values read as JSON scalars. ``seed`` is passed to a generator
    that accepts a ``seed`` parameter and whose spec does not set one.

    Parameters
    ----------
    instance : Instance or TimedInstance
    spec : str
        ``"none"``, ``"shared:lower=1,upper=1000"``, ``"bins:width=100,count=10"``,
        ``"relative:x=0.95"``, ``"noisy:sigma=0.5,width=0.5"`` or a registered plug-in.
    seed : int

    Returns
    -------
    Instance or TimedInstance
        The same type as ``instance``.

    Raises
    ------
    llmopt.model.registry.RegistryError
        Unknown generator name (the message lists the known ones).
    ValueError
        A malformed spec, or a parameter the generator does not have (the message lists
        its parameters), or a bad parameter value.
    PredictionError
        The setting does not fit the instance (see the generators).
    """
    if not isinstance(spec, str):
        raise ValueError(f"prediction spec must be a string such as 'bins:width=100,count=10', got {spec!r}")
    name, params = parse_spec(spec, "prediction spec")
    generator = PREDICTIONS.get(name)
    try:
        signature: inspect.Signature | None = inspect.signature(generator)
    except (TypeError, ValueError):  # a callable without a signature: pass what the spec says
        signature = None
    if signature is not None:
        if "seed" in signature.parameters and "seed" not in params:
            params["seed"] = seed
        try:
            signature.bind(instance, **params)
        except TypeError:
            known = list(signature.parameters)[1:]
            raise ValueError(f"prediction spec {spec!r}: {name!r} takes the parameters {', '.join(known) or 'none'}, "
                             f"got {', '.join(sorted(params)) or 'none'}") from None
    return generator(instance, **params)  # type: ignore[no-any-return]
