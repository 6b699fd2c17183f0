"""The condenser modules import one another without cycles, and the registry is imported lazily in one place only."""

from __future__ import annotations

import ast
from pathlib import Path

import openhands_memory.condenser

PACKAGE = Path(openhands_memory.condenser.__file__).parent
PREFIX = "openhands_memory.condenser"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PREFIX, *parts])


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _targets(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The condenser modules an import statement runs (a name imported from a package may be a submodule)."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        assert node.level == 0, "condenser modules use absolute imports"
        module = node.module or ""
        names = {f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names}
    return {name for name in names if name in MODULES}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(module: str) -> tuple[set[str], list[tuple[str, str]]]:
    """What `module` imports when it is imported (TYPE_CHECKING blocks left out), and what its
    functions import when they run, as (function, module) pairs."""
    at_import: set[str] = set()
    in_functions: list[tuple[str, str]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                if function is None:
                    at_import.update(_targets(child))
                else:
                    in_functions.extend((function, target) for target in sorted(_targets(child)))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, child.name if function is None else function)
            else:
                visit(child, function)

    visit(ast.parse(MODULES[module].read_text(encoding="utf-8")), None)
    return at_import, in_functions


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (its modules in order, the first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph[node]):
            found = walk(target)
            if found is not None:
                return found
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        found = walk(node)
        if found is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_condenser_module_imports_itself_back_at_import_time_or_when_its_functions_run() -> None:
    # Importing `a.b.c` first runs the packages `a` and `a.b`: that is how every package works, and
    # not followed here; a module importing from `openhands_memory.condenser` itself would be.
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        at_import, in_functions = imports(module)
        lazy = {target for function, target in in_functions if (module, function) != (f"{PREFIX}.base", "from_config")}
        graph[module] = at_import | lazy
    assert _cycle(graph) is None


def test_the_only_lazy_import_between_condenser_modules_is_from_config_reaching_the_registry() -> None:
    lazy = {(module, function, target) for module in MODULES for function, target in imports(module)[1]}
    assert lazy == {(f"{PREFIX}.base", "from_config", f"{PREFIX}.config")}


def test_the_registry_imports_the_strategies_and_the_strategies_never_import_the_registry() -> None:
    assert f"{PREFIX}.impl" in imports(f"{PREFIX}.config")[0]
    for module in MODULES:
        if module != f"{PREFIX}.config" and module != PREFIX:
            assert f"{PREFIX}.config" not in imports(module)[0], module
    assert imports(f"{PREFIX}.base")[0].isdisjoint({f"{PREFIX}.config", f"{PREFIX}._config_base", f"{PREFIX}.impl"})
