#!/usr/bin/env python3
"""Generates the Fortran entry points of perfatlas-ipm (fortran_generated.c).

    gen_fortran.py calls.def fortran.def fortran_generated.c

Open MPI's Fortran bindings call PMPI_ directly, so a Fortran program's calls never reach the C
shims of calls.def (fortran.c says more). For every call of calls.def (and the lifecycle calls
fortran.def adds) this writes one C function that takes the Fortran arguments, converts each by
its C type, calls the C MPI_ function (the shim, which records the event) and converts the
outputs back; it is exported under the four mpif.h names and the mpi_f08 one. The conversion of
a parameter follows from its C type; fortran.def lists what does not (the calls left out, and
why; arrays' lengths; 1-based indices; sentinels). For MPICH the same is written for `use
mpi_f08` alone, and only for its calls without a choice buffer: MPICH's other bindings call the
C functions. An unknown type, or a fortran.def row naming no call or parameter, stops the
generator: nothing is left out silently.
"""

from __future__ import annotations

import fnmatch
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

# C handle type -> (the f2c/c2f stem, its null handle).
HANDLES = {
    "MPI_Comm": ("Comm", "MPI_COMM_NULL"),
    "MPI_Datatype": ("Type", "MPI_DATATYPE_NULL"),
    "MPI_Errhandler": ("Errhandler", "MPI_ERRHANDLER_NULL"),
    "MPI_File": ("File", "MPI_FILE_NULL"),
    "MPI_Group": ("Group", "MPI_GROUP_NULL"),
    "MPI_Info": ("Info", "MPI_INFO_NULL"),
    "MPI_Message": ("Message", "MPI_MESSAGE_NULL"),
    "MPI_Op": ("Op", "MPI_OP_NULL"),
    "MPI_Request": ("Request", "MPI_REQUEST_NULL"),
    "MPI_Win": ("Win", "MPI_WIN_NULL"),
}
# Integers passed by reference from Fortran: INTEGER, INTEGER(KIND=MPI_ADDRESS_KIND),
# INTEGER(KIND=MPI_OFFSET_KIND), INTEGER(KIND=MPI_COUNT_KIND). LOGICAL is an INTEGER here
# (gfortran's .TRUE. is 1, as Open MPI's OMPI_FORTRAN_VALUE_TRUE).
INTEGERS = {"int", "MPI_Aint", "MPI_Offset", "MPI_Count"}
ROLES = {"index", "indices", "weights", "address", "detached", "room"}
EXPRESSED = {"indices", "room"}  # roles that take a C expression


@dataclass
class Param:
    const: bool
    ctype: str  # without const and without the pointer or array part
    pointer: bool  # T *name
    dims: str  # "", "[]" or "[][3]"
    name: str

    @property
    def array(self) -> bool:
        return self.dims != ""


@dataclass
class Call:
    ret: str
    name: str
    params: list[Param]


@dataclass
class Table:
    """fortran.def: what the C types do not say."""

    skip: dict[str, str] = field(default_factory=dict)  # call or pattern -> reason
    no_f08: dict[str, str] = field(default_factory=dict)
    extra: list[Call] = field(default_factory=list)
    alias: dict[str, list[str]] = field(default_factory=dict)
    inout: set[tuple[str, str]] = field(default_factory=set)
    length: dict[tuple[str, str], str] = field(default_factory=dict)
    filled: dict[tuple[str, str], str] = field(default_factory=dict)
    role: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    cptr: set[tuple[str, str]] = field(default_factory=set)  # MPICH mpi_f08: TYPE(C_PTR)

    def skipped(self, call: str) -> str | None:
        for pattern, reason in self.skip.items():
            if fnmatch.fnmatchcase(call, pattern):
                return reason
        return None


def parse_param(text: str) -> Param | None:
    text = " ".join(text.split())
    if text == "void":
        return None
    match = re.fullmatch(r"(const )?([\w ]+?)\s*(\**)\s*(\w+)((?:\[\w*\])*)", text)
    if match is None:
        raise SystemExit(f"gen_fortran.py: cannot read the C parameter '{text}'")
    const, ctype, stars, name, dims = match.groups()
    ctype += stars[1:]  # char **argv[]: a type no conversion knows
    return Param(const is not None, ctype, stars != "", dims, name)


def parse_params(text: str) -> list[Param]:
    return [p for p in (parse_param(part) for part in text.split(",")) if p is not None]


def read_calls(path: Path) -> list[Call]:
    """The PA_IPM_CALL rows of calls.def, in order."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    rows = re.findall(
        r"PA_IPM_CALL\(\s*\w+\s*,\s*([\w ]+?)\s*,\s*(\w+)\s*,\s*\((.*?)\)\s*,", text, re.S
    )
    return [Call(ret, name, parse_params(params)) for ret, name, params in rows]


def read_table(path: Path) -> Table:
    table = Table()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        verb, rest = fields[0], fields[1:]
        where = f"{path.name}:{number}"
        if verb in ("skip", "no_f08") and len(rest) >= 2:
            getattr(table, verb)[rest[0]] = " ".join(rest[1:])
        elif verb == "extra":
            match = re.fullmatch(r"extra\s+(\w+)\s+(\w+)\((.*)\)", line.strip())
            if match is None:
                raise SystemExit(
                    f"gen_fortran.py: {where}: an extra row is 'extra RET NAME(PARAMS)'"
                )
            table.extra.append(Call(match[1], match[2], parse_params(match[3])))
        elif verb == "alias" and len(rest) == 2:
            table.alias.setdefault(rest[0], []).append(rest[1])
        elif verb == "inout" and len(rest) == 2:
            table.inout.add((rest[0], rest[1]))
        elif verb == "cptr" and len(rest) == 2:
            table.cptr.add((rest[0], rest[1]))
        elif verb in ("length", "filled") and len(rest) >= 3:
            getattr(table, verb)[(rest[0], rest[1])] = " ".join(rest[2:])
        elif verb == "role" and len(rest) >= 3 and rest[2] in ROLES - EXPRESSED:
            table.role[(rest[0], rest[1])] = (rest[2], "")
        elif verb == "role" and len(rest) >= 4 and rest[2] in EXPRESSED:
            table.role[(rest[0], rest[1])] = (rest[2], " ".join(rest[3:]))
        else:
            raise SystemExit(f"gen_fortran.py: {where}: cannot read '{line.strip()}'")
    return table


def check_table(table: Table, calls: list[Call]) -> None:
    """Every row names a call (and parameter) that exists."""
    by_name = {call.name: call for call in calls}
    for pattern in table.skip:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in by_name):
            raise SystemExit(f"gen_fortran.py: fortran.def skips {pattern}, which calls.def lacks")
    named = [*table.no_f08, *table.alias]
    pairs = [*table.inout, *table.length, *table.filled, *table.role, *table.cptr]
    named += [call for call, _ in pairs]
    for call in named:
        if call not in by_name:
            raise SystemExit(f"gen_fortran.py: fortran.def names {call}, which calls.def lacks")
    for call, param in pairs:
        if param not in {p.name for p in by_name[call].params}:
            raise SystemExit(
                f"gen_fortran.py: fortran.def names {call}'s '{param}', which it lacks"
            )


class Shim:
    """The pieces of one call's Fortran entry point, filled parameter by parameter."""

    def __init__(self, call: Call, table: Table) -> None:
        self.call, self.table = call, table
        self.fortran: list[str] = []  # the Fortran arguments, as C parameters
        self.lengths: list[str] = []  # gfortran's hidden string lengths, appended at the end
        self.before: list[str] = []  # converting the inputs
        self.arrays: list[str] = []  # temporaries sized by other arguments
        self.failed: list[str] = []  # conditions under which a temporary could not be made
        self.after: list[str] = []  # converting the outputs, on success
        self.cleanup: list[str] = []  # always

    def key(self, p: Param) -> tuple[str, str]:
        return (self.call.name, p.name)

    def inout(self, p: Param) -> bool:
        if self.key(p) in self.table.inout:
            return True
        name = self.call.name
        return name.endswith("_free") or name in ("MPI_File_close", "MPI_Comm_disconnect")

    def add(self, p: Param) -> None:
        role, expr = self.table.role.get(self.key(p), ("", ""))
        f = f"f_{p.name}"
        if p.ctype in HANDLES and not p.pointer and not p.array:
            stem, _ = HANDLES[p.ctype]
            self.fortran.append(f"const MPI_Fint *{f}")
            self.before.append(f"{p.ctype} {p.name} = PMPI_{stem}_f2c(*{f});")
        elif p.ctype in HANDLES and p.pointer:
            self.handle_out(p, f)
        elif p.ctype in HANDLES:
            self.handle_array(p, f)
        elif p.ctype == "MPI_Status":
            self.status(p, f)
        elif p.ctype in INTEGERS and not p.pointer and not p.array:
            self.fortran.append(
                f"const {p.ctype} *{f}" if p.ctype != "int" else f"const MPI_Fint *{f}"
            )
            self.before.append(f"{p.ctype} {p.name} = *{f};")
        elif p.ctype in INTEGERS:
            self.integers(p, f, role, expr)
        elif p.ctype == "void" and p.pointer and not p.array:
            self.buffer(p, f, role)
        elif p.ctype == "char" and (p.pointer != (p.dims == "[]")):
            self.string(p, f, role, expr)
        else:
            raise SystemExit(f"gen_fortran.py: {self.call.name}: no Fortran conversion for '{p}'")

    def handle_out(self, p: Param, f: str) -> None:
        stem, null = HANDLES[p.ctype]
        self.fortran.append(f"MPI_Fint *{f}")
        start = f"PMPI_{stem}_f2c(*{f})" if self.inout(p) else null
        self.before.append(f"{p.ctype} {p.name}_c = {start}, *{p.name} = &{p.name}_c;")
        self.after.append(f"*{f} = PMPI_{stem}_c2f({p.name}_c);")

    def handle_array(self, p: Param, f: str) -> None:
        stem, null = HANDLES[p.ctype]
        length = self.table.length.get(self.key(p))
        if length is None:
            raise SystemExit(
                f"gen_fortran.py: {self.call.name}: fortran.def gives no length of {p.name}"
            )
        n, stack = f"{p.name}_n", f"{p.name}_stack"
        self.fortran.append(f"{'const ' if p.const else ''}MPI_Fint *{f}")
        self.arrays += [
            f"int {n} = {length};",
            f"{n} = {n} > 0 ? {n} : 0;",
            f"{p.ctype} {stack}[PA_IPM_FORTRAN_STACK];",
            f"{p.ctype} *{p.name} = pa_ipm_fortran_array({stack}, {n}, sizeof *{p.name});",
        ]
        start = f"PMPI_{stem}_f2c({f}[i])" if p.const or self.inout(p) else null
        self.arrays.append(
            f"for (int i = 0; {p.name} != NULL && i < {n}; i++) {p.name}[i] = {start};"
        )
        self.failed.append(f"{p.name} == NULL")
        if not p.const:
            filled = self.table.filled.get(self.key(p), n)
            self.after.append(
                f"for (int i = 0; i < ({filled}); i++) {f}[i] = PMPI_{stem}_c2f({p.name}[i]);"
            )
        self.cleanup.append(f"pa_ipm_fortran_array_free({p.name}, {stack});")

    def status(self, p: Param, f: str) -> None:
        filled = self.table.filled.get(self.key(p))
        if p.const and p.pointer:  # a status the call reads
            self.fortran.append(f"const MPI_Fint *{f}")
            self.before.append(f"MPI_Status {p.name}_c, *{p.name} = &{p.name}_c;")
            self.before.append(f"PMPI_Status_f2c({f}, {p.name});")
        elif p.pointer:
            self.fortran.append(f"MPI_Fint *{f}")
            self.before.append(
                f"MPI_Status {p.name}_c, *{p.name} = "
                f"PA_IPM_FORTRAN_STATUS_IGNORED({f}) ? MPI_STATUS_IGNORE : &{p.name}_c;"
            )
            if self.inout(p):
                self.before.append(
                    f"if ({p.name} != MPI_STATUS_IGNORE) PMPI_Status_f2c({f}, {p.name});"
                )
            when = f" && ({filled})" if filled else ""
            self.after.append(
                f"if ({p.name} != MPI_STATUS_IGNORE{when}) PMPI_Status_c2f({p.name}, {f});"
            )
        else:
            self.status_array(p, f, filled)

    def status_array(self, p: Param, f: str, filled: str | None) -> None:
        length = self.table.length.get(self.key(p))
        if length is None:
            raise SystemExit(
                f"gen_fortran.py: {self.call.name}: fortran.def gives no length of {p.name}"
            )
        n, stack, ignored = (
            f"{p.name}_n",
            f"{p.name}_stack",
            f"PA_IPM_FORTRAN_STATUSES_IGNORED({f})",
        )
        self.fortran.append(f"MPI_Fint *{f}")
        self.arrays += [
            f"int {n} = {length};",
            f"{n} = {n} > 0 ? {n} : 0;",
            f"MPI_Status {stack}[PA_IPM_FORTRAN_STACK];",
            f"MPI_Status *{p.name} = {ignored} ? MPI_STATUSES_IGNORE"
            f" : pa_ipm_fortran_array({stack}, {n}, sizeof *{p.name});",
        ]
        self.failed.append(f"(!{ignored} && {p.name} == NULL)")
        self.after.append(
            f"for (int i = 0; !{ignored} && i < ({filled or n}); i++)"
            f" PMPI_Status_c2f(&{p.name}[i], {f} + i * PA_IPM_FORTRAN_STATUS_FINTS);"
        )
        self.cleanup.append(f"if (!{ignored}) pa_ipm_fortran_array_free({p.name}, {stack});")

    def integers(self, p: Param, f: str, role: str, expr: str) -> None:
        const = "const " if p.const else ""
        fint = "MPI_Fint" if p.ctype == "int" else p.ctype
        self.fortran.append(f"{const}{fint} *{f}")
        if role == "index":  # Waitany, Testany: MPI_UNDEFINED, or 1-based in Fortran
            self.before.append(f"int {p.name}_c = MPI_UNDEFINED, *{p.name} = &{p.name}_c;")
            self.after.append(
                f"*{f} = {p.name}_c == MPI_UNDEFINED ? MPI_UNDEFINED : {p.name}_c + 1;"
            )
            return
        if role == "weights":
            self.before.append(f"{const}int *{p.name} = pa_ipm_fortran_weights((MPI_Fint *){f});")
            return
        declarator = f"(*{p.name}){p.dims[2:]}" if p.dims.startswith("[][") else f"*{p.name}"
        self.before.append(f"{const}{p.ctype} {declarator} = (void *){f};")
        if role == "indices":  # Waitsome, Testsome: 1-based in Fortran
            self.after.append(f"for (int i = 0; i < ({expr}); i++) {p.name}[i]++;")

    def buffer(self, p: Param, f: str, role: str) -> None:
        const = "const " if p.const else ""
        self.fortran.append(f"{const}void *{f}")
        if role == "detached":  # C writes the detached buffer's address: not Fortran's to have
            self.before.append(f"void *{p.name}_c = NULL, *{p.name} = &{p.name}_c;")
            self.before.append(f"(void){f};")
        elif role == "address":
            self.before.append(f"{const}void *{p.name} = {f};")
        else:
            self.before.append(f"{const}void *{p.name} = pa_ipm_fortran_buffer((void *){f});")

    def string(self, p: Param, f: str, role: str, expr: str) -> None:
        length = f"{f}_len"
        self.lengths.append(f"size_t {length}")
        if p.const:
            self.fortran.append(f"const char *{f}")
            self.before.append(f"char *{p.name} = pa_ipm_fortran_string_in({f}, {length});")
            self.cleanup.append(f"free({p.name});")
        else:
            self.fortran.append(f"char *{f}")
            also = expr if role == "room" else "0"
            self.before.append(f"char *{p.name} = pa_ipm_fortran_string_room({length}, {also});")
            copy = [f"pa_ipm_fortran_string_out({p.name}, {f}, {length});", f"{p.name} = NULL;"]
            filled = self.table.filled.get(self.key(p))
            if filled:  # otherwise the Fortran string is left as it was (MPI_Info_get)
                copy = [f"if ({filled}) {{", *[f"    {line}" for line in copy], "}"]
            self.after += copy
            self.cleanup.append(f"free({p.name});")
        self.failed.append(f"{p.name} == NULL")

    def params(self) -> str:
        ierr = ["MPI_Fint *ierr"] if self.call.ret == "int" else []
        return "(" + (", ".join(self.fortran + ierr + self.lengths) or "void") + ")"

    def render(self, mpich: bool = False) -> str:
        call, fn = self.call, f"fortran_{self.call.name.lower()}"
        args = ", ".join(p.name for p in call.params)
        ret = "void" if call.ret == "int" else call.ret  # a subroutine, or a function (MPI_Wtime)
        lines = [f"static {ret} {fn}{self.params()}", "{"]
        # The call site is the Fortran program's call of this entry point (ipm.h, PA_IPM_CALLER).
        site, unset = "pa_ipm_self.caller = __builtin_return_address(0);", "pa_ipm_self.caller = NULL;"
        if call.ret != "int":  # MPI_Wtime, MPI_Wtick: Fortran functions, no argument
            lines += [f"    {site}", f"    {ret} value = {call.name}({args});"]
            lines += [f"    {unset}", "    return value;"]
        else:
            lines += [f"    {line}" for line in self.before + self.arrays]
            failed = " || ".join(self.failed)
            invoke = f"{call.name}({args})"
            lines.append(f"    {site}")
            lines.append(
                f"    int code = {failed} ? MPI_ERR_NO_MEM : {invoke};"
                if failed
                else f"    int code = {invoke};"
            )
            lines.append(f"    {unset}")
            if self.after:
                lines.append("    if (code == MPI_SUCCESS) {")
                lines += [f"        {line}" for line in self.after]
                lines.append("    }")
            lines += [f"    {line}" for line in self.cleanup]
            lines += ["    if (ierr != NULL)", "        *ierr = code;"]
        lines.append("}")
        params = self.params()
        if mpich:  # its mpif.h and `use mpi` bindings call the C MPI_ functions themselves
            lines.append(f"PA_IPM_FORTRAN_F08({ret}, {fn}, {call.name.lower()}, {params})")
            return "\n".join(lines)
        names = [call.name.lower(), *self.table.alias.get(call.name, [])]
        for lower in names:
            lines.append(f"PA_IPM_FORTRAN_NAMES({ret}, {fn}, {lower}, {lower.upper()}, {params})")
        if call.name not in self.table.no_f08:
            lines.append(f"PA_IPM_FORTRAN_F08({ret}, {fn}, {call.name.lower()}, {params})")
        return "\n".join(lines)


def shim(call: Call, table: Table, mpich: bool = False) -> str:
    built = Shim(call, table)
    for p in call.params:
        built.add(p)
    return built.render(mpich)


def is_choice(call: Call, table: Table, p: Param) -> bool:
    """A choice buffer (TYPE(*), DIMENSION(..) in mpi_f08), not a TYPE(C_PTR) or detached one.
    MPICH's mpi_f08 binds such a call as mpi_x_f08ts_, whose glue calls the C MPI_X."""
    detached = table.role.get((call.name, p.name), ("", ""))[0] == "detached"
    plain = p.ctype == "void" and p.pointer and not p.array
    return plain and not detached and (call.name, p.name) not in table.cptr


HEADER = """\
/* Generated by gen_fortran.py from calls.def and fortran.def: do not edit. The Fortran entry
 * points of Open MPI's mpif.h, `use mpi` and `use mpi_f08` bindings, each converting its
 * arguments and calling the C shim of its call (fortran.c says why). */
#include <stdlib.h>

#include "fortran.h"

#ifdef OPEN_MPI
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
"""


MPICH_HEADER = """\
#else
/* MPICH: only the `use mpi_f08` calls without a choice buffer (mpi_comm_split_f08_), which call
 * PMPI_ directly: converted as under Open MPI, calling the C shim. Its mpif.h and `use mpi`
 * bindings, and its mpi_f08 calls with a choice buffer (mpi_send_f08ts_, whose descriptor glue
 * calls the C MPI_Send), reach the C shims themselves. */
"""


def generate(calls: list[Call], table: Table) -> str:
    parts, left_out, mpich, mpich_out, choice = [HEADER], [], [MPICH_HEADER], [], []
    for call in [*calls, *table.extra]:
        reason = table.skipped(call.name) or table.no_f08.get(call.name)
        if table.skipped(call.name) is None:
            parts.append(shim(call, table) + "\n")
        else:
            left_out.append(f" *   {call.name}: {reason}")
        if reason is not None:
            mpich_out.append(f" *   {call.name}: {reason}")
        elif any(is_choice(call, table, p) for p in call.params):
            choice.append(call.name)
        else:
            mpich.append(shim(call, table, mpich=True) + "\n")
    parts.append("/* Not wrapped for Fortran (fortran.def):\n" + "\n".join(left_out) + " */")
    parts += mpich
    parts.append("/* Not wrapped for mpi_f08 (fortran.def):\n" + "\n".join(mpich_out) + " */")
    recorded = textwrap.fill(", ".join(choice), 96, initial_indent=" * ", subsequent_indent=" * ")
    parts.append("/* With a choice buffer, recorded by their C shims:\n" + recorded + " */")
    parts.append("#endif\n")
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: gen_fortran.py calls.def fortran.def fortran_generated.c", file=sys.stderr)
        return 2
    calls = read_calls(Path(argv[1]))
    table = read_table(Path(argv[2]))
    check_table(table, calls + table.extra)
    Path(argv[3]).write_text(generate(calls, table))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
