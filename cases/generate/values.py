"""Tensor contents: value regimes, encodings (per tensor, per axis, symmetric weights) and curated values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume

from cases.case import Encoding, Param, Tensor, encoding_for_range
from cases.generate.configurations import Config, _first_index
from cases.generate.evaluate import _curation_tables, _eval_dim
from cases.quant import code_range, quantize
from opdefs import OpDef, TensorSpec, dtypes, expr


def random_encoding(rng: np.random.Generator, dtype: str, lo: float = -4.0, hi: float = 4.0) -> Encoding:
    """Scale/offset with zero representable and the grid covering about [lo, hi]."""
    d = dtypes.get(dtype)
    span = (hi - lo) * float(rng.uniform(0.6, 1.4))
    scale = float(np.float32(max(span, 1e-3) / (d.qmax - d.qmin)))
    zero_point = int(round(d.qmin - lo / scale)) if lo < 0 else d.qmin
    zero_point = int(np.clip(zero_point + int(rng.integers(-2, 3)), d.qmin, d.qmax))
    return Encoding((scale,), (-zero_point,))


def encoding_covering(values: np.ndarray, dtype: str) -> Encoding:
    """The grid for the finite values given (an empty set calibrates to [-1, 1])."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    lo = float(finite.min()) if finite.size else -1.0
    hi = float(finite.max()) if finite.size else 1.0
    return encoding_for_range(lo, hi, dtype)


def _share_encoding(inputs: list[Tensor | None]) -> None:
    """Typical data movement with several value inputs (Concat, Pack, ScatterElements' data and
    updates): one grid for all of them, as converters align the encodings around such ops. Whether a
    backend requantizes inputs of different grids is a reading the spec never settles."""
    first = inputs[0] if inputs else None
    if first is None or first.encoding is None or first.encoding.per_axis:
        return
    for t in inputs[1:]:
        if t is not None and t.dtype == first.dtype and t.encoding is not None and not t.encoding.per_axis:
            t.encoding = first.encoding


# Value regimes. The typical tier draws what real activations look like; the edge tier adds values near
# zero, large magnitudes and IEEE specials (+-0, +-inf, NaN, subnormals, the largest finite value).
TYPICAL_REGIMES = ("ordinary", "integer_valued")


EDGE_REGIMES = ("ordinary", "near_zero", "large", "integer_valued", "special")




def _special_values(dtype: str) -> np.ndarray:
    fi = np.finfo(dtypes.get(dtype).storage)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
                     float(fi.max), -float(fi.max), 1.0, -1.0])  # fmt: skip


def float_values(rng: np.random.Generator, shape: tuple[int, ...], regime: str, dtype: str) -> np.ndarray:
    if regime == "special":
        v = rng.normal(0, 1.0, shape)
        mask = rng.random(shape) < 0.5
        v[mask] = rng.choice(_special_values(dtype), size=int(mask.sum()))
        with np.errstate(over="ignore"):
            return v.astype(dtypes.get(dtype).storage)
    if regime == "near_zero":
        v = rng.normal(0, 1e-3, shape)
    elif regime == "large":
        v = rng.normal(0, 100.0 if dtype != "FLOAT_16" else 30.0, shape)
    elif regime == "integer_valued":
        v = rng.integers(-5, 6, shape).astype(np.float64)
    else:
        v = rng.normal(0, 1.0, shape)
    return v.astype(dtypes.get(dtype).storage)


def _value_curation(decl: TensorSpec, params: dict[str, Param], op: OpDef) -> dict[str, Any]:
    """The tensor's ``values`` curation, with the entry for the drawn member of an enum parameter merged in:
    ``by_operation`` for ``operation`` (ElementWiseUnary's LOG needs positive inputs, its ABS does not),
    ``by_param`` for any other (MaskedSoftmax's COMPRESSED mask holds whole sequence lengths)."""
    values = {k: v for k, v in decl.values.items() if k not in ("by_param", "by_operation")}
    for name, table in _curation_tables(decl.values).items():
        if name in params and table:
            members = {v: k for k, v in op.param_specs[name].members.items()}
            values.update(table.get(members.get(int(params[name].value)), {}))
    return values


def _axis_of(decl: TensorSpec, config: Config) -> int | None:
    """The quantization axis of a tensor the configuration quantizes per axis (``per_axis(k)``)."""
    if decl.name not in config.per_axis:
        return None
    for q in decl.quantization:
        m = re.fullmatch(r"per_axis\((\d+)\)", q)
        if m:
            return int(m.group(1))
    raise ValueError(f"{decl.name} is per axis in a configuration but declares no per_axis(k) quantization")


def _encoding_source(decl: TensorSpec, inputs: list[Tensor | None], typical: bool) -> tuple[Tensor, Tensor] | None:
    """For a bias in the typical tier: the two quantized inputs whose scales multiply into its scale."""
    refs = decl.encoding_from
    if not (typical and refs):
        return None
    ts = [inputs[_first_index(r)] if _first_index(r) < len(inputs) else None for r in refs]
    if any(t is None or t.encoding is None for t in ts):
        return None
    return ts[0], ts[1]


def is_weight(decl: TensorSpec) -> bool:
    """Whether a declared input is one a converter quantizes as a weight (filters, gamma, beta, a scale): a
    static input other than in[0] that is not a bias scaled from other tensors (``encoding_from``)."""
    if decl.role in ("weights", "bias"):  # a dynamic operand converters quantize as a weight (MatMul's B),
        return decl.role == "weights"  # or a static input they quantize as a bias (a normalisation's beta)
    return decl.given_static and not decl.name.startswith("in[0]") and not decl.encoding_from


def _per_axis_encoding(rng: np.random.Generator, dtype: str, channels: int, axis: int,
                       bits: int | None = None) -> Encoding:  # fmt: skip
    """Symmetric per-channel scales (offset 0 for signed types), each channel its own range, as a
    converter calibrates weights channel by channel."""
    d = dtypes.get(dtype)
    qmin, qmax = code_range(dtype, bits)
    span = rng.uniform(0.25, 4.0, channels)
    if d.kind == "sfixed":
        scales = tuple(float(np.float32(x / qmax)) for x in span)
        return Encoding(scales, (0,) * channels, axis, bits)
    scales = tuple(float(np.float32(2 * x / (qmax - qmin))) for x in span)
    return Encoding(scales, (-((qmax + 1) // 2),) * channels, axis, bits)


def symmetric_encoding(rng: np.random.Generator, dtype: str, bits: int | None = None) -> Encoding:
    """A signed weight's per-tensor grid as converters calibrate it: symmetric about zero, offset 0."""
    _, qmax = code_range(dtype, bits)
    return Encoding((float(np.float32(rng.uniform(0.5, 4.0) / qmax)),), (0,), None, bits)


def _product_encoding(x: Tensor, w: Tensor, channels: int) -> Encoding:
    """A bias encoding as converters build it: scale = input scale x weight scale (per output
    channel when the weights are per axis), offset 0, so the bias adds straight into the accumulator."""
    s_in = x.encoding.scales[0]
    if w.encoding.per_axis and len(w.encoding.scales) == channels:
        return Encoding(tuple(float(np.float32(s_in * s)) for s in w.encoding.scales), (0,) * channels, 0)
    return Encoding((float(np.float32(s_in * w.encoding.scales[0])),), (0,))


def _special_codes(rng: np.random.Generator, d: dtypes.QnnDtype, enc: Encoding, shape: tuple[int, ...]) -> np.ndarray:
    """Codes heavy on the grid's ends and its zero point: saturation and zero handling."""
    codes = rng.integers(d.qmin, d.qmax + 1, shape)
    mask = rng.random(shape) < 0.5
    zero = int(np.clip(-enc.offsets[0], d.qmin, d.qmax))
    codes[mask] = rng.choice([d.qmin, d.qmin + 1, zero, d.qmax - 1, d.qmax], size=int(mask.sum()))
    return codes


@dataclass(frozen=True)
class TensorDraw:
    """What the spec and the configuration say about one input tensor's values, fixed before its shape is drawn:
    its name (``in[2]``), datatype, the spec's ``values:`` block, the tier, the quantization axis, the encodings a
    bias's scale is the product of, the bit width of a bit-width encoding, and whether it is a weight or a bias
    (converters quantize those symmetrically). ``regime``: the case's value regime (``special``: corner values)."""

    ref: str
    dtype: str
    values: dict[str, Any]
    regime: str
    typical: bool = False
    axis: int | None = None
    product: Any = None
    bits: int | None = None
    weight: bool = False


def _tensor_with_data(rng: np.random.Generator, what: TensorDraw, shape: tuple[int, ...],
                      shapes: dict[str, tuple[int, ...]], env: dict[str, Any]) -> Tensor:
    """The tensor ``what`` describes, of ``shape``, its values drawn; ``shapes`` are the case's tensors drawn so far
    and ``env`` its parameters (a ``values:`` formula reads them)."""
    ref, dtype, values, regime, typical = what.ref, what.dtype, what.values, what.regime, what.typical
    axis, product, bits, weight = what.axis, what.product, what.bits, what.weight
    d = dtypes.get(dtype)
    if "product" in values and len(shape) == 1:  # a shape for the op to take: whole numbers multiplying out
        n_in = 1 + max((_first_index(k) for k in shapes if k.startswith("in[")), default=-1)
        ins = [expr.TensorInfo(shapes[f"in[{i}]"], "") if f"in[{i}]" in shapes else
               expr.TensorInfo((), "", present=False) for i in range(n_in)]  # fmt: skip
        total = _eval_dim(values["product"], {**env, "_in": ins})
        return Tensor(ref, dtype, shape, _factorisation(rng, total or 1, shape[0], typical).astype(d.storage))
    if "sum" in values and shape:  # rows of whole numbers adding up (MaskedSoftmax's sequence lengths fill channel)
        total = _eval_dim(values["sum"], env)
        assume(total is not None and total >= shape[-1] >= 1)  # every part at least 1
        parts = np.stack([_composition(rng, total, shape[-1]) for _ in range(int(np.prod(shape[:-1])))])
        parts = parts.reshape(shape)
        if d.quantized:  # the grid of whole numbers: code k is k
            assume(total <= d.qmax)
            return Tensor(ref, dtype, shape, parts.astype(d.storage), Encoding((1.0,), (0,)))
        return Tensor(ref, dtype, shape, parts.astype(d.storage))
    if "range" in values:  # a hard requirement of the op (indices, box corners): both tiers
        t = _tensor_in_range(rng, ref, dtype, shape, values, env)
        if values.get("corners") and shape and shape[-1] == 4:  # both tiers: a reversed box is no box the spec names
            _ordered_corners(t)
        return t
    domain = values.get("domain")
    if domain is not None and (typical or rng.random() < 0.5):  # the edge tier also goes outside
        t = _tensor_in_range(rng, ref, dtype, shape, {"range": domain}, env)
    elif d.quantized:
        if product is not None and len(shape) == 1:
            enc = _product_encoding(*product, shape[0])
            data = quantize(rng.normal(0.0, 1.0, shape), enc, dtype)
        elif axis is not None and axis < len(shape):
            enc = _per_axis_encoding(rng, dtype, shape[axis], axis, bits)
            qmin, qmax = code_range(dtype, bits)
            data = rng.integers(qmin, qmax + 1, shape).astype(d.storage)
        elif bits or (typical and weight and d.kind == "sfixed" and regime != "special"):
            # a signed weight (or a bias no product of scales gives) in the typical tier is symmetric (offset 0),
            # as converters quantize them; a bit-width encoding's values stay inside its narrower range
            enc = symmetric_encoding(rng, dtype, bits) if d.kind == "sfixed" else random_encoding(rng, dtype)
            if bits and d.kind != "sfixed":
                qmin, qmax = code_range(dtype, bits)
                enc = Encoding((float(np.float32(8.0 / (qmax - qmin))),), (-((qmax + 1) // 2),), None, bits)
            qmin, qmax = code_range(dtype, bits)
            data = rng.integers(qmin, qmax + 1, shape).astype(d.storage)
        else:
            enc = random_encoding(rng, dtype)
            special = regime == "special"
            codes = _special_codes(rng, d, enc, shape) if special else rng.integers(d.qmin, d.qmax + 1, shape)
            data = codes.astype(d.storage)
        t = Tensor(ref, dtype, shape, data, enc)
    elif d.kind == "float":
        t = Tensor(ref, dtype, shape, float_values(rng, shape, regime, dtype))
    elif d.kind == "bool":
        t = Tensor(ref, dtype, shape, rng.integers(0, 2, shape).astype(bool))
    else:
        # integer tensors are mostly indices: keep them inside the smallest dim of the first input
        first = shapes.get("in[0]", (4,))
        hi = max(1, min(first) if first else 1)
        size = int(np.prod(shape, dtype=np.int64))
        if values.get("unique") and (size <= hi or not typical):  # a check says unique(values(t)): distinct
            # indices; in the edge tier past that dim when there are more (an index out of range is an edge case)
            t = Tensor(ref, dtype, shape, rng.permutation(max(hi, size))[:size].reshape(shape).astype(d.storage))
        else:
            t = Tensor(ref, dtype, shape, rng.integers(0, hi, shape).astype(d.storage))
    if typical and values.get("nonzero"):
        _away_from_zero(t)
    return t


def _ordered_corners(t: Tensor) -> None:
    """Boxes whose first corner is the upper-left one and the second the bottom-right one, as a spec that names them
    so reads (RoiAlign 11394): each pair of coordinates sorted. Codes sort as their real values do (scale > 0)."""
    boxes = t.data.reshape(-1, 4)
    first, second = np.minimum(boxes[:, :2], boxes[:, 2:]), np.maximum(boxes[:, :2], boxes[:, 2:])
    t.data[...] = np.concatenate([first, second], axis=1).reshape(t.data.shape)


def _composition(rng: np.random.Generator, total: int, n: int) -> np.ndarray:
    """``n`` positive whole numbers adding up to ``total`` (``total >= n``), each split equally likely."""
    cuts = np.sort(rng.choice(np.arange(1, total), size=n - 1, replace=False)) if n > 1 else np.array([], int)
    return np.diff(np.concatenate([[0], cuts, [total]])).astype(np.int64)


def _factorisation(rng: np.random.Generator, total: int, n: int, typical: bool) -> np.ndarray:
    """``n`` positive whole numbers whose product is ``total``: its prime factors dealt out at random
    (in the typical tier, to empty places first, so a size-1 axis appears only when the primes run out)."""
    primes, x, p = [], total, 2
    while x > 1 and p * p <= x:
        while x % p == 0:
            primes.append(p)
            x //= p
        p += 1
    if x > 1:
        primes.append(x)
    out = np.ones(n, dtype=np.int64)
    order = rng.permutation(len(primes))
    empty = list(rng.permutation(n))
    for k in order:
        slot = empty.pop() if typical and empty else int(rng.integers(0, n))
        out[slot] *= primes[k]
    return out


def _away_from_zero(t: Tensor) -> None:
    """Divisors in the typical tier: no zero (x/0 is an edge case whose result the spec leaves open
    for integer and fixed-point types)."""
    d = dtypes.get(t.dtype)
    if d.quantized:
        zero = -t.encoding.offsets[0]
        step = 1 if zero < d.qmax else -1
        t.data[t.data == zero] = zero + step
    elif d.kind == "float":
        small = np.abs(t.data.astype(np.float64)) < 0.25
        t.data[small] = np.where(t.data[small] < 0, -0.25, 0.25).astype(t.data.dtype)
    elif d.kind in ("int", "uint"):
        t.data[t.data == 0] = 1


def _tensor_in_range(rng, ref, dtype, shape, gen: dict, env: dict) -> Tensor:
    """A curated ``values: {range: [lo, hi], integer: bool}`` (bounds may name dims and params):
    uniform reals, or whole numbers for integer types; quantized types get an encoding covering it
    and codes whose real values stay inside ``[lo, hi]`` (a domain's edge must not round outside it)."""
    d = dtypes.get(dtype)
    lo, hi = (float(np.asarray(expr.parse(str(x)).evaluate(env))) for x in gen["range"])
    if gen.get("integer") or d.kind in ("int", "uint"):
        real = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, shape).astype(np.float64)
    else:
        real = rng.uniform(lo, hi, shape)
    if not d.quantized:
        return Tensor(ref, dtype, shape, real.astype(d.storage))
    enc = encoding_covering(np.array([lo, hi]), dtype)
    scale, offset = enc.scales[0], enc.offsets[0]
    q_lo = max(d.qmin, int(np.ceil(lo / scale - offset - 1e-9)))
    q_hi = min(d.qmax, int(np.floor(hi / scale - offset + 1e-9)))
    codes = np.clip(quantize(real, enc, dtype), q_lo, max(q_lo, q_hi))
    return Tensor(ref, dtype, shape, codes.astype(d.storage), enc)
