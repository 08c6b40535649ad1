"""JSON as the store writes it into its TEXT columns: `dumps` (key order kept, non-ASCII as is)
and `canonical` (keys sorted), each through one encoder made once.

`json.dumps` with options builds a new encoder per call, which dominated imports; and even
`JSONEncoder.encode` builds its C encoder again (and a float closure) on every call: 1.8 µs for
a list of four alternatives, of which the encoding itself is 0.8.  The C encoder that `encode`
would build is made once here (`_reused`) and called directly; the text is the same, since it is
the very encoder `encode` uses.  Where it cannot be made (another Python), `encode` is used.
"""
from __future__ import annotations

import hashlib
import json
from json import encoder as _json_encoder
from typing import Any, Callable

_STORED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_CANON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False)
# values the reused encoder must write exactly as `encode` does before it is used
_PROBES: tuple = ([], {}, ["a", "é\u2028\"\\"], {"b": [1, 2.5, None, True], "a": {"x": -0.0}}, "s", 3, 1e300)


def _reused(enc: json.JSONEncoder) -> Callable[[Any], str]:
    """`enc.encode`, with the C encoder it would build made once (same arguments as
    `JSONEncoder.iterencode` gives it for a one-shot encoding without indent)."""
    make = getattr(_json_encoder, "c_make_encoder", None)
    if make is None or enc.indent is not None or enc.check_circular or enc.ensure_ascii:
        return enc.encode
    try:
        c = make(None, enc.default, _json_encoder.encode_basestring, enc.indent, enc.key_separator,
                 enc.item_separator, enc.sort_keys, enc.skipkeys, enc.allow_nan)

        def encode(value: Any, _c=c, _join="".join) -> str:
            return _join(_c(value, 0))

        if all(encode(v) == enc.encode(v) for v in _PROBES):
            return encode
    except Exception:  # another Python's C encoder: keep what `encode` does
        pass
    return enc.encode


# JSON as stored: key order kept (writers restore files from it), non-ASCII as is
dumps: Callable[[Any], str] = _reused(_STORED)
canonical: Callable[[Any], str] = _reused(_CANON)


def fingerprint(value: Any) -> str:
    return hashlib.sha1(canonical(value).encode("utf-8")).hexdigest()
