"""The trusted half of a judged sandboxed run (see ``benchsmith.evaluate.humanext.judge``).  Standard library only.

benchsmith sends ``<this file> + "\\nmain(<config>)\\n"`` to the sandbox as the program.  It runs as H, the
run's first process, and never executes a line of the untrusted code:

1. H makes itself non-dumpable (``PR_SET_DUMPABLE 0``): a process of the same uid can then neither ptrace it
   nor open ``/proc/<H>/fd``, ``mem`` or ``environ`` (those files become root's).
2. H keeps its stdout -- the results channel to benchsmith -- and forks C with a private pipe C -> H.
3. C points its own stdout at stderr, closes every other descriptor (the results channel included) *before*
   the untrusted code is compiled, drops any capabilities it holds, then runs the program as ``__main__`` and
   calls the candidate on each input, in the tests' order, sending one JSON line per call: ``{"i": k, "v":
   <plain data>}``, ``{"i": k, "error": ...}`` or ``{"i": k, "not_plain": <type>}``; ``{"fatal": ...}`` when the
   program fails before the candidate can be called.
4. H reads C's lines, accepts only a well-formed record with the next expected index, re-serialises it itself
   onto the results channel, and after the last call (or when C dies, or misbehaves) kills C and writes
   ``{"end": ...}`` when calls are missing, then ``{"done": <records>}``, and exits.

What this buys, and what it cannot: the untrusted code cannot write to the results channel at all, so it cannot
make records appear out of order, for calls that were not made, or after it died, and neither its stdout, its
exit status nor its ``atexit`` handlers reach benchsmith.  It can of course answer each call with any value it
likes -- that is what a function is; the expected values are never in this process (nor in any file it can
read): benchsmith compares in its own process, on plain data it decoded itself.
"""

import collections
import json
import os
import signal
import sys

PLAIN_DEPTH = 100
# dict subclasses of the standard library that compare with a dict by value, as a dict does: sent as a dict
# (the classes are taken now, before any untrusted code could replace the names)
DICT_LIKE = (collections.OrderedDict, collections.defaultdict, collections.Counter)
HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set on every class made by a class statement, never on a C type's
TYPE_FLAGS = type.__dict__["__flags__"].__get__  # read past any metaclass
TYPE_MRO = type.__dict__["__mro__"].__get__
COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__")


class NotPlain(Exception):
    pass


def is_namedtuple(t):
    """A class made by ``collections.namedtuple``/``typing.NamedTuple`` (or a plain subclass of one): compared as
    the tuple it is, since none of its classes defines a comparison or a hash of its own."""
    if type(t) is not type:
        return False
    mro = TYPE_MRO(t)
    if mro[-2:] != (tuple, object) or len(mro) < 3:
        return False
    own = mro[:-2]
    if any(type(c) is not type or any(name in c.__dict__ for name in COMPARISONS) for c in own):
        return False
    return any(type(c.__dict__.get("_fields")) is tuple for c in own)


def well_known(value, t):
    """Plain data for a value of a well-known non-plain type, compared by the tests' ``==`` as that data
    would be: numpy scalars and 0-d arrays (their ``item()``), Decimal and Fraction (exact, tagged), or
    ``NotPlain``.  The type is looked up where the program's own imports put it; what comes back is encoded
    again with exact types, so nothing but plain data ever leaves (benchsmith compares, never this process)."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and not TYPE_FLAGS(t) & HEAPTYPE:
        if t is getattr(numpy, "ndarray", None) and value.ndim == 0 or isinstance(value, numpy.generic):
            item = value.item()
            if type(item) is not t:
                return item
    for module, name in (("decimal", "Decimal"), ("_pydecimal", "Decimal")):
        if t is getattr(sys.modules.get(module), name, None) and t is not None:
            return {"decimal": str(value)}
    if t is getattr(sys.modules.get("fractions"), "Fraction", None) and t is not None:
        return {"fraction": [int.__index__(value.numerator), int.__index__(value.denominator)]}
    raise NotPlain(type_name(value))


def encode(value, depth=0):
    """Plain data as tagged JSON: exact types only (an ``int`` subclass is not an ``int``)."""
    if depth > PLAIN_DEPTH:
        raise NotPlain("nested deeper than %d" % PLAIN_DEPTH)
    t = type(value)
    if value is None or t is bool or t is int or t is float or t is str:
        return value
    if t is list:
        return [encode(x, depth + 1) for x in value]
    if t is tuple:
        return {"tuple": [encode(x, depth + 1) for x in value]}
    if t is dict or t in DICT_LIKE:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(value)]}
    if t is set:
        return {"set": [encode(x, depth + 1) for x in value]}
    if t is frozenset:
        return {"frozenset": [encode(x, depth + 1) for x in value]}
    if t is complex:
        return {"complex": [value.real, value.imag]}
    if t is bytes:
        return {"bytes": value.hex()}
    if is_namedtuple(t):
        return {"tuple": [encode(tuple.__getitem__(value, i), depth + 1) for i in range(tuple.__len__(value))]}
    known = well_known(value, t)
    if type(known) is dict:  # a tag made here: its parts are plain already
        return known
    return encode(known, depth + 1)


def decode(obj):
    """Inverse of ``encode`` for the call arguments benchsmith sends (trusted data)."""
    if isinstance(obj, list):
        return [decode(x) for x in obj]
    if isinstance(obj, dict):
        (tag, body), = obj.items()
        if tag == "tuple":
            return tuple(decode(x) for x in body)
        if tag == "dict":
            return {decode(k): decode(v) for k, v in body}
        if tag == "set":
            return {decode(x) for x in body}
        if tag == "frozenset":
            return frozenset(decode(x) for x in body)
        if tag == "complex":
            return complex(body[0], body[1])
        if tag == "bytes":
            return bytes.fromhex(body)
        raise ValueError("unknown tag %r" % tag)
    return obj


def type_name(value):
    try:
        t = type(value)
        return "%s.%s" % (t.__module__, t.__qualname__)
    except BaseException:
        return "<unnamed type>"


def describe(exc):
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    return "%s: %s" % (type_name(exc).replace("builtins.", ""), text[:300])


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def drop_capabilities():
    """Under a user namespace (non-root mode) the program runs as that namespace's uid 0 with every capability
    of it, CAP_SYS_PTRACE included, which would reach H despite non-dumpable: drop the bounding set, lock out
    root's exec-time capabilities (securebits NOROOT), then clear every set.  As a throwaway uid the program
    holds none and this changes nothing.  Best effort: where a step is refused there is nothing to drop."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if os.getuid() == 0:
            for cap in range(64):
                libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
            libc.prctl(28, 0x3 | 0x4 | 0x8, 0, 0, 0)  # PR_SET_SECUREBITS: NOROOT(+LOCKED), NO_SETUID_FIXUP

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                        ("inheritable", ctypes.c_uint32)]

        header = Header(0x20080522, 0)
        data = (Data * 2)()
        libc.capset(ctypes.byref(header), data)
    except BaseException:
        pass


def child(cfg, rep_w, results):
    """C: run the program and call the candidate; everything from here on may be hostile."""
    os.dup2(2, 1)
    os.close(results)
    os.closerange(3, rep_w)
    os.closerange(rep_w + 1, 1 << 16)
    drop_capabilities()
    limit = cfg["record_limit"]

    def send(record):
        try:
            line = json.dumps(record)
        except (ValueError, TypeError, RecursionError) as exc:  # e.g. an int over the digit limit
            line = json.dumps({"i": record.get("i"), "error": "cannot encode the value: " + describe(exc)})
        if len(line) > limit:
            line = json.dumps({"i": record.get("i"), "too_large": len(line)})
        write_all(rep_w, line.encode() + b"\n")

    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else "program.py"
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        exec(compile(cfg["source"], "program.py", "exec"), main.__dict__)
    except BaseException as exc:
        try:
            import traceback

            traceback.print_exc()
        except BaseException:
            pass
        send({"fatal": describe(exc)})
        os._exit(1)
    fn = main.__dict__.get(cfg["entry"])
    for k, (args, kwargs) in enumerate(cfg["calls"]):
        try:
            if fn is None:
                raise NameError("name %r is not defined" % cfg["entry"])
            value = fn(*decode(args), **decode(kwargs))
            record = {"i": k, "v": encode(value)}
        except NotPlain as exc:
            record = {"i": k, "not_plain": str(exc)}
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included: the call did not return
            record = {"i": k, "error": describe(exc)}
        send(record)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(0)


RECORD_KEYS = ({"i", "v"}, {"i", "error"}, {"i", "not_plain"}, {"i", "too_large"})


def relay(cfg, rep_r, pid, results):
    """H: forward C's records, checked, then end the run."""
    expected = len(cfg["calls"])
    limit = cfg["record_limit"]
    got, buf, stop = 0, b"", None
    while got < expected and stop is None:
        try:
            chunk = os.read(rep_r, 1 << 16)
        except InterruptedError:
            continue
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf and stop is None and got < expected:
            line, buf = buf.split(b"\n", 1)
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):  # nested past this stack, digits over the limit
                stop = {"violation": "unreadable record for call %d" % got}
                break
            if type(rec) is dict and set(rec) == {"fatal"} and type(rec["fatal"]) is str:
                stop = {"fatal": rec["fatal"][:1000]}
                break
            if type(rec) is not dict or set(rec) not in RECORD_KEYS or rec["i"] != got or type(rec["i"]) is not int:
                stop = {"violation": "unexpected record for call %d" % got}
                break
            write_all(results, json.dumps(rec).encode() + b"\n")
            got += 1
        if len(buf) > limit + 1024:
            stop = {"violation": "record for call %d over %d bytes" % (got, limit)}
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    status = None
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    if stop is not None:
        write_all(results, json.dumps(stop).encode() + b"\n")
    if got < expected:
        how = "unknown"
        if status is not None:
            code = os.waitstatus_to_exitcode(status)
            how = "exit status %d" % code if code >= 0 else "killed by signal %d" % -code
        write_all(results, json.dumps({"end": how, "at": got}).encode() + b"\n")
    write_all(results, json.dumps({"done": got}).encode() + b"\n")
    os._exit(0)


def main(config):
    cfg = json.loads(config)
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
    except BaseException as exc:
        sys.stdout.write(json.dumps({"harness_error": describe(exc)}) + "\n")
        sys.stdout.flush()
        os._exit(0)
    sys.stdout.flush()
    sys.stderr.flush()
    results = os.dup(1)
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rep_r)
            child(cfg, rep_w, results)
        finally:
            os._exit(1)
    os.close(rep_w)
    relay(cfg, rep_r, pid, results)
