"""Owns writing tensors as a safetensors file (the format `fuserc` reads constants' `data`
from): an 8-byte little-endian header length, the JSON header (dtype, shape, byte range per
tensor, padded with spaces to 8 bytes) and the tensors' bytes, little-endian, row-major. The file
is written to a temporary name and renamed, so that it is whole or absent."""
import json
import os
import struct
import secrets

import torch

_CODE = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
         torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
         torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def _bytes(t):
    t = t.detach().to("cpu").contiguous()
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.view(torch.int16)
    elif t.dtype == torch.bool:
        t = t.to(torch.uint8)
    return t.numpy().tobytes()  # numpy's native order: little-endian on every host fuserc runs


def write(path, tensors):
    """Writes {name: tensor} to `path`, tensors in name order (the same file for the same
    tensors)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _CODE:
            raise ValueError(f"fuserc: a constant {name!r} of dtype {t.dtype}, which a "
                             "safetensors file for fuserc cannot hold")
        blob = _bytes(t)
        header[name] = {"dtype": _CODE[t.dtype], "shape": [int(d) for d in t.shape],
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    def fill(f):
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    write_whole(path, "wb", fill)


def write_whole(path, mode, fill):
    """Calls fill(f) on a temporary file beside `path` opened with `mode` and renames it to
    `path` (with the permissions a new file gets), so that `path` is whole or untouched."""
    folder = os.path.dirname(os.path.abspath(path))
    # Created as open() creates a file (0666 less the umask), under a name no one else has.
    tmp = os.path.join(folder, f".fuserc_{os.getpid()}_{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, mode) as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
