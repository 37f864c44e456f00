"""The QNN releases as the package index has them: which spelling names which wheel, and what the cache
accepts. Nothing here downloads: the unpacking and verification run on a wheel made in the test; the
tests that load real releases are in ``test_qnn_release_runs.py``."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from adapters.qnn import releases as rel


@pytest.mark.parametrize("spelling", ["2.47", "2.47.0", "v2.47", "qnn-2.47", "ort-qnn==2.3.0", "onnxruntime-qnn==2.3"])
def test_every_spelling_of_qnn_2_47_names_the_wheel_that_carries_it(spelling):
    got = rel.parse(spelling)
    assert (got.wheel, got.qnn) == ("2.3.0", "2.47.0"), f"{spelling!r} -> {got}"


@pytest.mark.parametrize("release", rel.KNOWN, ids=lambda r: r.wheel)
def test_each_known_release_is_found_by_its_qnn_version_and_by_its_wheel(release):
    assert rel.parse(release.qnn) == release
    assert rel.parse(f"ort-qnn=={release.wheel}") == release


@pytest.mark.parametrize("spelling", ["2.45", "qnn-2.3", "v3.0"])
def test_a_qnn_version_no_wheel_carries_is_refused_with_the_known_ones(spelling):
    with pytest.raises(rel.ReleaseNotAvailable) as info:
        rel.parse(spelling)
    text = str(info.value)
    assert "\n" not in text and all(rel.short_qnn(r.qnn) in text for r in rel.KNOWN), text


def test_nonsense_is_refused_saying_what_is_expected():
    with pytest.raises(rel.ReleaseNotAvailable, match="expected a QNN version"):
        rel.parse("latest-please")


def test_the_cpu_backend_comes_from_the_newest_release_that_ships_it():
    shipping = [r for r in rel.KNOWN if "cpu" in r.backends]
    assert rel.newest_with("cpu") == max(shipping, key=lambda r: [int(x) for x in r.wheel.split(".")])


def test_a_release_without_the_cpu_backend_says_which_one_has_it(tmp_path):
    htp_only = next(r for r in rel.KNOWN if "cpu" not in r.backends)
    with pytest.raises(rel.ReleaseNotAvailable, match=rf"ships no libQnnCpu.so; {rel.newest_with('cpu').wheel}"):
        rel.library(htp_only, "cpu", cache=tmp_path, fetch_missing=False)


def test_the_qnn_version_is_read_from_a_build_id():
    assert rel.qnn_of_build("v2.48.40.260702151143") == "2.48.40"
    assert rel.check_build(rel.parse("2.47"), "v2.47.0.260601114230") == ""
    assert "reports build v2.51.0" in rel.check_build(rel.parse("2.47"), "v2.51.0.260929181845")


# ---- the cache, on a wheel made here ---------------------------------------------------------------
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def _wheel(path: Path, files: dict[str, bytes], lie_about: str | None = None) -> Path:
    """A wheel whose RECORD lists each file's sha256 (a wrong one for ``lie_about``)."""
    record = []
    for name, data in files.items():
        digest = _b64(b"something else" if name == lie_about else data)
        record.append(f"{name},sha256={digest},{len(data)}")
    dist = "onnxruntime_qnn-9.9.9.dist-info/RECORD"
    record.append(f"{dist},,")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(dist, "\n".join(record) + "\n")
    return path


FILES = {
    "onnxruntime_qnn/libQnnHtp.so": b"htp library",
    "onnxruntime_qnn/libQnnCpu.so": b"cpu library",
    "onnxruntime_qnn/libGenie.so": b"not needed by any backend",
    "onnxruntime_qnn.libs/libc++-abc.so.1.0": b"bundled c++",
}


def _fake_pip(wheel: Path):
    """subprocess.run standing in for ``pip download``: puts ``wheel`` where pip was told to."""

    def run(cmd, **kwargs):
        target = Path(cmd[cmd.index("-d") + 1])
        target.mkdir(parents=True, exist_ok=True)
        (target / wheel.name).write_bytes(wheel.read_bytes())
        return subprocess.CompletedProcess(cmd, 0, "", "")

    return run


def test_a_fetched_release_keeps_only_what_a_backend_needs_and_records_every_hash(tmp_path, monkeypatch):
    wheel = _wheel(tmp_path / "onnxruntime_qnn-9.9.9-cp311-cp311-linux_x86_64.whl", FILES)
    monkeypatch.setattr(rel.subprocess, "run", _fake_pip(wheel))
    release = rel.Release("9.9.9", "", ("htp", "cpu"))
    where = rel.fetch(release, tmp_path / "cache")
    manifest = json.loads((where / rel.MANIFEST).read_text())
    assert manifest["wheel_sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    kept = {n for n in manifest["files"] if not n.endswith("RECORD")}
    assert kept == {n for n in FILES if "Genie" not in n}, kept
    assert rel.library(release, "cpu", cache=tmp_path / "cache", fetch_missing=False).read_bytes() == b"cpu library"
    assert rel.describe(where / "onnxruntime_qnn" / "libQnnHtp.so")["wheel"] == "onnxruntime-qnn==9.9.9"


def test_a_file_that_does_not_match_the_wheels_record_is_refused(tmp_path, monkeypatch):
    wheel = _wheel(tmp_path / "onnxruntime_qnn-9.9.9-cp311-cp311-linux_x86_64.whl", FILES,
                   lie_about="onnxruntime_qnn/libQnnHtp.so")  # fmt: skip
    monkeypatch.setattr(rel.subprocess, "run", _fake_pip(wheel))
    with pytest.raises(rel.ReleaseNotAvailable, match="does not match the sha256 its RECORD lists"):
        rel.fetch(rel.Release("9.9.9"), tmp_path / "cache")
    assert not rel.is_cached(rel.Release("9.9.9"), tmp_path / "cache"), "a release that did not verify is not kept"


def test_a_cached_library_cut_short_is_no_longer_taken_for_the_release(tmp_path, monkeypatch):
    wheel = _wheel(tmp_path / "onnxruntime_qnn-9.9.9-cp311-cp311-linux_x86_64.whl", FILES)
    monkeypatch.setattr(rel.subprocess, "run", _fake_pip(wheel))
    where = rel.fetch(rel.Release("9.9.9"), tmp_path / "cache")
    (where / "onnxruntime_qnn" / "libQnnHtp.so").write_bytes(b"cut")
    assert not rel.is_cached(rel.Release("9.9.9"), tmp_path / "cache")


def test_pip_failing_is_one_line_naming_the_wheel(tmp_path, monkeypatch):
    def failing(cmd, **kwargs):
        why = "ERROR: No matching distribution found for onnxruntime-qnn==9.9.9\n"
        return subprocess.CompletedProcess(cmd, 1, "", why)

    monkeypatch.setattr(rel.subprocess, "run", failing)
    with pytest.raises(rel.ReleaseNotAvailable) as info:
        rel.fetch(rel.Release("9.9.9"), tmp_path / "cache")
    assert str(info.value) == ("pip could not download onnxruntime-qnn==9.9.9: ERROR: No matching distribution "
                               "found for onnxruntime-qnn==9.9.9")  # fmt: skip
