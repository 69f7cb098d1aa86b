"""``python -m pgmpy_dp``: the ``pgmpy-dp`` command line ([`pgmpy_dp.cli`][pgmpy_dp.cli])."""

import sys

from .cli import main

sys.exit(main())
