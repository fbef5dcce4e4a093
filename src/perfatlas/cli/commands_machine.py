"""topo and doctor: this machine, and what can be measured on it."""

from __future__ import annotations

import argparse
import json

from perfatlas.cli.options import AddCommand


def cmd_topo(args: argparse.Namespace) -> int:
    from perfatlas.machine.topology import Machine
    from perfatlas.terminal.run_summary import print_topology

    machine = Machine.detect()
    if args.json:
        print(json.dumps(machine.topology, indent=1))
    else:
        print_topology(machine)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from perfatlas.cli.doctor import print_doctor

    print_doctor()
    return 0


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
    p = command("topo", cmd_topo, "show this machine's topology (hwloc)")
    p.add_argument("--json", action="store_true", help="print the topology document")
    command("doctor", cmd_doctor, "what can and cannot be measured on this machine, and why")
