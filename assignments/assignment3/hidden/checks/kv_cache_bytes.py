"""Hidden checks of kv_cache_bytes: exact integers on configurations whose factors are all distinct primes.

With distinct primes a missing, doubled or swapped factor always changes the product, so it cannot hide.
The value checks accept a float holding a whole number (the type is graded once, by returns_int), and
returns_int is gated on the values (probe.gated): a function returning a constant int earns nothing.
"""


from autograder.probe import check, gate_values, gated, kind_of


def _number(size):
    """A whole-number float counts as its int here; returns_int grades the type."""
    return int(size) if type(size) is float and size.is_integer() else size


# (layers, kv_heads, head_dim, seq_len, batch, bytes_per_value)
PRIMES = [(3, 5, 7, 11, 13, 17), (19, 23, 29, 31, 37, 41), (5, 3, 11, 7, 17, 13)]


@check("kv_cache_bytes", weight=2,
       description="exact size with every argument given (batch and bytes_per_value not the defaults)")
def all_factors(impl, ref, ctx):
    outputs = {}
    for layers, kv_heads, head_dim, seq_len, batch, bpv in PRIMES:
        outputs[f"kv_cache_bytes({layers}, {kv_heads}, {head_dim}, {seq_len}, {batch}, {bpv})"] = \
            _number(impl.kv_cache.kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, bpv))
    outputs["kv_cache_bytes(seq_len=43, bytes_per_value=4, head_dim=47, batch=3, kv_heads=53, layers=59)"] = \
        _number(impl.kv_cache.kv_cache_bytes(seq_len=43, bytes_per_value=4, head_dim=47, batch=3, kv_heads=53,
                                             layers=59))
    outputs["kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, seq_len=32768, batch=16, bytes_per_value=2)"] = \
        _number(impl.kv_cache.kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, seq_len=32768, batch=16,
                                             bytes_per_value=2))
    return outputs


@check("kv_cache_bytes", weight=1, description="exact size with the default batch (1) and bytes_per_value (2)")
def default_arguments(impl, ref, ctx):
    return {
        "kv_cache_bytes(3, 5, 7, 11)": _number(impl.kv_cache.kv_cache_bytes(3, 5, 7, 11)),
        "kv_cache_bytes(layers=32, kv_heads=32, head_dim=128, seq_len=4096)":
            _number(impl.kv_cache.kv_cache_bytes(layers=32, kv_heads=32, head_dim=128, seq_len=4096)),
    }


def _ints(student, reference, ctx):
    for name, size in student.items():
        if type(size) is not int:  # judged on the decoded value in the grader's process
            yield f"{name} must return a Python int, got {kind_of(size)}"


@check("kv_cache_bytes", weight=1, verify=gated(_ints, what="kv_cache_bytes"), compare_reference=False,
       description="the size is a Python int (not a float, not a tensor)")
def returns_int(impl, ref, ctx):
    sizes = {f"kv_cache_bytes{args}": impl.kv_cache.kv_cache_bytes(*args)
             for args in [(3, 5, 7, 11, 13, 17), (32, 8, 128, 4096, 1, 2)]}
    return {**sizes, **gate_values({f"{name} as a number": _number(size) for name, size in sizes.items()})}
