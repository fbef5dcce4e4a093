"""The documents of a native launch as they arrive on its standard output (docs/contract.md,
Series).

A launch writes one JSON document, or one JSON list of documents whose elements the native
writer flushes one by one (native/common/json.c). The growing text is cut with
json.JSONDecoder.raw_decode: each list element is handed out as soon as it is whole, so that a
series whose process dies later keeps its finished points. What is handed out is exactly what
json.loads of the whole output gives, element by element; a single document (no list) comes
out when the output ends.
"""

from __future__ import annotations

import json

_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n"


class DocumentStream:
    """Feed it the output text piece by piece; it returns each list element once it is whole."""

    def __init__(self) -> None:
        self.text = ""
        self.position = 0  # where the next element (or the separator before it) starts
        self.is_list: bool | None = None  # unknown until the first character that is not blank
        self.elements = 0

    def feed(self, text: str) -> list[dict]:
        """Add output; the list elements it completes (none while the output is one document)."""
        self.text += text
        if self.is_list is None:
            start = len(self.text) - len(self.text.lstrip(_BLANK))
            if start == len(self.text):
                return []
            self.is_list = self.text[start] == "["
            self.position = start + 1
        if not self.is_list:
            return []
        found = []
        while True:
            position = self._skip(self.position, "," if self.elements else "")
            if position >= len(self.text) or self.text[position] == "]":
                return found
            try:
                element, end = _DECODER.raw_decode(self.text, position)
            except json.JSONDecodeError:
                return found  # not whole yet (or malformed: json.loads says so at the end)
            if end == len(self.text) and not isinstance(element, dict | list):
                return found  # a number may go on in the next piece
            found.append(element)
            self.elements += 1
            self.position = end

    def _skip(self, position: int, separator: str) -> int:
        """Past blanks and one separator (the ', ' between elements)."""
        while position < len(self.text) and self.text[position] in _BLANK:
            position += 1
        if separator and self.text.startswith(separator, position):
            position += 1
            while position < len(self.text) and self.text[position] in _BLANK:
                position += 1
        return position
