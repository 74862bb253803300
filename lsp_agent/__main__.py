"""``python -m lsp_agent``: the same as the ``lsp-agent`` command."""

import sys

from lsp_agent.cli import main

if __name__ == "__main__":
    sys.exit(main())
