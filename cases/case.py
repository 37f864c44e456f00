"""The Case: one fully concrete op invocation, the unit every later room consumes.

A case holds stored values, not real values: a fixed-point tensor carries its integer codes and its
encoding, exactly what a backend receives. The real (dequantized) view is the reference's job.
Saving writes ``<stem>.json`` (everything but arrays) beside ``<stem>.npz`` (the arrays) so a
failing case can be read by a person and replayed bit-exactly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cases.quant import Encoding, encoding_for_range  # noqa: F401  (re-exported: a case's tensors carry one)
from opdefs import dtypes

# A case's tier: how converters use the op (the verdict a cell gets) or the corners beside it. Defined here, the
# lowest room that has cases; the records, the reports and the run read the same two names.
TYPICAL, EDGE = "typical", "edge"
TIERS = (TYPICAL, EDGE)
# the layer shapes of public models an op's spec lists (``generate.model_layers``): typical in every other respect
MODEL = "model"


@dataclass
class Tensor:
    """An input or output tensor of a case. Outputs carry no data: shape/dtype/encoding are what
    the case declares the backend must produce (QNN reads some op semantics from them)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    data: np.ndarray | None = None
    encoding: Encoding | None = None
    static: bool = False  # a STATIC (constant) tensor, e.g. weights or a tensor parameter

    def __post_init__(self) -> None:
        self.shape = tuple(int(s) for s in self.shape)
        if self.data is not None:
            storage = dtypes.get(self.dtype).storage
            if storage is not None and self.data.dtype != storage:
                raise TypeError(f"{self.name}: data is {self.data.dtype}, {self.dtype} is stored as {storage}")
            if tuple(self.data.shape) != self.shape:
                raise ValueError(f"{self.name}: data shape {self.data.shape} != declared {self.shape}")


@dataclass
class Param:
    """A parameter value with its QNN datatype; tensor-shaped params (Transpose perm, Conv2d
    stride) are ``np.ndarray``, scalars are Python numbers/bools."""

    name: str
    dtype: str
    value: Any

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.value, np.ndarray)


@dataclass
class Case:
    op: str
    inputs: list[Tensor | None]  # None: an optional input left out
    params: dict[str, Param]
    outputs: list[Tensor]
    config: str = ""  # datatype configuration label, e.g. "UFIXED_POINT_8"
    seed: int | None = None
    strategy: str = ""
    broken: str | None = None  # for negative cases: the constraint this case violates
    decisions: list[str] = field(default_factory=list)  # spec readings the expectation depends on
    tier: str = ""  # "typical" (how converters use the op) or "edge" (corner cases); "" for hand-made cases
    # Further executions of the same graph, for ops whose outputs depend on earlier executions (Buffer,
    # Lstm, Gru): per step, one entry per input position holding that execution's stored data (same shape,
    # dtype and encoding), None where the input keeps execution 0's data (always for static and absent
    # inputs). Execution 0 is ``inputs`` itself.
    steps: list[list[np.ndarray | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for k, step in enumerate(self.steps):
            if len(step) != len(self.inputs):
                raise ValueError(f"step {k + 1}: {len(step)} inputs, the case has {len(self.inputs)}")
            for i, (t, a) in enumerate(zip(self.inputs, step, strict=True)):
                if a is None:
                    continue
                if t is None or t.static:
                    what = "absent" if t is None else "static"
                    raise ValueError(f"step {k + 1}: in[{i}] is {what}, it takes no data")
                replace(t, data=a)  # the Tensor checks shape and storage type

    @property
    def executions(self) -> int:
        """How many times the graph is executed: 1 + the further steps."""
        return 1 + len(self.steps)

    @property
    def outputs_per_execution(self) -> list[Tensor]:
        """The declared outputs once per execution: the layout of an Outcome's outputs and of the reference's."""
        return self.outputs * self.executions

    def step_inputs(self, k: int) -> list[Tensor | None]:
        """The inputs of execution ``k`` (0 is ``inputs``): same tensors, that step's data."""
        if k == 0:
            return self.inputs
        return [t if a is None else replace(t, data=a) for t, a in zip(self.inputs, self.steps[k - 1], strict=True)]

    # ---- identity ---------------------------------------------------------------------------
    @property
    def negative(self) -> bool:
        return self.broken is not None

    def case_id(self) -> str:
        """A content hash of what the backend receives: op, configuration, tensors (type, shape,
        encoding, staticness, bytes) and params. Two draws that build the same case get the same id, so
        a cell counts each distinct case once, and ``--resume`` can tell what already ran. The seed,
        strategy and tier are bookkeeping, not content, and are left out."""
        meta = self.to_json()
        for key in ("seed", "strategy", "tier", "decisions"):
            meta.pop(key, None)
        h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
        for key, arr in sorted(self.arrays().items()):
            a = np.ascontiguousarray(_to_savable(arr))
            h.update(f"{key}:{a.dtype.str}:{a.shape}".encode())
            h.update(a.tobytes())
        return h.hexdigest()[:16]

    def signature(self) -> dict[str, Any]:
        """What a capability table keys on beyond the datatypes: each present tensor's rank, and the integer and
        boolean scalar parameters (enum members, flags, counts). Float parameters and data are left out."""
        tensors = [t for t in [*self.inputs, *self.outputs] if t is not None]
        params = {}
        for k, p in self.params.items():
            v = p.value
            if not p.is_tensor and isinstance(v, bool | int | np.integer | np.bool_) and not isinstance(v, float):
                params[k] = bool(v) if isinstance(v, bool | np.bool_) else int(v)
        return {"ranks": {t.name: len(t.shape) for t in tensors}, "params": params}

    def describe(self) -> str:
        ins = ", ".join("-" if t is None else f"{t.dtype}{list(t.shape)}" for t in self.inputs)
        outs = ", ".join(f"{t.dtype}{list(t.shape)}" for t in self.outputs)
        ps = ", ".join(f"{k}={_param_text(p.value)}" for k, p in self.params.items())
        runs = f" x {self.executions} executions" if self.steps else ""
        return f"{self.op}({ins}; {ps}) -> {outs}{runs}"

    # ---- persistence ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        def tensor(t: Tensor | None, key: str) -> dict[str, Any] | None:
            if t is None:
                return None
            return {
                "name": t.name,
                "dtype": t.dtype,
                "shape": list(t.shape),
                "encoding": None if t.encoding is None else t.encoding.to_json(),
                "static": t.static,
                "data": key if t.data is not None else None,
            }

        meta = {
            "format": 1,
            "op": self.op,
            "config": self.config,
            "seed": self.seed,
            "strategy": self.strategy,
            "broken": self.broken,
            "decisions": list(self.decisions),
            "tier": self.tier,
            "inputs": [tensor(t, f"in{i}") for i, t in enumerate(self.inputs)],
            "outputs": [tensor(t, f"out{i}") for i, t in enumerate(self.outputs)],
            "params": {
                k: {"dtype": p.dtype, "value": f"param:{k}" if p.is_tensor else _jsonable(p.value)}
                for k, p in self.params.items()
            },
        }
        if self.steps:  # absent for one-execution cases, so their JSON and case_id stay as they were
            meta["steps"] = [[None if a is None else f"step{k + 1}:in{i}" for i, a in enumerate(step)]
                             for k, step in enumerate(self.steps)]  # fmt: skip
        return meta

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i, t in enumerate(self.inputs):
            if t is not None and t.data is not None:
                out[f"in{i}"] = t.data
        for i, t in enumerate(self.outputs):
            if t.data is not None:
                out[f"out{i}"] = t.data
        for k, p in self.params.items():
            if p.is_tensor:
                out[f"param:{k}"] = p.value
        for k, step in enumerate(self.steps):
            for i, a in enumerate(step):
                if a is not None:
                    out[f"step{k + 1}:in{i}"] = a
        return out

    def save(self, path: str | Path) -> Path:
        """Write ``path`` (.json) and its .npz sibling; returns the JSON path."""
        path = Path(path).with_suffix(".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        # bfloat16 and friends are not npz-native: store their raw bits and the dtype in JSON.
        arrays = {k: _to_savable(v) for k, v in self.arrays().items()}
        np.savez(path.with_suffix(".npz"), **arrays)
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Case:
        path = Path(path).with_suffix(".json")
        meta = json.loads(path.read_text())
        with np.load(path.with_suffix(".npz"), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        return cls.from_saved(meta, arrays)

    @classmethod
    def from_saved(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Case:
        """The case ``to_json()`` and ``arrays()`` describe, the arrays as saved (``_to_savable``)."""

        def tensor(d: dict[str, Any] | None) -> Tensor | None:
            if d is None:
                return None
            data = None
            if d["data"] is not None:
                data = _from_saved(arrays[d["data"]], d["dtype"])
            enc = Encoding.from_json(d["encoding"])
            return Tensor(d["name"], d["dtype"], tuple(d["shape"]), data, enc, d["static"])

        params = {}
        for k, p in meta["params"].items():
            v = p["value"]
            if isinstance(v, str) and v == f"param:{k}":
                v = _from_saved(arrays[v], p["dtype"])
            params[k] = Param(k, p["dtype"], v)
        inputs = [tensor(t) for t in meta["inputs"]]
        steps = [[None if key is None else _from_saved(arrays[key], inputs[i].dtype) for i, key in enumerate(step)]
                 for step in meta.get("steps", [])]  # fmt: skip
        return cls(
            op=meta["op"],
            inputs=inputs,
            params=params,
            outputs=[tensor(t) for t in meta["outputs"]],
            config=meta["config"],
            seed=meta["seed"],
            strategy=meta["strategy"],
            broken=meta["broken"],
            decisions=meta.get("decisions", []),
            tier=meta.get("tier", ""),
            steps=steps,
        )


def _to_savable(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        return a.view(np.uint16)
    return a


def _from_saved(a: np.ndarray, qnn_dtype: str) -> np.ndarray:
    storage = dtypes.get(qnn_dtype).storage
    if storage is not None and a.dtype != storage:
        return a.view(storage)
    return a


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _param_text(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return str(v.tolist())
    return repr(v)
