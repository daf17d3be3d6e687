"""``python -m mercury_lsp.cli``: the ``mercury-lsp`` command."""

import sys

from mercury_lsp.cli import main

sys.exit(main())
