"""``python -m scalable_bayes cache [--clear]``: where the library's compiled code is cached; delete it."""

import sys

from .jitcache import main


def _cli(argv: list[str]) -> int:
    if not argv or argv[0] != "cache":
        print("usage: python -m scalable_bayes cache [--clear]", file=sys.stderr)
        return 2
    return main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(_cli(sys.argv[1:]))
