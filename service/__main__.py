"""``python -m service``: run the whole service (see :mod:`service.serve`)."""

import sys

from graphgpu.service.serve import serve

sys.exit(serve())
