"""ctypes bindings to a QNN backend library, written for this project from measured facts.

The QNN headers are proprietary, so every layout here was written from
``shared/qnn-c-api-facts.md`` (offsets measured against libQnnHtp.so of QNN 2.51). The function
table is reached through ``QnnInterface_getProviders`` rather than exported symbols because that is
the only entry point every backend library exports, and because the table's order is what changes
between API versions: we refuse any core API we were not written for instead of calling a wrong slot.

Loading a backend library can abort the process on misuse, so normal callers never import this in
the parent process: ``worker.py`` does, in a child process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import logging
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    byref,
    c_char_p,
    c_double,
    c_float,
    c_int8,
    c_int16,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("adapters.qnn.backend")

DEFAULT_LIBRARY_NAME = "libQnnHtp.so"
ENV_LIBRARY = "QNN_BACKEND_LIB"

# ---- enum values used by this project ------------------------------------------------------------
TENSOR_APP_WRITE, TENSOR_APP_READ, TENSOR_APP_READWRITE, TENSOR_NATIVE, TENSOR_STATIC, TENSOR_NULL = range(6)
DATA_FORMAT_DENSE = 0
MEM_TYPE_RAW = 0
ENCODING_DEF_IMPL_GENERATED, ENCODING_DEF_DEFINED = 0, 1
UNDEFINED = 0x7FFFFFFF  # the "undefined" value of every 32-bit QNN enum
QUANT_SCALE_OFFSET, QUANT_AXIS_SCALE_OFFSET = 0, 1
PARAM_SCALAR, PARAM_TENSOR = 0, 1
OPCONFIG_VERSION_1 = 1
TENSOR_VERSION_1 = 1
CONFIG_OPTION_CUSTOM = 0  # graph and device config lists: backend-specific payload behind a pointer
HTP_GRAPH_OPTION_PRECISION = 2
HTP_PRECISION = {"float32": 0, "float16": 1}
HTP_DEVICE_OPTION_SOC, HTP_DEVICE_OPTION_ARCH = 0, 1
# The recording backends of a release (``adapters.qnn.capture``). The Saver (libQnnSaver.so) takes its settings
# through ``QnnSaver_initialize``, called before any other function of the library; option 0 names the directory it
# writes saver_output.c and params.bin into (default ./saver_output of the process's working directory). The IR
# backend (libQnnIr.so) writes its DLC at graphFinalize: to the path of its graph custom config option 1
# (serialization: a u32 type, 1 = flatbuffer, at 8 and the file's path at 16), else to <graph name>.dlc in the
# working directory. Both measured on QNN 2.51 (onnxruntime-qnn 2.7.0).
SAVER_OPTION_OUTPUT_DIRECTORY = 0
IR_GRAPH_OPTION_SERIALIZATION, IR_SERIALIZATION_FLATBUFFER = 1, 1
LOG_ERROR, LOG_WARN, LOG_INFO, LOG_VERBOSE, LOG_DEBUG = 1, 2, 3, 4, 5
_LOG_TO_PY = {
    LOG_ERROR: logging.ERROR,
    LOG_WARN: logging.WARNING,
    LOG_INFO: logging.INFO,
    LOG_VERBOSE: logging.DEBUG,
    LOG_DEBUG: logging.DEBUG - 5,
}
LOG_LEVELS = {"error": LOG_ERROR, "warn": LOG_WARN, "info": LOG_INFO, "verbose": LOG_VERBOSE, "debug": LOG_DEBUG}

# Core API versions whose 56-entry function table order is written down below: {major: lowest minor}.
# Older 2.x minors (SDK 2.13-era headers) lack entries 2, 16, 29 and 33, so their slots are shifted:
# refused. Measured, each with every struct this module lays out (tensor v1, op config v1, param,
# scalar, quantize params, HTP device custom config) and the first 56 slots in this order: core API
# 2.36 (QNN 2.47, onnxruntime-qnn 2.3.0, libQnnHtp and libQnnCpu), 2.37 (QNN 2.48), 2.38 (2.49), 2.39
# (2.50) and 2.40 (2.51); see adapters/qnn/README.md "Releases". The API's later minors append slots
# past 55 and add struct *versions* (a v2 beside v1) rather than change one, so a newer 2.x minor is
# accepted; after binding, slot 3 must report the version the provider struct states.
KNOWN_CORE_API: dict[int, int] = {2: 36}


class QnnError(RuntimeError):
    """A QNN call returned an error; ``code`` is the low 16 bits of the error handle."""

    def __init__(self, function: str, code: int, text: str = "") -> None:
        self.function, self.code, self.text = function, code, text
        super().__init__(f"{function} failed: error {code}" + (f" ({text})" if text else ""))


class UnsupportedApiVersion(RuntimeError):
    """The library reports a core API whose function table these bindings do not know."""

    def __init__(self, found: tuple[int, int, int], known: dict[int, int]) -> None:
        self.found, self.known = found, dict(known)
        knowns = ", ".join(f"{major}.{minor}+" for major, minor in sorted(known.items()))
        version = ".".join(map(str, found))
        super().__init__(f"QNN core API {version} is not supported by these bindings (known: {knowns})")


class LibraryNotFound(FileNotFoundError):
    pass


# ---- structures ----------------------------------------------------------------------------------
class Version(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("patch", c_uint32)]

    def tuple(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)


class ApiVersion(Structure):
    _fields_ = [("core", Version), ("backend", Version)]


class ScaleOffset(Structure):
    _fields_ = [("scale", c_float), ("offset", c_int32)]


class AxisScaleOffset(Structure):
    _fields_ = [("axis", c_int32), ("numScaleOffsets", c_uint32), ("scaleOffset", POINTER(ScaleOffset))]


class _QuantizeUnion(Union):
    _fields_ = [("scaleOffset", ScaleOffset), ("axisScaleOffset", AxisScaleOffset), ("_space", c_uint64 * 4)]


class QuantizeParams(Structure):
    _fields_ = [("encodingDefinition", c_uint32), ("quantizationEncoding", c_uint32), ("u", _QuantizeUnion)]


class ClientBuffer(Structure):
    _fields_ = [("data", c_void_p), ("dataSize", c_uint32)]


class _MemUnion(Union):
    _fields_ = [("clientBuf", ClientBuffer), ("memHandle", c_void_p)]


class TensorV1(Structure):
    _fields_ = [
        ("id", c_uint32),
        ("name", c_char_p),
        ("type", c_uint32),
        ("dataFormat", c_uint32),
        ("dataType", c_uint32),
        ("quantizeParams", QuantizeParams),
        ("rank", c_uint32),
        ("dimensions", POINTER(c_uint32)),
        ("memType", c_uint32),
        ("mem", _MemUnion),
    ]


class _SparseParams(Structure):
    _fields_ = [("type", c_uint32), ("numSpecifiedElements", c_uint32), ("numDimensions", c_uint32)]


class TensorV2(Structure):
    _fields_ = TensorV1._fields_ + [
        ("isDynamicDimensions", POINTER(c_uint8)),
        ("sparseParams", _SparseParams),
        ("isProduced", c_uint8),
    ]


class _TensorUnion(Union):
    _fields_ = [("v1", TensorV1), ("v2", TensorV2)]


class Tensor(Structure):
    _fields_ = [("version", c_uint32), ("u", _TensorUnion)]


class _ScalarValue(Union):
    _fields_ = [
        ("f32", c_float),
        ("f64", c_double),
        ("u64", c_uint64),
        ("i64", c_int64),
        ("u32", c_uint32),
        ("i32", c_int32),
        ("u16", c_uint16),
        ("i16", c_int16),
        ("u8", c_uint8),
        ("i8", c_int8),
        ("b8", c_uint8),
        ("string", c_char_p),
    ]


class Scalar(Structure):
    _fields_ = [("dataType", c_uint32), ("value", _ScalarValue)]


class _ParamUnion(Union):
    _fields_ = [("scalar", Scalar), ("tensor", Tensor)]


class Param(Structure):
    _fields_ = [("paramType", c_uint32), ("name", c_char_p), ("u", _ParamUnion)]


class OpConfigV1(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("packageName", c_char_p),
        ("typeName", c_char_p),
        ("numOfParams", c_uint32),
        ("params", POINTER(Param)),
        ("numOfInputs", c_uint32),
        ("inputTensors", POINTER(Tensor)),
        ("numOfOutputs", c_uint32),
        ("outputTensors", POINTER(Tensor)),
    ]


class OpConfig(Structure):
    _fields_ = [("version", c_uint32), ("v1", OpConfigV1)]


class ConfigEntry(Structure):
    """Graph/device/context config list entry: an option and (for option CUSTOM) a payload pointer."""

    _fields_ = [("option", c_uint32), ("payload", c_void_p)]


class HtpGraphCustomConfig(Structure):
    """HTP graph custom config: option at 0, payload at 8 (its union holds a 64-bit member and a pointer, so it is
    8-aligned); the tail is room for larger payloads. The payload once sat at 4, where the backend never read it:
    every graph was sent precision 0 (float32) whatever the run asked for."""

    _fields_ = [("option", c_uint32), ("_pad", c_uint32), ("value", c_uint32 * 2), ("_space", c_uint64 * 6)]


class HtpDeviceCustomConfig(Structure):
    """HTP device custom config, the 16-byte layout the library needs (12 bytes loses the setting)."""

    _fields_ = [("option", c_uint32), ("_pad", c_uint32), ("word0", c_uint32), ("word1", c_uint32)]


class SaverConfig(Structure):
    """A Saver setting: its option at 0, the value (here a directory's path) at 8; 24 bytes, room for the widest."""

    _fields_ = [("option", c_uint32), ("value", c_void_p), ("_second", c_void_p)]


class IrGraphCustomConfig(Structure):
    """The IR backend's graph custom config: option at 0, then the serialization type and the DLC's path."""

    _fields_ = [("option", c_uint32), ("_pad", c_uint32), ("serialization", c_uint32), ("_pad2", c_uint32),
                ("path", c_char_p)]


def saver_initialize(library: str | os.PathLike, output_directory: str | os.PathLike) -> None:
    """Tell the Saver of ``library`` where to write its capture; must come before the library's first other call in
    the process (``QnnLibrary``). Why here and not a working directory: the capture then goes where the caller says
    whatever the process's cwd, and the worker needs no other setting."""
    lib = load_with_dependencies(resolve_library(library))
    init = lib.QnnSaver_initialize
    init.argtypes = [c_void_p]
    init.restype = Err
    where = ctypes.create_string_buffer(os.fsencode(os.fspath(output_directory)))
    _PINNED.append(where)  # the Saver may keep the pointer
    entry = SaverConfig(SAVER_OPTION_OUTPUT_DIRECTORY, ctypes.addressof(where), None)
    _PINNED.append(entry)
    configs = (c_void_p * 2)(ctypes.addressof(entry), None)
    code = error_code(init(configs))
    if code:
        raise QnnError("QnnSaver_initialize", code)


_PINNED: list = []  # what the C side may point into for the life of the process


class OperationName(Structure):
    _fields_ = [("packageName", c_char_p), ("name", c_char_p), ("target", c_char_p)]


class InterfaceHead(Structure):
    _fields_ = [("backendId", c_uint32), ("providerName", c_char_p), ("apiVersion", ApiVersion)]


_LAYOUT = {
    ScaleOffset: 8,
    QuantizeParams: 40,
    TensorV1: 112,
    TensorV2: 136,
    Tensor: 144,
    Scalar: 16,
    Param: 160,
    OpConfig: 80,
    ConfigEntry: 16,
    HtpDeviceCustomConfig: 16,
    OperationName: 24,
    InterfaceHead: 40,
}
for _cls, _size in _LAYOUT.items():  # a wrong layout corrupts the heap; fail at import instead
    assert ctypes.sizeof(_cls) == _size, (_cls.__name__, ctypes.sizeof(_cls), _size)
assert TensorV1.quantizeParams.offset == 32 and TensorV1.rank.offset == 72 and TensorV1.mem.offset == 96
assert Param.u.offset == 16 and Tensor.u.offset == 8

# ---- function table ------------------------------------------------------------------------------
Err = c_uint64
Handle = c_void_p
LogCallback = CFUNCTYPE(None, c_char_p, c_uint32, c_uint64, c_void_p)

# index -> (name, argtypes); every function returns a Qnn_ErrorHandle_t (u64) except where noted.
FUNCTION_TABLE: list[tuple[str, list | None]] = [
    ("propertyHasCapability", [c_uint32]),
    ("backendCreate", [Handle, c_void_p, POINTER(Handle)]),
    ("backendSetConfig", None),
    ("backendGetApiVersion", [POINTER(ApiVersion)]),
    ("backendGetBuildId", [POINTER(c_char_p)]),
    ("backendRegisterOpPackage", [Handle, c_char_p, c_char_p, c_char_p]),
    ("backendGetSupportedOperations", [Handle, POINTER(c_uint32), POINTER(POINTER(OperationName))]),
    ("backendValidateOpConfig", [Handle, OpConfig]),
    ("backendFree", [Handle]),
    ("contextCreate", [Handle, Handle, c_void_p, POINTER(Handle)]),
    ("contextSetConfig", None),
    ("contextGetBinarySize", None),
    ("contextGetBinary", None),
    ("contextCreateFromBinary", None),
    ("contextFree", [Handle, Handle]),
    ("graphCreate", [Handle, c_char_p, c_void_p, POINTER(Handle)]),
    ("graphCreateSubgraph", None),
    ("graphSetConfig", None),
    ("graphAddNode", [Handle, OpConfig]),
    ("graphFinalize", [Handle, Handle, Handle]),
    ("graphRetrieve", None),
    ("graphExecute", [Handle, POINTER(Tensor), c_uint32, POINTER(Tensor), c_uint32, Handle, Handle]),
    ("graphExecuteAsync", None),
    ("tensorCreateContextTensor", None),
    ("tensorCreateGraphTensor", [Handle, POINTER(Tensor)]),
    ("logCreate", [LogCallback, c_uint32, POINTER(Handle)]),
    ("logSetLogLevel", [Handle, c_uint32]),
    ("logFree", [Handle]),
    ("profileCreate", None),
    ("profileSetConfig", None),
    ("profileGetEvents", None),
    ("profileGetSubEvents", None),
    ("profileGetEventData", None),
    ("profileGetExtendedEventData", None),
    ("profileFree", None),
    ("memRegister", None),
    ("memDeRegister", None),
    ("deviceGetPlatformInfo", None),
    ("deviceFreePlatformInfo", None),
    ("deviceGetInfrastructure", None),
    ("deviceCreate", [Handle, c_void_p, POINTER(Handle)]),
    ("deviceSetConfig", None),
    ("deviceGetInfo", None),
    ("deviceFree", [Handle]),
    ("signalCreate", None),
    ("signalSetConfig", None),
    ("signalTrigger", None),
    ("signalFree", None),
    ("errorGetMessage", [Err, POINTER(c_char_p)]),
    ("errorGetVerboseMessage", None),
    ("errorFreeVerboseMessage", None),
    ("graphPrepareExecutionEnvironment", None),
    ("graphReleaseExecutionEnvironment", None),
    ("graphGetProperty", None),
    ("contextValidateBinary", None),
    ("contextCreateFromBinaryWithSignal", None),
]
assert len(FUNCTION_TABLE) == 56


def error_code(handle: int) -> int:
    return int(handle) & 0xFFFF


def check_api_version(core: tuple[int, int, int], known: dict[int, int] | None = None) -> None:
    """Refuse a core API whose table order we do not know, before any slot is called."""
    known = KNOWN_CORE_API if known is None else known
    major, minor = core[0], core[1]
    if major not in known or minor < known[major]:
        raise UnsupportedApiVersion(tuple(core), known)


def default_library() -> Path:
    """The backend library to load: $QNN_BACKEND_LIB, else libQnnHtp.so from the onnxruntime-qnn wheel.

    ``find_spec`` locates the wheel without importing it (its ``__init__`` touches library paths).
    """
    env = os.environ.get(ENV_LIBRARY)
    if env:
        return Path(env)
    spec = importlib.util.find_spec("onnxruntime_qnn")
    if spec is None or not spec.submodule_search_locations:
        raise LibraryNotFound("the onnxruntime-qnn wheel is not installed (pip install onnxruntime-qnn)")
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_LIBRARY_NAME
    if not path.is_file():
        raise LibraryNotFound(f"{path} not found in the onnxruntime-qnn wheel")
    return path


def resolve_library(path: str | os.PathLike | None) -> Path:
    p = default_library() if path is None else Path(path)
    if not p.is_file():
        raise LibraryNotFound(f"QNN backend library {p} does not exist")
    return p.absolute()  # not resolve(): a linked copy must find the dependencies beside *it*


# ---- the library's own dependencies --------------------------------------------------------------
# The onnxruntime-qnn wheels bundle libc++, libc++abi and libunwind under hashed names in
# ``onnxruntime_qnn.libs/`` and find them through RPATH ($ORIGIN/../onnxruntime_qnn.libs). A library
# taken out of that layout (copied next to a user's other backends, or a wheel unpacked somewhere else)
# no longer finds them, and dlopen names the first one it misses. ENV_DEPS adds directories to search.
ENV_DEPS = "QNN_BACKEND_DEPS"
BUNDLED_DIR = "onnxruntime_qnn.libs"


def dependency_dirs(library: Path) -> list[Path]:
    """Where a backend library's bundled dependencies may be, its own wheel's layout first."""
    here = library.parent
    dirs = [here / BUNDLED_DIR, here.parent / BUNDLED_DIR, here]
    dirs += [Path(d) for d in os.environ.get(ENV_DEPS, "").split(os.pathsep) if d]
    spec = importlib.util.find_spec("onnxruntime_qnn")  # the installed wheel's: same names, last resort
    if spec is not None and spec.submodule_search_locations:
        dirs.append(Path(list(spec.submodule_search_locations)[0]).parent / BUNDLED_DIR)
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def _missing_dependency(error: OSError) -> str | None:
    """The soname dlopen could not find, from its message ("libc++-71bc274c.so.1.0: cannot open ...")."""
    text = str(error)
    marker = ": cannot open shared object file"
    if marker not in text:
        return None
    name = text.split(marker, 1)[0].rsplit(":", 1)[-1].strip()
    return name if name.startswith("lib") and ".so" in name else None


_PRELOADED: dict[str, ctypes.CDLL] = {}  # soname -> handle: kept open for the life of the process


def load_with_dependencies(library: Path) -> ctypes.CDLL:
    """dlopen ``library``; when a dependency is missing, preload it (RTLD_GLOBAL, so the loader reuses
    it by soname) from ``dependency_dirs`` and try again, one missing name at a time."""
    tried: set[str] = set()
    while True:
        try:
            return ctypes.CDLL(str(library))
        except OSError as e:
            name = _missing_dependency(e)
            if name is None or name in tried:
                raise
            tried.add(name)
            found = next((d / name for d in dependency_dirs(library) if (d / name).is_file()), None)
            if found is None:
                raise OSError(f"{library}: needs {name}, found in none of "
                              f"{[str(d) for d in dependency_dirs(library)] or 'no directory'} "
                              f"(set ${ENV_DEPS} to the directory that holds it)") from None  # fmt: skip
            _preload(found, dependency_dirs(library))


def _preload(path: Path, dirs: list[Path]) -> None:
    """Load one bundled dependency globally, first what it needs in turn (libc++ needs libc++abi and
    libunwind, which have no RPATH of their own that could find them out of place)."""
    tried: set[str] = set()
    while True:
        try:
            _PRELOADED[path.name] = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            return
        except OSError as e:
            name = _missing_dependency(e)
            found = next((d / name for d in dirs if name and (d / name).is_file()), None)
            if found is None or name in tried:
                raise
            tried.add(name)
            _preload(found, dirs)


# ---- logging bridge ------------------------------------------------------------------------------
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_vsnprintf = _libc.vsnprintf
_vsnprintf.argtypes = [c_char_p, ctypes.c_size_t, c_char_p, c_void_p]
_vsnprintf.restype = ctypes.c_int


# Messages the HTP backend logs at error level on every graph although nothing failed (QNN 2.51):
# passed on at INFO so that real errors stand out.
BENIGN_ERRORS = ("unexpected GraphHtpSettings option 66",)


def _on_backend_log(fmt: bytes | None, level: int, timestamp: int, va_list: int | None) -> None:
    # Runs on backend threads with the GIL taken by ctypes: never raise out of here.
    try:
        buf = ctypes.create_string_buffer(2048)
        _vsnprintf(buf, len(buf), fmt, va_list)
        text = buf.value.decode("utf-8", "replace").strip()
        pylevel = _LOG_TO_PY.get(level, logging.INFO)
        if level == LOG_ERROR and any(b in text for b in BENIGN_ERRORS):
            pylevel = logging.INFO
        log.log(pylevel, "%s", text, extra={"qnn_level": level, "qnn_time": timestamp})
    except Exception:  # noqa: BLE001 - an exception here would be printed by ctypes, not handled
        pass


# The C side keeps this pointer for the life of the process: it must never be collected.
_LOG_CALLBACK = LogCallback(_on_backend_log)


@dataclass
class ProviderInfo:
    backend_id: int
    name: str
    core_api: tuple[int, int, int]
    backend_api: tuple[int, int, int]


class QnnLibrary:
    """One loaded backend library, its checked function table and (lazily) one backend handle."""

    def __init__(self, path: str | os.PathLike | None = None, log_level: str | int = "warn",
                 known: dict[int, int] | None = None) -> None:
        self.path = resolve_library(path)
        self._lib = load_with_dependencies(self.path)
        get_providers = self._lib.QnnInterface_getProviders
        get_providers.argtypes = [POINTER(POINTER(c_void_p)), POINTER(c_uint32)]
        get_providers.restype = Err
        providers = POINTER(c_void_p)()
        count = c_uint32(0)
        err = get_providers(byref(providers), byref(count))
        if err or count.value == 0:
            raise QnnError("QnnInterface_getProviders", error_code(err), f"{count.value} providers")
        self._iface_addr = providers[0]
        head = InterfaceHead.from_address(self._iface_addr)
        self.provider = ProviderInfo(
            head.backendId,
            (head.providerName or b"").decode(),
            head.apiVersion.core.tuple(),
            head.apiVersion.backend.tuple(),
        )
        check_api_version(self.provider.core_api, known)
        slots = (c_void_p * len(FUNCTION_TABLE)).from_address(self._iface_addr + ctypes.sizeof(InterfaceHead))
        self._fn: dict[str, ctypes._CFuncPtr] = {}
        for index, (name, argtypes) in enumerate(FUNCTION_TABLE):
            if argtypes is None or not slots[index]:
                continue
            proto = CFUNCTYPE(Err, *argtypes)
            self._fn[name] = proto(slots[index])
        version = ApiVersion()
        self.call("backendGetApiVersion", byref(version))
        if version.core.tuple() != self.provider.core_api:  # the table is not what we think it is
            raise UnsupportedApiVersion(version.core.tuple(), known or KNOWN_CORE_API)
        build = c_char_p()
        self.call("backendGetBuildId", byref(build))
        self.build_id = (build.value or b"").decode()
        self.log_level = LOG_LEVELS[log_level] if isinstance(log_level, str) else int(log_level)
        self._log = Handle()
        self._backend = Handle()
        self._devices: dict[tuple, Handle] = {}

    # -- calls -------------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self._fn

    def raw(self, name: str, *args) -> int:
        """Call a table entry and return its error code (0 on success)."""
        return error_code(self._fn[name](*args))

    def call(self, name: str, *args) -> None:
        code = self.raw(name, *args)
        if code:
            raise QnnError(name, code, self.error_text(code))

    def error_text(self, code: int) -> str:
        if "errorGetMessage" not in self._fn:
            return ""
        msg = c_char_p()
        if self.raw("errorGetMessage", Err(code), byref(msg)) or not msg.value:
            return ""
        return msg.value.decode("utf-8", "replace")

    # -- backend lifetime --------------------------------------------------------------------------
    @property
    def backend(self) -> Handle:
        if not self._backend:
            if self.log_level > 0 and self.has("logCreate"):
                self.call("logCreate", _LOG_CALLBACK, self.log_level, byref(self._log))
            self.call("backendCreate", self._log, None, byref(self._backend))
        return self._backend

    def device(self, soc: int | None = None, arch: int | None = None) -> Handle:
        """A device handle carrying HTP SoC/arch custom configs; None (the default device) if neither."""
        if soc is None and arch is None:
            return Handle()
        key = (soc, arch)
        if key not in self._devices:
            self.backend  # noqa: B018 - the device needs the logger created with the backend
            customs, entries = [], []
            if soc is not None:
                customs.append(HtpDeviceCustomConfig(HTP_DEVICE_OPTION_SOC, 0, int(soc), 0))
            if arch is not None:
                customs.append(HtpDeviceCustomConfig(HTP_DEVICE_OPTION_ARCH, 0, 0, int(arch)))
            for c in customs:
                entries.append(ConfigEntry(CONFIG_OPTION_CUSTOM, ctypes.addressof(c)))
            ptrs = (c_void_p * (len(entries) + 1))(*[ctypes.addressof(e) for e in entries], None)
            handle = Handle()
            self.call("deviceCreate", self._log, ptrs, byref(handle))
            self._devices[key] = handle
        return self._devices[key]

    def register_op_package(self, path: str, interface: str, target: str = "") -> None:
        """Hand a user op package to the backend: its library, its interface provider function and, for
        backends with several targets (HTP: "CPU" or "HTP"), which one; raises QnnError with the
        backend's own message when the library or the provider is not there."""
        self.call("backendRegisterOpPackage", self.backend, path.encode(), interface.encode(),
                  target.encode() if target else None)  # fmt: skip

    def supported_operations(self) -> list[tuple[str, str]]:
        """(package, op name) pairs the backend lists; the array is backend-owned."""
        n = c_uint32(0)
        ops = POINTER(OperationName)()
        self.call("backendGetSupportedOperations", self.backend, byref(n), byref(ops))
        return [((ops[i].packageName or b"").decode(), (ops[i].name or b"").decode()) for i in range(n.value)]

    def close(self) -> None:
        for handle in self._devices.values():
            self.raw("deviceFree", handle)
        self._devices.clear()
        if self._backend:
            self.raw("backendFree", self._backend)
            self._backend = Handle()
        if self._log:
            self.raw("logFree", self._log)
            self._log = Handle()

    def info(self) -> dict:
        return {
            "library": str(self.path),
            "build_id": self.build_id,
            "core_api": ".".join(map(str, self.provider.core_api)),
            "backend_api": ".".join(map(str, self.provider.backend_api)),
            "provider": self.provider.name,
            "backend_id": self.provider.backend_id,
        }
