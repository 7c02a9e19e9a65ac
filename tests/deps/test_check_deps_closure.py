#!/usr/bin/env python3
"""Tests of scripts/check_deps_closure.py: the closure rules on a made-up dpkg database, and
on this machine that a package list missing a needed package fails with the file, its owner
and the line to add.

Environment: LOOM_BUILD_DIR (a configured and built Ninja build) and LOOM_TEST_PYTHON (the
virtualenv's Python) for the tests against this machine's build."""

import importlib.util
import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location(
    "check_deps_closure", os.path.join(REPO, "scripts", "check_deps_closure.py"))
deps = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(deps)

STATUS = """\
Package: tool
Status: install ok installed
Depends: libtool-a (>= 1.0), helper-one | helper-two, virtual-dev
Pre-Depends: early:any
Recommends: extra

Package: libtool-a
Status: install ok installed
Depends: libc-ish

Package: helper-one
Status: install ok installed

Package: helper-two
Status: install ok installed

Package: provider
Status: install ok installed
Provides: virtual-dev (= 2)

Package: early
Status: install ok installed

Package: extra
Status: install ok installed

Package: libc-ish
Status: install ok installed
Essential: yes

Package: base-thing
Status: install ok installed
Essential: yes
Depends: base-helper

Package: base-helper
Status: install ok installed

Package: removed
Status: deinstall ok config-files

Package: stray
Status: install ok installed
"""


class Relations(unittest.TestCase):
    def test_versions_arch_qualifiers_and_alternatives(self):
        self.assertEqual(deps.parse_relations("a (>= 1:2.0), b:any | c [amd64], d <!nocheck>"),
                         [["a"], ["b", "c"], ["d"]])
        self.assertEqual(deps.parse_relations(""), [])

    def test_only_installed_packages_are_read(self):
        packages = deps.parse_status(STATUS)
        self.assertIn("tool", packages)
        self.assertNotIn("removed", packages)
        self.assertEqual(packages["tool"].depends[0], ["early"])  # Pre-Depends first


class Closure(unittest.TestCase):
    def setUp(self):
        self.packages = deps.parse_status(STATUS)

    def test_depends_and_pre_depends_count_recommends_do_not(self):
        reached = deps.closure(["tool"], self.packages)
        self.assertTrue({"tool", "libtool-a", "libc-ish", "early"} <= reached)
        self.assertNotIn("extra", reached)

    def test_first_alternative_and_virtual_providers(self):
        reached = deps.closure(["tool"], self.packages)
        self.assertIn("helper-one", reached)
        self.assertNotIn("helper-two", reached)
        self.assertIn("provider", reached)

    def test_essential_packages_and_their_depends_are_always_in(self):
        allowed = deps.brought_in([], self.packages)
        self.assertEqual(allowed, {"libc-ish", "base-thing", "base-helper"})


class Verdict(unittest.TestCase):
    def setUp(self):
        self.packages = deps.parse_status(STATUS)
        self.owners = {"/usr/include/extra.h": {"extra"}, "/usr/include/tool.h": {"tool"},
                       "/usr/lib/libstray.so": {"stray"}, "/lib/libearly.so": {"early"}}

    def test_inside_the_closure_passes(self):
        lines, ok = deps.verdict([("/usr/include/tool.h", "header"),
                                  ("/usr/lib/libearly.so", "link")],  # merged-/usr alias
                                 ["tool"], self.packages, self.owners)
        self.assertTrue(ok, lines)

    def test_a_recommended_package_is_named_with_the_line_to_add(self):
        lines, ok = deps.verdict([("/usr/include/extra.h", "header")], ["tool"],
                                 self.packages, self.owners)
        self.assertFalse(ok)
        report = "\n".join(lines)
        self.assertIn("/usr/include/extra.h  [extra; header]", report)
        self.assertIn("add to scripts/debian-packages.txt:\n  extra  # tool only Recommends it",
                      report)

    def test_one_line_covers_a_package_and_what_it_depends_on(self):
        owners = dict(self.owners, **{"/usr/lib/libtool-a.so": {"libtool-a"}})
        lines, ok = deps.verdict([("/usr/include/tool.h", "h"), ("/usr/lib/libtool-a.so", "l")],
                                 [], self.packages, owners)
        self.assertFalse(ok)
        self.assertEqual(lines[lines.index("add to scripts/debian-packages.txt:") + 1:],
                         ["  tool"])

    def test_files_of_no_package_are_reported(self):
        lines, ok = deps.verdict([("/usr/local/lib/libhand.so", "link"),
                                  ("/opt/x/mod.py", "python module x")],
                                 ["tool"], self.packages, self.owners)
        self.assertFalse(ok)
        self.assertIn("  /usr/local/lib/libhand.so  [link]", lines)
        self.assertIn("  /opt/x/mod.py  [python module x]", lines)

    def test_a_listed_package_that_is_not_installed_is_an_error(self):
        lines, ok = deps.verdict([], ["tool", "ghost"], self.packages, self.owners)
        self.assertFalse(ok)
        self.assertIn("ghost", lines[0])
        self.assertIn("make deps", lines[0])


class Imports(unittest.TestCase):
    def test_optional_imports_and_future_are_skipped(self):
        source = ("from __future__ import annotations\nimport os.path\n"
                  "try:\n    import fancy\nexcept ImportError:\n    fancy = None\n"
                  "def f():\n    from numpy import linalg\n")
        self.assertEqual(deps.imported_roots(source, "x.py"), [("os", 2), ("numpy", 8)])


BUILD_DIR = os.environ.get("LOOM_BUILD_DIR")
PYTHON = os.environ.get("LOOM_TEST_PYTHON")


@unittest.skipUnless(BUILD_DIR and PYTHON, "LOOM_BUILD_DIR and LOOM_TEST_PYTHON not set")
class ThisMachine(unittest.TestCase):
    """The real build and virtualenv, checked against the project's list with one line
    taken out: the check must fail and name what is missing."""

    def run_check(self, without, check):
        """The check's report with `without` taken off the project's list."""
        listed = deps.read_package_list(os.path.join(REPO, deps.PACKAGE_LIST))
        for package in without:
            self.assertIn(package, listed)
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as trimmed:
            trimmed.write("\n".join(p for p in listed if p not in without) + "\n")
            trimmed.flush()
            out = io.StringIO()
            with redirect_stdout(out):
                status = deps.main(["--build-dir", BUILD_DIR, "--python", PYTHON,
                                    "--packages", trimmed.name, "--check", check])
        return status, out.getvalue()

    def test_the_projects_list_passes(self):
        status, report = self.run_check([], "all")
        self.assertEqual(status, 0, report)

    def test_a_package_only_recommended_is_caught(self):
        # libdnnl-dev's CMake config needs OpenCL, which libdnnl-dev only Recommends.
        status, report = self.run_check(["ocl-icd-opencl-dev"], "build")
        self.assertEqual(status, 1, report)
        self.assertRegex(report, r"libOpenCL\.so  \[ocl-icd-opencl-dev; CMakeCache\.txt")
        self.assertIn("  ocl-icd-opencl-dev  # libdnnl-dev only Recommends it", report)

    def test_a_missing_library_package_is_caught(self):
        status, report = self.run_check(["libdnnl-dev"], "build")
        self.assertEqual(status, 1, report)
        self.assertRegex(report,
                         r"/cmake/dnnl/\S+\.cmake  \[libdnnl-dev; CMakeCache\.txt: dnnl_DIR\]")
        self.assertRegex(report, r"/usr/include/oneapi/dnnl/\S+  \[libdnnl-dev; header")
        self.assertIn(":\n  libdnnl-dev\n", report)

    def test_a_missing_python_package_is_caught(self):
        status, report = self.run_check(["python3-torch", "python3-torchvision"], "python")
        self.assertEqual(status, 1, report)
        self.assertIn("/usr/lib/python3/dist-packages/torch/__init__.py  [python3-torch;",
                      report)
        # torchvision Depends on torch: one line covers both.
        self.assertIn(":\n  python3-torchvision\n", report)


if __name__ == "__main__":
    unittest.main()
