"""Reading ``.npz`` archives: every member is checked before any array is read (issue 37).

A run record (Fogel's, Al-Khateeb's, Ling and Lam's) is an ``.npz`` archive, a zip file of ``.npy`` arrays, written
by :func:`evolving_ttt.records.save_npz`. :func:`read_npz` reads one only after :func:`check_npz` has looked at
every member without reading its data: the zip directory's declared sizes and compression, and each member's
``.npy`` header (its dtype and shape). An archive that would take more memory than :data:`NPZ_EXPANDED_LIMIT`, a
zip bomb that expands far beyond its size on disk (:data:`NPZ_RATIO_LIMIT`), a header that declares a shape its
member does not hold, or pickled objects are refused with one ``ValueError`` naming the file and the member,
before a byte of any array is decompressed.

The limits come from the records the systems write (measured on the run caches of full book builds and on a
full-length Ling-Lam run of 20 seeds x 50,000 iterations of each of its four methods): the largest record expands
to 64 MB (the Ling-Lam run; Fogel's full experiment 28 MB, Al-Khateeb's 26 MB), the best whole-archive ratio of
expanded to compressed size is 50:1 (a short Ling-Lam run) and the best member ratio 608:1 (the Ling-Lam run's
best-fitness curves, which stay flat for thousands of iterations).
"""

from __future__ import annotations

import math
import tokenize
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

NPZ_EXPANDED_LIMIT = 4 * 2**30
"""The most bytes the arrays of one ``.npz`` archive may expand to, all members together (4 GiB): 64 times the
largest record the systems write (64 MB). :func:`evolving_ttt.records.save_npz` writes no larger archive."""

NPZ_RATIO_FLOOR = 64 * 2**20
"""Members, and archives, that expand to at most this many bytes (64 MiB) may compress at any ratio: so little
memory is no threat, and small arrays of zeros compress 900:1."""

NPZ_RATIO_LIMIT = 800
"""The highest ratio of expanded to compressed size of a member, or of an archive as a whole (expanded size to
file size), that expands beyond :data:`NPZ_RATIO_FLOOR`. DEFLATE, the compression of every ``.npz``, reaches about
1,030:1 on an array of one repeated byte (80 MB of zeros: 1,028:1, measured), the zip bomb's stuff. Real records
stay below: at most 608:1 measured (a member), and curves of 8-byte floats or whole numbers that stay flat
compress at most 686:1 however long (measured on 80 MB of one float64 value and of one int64 value)."""

NPZ_MEMBER_LIMIT = 1000
"""The most members an ``.npz`` archive may have (a record has at most 33: Ling-Lam's four methods, 8 arrays
each, and the list of methods)."""

NPZ_DTYPE_KINDS = "biufU"
"""The dtype kinds an array of a record may have: booleans, whole numbers, floats and texts (no objects, which
would be pickled, no structured or raw bytes)."""

_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}

_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError,
                NotImplementedError, RuntimeError, tokenize.TokenError, SyntaxError, OverflowError)  # fmt: skip
"""What damage raises inside zipfile and numpy: a broken zip directory, a bad checksum or stream, a flipped bit
that marks a member encrypted or of an unknown zip version, a broken array header."""


def _open_npz(path: Path, kind: str) -> zipfile.ZipFile:
    """The archive at ``path`` opened as a zip file (its directory read, no member), after a look at its first
    bytes; ``ValueError`` naming the file if it is missing, empty, one ``.npy`` array or not a zip file."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(6)
    except FileNotFoundError:
        raise ValueError(f"{path} could not be read: no such file") from None
    except OSError as error:
        raise ValueError(f"{path} could not be read: {error.strerror or error}") from None
    if start.startswith(b"\x93NUMPY"):
        raise ValueError(f"{path} is not a readable {kind} (.npz): it holds one array (.npy), not an .npz archive")
    if not start.startswith(b"PK\x03\x04"):
        what = "it is empty" if not start else "it is not an .npz archive (a zip file of arrays)"
        raise ValueError(f"{path} is not a readable {kind} (.npz): {what}")
    try:
        return zipfile.ZipFile(path)
    except _READ_ERRORS as error:
        raise ValueError(f"{path} is not a readable {kind} (.npz): {error or type(error).__name__}") from None


def _check_directory(path: Path, kind: str, archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members of ``archive``, after checking what the zip directory declares: names, compression, sizes."""
    members = archive.infolist()
    fail = f"{path} is not a readable {kind} (.npz)"
    if len(members) > NPZ_MEMBER_LIMIT:
        raise ValueError(f"{fail}: it has {len(members):,} members; a record has at most {NPZ_MEMBER_LIMIT:,}")
    seen = set()
    for info in members:
        where = f"{fail}: member {info.filename!r}"
        if not info.filename.endswith(".npy") or info.filename in seen:
            problem = "is not an array (.npy)" if info.filename not in seen else "appears twice"
            raise ValueError(f"{where} {problem}")
        seen.add(info.filename)
        if info.compress_type not in _METHODS or info.flag_bits & 0x1:
            raise ValueError(f"{where} is encrypted or compressed by a method numpy does not write "
                             f"(zip method {info.compress_type}; a record is stored or deflated)")  # fmt: skip
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > NPZ_RATIO_FLOOR and ratio > NPZ_RATIO_LIMIT:
            raise ValueError(f"{where} would expand {info.compress_size:,} bytes to {info.file_size:,}, "
                             f"{ratio:,.0f} times; a record's member compresses at most {NPZ_RATIO_LIMIT}:1 "
                             "(a zip bomb?)")  # fmt: skip
    expanded = sum(info.file_size for info in members)
    if expanded > NPZ_EXPANDED_LIMIT:
        largest = max(members, key=lambda info: info.file_size)
        raise ValueError(f"{fail}: its arrays would expand to {expanded:,} bytes, more than {NPZ_EXPANDED_LIMIT:,} "
                         f"(the largest, member {largest.filename!r}, to {largest.file_size:,})")  # fmt: skip
    size = path.stat().st_size
    if expanded > NPZ_RATIO_FLOOR and expanded > NPZ_RATIO_LIMIT * size:
        largest = max(members, key=lambda info: info.file_size)
        raise ValueError(f"{fail}: its {size:,} bytes would expand to {expanded:,}, {expanded / size:,.0f} times; a "
                         f"record compresses at most {NPZ_RATIO_LIMIT}:1 (a zip bomb? the largest member is "
                         f"{largest.filename!r})")  # fmt: skip
    return members


def _check_header(path: Path, kind: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """``ValueError`` unless the ``.npy`` header of member ``info`` declares an array of :data:`NPZ_DTYPE_KINDS`
    whose data fills exactly the member's declared size (nothing is read beyond the header)."""
    where = f"{path} is not a readable {kind} (.npz): member {info.filename!r}"
    try:
        with archive.open(info) as member:
            version = npy.read_magic(member)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"is an .npy file of version {version}, which this code does not read")
            read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, _, dtype = read_header(member)
            header = member.tell()
    except _READ_ERRORS as error:
        raise ValueError(f"{where}: {error or type(error).__name__}") from None
    if dtype.hasobject:
        raise ValueError(f"{where} holds pickled objects (dtype {dtype}); a record holds numbers and texts only")
    if dtype.kind not in NPZ_DTYPE_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"{where} holds {dtype}; a record holds numbers, true/false and texts only")
    if any(isinstance(n, bool) or n < 0 for n in shape):
        raise ValueError(f"{where}: its header declares the shape {shape}, which is not a shape")
    data = math.prod(shape) * dtype.itemsize
    if header + data != info.file_size:
        raise ValueError(f"{where}: its header declares {dtype} of shape {shape}, {data:,} bytes of data, but the "
                         f"member holds {info.file_size - header:,} after its header")  # fmt: skip


def check_npz(path: str | Path, kind: str) -> None:
    """Check the ``.npz`` archive ``path`` (a ``kind``) as :func:`read_npz` does before it reads any array.

    Raises
    ------
    ValueError
        Naming the file, and the member where one is at fault: the file is missing, empty, damaged or not an
        ``.npz`` archive; it has more than :data:`NPZ_MEMBER_LIMIT` members, a member that is not an ``.npy`` array
        or appears twice, is encrypted or compressed otherwise than numpy does; the arrays would expand beyond
        :data:`NPZ_EXPANDED_LIMIT`, or beyond :data:`NPZ_RATIO_FLOOR` at a ratio above :data:`NPZ_RATIO_LIMIT`; a
        member's header declares objects (pickles) or a dtype of no record, or a shape its member does not hold.
    """
    path = Path(path)
    with _open_npz(path, kind) as archive:
        for info in _check_directory(path, kind, archive):
            _check_header(path, kind, archive, info)


def read_npz(path: str | Path, kind: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path`` (a ``kind``) by its name, read whole once :func:`check_npz`'s
    checks have passed for every member; pickled objects are refused.

    Raises
    ------
    ValueError
        Naming the file (and the member), when it is missing, empty, truncated, damaged, not an ``.npz`` archive,
        or fails a check of :func:`check_npz`.
    """
    path = Path(path)
    with _open_npz(path, kind) as archive:
        members = _check_directory(path, kind, archive)
        for info in members:
            _check_header(path, kind, archive, info)
        arrays = {}
        for info in members:
            try:
                with archive.open(info) as member:
                    arrays[info.filename[: -len(".npy")]] = npy.read_array(member, allow_pickle=False)
            except _READ_ERRORS as error:
                reason = str(error) or type(error).__name__
                where = f"{path} is not a readable {kind} (.npz): member {info.filename!r}"
                raise ValueError(f"{where}: {reason}") from None
    return arrays
