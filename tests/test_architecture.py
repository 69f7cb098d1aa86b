"""The package's import graph: no cycles, and imports point down the layers of DESIGN.md.

Every ``import`` statement counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``): a function-level import is still a dependency, only a later one.
"""

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pgmpy_dp"

#: DESIGN.md's layers, lowest first; a module may import its own layer and those below
LAYERS = {
    "_blas": 0, "_memory": 0, "_progress": 0,
    "privacy": 1,
    "tables": 2,
    "engine": 3,
    "estimators": 4,
    "structure": 5, "synthesis": 5,
    # the sampler needs only the engine and the domain; the synthesizer's ``sample`` delegates to it
    "sampling": 5,
    "uncertainty": 6,
    "querying": 7, "accessor": 7, "dask_accessor": 7, "evaluation": 7, "datasets": 7, "cli": 7, "__main__": 7,
    "testing": 7,
}

#: Packages of one layer that must stay apart: each imports neither of the others.
APART = [("structure", "synthesis")]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known) -> set[str]:
    """The package's modules that ``name`` (at ``path``) imports, resolved to the deepest known module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # "from .x import y": y may be a submodule of x
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


@functools.cache  # every test reads the same graph: parse the package once
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layer(name: str) -> int | None:
    parts = name.split(".")
    return None if len(parts) == 1 else LAYERS.get(parts[1])


def test_the_import_graph_has_no_cycle():
    assert cycles(graph()) == []


def test_every_module_belongs_to_a_layer():
    unplaced = [n for n in graph() if n != "pgmpy_dp" and layer(n) is None]
    assert unplaced == [], f"modules outside DESIGN.md's layers (add them to LAYERS): {unplaced}"


def test_imports_point_down_the_layers():
    upward = sorted(
        (name, target)
        for name, targets in graph().items()
        for target in targets
        if target != "pgmpy_dp" and name != "pgmpy_dp" and layer(target) > layer(name)
    )
    assert upward == [], f"imports from a lower layer to a higher one: {upward}"


def test_structure_and_synthesis_do_not_import_each_other():
    """The structure learners and the synthesizer's methods are two families of one layer."""
    crossing = sorted(
        (name, target)
        for name, targets in graph().items()
        for target in targets
        for pair in APART
        for a, b in (pair, pair[::-1])
        if name.split(".")[1:2] == [a] and target.split(".")[1:2] == [b]
    )
    assert crossing == [], f"imports between packages that must stay apart: {crossing}"


def test_no_module_imports_the_package_root():
    """``pgmpy_dp/__init__.py`` imports every layer: a module importing it would close a cycle."""
    assert [n for n, targets in graph().items() if "pgmpy_dp" in targets] == []


def test_the_checker_sees_a_cycle_and_a_function_level_import(tmp_path):
    """The graph builder reads imports inside functions, and the cycle finder reports a two-module loop."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ..tables.release import MarginalRelease\n")
    known = {"pgmpy_dp.privacy.m": module, "pgmpy_dp.tables.release": module}
    assert imported("pgmpy_dp.privacy.m", module, known) == {"pgmpy_dp.tables.release"}
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_library_does_not_import_its_test_tooling():
    """``pgmpy_dp.testing`` serves the tests and benchmarks; no library module may depend on it."""
    users = sorted(n for n, targets in graph().items() if not n.startswith("pgmpy_dp.testing")
                   and any(t.startswith("pgmpy_dp.testing") for t in targets))
    assert users == [], f"library modules importing the test tooling: {users}"


def test_the_package_root_shows_only_its_public_names_and_modules():
    """``dir(pgmpy_dp)``: the names of ``__all__``, ``__version__`` and the package's own modules, no stray imports."""
    import types

    import pgmpy_dp

    stray = sorted(
        n for n in dir(pgmpy_dp)
        if not n.startswith("__") and n not in pgmpy_dp.__all__
        and not (isinstance(getattr(pgmpy_dp, n), types.ModuleType) and getattr(pgmpy_dp, n).__name__ == f"pgmpy_dp.{n}")
    )
    assert stray == [], f"names in dir(pgmpy_dp) that are neither public nor the package's modules: {stray}"


def private_imports(name: str, path: Path) -> list[str]:
    """``from <another module of the package> import _name``: a name its module keeps to itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("pgmpy_dp")):
            found += [
                f"{name}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_no_module_imports_another_modules_private_names():
    # a private name used by a second module is part of its interface: give it a public name
    # (the package's own layer-0 modules, ``_blas``, ``_memory`` and ``_progress``, are package-internal, not private names)
    found = [hit for name, path in modules().items() for hit in private_imports(name, path)]
    assert found == [], f"private names imported across modules: {found}"


def test_the_private_import_check_sees_one(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text("from .ledger import _Account, LedgerEntry\nfrom numpy import _globals\n")
    assert private_imports("pgmpy_dp.privacy.mod", module) == ["pgmpy_dp.privacy.mod: from .ledger import _Account"]
