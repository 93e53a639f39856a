"""What the structure tests walk: the package's modules, the drills' and the benchmarks'."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import browserd

__all__ = ["SRC", "TOOLS", "all_modules", "module_path", "modules_of", "tool_modules"]

SRC = Path(browserd.__file__).parent
#: Beside the package, the drills and the benchmarks (Python files only) are held to
#: the same line limit and the same "no import circle" rule.
TOOLS = {name: Path(__file__).resolve().parents[2] / name for name in ("supervision", "bench")}


def modules_of(package: str) -> list[str]:
    """``package`` (browserd, or one of :data:`TOOLS`) and every module under it."""
    path = SRC if package == "browserd" else TOOLS[package]
    names = [package]
    for info in pkgutil.walk_packages([str(path)], prefix=f"{package}."):
        names.append(info.name)
    return sorted(names)


def all_modules() -> list[str]:
    return modules_of("browserd")


def tool_modules() -> list[str]:
    return [name for package in sorted(TOOLS) for name in modules_of(package)]


def module_path(name: str) -> Path:
    top, *parts = name.split(".")
    base = (SRC if top == "browserd" else TOOLS[top]).joinpath(*parts)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
