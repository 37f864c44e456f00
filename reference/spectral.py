"""Spectral ops: Stft (seed lines 12331-12423), the ONNX STFT of a real signal.

The DFT is the direct sum over the frame with angles reduced modulo the frame length before the
cosine/sine, so the float64 result does not depend on an FFT's factorisation; the tests compare it
with onnxruntime's STFT and with scipy's FFT-based stft.
"""

from __future__ import annotations

import numpy as np

from reference import register
from reference.datamovement import int_param, param
from reference.resampling import flag


def dft_matrix(n_fft: int, bins: int) -> np.ndarray:
    """[bins, n_fft] complex: exp(-2 pi i k n / n_fft)."""
    kn = (np.arange(bins)[:, None] * np.arange(n_fft)[None, :]) % n_fft
    angle = 2 * np.pi * kn / n_fft
    return np.cos(angle) - 1j * np.sin(angle)


@register("Stft", verified_by="onnxruntime")
def stft(inputs, params, out_shapes, out_dtypes, *, op):
    x = np.asarray(inputs[0], dtype=np.float64)
    if x.ndim != 3 or x.shape[2] != 1:
        raise ValueError(f"Stft takes a real signal [batch, signal_length, 1], got shape {x.shape}")
    window = inputs[1] if len(inputs) > 1 else None
    signal_length = x.shape[1]
    step = int_param(params, "frame_step")
    if step <= 0:
        raise ValueError(f"frame_step {step} must be > 0")
    # frame_length defaults to window_size when a window is given, else to signal_length (12387)
    fl = param(params, "frame_length")
    if fl is not None:
        n_fft = int(np.asarray(fl).reshape(()))
    else:
        n_fft = np.asarray(window).size if window is not None else signal_length
    if not 1 <= n_fft <= signal_length:
        raise ValueError(f"frame_length {n_fft} must be in [1, signal_length={signal_length}]")
    if window is None:
        w = np.ones(n_fft)
    else:
        w = np.asarray(window, dtype=np.float64).reshape(-1)
        if w.size != n_fft:
            raise ValueError(f"window size {w.size} must equal frame_length {n_fft}")
    frames = (signal_length - n_fft) // step + 1
    # onesided keeps n_fft // 2 + 1 bins, the stated output shape (12417), not the inclusive range (12397)
    bins = n_fft // 2 + 1 if flag(params, "onesided") else n_fft
    starts = np.arange(frames) * step
    framed = x[:, starts[:, None] + np.arange(n_fft)[None, :], 0] * w  # [batch, frames, n_fft]
    spec = framed @ dft_matrix(n_fft, bins).T  # [batch, frames, bins]
    return [np.stack([spec.real, spec.imag], axis=-1)]
