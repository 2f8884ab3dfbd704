"""Owns arguments that hold tensors in tuples, lists or dicts (an LSTM cell's (h, c), a
decoder's past key values): each leaf is a graph input of its own, named after the argument
and its place (`hx` -> `hx_0`, `hx_1`; `past` -> `past_0_1`; a dict's keys by name), and the
traced function and the package's calls take them flat and put them back together."""
import re

import torch
import torch.utils._pytree as pytree

_CONTAINERS = (tuple, list, dict)


def _leaf_keys(value, prefix):
    """The names of `value`'s leaves in pytree's order (dict keys sorted as pytree does)."""
    if isinstance(value, dict):
        out = []
        for k in pytree.tree_flatten(value)[1].context:
            key = re.sub(r"[^A-Za-z0-9_]", "_", str(k))
            out += _leaf_keys(value[k], f"{prefix}_{key}")
        return out
    if isinstance(value, (tuple, list)):
        out = []
        for k, v in enumerate(value):
            out += _leaf_keys(v, f"{prefix}_{k}")
        return out
    return [prefix]


def flatten(names, values):
    """(leaf names, leaf values, structure): `structure` per argument None (a tensor or a
    number) or (leaf count, pytree spec)."""
    flat_names, flat_values, structure = [], [], []
    for name, value in zip(names, values):
        if not isinstance(value, _CONTAINERS):
            structure.append(None)
            flat_names.append(name)
            flat_values.append(value)
            continue
        leaves, spec = pytree.tree_flatten(value)
        keys = _leaf_keys(value, name)
        if not leaves or len(keys) != len(leaves):
            raise ValueError(f"fuserc.export: argument {name!r} holds no tensors or numbers")
        structure.append((len(leaves), spec))
        flat_names += keys
        flat_values += leaves
    if len(set(flat_names)) != len(flat_names):
        raise ValueError("fuserc.export: two arguments' leaves have one name "
                         f"({', '.join(flat_names)})")
    return flat_names, flat_values, structure


def nested(structure):
    return any(s is not None for s in structure)


def regroup(fn, structure):
    """fn over flat leaves (and any arguments after them, a module's parameters): each
    structured argument put back together from its leaves."""
    def _fuserc_arguments(*flat):
        args, k = [], 0
        for s in structure:
            if s is None:
                args.append(flat[k])
                k += 1
            else:
                count, spec = s
                args.append(pytree.tree_unflatten(list(flat[k:k + count]), spec))
                k += count
        return fn(*args, *flat[k:])
    return _fuserc_arguments


def expand_dynamic(dynamic, names, values):
    """`dynamic` with an entry for a structured argument (of `values`, the arguments as given)
    applied to each of its tensor leaves ({"past": {0: "B", 2: "P"}} names those dims of every
    cached key and value)."""
    if not dynamic:
        return dynamic
    out = dict(dynamic)
    for name, value in zip(names, values):
        if not isinstance(value, _CONTAINERS) or name not in out:
            continue
        dims = out.pop(name)
        if not isinstance(dims, dict):
            raise ValueError(f"dynamic: argument {name!r} holds tensors: give a dict from dims "
                             "to symbols, applied to each of them")
        for leaf, v in zip(_leaf_keys(value, name), pytree.tree_flatten(value)[0]):
            if isinstance(v, torch.Tensor):
                out.setdefault(leaf, dims)
    return out


def _leaves_as_given(name, value, spec):
    """The leaves of argument `name` as a call gives it, which must have the example's `spec`."""
    leaves, given = pytree.tree_flatten(value)
    if given != spec:
        raise TypeError(f"argument {name!r} has another structure than the example's "
                        f"({given} against {spec})")
    return leaves


def flatten_call(structure, names, args, kwargs):
    """A package call's positional and keyword arguments with each structured argument given
    as its leaves."""
    flat_args = []
    for k, a in enumerate(args):
        s = structure[k] if k < len(structure) else None
        flat_args += [a] if s is None else _leaves_as_given(names[k], a, s[1])
    flat_kwargs = {}
    for key, v in kwargs.items():
        k = names.index(key) if key in names else None
        s = structure[k] if k is not None and k < len(structure) else None
        if s is None:
            flat_kwargs[key] = v
        else:
            flat_kwargs.update(zip(_leaf_keys(v, key), _leaves_as_given(key, v, s[1])))
    return flat_args, flat_kwargs
