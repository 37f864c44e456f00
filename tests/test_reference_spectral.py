"""The Stft reference (reference/spectral.py) against onnxruntime's STFT, scipy's stft and the spec's shapes.

QNN's Stft is ONNX STFT on a real signal [batch, signal_length, 1] with out[0] = [batch, frames, bins, 2]
(real, imaginary). onnxruntime computes the same thing with an FFT in float32; scipy.signal.stft is an
independent FFT-based implementation (its 'spectrum' scaling divides by the window's sum, undone here).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

import reference
from cases import quant
from tests.onnx_oracle import ort_node

RNG = np.random.default_rng(20240614)
Q8 = "UFIXED_POINT_8"


def stft(x: np.ndarray, window: np.ndarray | None, **params) -> np.ndarray:
    inputs = [np.asarray(x, np.float64)] + ([np.asarray(window, np.float64)] if window is not None else [])
    return reference.run("Stft", inputs, params)[0]


def ort_stft(x: np.ndarray, window: np.ndarray | None, step: int, length: int | None, onesided: bool) -> np.ndarray:
    inputs = [x.astype(np.float32), np.array(step, np.int64),
              None if window is None else window.astype(np.float32),
              None if length is None else np.array(length, np.int64)]  # fmt: skip
    return ort_node("STFT", inputs, onesided=int(onesided))[0]


CASES = [  # (batch, signal_length, frame_length, frame_step)
    (1, 10, 4, 2),
    (2, 9, 5, 3),
    (1, 8, 8, 1),
    (3, 12, 6, 4),
    (1, 7, 3, 5),  # step longer than a frame
    (2, 6, 1, 1),
]


@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("with_window", [True, False])
@pytest.mark.parametrize("batch,length,n_fft,step", CASES)
def test_stft_matches_onnxruntime(onesided: bool, with_window: bool, batch: int, length: int, n_fft: int,
                                  step: int) -> None:  # fmt: skip
    x = RNG.normal(0, 1, (batch, length, 1)).astype(np.float32)
    window = RNG.uniform(0.1, 1.0, n_fft).astype(np.float32) if with_window else None
    got = stft(x, window, frame_step=step, frame_length=n_fft, onesided=onesided)
    want = ort_stft(x, window, step, n_fft, onesided)
    assert got.shape == want.shape, f"shape {got.shape} vs onnxruntime {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5 * n_fft, err_msg=f"{(batch, length, n_fft, step)}")


@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("batch,length,n_fft,step", [c for c in CASES if c[3] <= c[2]])
def test_stft_matches_scipy(onesided: bool, batch: int, length: int, n_fft: int, step: int) -> None:
    x = RNG.normal(0, 1, (batch, length, 1))
    window = RNG.uniform(0.1, 1.0, n_fft)
    got = stft(x, window, frame_step=step, frame_length=n_fft, onesided=onesided)
    _, _, z = signal.stft(
        x[..., 0],
        window=window,
        nperseg=n_fft,
        noverlap=n_fft - step,
        nfft=n_fft,
        detrend=False,
        return_onesided=onesided,
        boundary=None,
        padded=False,
        scaling="spectrum",
    )
    z = np.moveaxis(z, -1, 1) * window.sum()  # [batch, frames, bins], unscaled
    want = np.stack([z.real, z.imag], axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=f"{(batch, length, n_fft, step)}")


def test_stft_quantized_matches_onnxruntime_within_one_step() -> None:
    enc = quant.encoding_for_range(-2.0, 2.0, Q8)
    x = quant.dequantize(quant.quantize(RNG.uniform(-2, 2, (2, 12, 1)), enc, Q8), enc)
    window = quant.dequantize(quant.quantize(RNG.uniform(0, 1, 6), enc, Q8), enc)
    got = stft(x, window, frame_step=2)
    want = ort_stft(x, window, 2, None, True)
    out_enc = quant.encoding_for_range(float(want.min()), float(want.max()), Q8)
    diff = quant.quantize(got, out_enc, Q8).astype(int) - quant.quantize(want, out_enc, Q8).astype(int)
    assert np.max(np.abs(diff)) <= 1, f"quantized outputs differ by {np.max(np.abs(diff))} steps"


def test_stft_onesided_keeps_n_fft_over_2_plus_1_bins() -> None:
    """The output shape [batch, frames, frame_length//2 + 1, 2] (12417) wins over the inclusive range
    [0 .. floor(n_fft/2) + 1] (12397), which would be one bin more."""
    for n_fft, bins in ((4, 3), (5, 3), (1, 1)):
        got = stft(np.ones((1, 8, 1)), None, frame_step=1, frame_length=n_fft)
        assert got.shape == (1, 8 - n_fft + 1, bins, 2), f"n_fft {n_fft}: {got.shape}"


def test_stft_frames_are_whole_frames_only() -> None:
    """frames = floor((signal_length - frame_length) / frame_step) + 1 (12417): 10 samples, frames of 4
    every 4 give 2 frames (samples 8, 9 are left over)."""
    assert stft(np.ones((1, 10, 1)), None, frame_step=4, frame_length=4).shape[1] == 2


def test_stft_hand_computed_dft() -> None:
    """Frame [1, 2, 3, 4] with the default all-ones window: X[0] = 10, X[1] = -2 + 2i, X[2] = -2."""
    got = stft(np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1), None, frame_step=1)
    np.testing.assert_allclose(got[0, 0], [[10.0, 0.0], [-2.0, 2.0], [-2.0, 0.0]], atol=1e-12)


def test_stft_frame_length_defaults_to_the_window_then_the_signal() -> None:
    """frame_length's default: window_size if a window is given, otherwise signal_length (12387)."""
    x = RNG.normal(0, 1, (1, 9, 1))
    assert stft(x, np.ones(4), frame_step=1).shape == (1, 6, 3, 2)
    assert stft(x, None, frame_step=1).shape == (1, 1, 5, 2)


def test_stft_window_weights_each_sample() -> None:
    """X[0] of a frame is the window-weighted sum: [1, 2, 3] * [0, 1, 2] = 8."""
    got = stft(np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1), np.array([0.0, 1.0, 2.0]), frame_step=1)
    assert got[0, 0, 0, 0] == 8.0, got[0, 0, 0]


def test_stft_refuses_a_window_of_another_length() -> None:
    with pytest.raises(ValueError, match="window size"):
        stft(np.ones((1, 8, 1)), np.ones(3), frame_step=1, frame_length=4)


def test_stft_refuses_a_frame_longer_than_the_signal() -> None:
    with pytest.raises(ValueError, match="signal_length"):
        stft(np.ones((1, 4, 1)), None, frame_step=1, frame_length=5)


# ---- IEEE specials in a frame (opdefs/Stft.yaml, decision "specials in a frame") ----------------------------------
SPECIAL_X = np.array([2.42e-2, 6e-8, -1.0, np.nan, 0.5801, np.inf, 0.9531, -1.226]).reshape(1, 8, 1)
SPECIAL_W = np.array([-0.6626, 0.5938])


def test_a_frame_holding_an_infinity_has_the_infinite_real_parts_every_implementation_gives() -> None:
    """Frame [0.58, +inf] x window: numpy's rfft, onnxruntime's STFT and the HTP give inf and -inf for bins 0 and 1."""
    out = stft(SPECIAL_X, SPECIAL_W, frame_step=2)
    assert out[0, 2, 0, 0] == np.inf and out[0, 2, 1, 0] == -np.inf
    np.testing.assert_array_equal(out[0, 2, :, 0], np.fft.rfft(SPECIAL_X[0, 4:6, 0] * SPECIAL_W).real)


def test_a_special_meeting_a_zero_twiddle_is_open() -> None:
    """The imaginary parts of bins 0 and n_fft / 2 multiply the frame by sin 0 = sin pi = 0 exactly: 0 x inf is NaN,
    read as any value (numpy's rfft gives 0, onnxruntime NaN and +inf)."""
    out = stft(SPECIAL_X, SPECIAL_W, frame_step=2)
    assert np.isnan(out[0, 2, :, 1]).all()


def test_a_nan_reaches_only_its_own_frame() -> None:
    out = stft(SPECIAL_X, SPECIAL_W, frame_step=2)
    assert np.isnan(out[0, 1]).all()
    assert np.isfinite(out[0, [0, 3]]).all()


def test_quarter_turn_twiddles_are_exact() -> None:
    """n_fft 4: bin 1 at n = 2 is cos pi = -1 with sin pi = 0, not 1.2e-16; bin 2 of a finite frame has imaginary
    part 0."""
    x = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1)
    out = stft(x, None, frame_step=1)
    assert out[0, 0, 1].tolist() == [-2.0, 2.0]
    assert out[0, 0, 2].tolist() == [-2.0, 0.0]
