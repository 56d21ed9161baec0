"""``python -m scalable_bayes cache [--clear]``: where the library's compiled code is cached; delete it."""

import argparse
import logging
import sys

from .jitcache import main


def _cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m scalable_bayes")
    p.add_argument("command", choices=["cache"], help="cache: where the compiled code is cached (--clear deletes it)")
    args, rest = p.parse_known_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    return main(rest)


if __name__ == "__main__":
    raise SystemExit(_cli(sys.argv[1:]))
