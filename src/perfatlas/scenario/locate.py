"""Where a key of a TOML text is written: the line to name in an error about its value.

tomllib gives positions for syntax errors only; for a value that parses but is wrong, the
scanner below walks the text once, tracking the table a line belongs to ([x], [[x]], with the
index of each array-of-tables entry) and the keys of inline tables and arrays of inline tables,
and records the first line of every key path, e.g. ("job", 1, "target", "transfer_rate").
"""

from __future__ import annotations

import re

_ARRAY_HEADER = re.compile(r"^\s*\[\[\s*([\w.\-]+)\s*\]\]")
_TABLE_HEADER = re.compile(r"^\s*\[\s*([\w.\-]+)\s*\]")
_KEY = re.compile(r"([A-Za-z0-9_\-]+)\s*=")


class Locator:
    def __init__(self, text: str):
        self.lines: dict[tuple, int] = {}
        counts: dict[tuple, int] = {}  # array-of-tables path -> entries so far
        table: tuple = ()
        stack: list = []  # inside a value: open brackets, each "[" with its element counter
        self._pending: str | None = None  # the key whose value starts next
        for number, line in enumerate(text.splitlines(), start=1):
            code = _without_strings_and_comment(line)
            if not stack and (match := _ARRAY_HEADER.match(code)):
                table = self._entry(match.group(1).split("."), counts)
                self.lines.setdefault(table, number)
                continue
            if not stack and (match := _TABLE_HEADER.match(code)):
                table = self._entry(match.group(1).split("."), counts, new=False)
                self.lines.setdefault(table, number)
                continue
            self._scan(code, number, table, stack)

    def _entry(self, names: list[str], counts: dict[tuple, int], new: bool = True) -> tuple:
        """The path of a header: earlier names resolve to their latest array entry."""
        path: tuple = ()
        for i, name in enumerate(names):
            path += (name,)
            if path in counts:
                last = i == len(names) - 1
                if last and new:
                    counts[path] += 1
                path += (counts[path] - 1,)
            elif i == len(names) - 1 and new:
                counts[path] = 1
                path += (0,)
        return path

    def _scan(self, code: str, number: int, table: tuple, stack: list) -> None:
        """Keys and brackets of one line; `stack` carries open brackets to the next line."""
        position = 0
        while position < len(code):
            char = code[position]
            if char in "[{":
                prefix = stack[-1]["path"] if stack else table
                if stack and stack[-1]["kind"] == "[":
                    stack[-1]["index"] += 1
                    prefix = prefix + (stack[-1]["index"],)
                elif stack and stack[-1].get("key"):
                    prefix = prefix + (stack[-1]["key"],)
                elif not stack and self._pending:
                    prefix = prefix + (self._pending,)
                stack.append({"kind": char, "path": prefix, "index": -1, "key": None})
                self._pending = None
                position += 1
                continue
            if char in "]}":
                if stack:
                    stack.pop()
                position += 1
                continue
            match = _KEY.match(code, position)
            if match and (not stack or stack[-1]["kind"] == "{"):
                base = stack[-1]["path"] if stack else table
                self.lines.setdefault(base + (match.group(1),), number)
                if stack:
                    stack[-1]["key"] = match.group(1)
                else:
                    self._pending = match.group(1)
                position = match.end()
                continue
            position += 1

    def line(self, path: tuple) -> int | None:
        """The line of `path`, or of its nearest enclosing key or table that is written."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


def _without_strings_and_comment(line: str) -> str:
    """The line with the contents of quoted strings blanked and any comment cut off."""
    out, quote = [], None
    for char in line:
        if quote:
            out.append(" " if char != quote else char)
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
            out.append(char)
        elif char == "#":
            break
        else:
            out.append(char)
    return "".join(out)
