#!/usr/bin/env python3
"""The dependency-closure check: every file outside the project that the build or the Python
tests read comes from a Debian package that scripts/debian-packages.txt brings in.

A package is brought in when the list names it, or a brought-in package Depends or
Pre-Depends on it (recursively), or it is Essential (on every Debian system). Recommends do
not count: `make deps` installs with --no-install-recommends, as a clean machine would.

What the build reads: the headers of every compile (ninja's deps log), the tools, libraries
and CMake files named in build.ninja and CMakeFiles/rules.ninja, and the libraries and package
configs in CMakeCache.txt. What Python reads: every module (and shared object) loaded by
importing what the project's Python files import, in the project's virtualenv; the
virtualenv's own files (PyPI, pinned in python/requirements-test.txt) and the project's are
exempt.

When the check fails it names each file, the package that owns it, and the line to add.
Exit status: 0 pass, 1 a file from outside the closure, 2 the check could not run.
Only the standard library is used: it runs before anything is installed.
"""

import argparse
import ast
import glob
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

PACKAGE_LIST = "scripts/debian-packages.txt"


class CheckError(Exception):
    """The check itself could not run (no build, no ninja, unreadable dpkg database)."""


# ---- The dpkg database -----------------------------------------------------------------

@dataclass
class Package:
    name: str
    depends: list = field(default_factory=list)      # [[alternative, ...], ...]
    recommends: list = field(default_factory=list)   # [[alternative, ...], ...]
    provides: list = field(default_factory=list)
    essential: bool = False


def parse_relations(text):
    """'a (>= 1) | b:any, c' -> [['a', 'b'], ['c']]: versions and arch qualifiers dropped."""
    groups = []
    for group in text.split(","):
        alternatives = []
        for alternative in group.split("|"):
            name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alternative).strip()
            name = name.split(":")[0]
            if name:
                alternatives.append(name)
        if alternatives:
            groups.append(alternatives)
    return groups


def parse_status(text):
    """The installed packages of a dpkg status file, by name."""
    packages = {}
    for stanza in re.split(r"\n\s*\n", text):
        fields, last = {}, None
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") and last:
                fields[last] += " " + line.strip()
            elif ":" in line:
                last, value = line.split(":", 1)
                fields[last] = value.strip()
        if "Package" not in fields or not fields.get("Status", "").endswith(" installed"):
            continue
        packages[fields["Package"]] = Package(
            name=fields["Package"],
            depends=parse_relations(fields.get("Pre-Depends", "")) +
            parse_relations(fields.get("Depends", "")),
            recommends=parse_relations(fields.get("Recommends", "")),
            provides=[alt for group in parse_relations(fields.get("Provides", ""))
                      for alt in group],
            essential=fields.get("Essential", "") == "yes")
    return packages


def providers(packages):
    """Virtual package name -> the installed packages that provide it."""
    by_virtual = {}
    for package in packages.values():
        for virtual in package.provides:
            by_virtual.setdefault(virtual, []).append(package.name)
    return by_virtual


def resolve_group(alternatives, packages, by_virtual):
    """The package that satisfies one dependency group on a clean machine: apt takes the
    first alternative it can install; here, the first that is installed or provided."""
    for name in alternatives:
        if name in packages:
            return name
        if by_virtual.get(name):
            return sorted(by_virtual[name])[0]
    return None


def closure(roots, packages):
    """The roots and every package they Depend or Pre-Depend on, recursively."""
    by_virtual = providers(packages)
    seen, stack = set(), list(roots)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        package = packages.get(name)
        if package is None:
            continue
        for group in package.depends:
            chosen = resolve_group(group, packages, by_virtual)
            if chosen and chosen not in seen:
                stack.append(chosen)
    return seen


def brought_in(listed, packages):
    essential = [p.name for p in packages.values() if p.essential]
    return closure(list(listed) + essential, packages)


def read_owner_index(admin_dir):
    """Path -> the packages whose file lists name it (dpkg's info/*.list)."""
    owners = {}
    lists = glob.glob(os.path.join(admin_dir, "info", "*.list"))
    if not lists:
        raise CheckError(f"no package file lists under {admin_dir}/info: is this Debian?")
    for list_file in lists:
        package = os.path.basename(list_file)[:-len(".list")].split(":")[0]
        with open(list_file, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                owners.setdefault(line.rstrip("\n"), set()).add(package)
    return owners


def merged_usr_aliases(path):
    """Debian 12 merges /bin, /sbin and /lib into /usr; a package may list either form."""
    yield path
    for top in ("bin", "sbin", "lib", "lib64"):
        if path.startswith(f"/usr/{top}/"):
            yield path[len("/usr"):]
        elif path.startswith(f"/{top}/"):
            yield "/usr" + path


def ownership_candidates(path):
    """The path itself first (a -dev package's symlink is what the build reads), then each
    step of its symlink chain, then the fully resolved file."""
    seen = []
    current = path
    for _ in range(40):
        seen.append(current)
        if not os.path.islink(current):
            break
        current = os.path.normpath(os.path.join(os.path.dirname(current),
                                                os.readlink(current)))
    seen.append(os.path.realpath(path))
    for candidate in seen:
        yield from merged_usr_aliases(candidate)


def owners_of(path, owner_index):
    for candidate in ownership_candidates(path):
        if candidate in owner_index:
            return sorted(owner_index[candidate])
    return []


# ---- What the build reads ----------------------------------------------------------------

USR_PATH = re.compile(r"(/usr/[^\s;:$\"'|]+)")


def cmake_cache(build_dir):
    entries = {}
    path = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.isfile(path):
        raise CheckError(f"{path} is missing: build first (`make build`)")
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = re.match(r"([A-Za-z0-9_.+-]+):([A-Z]+)=(.*)$", line.rstrip("\n"))
            if match:
                entries[match.group(1)] = (match.group(2), match.group(3))
    return entries


def is_library(path):
    name = os.path.basename(path)
    return name.endswith(".a") or ".so" in name


def cache_files(build_dir):
    """The libraries (FILEPATH entries) and package configs (the files of <Pkg>_DIR) that
    configure found. Other FILEPATH entries are tools CTest records (git, valgrind) that
    the build never runs; the tools it runs are in rules.ninja."""
    for name, (kind, value) in cmake_cache(build_dir).items():
        for path in value.split(";"):
            if not path.startswith("/usr/"):
                continue
            if kind == "FILEPATH" and os.path.isfile(path) and is_library(path):
                yield path, f"CMakeCache.txt: {name}"
            elif kind == "PATH" and name.endswith("_DIR") and os.path.isdir(path):
                for config in sorted(glob.glob(os.path.join(path, "*.cmake"))):
                    yield config, f"CMakeCache.txt: {name}"


def ninja_files(build_dir):
    """Absolute /usr paths in build.ninja and rules.ninja: link libraries, the compiler and
    other tools, and the CMake files whose change re-runs configure."""
    for name in ("build.ninja", os.path.join("CMakeFiles", "rules.ninja")):
        path = os.path.join(build_dir, name)
        if not os.path.isfile(path):
            raise CheckError(f"{path} is missing: the check reads a Ninja build "
                             "(`make build` configures one)")
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for match in USR_PATH.finditer(f.read()):
                candidate = match.group(1).rstrip(",")
                if os.path.isfile(candidate):
                    yield candidate, name


def header_files(build_dir, ninja):
    """Every file a compile read, from ninja's deps log."""
    try:
        result = subprocess.run([ninja, "-C", build_dir, "-t", "deps"], check=True,
                                capture_output=True, text=True, errors="surrogateescape")
    except (OSError, subprocess.CalledProcessError) as error:
        raise CheckError(f"`{ninja} -C {build_dir} -t deps` failed: {error}") from error
    for line in result.stdout.splitlines():
        if line.startswith(" ") and line.strip().startswith("/usr/"):
            yield line.strip(), "header (ninja deps log)"


def build_inputs(build_dir):
    cache = cmake_cache(build_dir)
    ninja = cache.get("CMAKE_MAKE_PROGRAM", ("", ""))[1] or "ninja"
    yield from cache_files(build_dir)
    yield from ninja_files(build_dir)
    yield from header_files(build_dir, ninja)


# ---- What Python reads -------------------------------------------------------------------

def is_optional_import(handlers):
    for handler in handlers:
        names = handler.type
        if names is None:
            return True
        for node in (names.elts if isinstance(names, ast.Tuple) else [names]):
            if isinstance(node, ast.Name) and node.id in ("ImportError",
                                                          "ModuleNotFoundError"):
                return True
    return False


def imported_roots(source, filename):
    """(top-level module, line) for each import outside a try that catches ImportError."""
    roots = []

    def visit(node, optional):
        if isinstance(node, ast.Try) and is_optional_import(node.handlers):
            for child in node.body:
                visit(child, True)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, optional)
            return
        if not optional:
            if isinstance(node, ast.Import):
                roots.extend((alias.name.split(".")[0], node.lineno) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.append((node.module.split(".")[0], node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, optional)

    visit(ast.parse(source, filename), False)
    return [(root, line) for root, line in roots if root != "__future__"]


def project_python_files(repo):
    result = subprocess.run(["git", "-C", repo, "ls-files", "*.py"], capture_output=True,
                            text=True)
    if result.returncode == 0:
        return [os.path.join(repo, p) for p in result.stdout.split()]
    # Not a git checkout (an exported tree): every .py outside the virtualenv and builds.
    found = []
    for directory, subdirs, files in os.walk(repo):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "build"))]
        found += [os.path.join(directory, f) for f in files if f.endswith(".py")]
    return found


def external_imports(repo):
    """Top-level module -> the first 'file:line' that imports it, for modules that are not
    the project's own."""
    files = project_python_files(repo)
    local = {os.path.splitext(os.path.basename(f))[0] for f in files}
    local |= {os.path.basename(os.path.dirname(f)) for f in files
              if os.path.basename(f) == "__init__.py"}
    first_use = {}
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        for root, line in imported_roots(source, path):
            if root not in local and root not in first_use:
                first_use[root] = f"{os.path.relpath(path, repo)}:{line}"
    return first_use


# Run by the virtualenv's Python: import each module, then report every file loaded.
IMPORT_PROBE = r"""
import importlib, json, sys
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException as error:
        failed[name] = f"{type(error).__name__}: {error}"
files = {}
for name, module in list(sys.modules.items()):
    path = getattr(module, "__file__", None)
    if path:
        files.setdefault(path, name)
with open("/proc/self/maps") as maps:
    for line in maps:
        parts = line.split()
        if len(parts) >= 6 and ".so" in parts[5]:
            files.setdefault(parts[5], "shared object")
print(json.dumps({"failed": failed, "files": files}))
"""


def python_inputs(repo, python, venv):
    first_use = external_imports(repo)
    result = subprocess.run([python, "-c", IMPORT_PROBE, json.dumps(sorted(first_use))],
                            capture_output=True, text=True, cwd=repo)
    if result.returncode != 0:
        raise CheckError(f"importing the project's Python imports in {python} failed:\n"
                         f"{result.stderr.strip()}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    problems = [f"{where} imports '{name}', which {python} cannot import "
                f"({report['failed'][name]})"
                for name, where in sorted(first_use.items()) if name in report["failed"]]
    exempt = tuple(os.path.realpath(p) + os.sep for p in (repo, venv))
    inputs = []
    for path, module in sorted(report["files"].items()):
        real = os.path.realpath(path)
        if real.startswith(exempt) or os.path.abspath(path).startswith(exempt):
            continue
        root = module.split(".")[0]
        via = f"python module {module}" if module != "shared object" else "shared object"
        if root in first_use:
            via += f" ({first_use[root]})"
        inputs.append((path, via))
    return inputs, problems


# ---- The verdict -----------------------------------------------------------------------

def read_package_list(path):
    listed = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            name = line.split("#")[0].strip()
            if name:
                listed.append(name)
    return listed


def recommended_by(package, allowed, packages):
    return sorted(p for p in allowed if p in packages and
                  any(package in group for group in packages[p].recommends))


def examples(files, addition, limit=5):
    """A few telling files of one addition: the modules the project imports by name first,
    then one of the addition's own files per way of reading (header, CMakeCache.txt, ...)."""
    files = sorted(files)
    direct = [f for f in files if re.match(r"python module [^.\s]+ \(", f[1])]
    first_per_way = {}
    for f in files:
        if f[2] == addition:
            first_per_way.setdefault(re.split(r"[:(]", f[1])[0].strip(), f)
    chosen = []
    for f in direct + list(first_per_way.values()) + files:
        if f not in chosen:
            chosen.append(f)
    return chosen[:limit]


def verdict(inputs, listed, packages, owner_index, list_name=PACKAGE_LIST):
    """Lines of the report, and whether every input is inside the closure."""
    unknown = [name for name in listed if name not in packages]
    if unknown:
        return [f"{list_name} lists {', '.join(unknown)}, which dpkg does not show as "
                "installed: run `make deps` first"], False
    allowed = brought_in(listed, packages)
    missing, unowned, checked = {}, {}, set()
    for path, via in inputs:
        if path in checked:
            continue
        checked.add(path)
        if not path.startswith("/usr/"):
            unowned.setdefault(path, via)
            continue
        owners = owners_of(path, owner_index)
        if not owners:
            unowned.setdefault(path, via)
        elif not allowed.intersection(owners):
            missing.setdefault(owners[0], []).append((path, via))
    lines = []
    if missing:
        # The fewest lines that cover all: drop a package another missing one Depends on,
        # and show each file under the addition that brings it in.
        names = sorted(missing)
        additions = [p for p in names
                     if not any(p in closure([q], packages) for q in names if q != p)]
        count = sum(len(files) for files in missing.values())
        lines.append(f"deps: {count} files read by the build or the Python tests come from "
                     f"packages that {list_name} does not bring in")
        covered = set()
        for addition in additions:
            brings = sorted(p for p in closure([addition], packages)
                            if p in missing and p not in covered)
            covered.update(brings)
            files = [(path, via, owner) for owner in brings for path, via in missing[owner]]
            others = [p for p in brings if p != addition]
            lines.append(f"- {len(files)} files from {addition}" +
                         (f" and {len(others)} packages it Depends on "
                          f"({', '.join(others[:6])}{', ...' if len(others) > 6 else ''})"
                          if others else "") + ", for example:")
            lines += [f"    {path}  [{owner}; {via}]"
                      for path, via, owner in examples(files, addition)]
        lines.append(f"add to {list_name}:")
        for package in additions:
            note = ""
            recommenders = recommended_by(package, allowed, packages)
            if recommenders:
                note = (f"  # {', '.join(recommenders)} only Recommends it, and "
                        "`make deps` installs with --no-install-recommends")
            lines.append(f"  {package}{note}")
    if unowned:
        lines.append("deps: files read from outside any Debian package, the project and its "
                     "virtualenv (installed by hand? from PyPI outside .venv?):")
        for path, via in sorted(unowned.items()):
            lines.append(f"  {path}  [{via}]")
        lines.append("  give each a Debian package in "
                     f"{list_name}, or a pinned PyPI package in python/requirements-test.txt")
    return lines, not missing and not unowned


def main(argv=None):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(repo, "build"))
    parser.add_argument("--packages", default=os.path.join(repo, PACKAGE_LIST),
                        help="the package list to check against")
    parser.add_argument("--python", default=os.path.join(repo, ".venv", "bin", "python3"),
                        help="the Python the tests run")
    parser.add_argument("--check", choices=("all", "build", "python"), default="all")
    parser.add_argument("--dpkg-dir", default="/var/lib/dpkg")
    args = parser.parse_args(argv)
    try:
        with open(os.path.join(args.dpkg_dir, "status"), encoding="utf-8") as f:
            packages = parse_status(f.read())
        owner_index = read_owner_index(args.dpkg_dir)
        listed = read_package_list(args.packages)
        inputs, problems = [], []
        if args.check in ("all", "build"):
            inputs += list(build_inputs(args.build_dir))
        if args.check in ("all", "python"):
            venv = os.path.dirname(os.path.dirname(os.path.abspath(args.python)))
            python_files, problems = python_inputs(repo, args.python, venv)
            inputs += python_files
    except (CheckError, OSError) as error:
        print(f"deps: the check could not run: {error}", file=sys.stderr)
        return 2
    list_name = os.path.relpath(args.packages, repo)
    if list_name.startswith(".."):
        list_name = args.packages
    lines, ok = verdict(inputs, listed, packages, owner_index, list_name)
    for problem in problems:
        lines.append(f"deps: {problem}")
    if ok and not problems:
        print(f"deps: {len({p for p, _ in inputs})} files outside the project "
              f"({args.check}) all come from packages {list_name} "
              "brings in")
        return 0
    print("\n".join(lines))
    return 1


if __name__ == "__main__":
    sys.exit(main())
