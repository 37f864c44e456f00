"""The QNN releases the package index has: which onnxruntime-qnn wheel carries which QNN SDK, fetched
on first use into a cache, unpacked, verified, and described for every record.

Why wheels: they are the only place a QNN backend library can be had without a Qualcomm account, and
each onnxruntime-qnn release bundles the libQnnHtp.so (and, for 2.3.0 only, the libQnnCpu.so) of one
QNN SDK. A user who asks for "QNN 2.47" gets the wheel that carries it; the project's own code runs
``pip download`` (never a hand copy), so the cache can be rebuilt anywhere from the command line.

What "verified" means here: pip checks the wheel against the index's hash as it downloads; the
wheel's sha256 is recorded; every file taken out of it must match the sha256 the wheel's own RECORD
lists; and when the library is loaded, the build id it reports must name the QNN version this table
says the wheel carries (``check_build``). Only what a backend needs is unpacked (the backend
libraries, their bundled libc++ and the wheel's metadata, about 120 MB of the 250), and the wheel
itself is deleted once its hash is written down.

Spellings a user may give (``--qnn-sdk``): a QNN version (``2.47``, ``2.47.0``, ``v2.48.40``, ``qnn-2.47``)
or a wheel version (``ort-qnn==2.3.0``, ``onnxruntime-qnn==2.3.0``). A bare version is looked up among the
QNN versions first, then the wheel versions. ``installed`` is the wheel installed in this environment.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "onnxruntime-qnn"
MODULE_DIR, LIBS_DIR = "onnxruntime_qnn", "onnxruntime_qnn.libs"
ENV_CACHE = "QNN_CONFORMANCE_WHEELS"
ENV_SDK = "QNN_CONFORMANCE_SDK"  # set by pytest's --qnn-sdk (adapters/qnn/pytest_plugin.py)
DEFAULT_CACHE = Path("~/.cache/qnn-opdef-conformance/wheels")
MANIFEST = "release.json"
INSTALLED = "installed"
BACKEND_LIBRARIES = {"htp": "libQnnHtp.so", "cpu": "libQnnCpu.so"}
DOWNLOAD_SECONDS = 900.0


@dataclass(frozen=True)
class Release:
    """One onnxruntime-qnn wheel and the QNN SDK it carries (``qnn`` "" while not yet known)."""

    wheel: str
    qnn: str = ""
    backends: tuple[str, ...] = ("htp",)

    @property
    def label(self) -> str:
        """How columns and records name it: the QNN version, short ("2.47", "2.48.40")."""
        return short_qnn(self.qnn) if self.qnn else f"ort-qnn-{self.wheel}"


# Measured (November 2026): each wheel downloaded, its libraries loaded, the build id read back.
# core API: 2.36, 2.37, 2.38, 2.39, 2.40 in this order. Only 2.3.0 ships libQnnCpu.so.
KNOWN: tuple[Release, ...] = (
    Release("2.3.0", "2.47.0", ("htp", "cpu")),
    Release("2.4.0", "2.48.40"),
    Release("2.5.0", "2.49.40"),
    Release("2.6.0", "2.50.40"),
    Release("2.7.0", "2.51.0"),
)


class ReleaseNotAvailable(RuntimeError):
    """The release asked for is unknown, cannot be downloaded here, or does not verify."""


def short_qnn(version: str) -> str:
    """"2.47.0" -> "2.47", "2.48.40" stays: the way Qualcomm's release notes name SDKs."""
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) == 3 and parts[2] == "0" else version


def qnn_of_build(build_id: str) -> str:
    """The QNN SDK version in a backend's build id ("v2.47.0.260601114230" -> "2.47.0"), "" if none."""
    m = re.match(r"v?(\d+\.\d+\.\d+)", build_id or "")
    return m.group(1) if m else ""


def _known_list() -> str:
    return ", ".join(f"{short_qnn(r.qnn)} (ort-qnn=={r.wheel})" for r in KNOWN)


def parse(spec: str) -> Release:
    """The release a ``--qnn-sdk`` value names; ReleaseNotAvailable (one line) when none does."""
    text = str(spec).strip()
    low = text.lower()
    if low in (INSTALLED, "default"):
        version = installed_version()
        if version is None:
            raise ReleaseNotAvailable(f"--qnn-sdk {text}: no {PACKAGE} wheel is installed here")
        return by_wheel(version)
    m = re.fullmatch(r"(?:ort-qnn|onnxruntime-qnn|onnxruntime_qnn)\s*==\s*(\d+(?:\.\d+){1,2})", low)
    if m:
        return by_wheel(_three(m.group(1)))
    m = re.fullmatch(r"(?:qnn-?|v)?(\d+\.\d+(?:\.\d+)?)", low)
    if not m:
        raise ReleaseNotAvailable(f"--qnn-sdk {text!r}: expected a QNN version (2.47) or a wheel (ort-qnn==2.3.0)")
    version = m.group(1)
    for r in KNOWN:
        if r.qnn == version or short_qnn(r.qnn) == version or r.qnn.startswith(version + "."):
            return r
    if not low.startswith(("qnn", "v")):
        for r in KNOWN:
            if r.wheel == _three(version):
                return r
    raise ReleaseNotAvailable(f"--qnn-sdk {text}: no known {PACKAGE} release carries QNN {version}; "
                              f"known: {_known_list()}; or name a wheel: ort-qnn==X.Y.Z")  # fmt: skip


def by_wheel(version: str) -> Release:
    """A wheel version, known or not (an unknown one's QNN version is read from its library)."""
    for r in KNOWN:
        if r.wheel == version:
            return r
    return Release(version, "", ("htp", "cpu"))


def _three(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def newest_with(backend: str) -> Release:
    """The newest known release that ships ``backend`` ("htp", "cpu")."""
    carrying = [r for r in KNOWN if backend in r.backends]
    if not carrying:
        raise ReleaseNotAvailable(f"no known {PACKAGE} release ships {BACKEND_LIBRARIES.get(backend, backend)}")
    return max(carrying, key=lambda r: tuple(int(x) for x in r.wheel.split(".")))


def installed_version() -> str | None:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def _installed_dir() -> Path | None:
    spec = importlib.util.find_spec(MODULE_DIR)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


def cache_dir() -> Path:
    return Path(os.environ.get(ENV_CACHE) or DEFAULT_CACHE).expanduser()


def release_dir(release: Release, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"{PACKAGE}-{release.wheel}"


def is_cached(release: Release, cache: Path | None = None) -> bool:
    return _read_manifest(release_dir(release, cache)) is not None


def library(release: Release, backend: str = "htp", cache: Path | None = None, fetch_missing: bool = True) -> Path:
    """The backend library of ``release``: the installed wheel's when it is that release, else the
    cache's, fetched first when it is not there (``fetch_missing``)."""
    name = BACKEND_LIBRARIES[backend]
    if release.qnn and backend not in release.backends:
        raise ReleaseNotAvailable(f"{PACKAGE} {release.wheel} (QNN {short_qnn(release.qnn)}) ships no {name}; "
                                  f"{newest_with(backend).wheel} does")  # fmt: skip
    root = _installed_dir()
    if root is not None and installed_version() == release.wheel and (root / MODULE_DIR / name).is_file():
        return root / MODULE_DIR / name
    where = release_dir(release, cache)
    if _read_manifest(where) is None:
        if not fetch_missing:
            raise ReleaseNotAvailable(f"{PACKAGE} {release.wheel} is not in the cache {where.parent}")
        fetch(release, cache)
    path = where / MODULE_DIR / name
    if not path.is_file():
        raise ReleaseNotAvailable(f"{PACKAGE} {release.wheel} ships no {name}")
    return path


def describe(path: str | os.PathLike) -> dict[str, Any]:
    """What a record says about the release a backend library came from: the wheel's version (and its
    sha256 when the cache fetched it); {} for a library from nowhere we know (a user's SDK)."""
    p = Path(path).absolute()
    manifest = _read_manifest(p.parent.parent)
    if manifest is not None and p.parent.name == MODULE_DIR:
        return {"wheel": f"{PACKAGE}=={manifest['wheel']}", "wheel_sha256": manifest["wheel_sha256"]}
    root = _installed_dir()
    if root is not None and p.parent.resolve() == (root / MODULE_DIR).resolve():
        version = installed_version()
        return {"wheel": f"{PACKAGE}=={version}"} if version else {}
    return {}


def check_build(release: Release, build_id: str) -> str:
    """"" when the library's build id names the QNN version the table gives the release, else why not."""
    if not release.qnn:
        return ""
    found = qnn_of_build(build_id)
    if found != release.qnn:
        return (f"{PACKAGE} {release.wheel} should carry QNN {release.qnn}, but its library reports build "
                f"{build_id or '(none)'}")  # fmt: skip
    return ""


# ---- fetching ------------------------------------------------------------------------------------
def _read_manifest(where: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = manifest.get("files") or {}
    for rel, (_digest, size) in files.items():  # cheap on every use: a file cut short or removed shows
        f = where / rel
        if not f.is_file() or f.stat().st_size != size:
            return None
    return manifest if files else None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One process fetches a release at a time (pytest-xdist workers and the main job may race)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _wanted(name: str) -> bool:
    if name.startswith(LIBS_DIR + "/"):
        return not name.endswith("/")
    if name.startswith(MODULE_DIR + "/"):
        return name[len(MODULE_DIR) + 1:] in BACKEND_LIBRARIES.values()
    return ".dist-info/" in name and name.rsplit("/", 1)[-1] in ("RECORD", "METADATA", "WHEEL")


def _record_hashes(wheel: zipfile.ZipFile) -> dict[str, str]:
    """file -> sha256 hex, from the wheel's own RECORD ("path,sha256=<urlsafe b64>,size")."""
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    out = {}
    for line in wheel.read(record).decode().splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            digest = parts[1][len("sha256="):]
            out[parts[0]] = base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch(release: Release, cache: Path | None = None) -> Path:
    """Download (pip), unpack and verify ``release`` into the cache; its directory. Idempotent."""
    where = release_dir(release, cache)
    with _locked(where.parent / f".{where.name}.lock"):
        if _read_manifest(where) is not None:
            return where
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=where.parent) as tmp:
            download = Path(tmp) / "download"
            cmd = [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={release.wheel}", "--no-deps",
                   "--only-binary=:all:", "-q", "-d", str(download)]  # fmt: skip
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_SECONDS)
            except subprocess.TimeoutExpired:
                raise ReleaseNotAvailable(f"pip download {PACKAGE}=={release.wheel} took over "
                                          f"{DOWNLOAD_SECONDS:.0f} s") from None  # fmt: skip
            wheels = sorted(download.glob("*.whl"))
            if done.returncode != 0 or not wheels:
                lines = [ln for ln in (done.stderr or done.stdout).splitlines()
                         if ln.strip() and not ln.startswith("WARNING: Location")]  # fmt: skip
                why = lines[-1].strip() if lines else f"exit {done.returncode}"
                raise ReleaseNotAvailable(f"pip could not download {PACKAGE}=={release.wheel}: {why[:300]}")
            unpacked = Path(tmp) / "unpacked"
            manifest = _unpack(wheels[0], unpacked, release)
            (unpacked / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
            if where.exists():  # a half-made directory of an earlier, killed fetch
                shutil.rmtree(where)
            unpacked.rename(where)
    return where


def _unpack(wheel_path: Path, into: Path, release: Release) -> dict[str, Any]:
    files: dict[str, tuple[str, int]] = {}
    with zipfile.ZipFile(wheel_path) as wheel:
        hashes = _record_hashes(wheel)
        for name in filter(_wanted, wheel.namelist()):
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with wheel.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            digest = _sha256(target)
            if name in hashes and hashes[name] != digest:
                raise ReleaseNotAvailable(f"{wheel_path.name}: {name} does not match the sha256 its RECORD lists")
            if name.endswith(".so") or ".so." in name:
                target.chmod(0o755)
            files[name] = (digest, target.stat().st_size)
    if not any(name.endswith(BACKEND_LIBRARIES["htp"]) for name in files):
        raise ReleaseNotAvailable(f"{wheel_path.name} holds no {MODULE_DIR}/{BACKEND_LIBRARIES['htp']}")
    return {"package": PACKAGE, "wheel": release.wheel, "wheel_file": wheel_path.name,
            "wheel_sha256": _sha256(wheel_path), "qnn": release.qnn, "files": files}  # fmt: skip
