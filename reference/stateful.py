"""Buffer (MasterOpDef 810-956): frames accumulated across executions of one graph.

One case of Buffer is a sequence of executions. ``buffer_sequence`` is the reference for such a
sequence (a list of input lists in, a list of outputs out, the buffer carried between them); the
registered form is the first execution of a fresh graph, all that a one-execution case can check.

An execution whose output the spec does not define - BLOCKING mode while the buffer is not full,
where "execution is stopped on the existing branch" - returns an all-NaN output: NaN is the
reference's mark for "no expected value" (as for ExtractGlimpse's noise), and ``blocked`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reference import member, register, register_sequence, resolved

BLOCKING, NON_BLOCKING_LEFT, NON_BLOCKING_RIGHT = "BLOCKING", "NON_BLOCKING_LEFT", "NON_BLOCKING_RIGHT"  # mode members


@dataclass
class BufferConfig:
    size: int
    dim: int
    stride: int
    mode: str
    padding: int

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> BufferConfig:
        cfg = cls(int(params["buffer_size"]), int(params["buffer_dim"]), int(params.get("stride", 1)),
                  member("Buffer", resolved("Buffer", params, []), "mode"),
                  int(params.get("buffer_padding", 0)))  # fmt: skip
        if not 0 <= cfg.padding <= cfg.size:
            raise ValueError(f"buffer_padding {cfg.padding} frames do not fit a buffer of {cfg.size}")
        return cfg

    def check_input(self, x: np.ndarray) -> int:
        if not 0 <= self.dim < x.ndim:
            raise ValueError(f"buffer_dim {self.dim} outside [0, {x.ndim - 1}]")
        f = x.shape[self.dim]
        if self.size % f:
            raise ValueError(f"buffer_size {self.size} is not a multiple of the {f} frames per input")
        if not (f <= self.stride <= self.size and self.stride % f == 0):
            raise ValueError(f"stride {self.stride} must be a multiple of {f} in [{f}, {self.size}]")
        return f


def blocked(output: np.ndarray) -> bool:
    """Whether an output of ``buffer_sequence`` stands for a BLOCKING execution that produced nothing."""
    return bool(np.isnan(output).all())


def _frames(x: np.ndarray, dim: int, n: int) -> np.ndarray:
    shape = list(x.shape)
    shape[dim] = n
    return np.zeros(shape)


def buffer_sequence(executions: list[list[np.ndarray | None]], params: dict[str, Any]) -> list[np.ndarray]:
    """Outputs of consecutive executions of one Buffer; each execution's inputs are [frames, reset?]."""
    cfg = BufferConfig.from_params(params)
    held: np.ndarray | None = None
    outputs = []
    for ins in executions:
        x = np.asarray(ins[0], dtype=np.float64)
        f = cfg.check_input(x)
        reset = len(ins) > 1 and ins[1] is not None and bool(np.asarray(ins[1]).reshape(-1)[0])
        if held is None or reset:
            held = _frames(x, cfg.dim, cfg.padding)  # "pad with 0's ... initially or after reset" (931)
        while held.shape[cfg.dim] + f > cfg.size:  # full: evict the oldest `stride` frames first
            held = np.delete(held, np.s_[: cfg.stride], axis=cfg.dim)
        held = np.concatenate([held, x], axis=cfg.dim)
        count = held.shape[cfg.dim]
        empty = _frames(x, cfg.dim, cfg.size - count)
        if count == cfg.size:
            outputs.append(held.copy())
        elif cfg.mode == BLOCKING:
            outputs.append(np.full(_frames(x, cfg.dim, cfg.size).shape, np.nan))
        elif cfg.mode == NON_BLOCKING_LEFT:
            outputs.append(np.concatenate([held, empty], axis=cfg.dim))
        else:
            outputs.append(np.concatenate([empty, held], axis=cfg.dim))
    return outputs


@register("Buffer", verified_by="hand")
def buffer(inputs, params, out_shapes, out_dtypes, *, op):
    return buffer_sequence([list(inputs)], params)


@register_sequence("Buffer")
def buffer_executions(executions, params, out_shapes, out_dtypes, *, op):
    return [[o] for o in buffer_sequence(executions, params)]
