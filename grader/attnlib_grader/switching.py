"""Switching off what a set forbids: the equations it names, every implementation of each, by identity.

A set's ``switch_off`` names equations (``"masked_softmax"``, ``"cross_entropy"``), never dotted paths:
``attnlib.grading.implementations`` holds, for each equation, every implementation in attnlib and in torch
(Python functions, classes, methods) and the aten operators below them. ``resolve_equations`` turns the names
into those two lists (in the grader); ``switch_off`` applies them (in the sandbox, before any learner code):

- each implementation is found once (the real object); every module attribute, and every dict or list that
  the garbage collector knows to hold it, is pointed at a stand-in that records the call and fails; a Python
  function's own code is replaced too (so a reference kept anywhere else fails) and every method a class
  defines; ``importlib.reload`` switches them off again;
- each aten operator gets a failing kernel in torch's dispatcher, below every Python or C entry point that
  reaches it (``torch._C._nn``, ``torch._C._VariableFunctions``, ``torch.ops.aten``, tensor methods).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

REACHED: set[str] = set()  # the switched-off names the learner's code called (in the sandbox)
# What this process switched off, (dotted names, operators), or None: applied once, in the zygote of the set
# (every learner's process is a fork of it) or else in the learner's process before the cells run.
APPLIED: tuple[list[str], list[str]] | None = None


def _reached(dotted: str) -> None:
    REACHED.add(str(dotted)[:200])


def switched_off_message(dotted: str) -> str:
    """What a switched-off call raises, in the language of the messages made now (the submission's)."""
    from attnlib.grading.messages import say

    return say(
        "{dotted} is switched off while grading: this exercise asks you to write it yourself", dotted=dotted
    )


def resolve(dotted: str) -> Any:
    """The object a dotted name stands for (``torch.nn.MultiheadAttention``), or None."""
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 - not a module at this depth: try a shorter prefix
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def resolve_equations(equations: list[str]) -> tuple[list[str], list[str]]:
    """(dotted implementations, aten operators) of the equations a set names; ValueError for a name that
    is not an equation of ``attnlib.grading.implementations``."""
    from attnlib.grading import implementations

    unknown = [e for e in equations if e not in implementations.EQUATIONS]
    if unknown:
        raise ValueError(
            f"switch_off names {unknown}, which are not equations of attnlib.grading.implementations"
        )
    dotted, operators = [], []
    for name in equations:
        equation = implementations.EQUATIONS[name]
        dotted += [d for d in equation.implementations if d not in dotted]
        operators += [op for op in equation.operators if op not in operators]
    return dotted, operators


def _off_function(dotted: str) -> types.FunctionType:
    """A function that records the call and fails; its code has no free variable and reaches this module
    through ``sys.modules``, so it can also replace the code of the original function object. Its message is
    made when it is called, in the submission's language (the set's zygote switched it off for every
    submission)."""
    namespace: dict[str, Any] = {}
    exec(
        "def off(*args, **kwargs):\n"
        "    import sys\n"
        f"    sys.modules['attnlib_grader.switching']._reached({dotted!r})\n"
        f"    raise RuntimeError(sys.modules['attnlib_grader.switching'].switched_off_message({dotted!r}))\n",
        namespace,
    )
    return namespace["off"]


def _switch_off_operators(operators: list[str]) -> None:
    """Register failing kernels for these aten operators. The registration object is kept alive by a leaked
    reference only, so no Python object leads to it (``gc`` cannot undo it)."""
    import ctypes
    import warnings

    import torch

    if not operators:
        return
    library = torch._C._dispatch_library("IMPL", "aten", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        for op in operators:
            for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CPU", "AutogradCPU"):
                try:
                    library.impl(op, key, _off_function(f"torch.ops.aten.{op}"))
                except Exception:  # noqa: BLE001 - a key this operator has no kernel for
                    pass
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    del library


def _replace(obj: Any, dotted: str, off: types.FunctionType) -> None:
    if isinstance(obj, types.FunctionType):
        try:
            obj.__code__ = off.__code__
            obj.__defaults__, obj.__kwdefaults__ = None, None
        except ValueError:  # a closure: its references are still replaced
            pass
    elif isinstance(obj, type):  # every method it defines, its constructor included
        methods = [
            k for k, v in vars(obj).items() if isinstance(v, (types.FunctionType, staticmethod, classmethod))
        ]
        for method in {"__init__", *methods}:
            try:
                setattr(obj, method, off)
            except (TypeError, AttributeError):
                pass
    if dotted.startswith("torch.ops."):  # an op namespace caches what it found; replace the cache
        try:
            setattr(resolve(dotted.rpartition(".")[0]), dotted.rpartition(".")[2], off)
        except Exception:  # noqa: BLE001
            pass


def _swap_references(targets: dict[int, tuple[Any, str, Any]]) -> None:
    """Point every module attribute, dict and list holding a target at its stand-in."""
    import gc

    gc.unfreeze()  # gc.get_referrers does not see a frozen heap (the zygote freezes its own after this)
    objects = [entry[0] for entry in targets.values()]
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if isinstance(space, dict):
            for key, value in list(space.items()):
                if id(value) in targets and value is targets[id(value)][0]:
                    space[key] = targets[id(value)][2]
    mine = {id(targets), id(objects)}

    def swap(value: Any) -> Any:
        if id(value) in targets and value is targets[id(value)][0]:
            return targets[id(value)][2]
        if isinstance(value, tuple) and any(id(v) in targets for v in value):
            return tuple(swap(v) for v in value)
        return value

    holders = [h for h in gc.get_referrers(*objects) if id(h) not in mine]
    tuples = [h for h in holders if isinstance(h, tuple)]  # immutable: replaced where they are held
    if tuples:
        holders += [h for h in gc.get_referrers(*tuples) if id(h) not in mine]
    for holder in holders:
        if isinstance(holder, dict):
            for key, value in list(holder.items()):
                if swap(value) is not value:
                    holder[key] = swap(value)
        elif isinstance(holder, list):
            for i, value in enumerate(holder):
                if swap(value) is not value:
                    holder[i] = swap(value)


def switch_off(dotted_names: list[str], operators: list[str] = ()) -> None:
    """Make every listed implementation unusable under every name, and every listed operator below them."""
    import importlib

    global APPLIED
    if APPLIED is None:
        APPLIED = (list(dotted_names), list(operators))

    targets: dict[int, tuple[Any, str, Any]] = {}
    for dotted in dotted_names:
        obj = resolve(dotted)
        if obj is None or id(obj) in targets or isinstance(obj, types.ModuleType):
            continue
        off = _off_function(dotted)
        targets[id(obj)] = (obj, dotted, off)
        _replace(obj, dotted, off)
    if targets:
        _swap_references(targets)
    _switch_off_operators(list(operators))
    if not (targets or operators):
        return
    real_reload = importlib.reload

    def reload(module):
        result = real_reload(module)
        switch_off(dotted_names)
        return result

    importlib.reload = reload


def switched_off_files(switch_off: list[str]) -> list[Path]:
    """The files of attnlib that hold a switched-off implementation, and their compiled copies: what
    Gradescope's fallback (no sandbox, so no blanked copy) keeps from the learner's user while it grades."""
    import inspect

    import attnlib

    package = Path(attnlib.__file__).resolve().parent
    files: set[Path] = set()
    for dotted in switch_off:
        obj = resolve(dotted)
        try:
            source = Path(inspect.getsourcefile(obj)).resolve()
            source.relative_to(package)
        except (TypeError, ValueError, OSError):
            continue
        files |= {source, *source.parent.glob(f"__pycache__/{source.stem}.*.pyc")}
    return sorted(files)


def blank_sources(copy: Path, package: Path, switch_off: list[str]) -> None:
    """In the copy of attnlib, replace the source of every switched-off attnlib function, class or method by
    one that fails: reloading a module or executing its file gives back nothing that is switched off."""
    import ast
    import inspect

    edits: dict[Path, dict[str, str]] = {}
    for dotted in switch_off:
        obj = resolve(dotted)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        try:
            source = Path(inspect.getsourcefile(obj)).resolve()
            relative = source.relative_to(package)
        except (TypeError, ValueError, OSError):
            continue
        # a method (attnlib.layers.AdditiveScore.forward) is keyed "AdditiveScore.forward"
        edits.setdefault(copy / relative, {})[obj.__qualname__] = switched_off_message(dotted)
    for path, names in edits.items():
        try:  # a module that moved since it was imported: its functions are still switched off in memory
            lines = path.read_text().split("\n")
            tree = ast.parse("\n".join(lines))
        except (OSError, SyntaxError, ValueError):
            continue
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        nodes = [(node.name, node) for node in tree.body if isinstance(node, defs) and node.name in names]
        nodes += [
            (f"{node.name}.{method.name}", method)
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            for method in node.body
            if isinstance(method, defs[:2]) and f"{node.name}.{method.name}" in names
        ]
        for qualname, node in sorted(nodes, key=lambda n: n[1].lineno, reverse=True):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            message, indent = names[qualname], " " * node.col_offset
            if isinstance(node, ast.ClassDef):
                stub = [
                    f"class {node.name}:",
                    "    def __init__(self, *args, **kwargs):",
                    f"        raise RuntimeError({message!r})",
                ]
            else:
                stub = [
                    f"{indent}def {node.name}(*args, **kwargs):",
                    f"{indent}    raise RuntimeError({message!r})",
                ]
            lines[first : node.end_lineno] = stub
        path.write_text("\n".join(lines))
