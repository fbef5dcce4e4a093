import sys

from perfatlas.cli import main

sys.exit(main())
