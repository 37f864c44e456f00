"""Spectral ops: Stft (seed lines 12331-12423), the ONNX STFT of a real signal.

The DFT is the direct sum over the frame with angles reduced modulo the frame length before the
cosine/sine, so the float64 result does not depend on an FFT's factorisation; the tests compare it
with onnxruntime's STFT and with scipy's FFT-based stft.

At IEEE special inputs (the edge tier's NaN and infinities) the real and imaginary parts are two real sums, each
product taken once: a complex matrix product mixes the parts (numpy's gave NaN for the real part of a frame holding
+inf, where numpy's rfft, onnxruntime's STFT and the HTP give +inf). The twiddles at quarter turns are exact (cos and
sin 0 or +-1), so a special meeting a twiddle that is 0 (the imaginary part of bin 0 and of bin n_fft / 2, a quarter
turn's cosine) gives 0 x inf or 0 x NaN = NaN: implementations give 0 there (numpy's rfft, which never multiplies by
it), NaN (onnxruntime) or an infinity (a rounded twiddle), the spec says nothing, and the op's tolerance reads the NaN
as any value (opdefs/Stft.yaml, decision "specials in a frame").
"""

from __future__ import annotations

import numpy as np

from reference import register
from reference.datamovement import int_param, param
from reference.resampling import flag


def dft_cos_sin(n_fft: int, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """[bins, n_fft] cos and sin of 2 pi k n / n_fft, exact (0, +-1) at quarter turns."""
    kn = (np.arange(bins)[:, None] * np.arange(n_fft)[None, :]) % n_fft
    angle = 2 * np.pi * kn / n_fft
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * kn) % n_fft == 0
    q = (4 * kn // n_fft) % 4
    cos[quarter] = np.array([1.0, 0.0, -1.0, 0.0])[q[quarter]]
    sin[quarter] = np.array([0.0, 1.0, 0.0, -1.0])[q[quarter]]
    return cos, sin


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
    cos, sin = dft_cos_sin(n_fft, bins)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and infinities in a frame (module docstring)
        real = np.einsum("bfn,kn->bfk", framed, cos)  # [batch, frames, bins]
        imag = -np.einsum("bfn,kn->bfk", framed, sin)
    return [np.stack([real, imag], axis=-1)]
