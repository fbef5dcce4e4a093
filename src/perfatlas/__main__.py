import sys

from perfatlas.cli.entry import main

sys.exit(main())
