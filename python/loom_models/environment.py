"""What a test script needs of this Python, checked before it imports any of it."""

import importlib
import sys

SKIP = 77  # ctest's SKIP_RETURN_CODE for the model and end-to-end tests


def require(*packages):
    """Exits with SKIP, saying which, when this Python lacks one of `packages`."""
    for package in packages:
        try:
            importlib.import_module(package)
        except ImportError:
            print(f"skipped: {sys.executable} lacks {package}; `make deps` installs it")
            sys.exit(SKIP)
