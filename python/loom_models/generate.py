"""python -m loom_models.generate <name> <out.onnx> [--layers N]"""

import argparse
import sys

from . import models


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m loom_models.generate",
        description="Writes a test model (random weights, fixed seed) as ONNX.")
    parser.add_argument("name", choices=models.NAMES)
    parser.add_argument("output", help="the .onnx file to write")
    parser.add_argument("--layers", type=int,
                        help="encoder layers of bert_base (default 12)")
    args = parser.parse_args(argv)
    try:
        models.generate(args.name, args.output, args.layers)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
