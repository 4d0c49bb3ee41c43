"""`python -m tracesql.cli`: the command line."""
import sys

from tracesql.cli.main import main

sys.exit(main())
