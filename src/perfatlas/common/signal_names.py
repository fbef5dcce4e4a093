"""The name of any signal number, as a sentence about a killed process says it: SIGSEGV, the
real-time ones as SIGRTMIN+k (signal.Signals knows none of them: Signals(36) is a ValueError), and
a number no signal has as "signal N"."""

from __future__ import annotations

import signal


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        pass
    if signal.SIGRTMIN <= number <= signal.SIGRTMAX:
        return f"SIGRTMIN+{number - signal.SIGRTMIN}"
    return f"signal {number}"
