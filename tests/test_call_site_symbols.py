"""Call-site addresses resolved after the run (perfatlas.profile.symbols). Test programs are built
at -O2 -g (tests/data/call_sites: gcc, and clang, g++, clang++, gfortran where installed), PIE
and not, with a shared library, and run with address-space randomization on; every return
address they keep must resolve to the function, file and line its `site:TAG` comment marks. Then
what cannot resolve fully: stripped code, separate debug files, a binary rebuilt or gone after
the run, files cut short or garbled, addresses in no object; each gives a reason, never an error.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import elftools
import pytest
from call_site_programs import (
    DATA,
    Program,
    Run,
    build,
    build_library,
    build_other,
    execute,
    site_lines,
    tool,
)
from elftools.dwarf.die import DIE
from elftools.dwarf.enums import ENUM_DW_TAG
from elftools.dwarf.lineprogram import LineProgram
from elftools.dwarf.ranges import BaseAddressEntry
from elftools.elf.elffile import ELFFile

from perfatlas.profile.symbols import (
    CHANGED,
    NO_DEBUG_INFO,
    NOT_LOADED,
    STRIPPED,
    Frame,
    Resolver,
    loaded_object,
    resolve,
    site_key,
)
from perfatlas.profile.symbols.die_skim import Skimmed
from perfatlas.profile.symbols.dwarf_sections import DwarfSections
from perfatlas.profile.symbols.dwarf_unit import Unit
from perfatlas.profile.symbols.line_table import decode_rows
from perfatlas.profile.symbols.unit_header import unit_headers

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the programs")

LINES = site_lines("program.c") | site_lines("library.c")
# tag -> (function, source file, object) for the C program's sites.
EXPECTED = {
    "main": ("main", "program.c", "program"),
    "direct": ("direct", "program.c", "program"),
    "inlined": ("inner", "program.c", "program"),
    "library_work": ("library_work", "library.c", "libwork.so"),
    "library_hidden": ("hidden", "library.c", "libwork.so"),
}
LIBRARY_TAGS = ("library_work", "library_hidden")
# name -> (compiler, flags, PIE); no-aranges: a gcc build less .debug_aranges (as clang writes
# none); compressed: with its DWARF compressed (SHF_COMPRESSED, as Debian's debug packages are).
VARIANTS = {
    "gcc-dwarf5-pie": ("gcc", ("-gdwarf-5",), True),
    "gcc-dwarf5-no-pie": ("gcc", ("-gdwarf-5",), False),
    "gcc-dwarf4-pie": ("gcc", ("-gdwarf-4",), True),
    "gcc-dwarf4-no-pie": ("gcc", ("-gdwarf-4",), False),
    "gcc-no-aranges": ("gcc", (), True),
    "gcc-compressed": ("gcc", (), True),
    "clang-pie": ("clang", (), True),
    "clang-no-pie": ("clang", (), False),
}
FUZZ_TRIALS = 250


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def variant(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Program:
    cc, flags, pie = VARIANTS[request.param]
    program = build(tmp_path_factory.mktemp(request.param), cc, flags, pie)
    change = {
        "gcc-no-aranges": ["--remove-section", ".debug_aranges"],
        "gcc-compressed": ["--compress-debug-sections=zlib"],
    }
    for binary in (program.executable, program.library) if request.param in change else ():
        execute(tool("objcopy"), *change[request.param], binary)
    return program


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    return build(tmp_path_factory.mktemp("gcc"))


@pytest.fixture(scope="module")
def run(program: Program) -> Run:
    return program.run()


def expected_frame(run: Run, tag: str) -> tuple:
    function, source, name = EXPECTED[tag]
    return function, source, LINES[tag], None, run.object_of(name)["path"]


def seen(frame: Frame) -> tuple:
    return frame.function, Path(frame.file or "").name, frame.line, frame.reason, frame.object


def test_every_site_resolves_to_its_function_file_and_line(variant: Program):
    run = variant.run()
    frames = resolve(run.objects, run.sites.values())
    for tag in EXPECTED:
        frame = frames[run.sites[tag]]
        assert seen(frame) == expected_frame(run, tag), tag
        base = next(entry["base"] for entry in run.objects if entry["path"] == frame.object)
        assert frame.offset == run.sites[tag] - base
        assert frame.label() == f"{EXPECTED[tag][0]} ({EXPECTED[tag][1]}:{LINES[tag]})"
    inlined = frames[run.sites["inlined"]].inlined
    calls = [(call.function, Path(call.file or "").name, call.line) for call in inlined]
    assert calls == [
        ("middle", "program.c", LINES["inlined_middle"]),
        ("outer", "program.c", LINES["inlined_outer"]),
    ]
    with open(variant.executable, "rb") as stream:
        position_dependent = ELFFile(stream)["e_type"] == "ET_EXEC"
    assert (run.object_of("program")["base"] == 0) == position_dependent


def test_runs_with_other_load_addresses_give_the_same_sites(program: Program):
    if Path("/proc/sys/kernel/randomize_va_space").read_text().strip() == "0":
        pytest.skip("address-space randomization is off on this machine")
    first, second = program.run(), program.run()
    assert first.object_of("libwork.so")["base"] != second.object_of("libwork.so")["base"]
    assert first.object_of("program")["base"] != second.object_of("program")["base"]
    with Resolver() as resolver:
        one = resolver.resolve(first.objects, first.sites.values())
        other = resolver.resolve(second.objects, second.sites.values())
    for tag in EXPECTED:
        assert first.sites[tag] != second.sites[tag]
        assert site_key([one[first.sites[tag]]]) == site_key([other[second.sites[tag]]])
        assert one[first.sites[tag]] == other[second.sites[tag]]


def test_a_site_key_is_every_frame_s_object_and_offset():
    frames = [Frame("/bin/a", 0x10, "f"), Frame("/lib/b.so", 0x20, reason=STRIPPED)]
    assert site_key(frames) == (("/bin/a", 0x10), ("/lib/b.so", 0x20))
    assert site_key(frames) != site_key(frames[:1])


def test_labels_say_what_is_known():
    assert Frame("/x/a", 0x10, "f", "/s/f.c", 3).label() == "f (f.c:3)"
    assert Frame("/x/a.so", 0x10, "f", reason=NO_DEBUG_INFO).label() == "f (a.so+0x10)"
    assert Frame("/x/a.so", 0x1F, reason=STRIPPED).label() == "a.so+0x1f (stripped)"
    assert Frame("", 0x7F00, reason=NOT_LOADED).label() == "0x7f00 (not in any loaded object)"


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_cxx_names_are_demangled(compiler: str, tmp_path: Path):
    run = build_other(tmp_path, compiler).run()
    frame = resolve(run.objects, run.sites.values())[run.sites["cxx_template"]]
    line = site_lines("program.cpp")["cxx_template"]
    assert frame.label() == f"solver::Grid<double>::step(double) (program.cpp:{line})"
    assert frame.reason is None


def test_without_cxxfilt_names_stay_mangled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run = build_other(tmp_path, "g++").run()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    frame = resolve(run.objects, run.sites.values())[run.sites["cxx_template"]]
    assert frame.function == "_ZN6solver4GridIdE4stepEd"


def test_fortran_module_procedures_are_named_with_their_module(tmp_path: Path):
    run = build_other(tmp_path, "gfortran").run()
    frame = resolve(run.objects, run.sites.values())[run.sites["fortran_module"]]
    line = site_lines("program.f90")["fortran_module"]
    assert frame.label() == f"solver::step (program.f90:{line})"


def stripped_copy(library: Path, folder: Path, *options: str) -> Path:
    folder.mkdir()
    copy = folder / library.name
    execute(tool("strip"), *options, library, "-o", copy)
    return copy


def test_stripped_library_shows_offsets_or_its_dynamic_symbols(run: Run, tmp_path: Path):
    library = Path(run.object_of("libwork.so")["path"])
    copy = stripped_copy(library, tmp_path / "stripped")
    frames = resolve(run.moved({"libwork.so": copy}), run.sites.values())
    exported, hidden = (frames[run.sites[tag]] for tag in LIBRARY_TAGS)
    assert (exported.function, exported.line, exported.reason) == (
        "library_work",
        None,
        NO_DEBUG_INFO,
    )
    assert exported.label() == f"library_work (libwork.so+{exported.offset:#x})"
    assert (hidden.function, hidden.reason) == (None, STRIPPED)
    assert hidden.label() == f"libwork.so+{hidden.offset:#x} (stripped)"
    whole = resolve(run.objects, run.sites.values())
    assert site_key([hidden]) != site_key([whole[run.sites["library_hidden"]]])  # another path
    assert hidden.offset == whole[run.sites["library_hidden"]].offset
    assert seen(frames[run.sites["main"]]) == expected_frame(run, "main")


def test_library_without_debug_information_is_named_by_its_symbol_table(run: Run, tmp_path: Path):
    library = Path(run.object_of("libwork.so")["path"])
    copy = stripped_copy(library, tmp_path / "no-debug", "--strip-debug")
    frames = resolve(run.moved({"libwork.so": copy}), run.sites.values())
    hidden = frames[run.sites["library_hidden"]]
    assert (hidden.function, hidden.file, hidden.reason) == ("hidden", None, NO_DEBUG_INFO)


def test_separate_debug_file_is_found_by_build_id(run: Run, tmp_path: Path):
    library = Path(run.object_of("libwork.so")["path"])
    build_id = run.object_of("libwork.so")["build_id"]
    debug_dir = tmp_path / "debug"
    debug_file = debug_dir / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug"
    debug_file.parent.mkdir(parents=True)
    execute(tool("objcopy"), "--only-keep-debug", library, debug_file)
    copy = stripped_copy(library, tmp_path / "stripped")
    objects = run.moved({"libwork.so": copy})
    frames = resolve(objects, run.sites.values(), debug_dirs=[debug_dir])
    for tag in LIBRARY_TAGS:
        assert seen(frames[run.sites[tag]])[:4] == expected_frame(run, tag)[:4], tag
    elsewhere = resolve(objects, run.sites.values(), debug_dirs=[tmp_path / "none"])
    assert elsewhere[run.sites["library_hidden"]].reason == STRIPPED


def test_separate_debug_file_is_found_by_debuglink_and_its_crc(tmp_path: Path):
    program = build(tmp_path / "build", flags=("-Wl,--build-id=none",))
    run = program.run()
    assert run.object_of("libwork.so")["build_id"] is None
    library = program.library
    debug_file = library.with_name("libwork.debug")
    execute(tool("objcopy"), "--only-keep-debug", library, debug_file)
    execute(tool("strip"), "--strip-debug", library)
    execute(tool("objcopy"), f"--add-gnu-debuglink={debug_file}", library)
    frames = resolve(run.objects, run.sites.values())
    for tag in LIBRARY_TAGS:
        assert seen(frames[run.sites[tag]]) == expected_frame(run, tag), tag
    shutil.copy(program.executable, debug_file)  # another file by that name: its CRC differs
    frames = resolve(run.objects, run.sites.values())
    hidden = frames[run.sites["library_hidden"]]
    assert (hidden.function, hidden.line, hidden.reason) == ("hidden", None, NO_DEBUG_INFO)


def test_a_binary_rebuilt_after_the_run_is_not_trusted(tmp_path: Path):
    program = build(tmp_path)
    run = program.run()
    flags = ["-O2", "-g", f"-I{DATA}", f"-L{tmp_path}"]
    build_library(tmp_path, tool("gcc"), flags, "-DREBUILT")
    frames = resolve(run.objects, run.sites.values())
    for tag in LIBRARY_TAGS:
        frame = frames[run.sites[tag]]
        assert (frame.function, frame.reason) == (None, CHANGED)
        assert frame.label() == f"libwork.so+{frame.offset:#x} (binary changed since the run)"
    assert seen(frames[run.sites["direct"]]) == expected_frame(run, "direct")


def test_a_binary_gone_after_the_run_says_so(run: Run, tmp_path: Path):
    gone = tmp_path / "libwork.so"
    frames = resolve(run.moved({"libwork.so": gone}), run.sites.values())
    for tag in LIBRARY_TAGS:
        assert frames[run.sites[tag]].reason == f"cannot read {gone}: No such file or directory"
    assert seen(frames[run.sites["main"]]) == expected_frame(run, "main")


@pytest.mark.parametrize("damage", ["empty", "text", "cut to a third", "cut after the header"])
def test_a_file_that_is_not_a_whole_elf_file_says_it_cannot_be_read(
    run: Run, tmp_path: Path, damage: str
):
    library = Path(run.object_of("libwork.so")["path"])
    data = library.read_bytes()
    broken = tmp_path / "libwork.so"
    contents = {
        "empty": b"",
        "text": b"not an ELF file\n" * 100,
        "cut to a third": data[: len(data) // 3],
        "cut after the header": data[:64],
    }
    broken.write_bytes(contents[damage])
    frames = resolve(run.moved({"libwork.so": broken}), run.sites.values())
    for tag in LIBRARY_TAGS:
        frame = frames[run.sites[tag]]
        assert frame.reason is not None and frame.reason.startswith(f"cannot read {broken}: ")
        assert frame.function is None


def test_a_fifo_or_a_folder_is_not_opened(run: Run, tmp_path: Path):
    """Opening a FIFO would block the whole command."""
    fifo = tmp_path / "libwork.so"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        frames = resolve(run.moved({"libwork.so": path}), run.sites.values())
        for tag in LIBRARY_TAGS:
            assert frames[run.sites[tag]].reason == f"cannot read {path}: not a regular file"


def section_extent(path: Path, name: str) -> tuple[int, int]:
    with open(path, "rb") as stream:
        section = ELFFile(stream).get_section_by_name(name)
        return section["sh_offset"], section["sh_size"]


@pytest.mark.parametrize(
    "section", [".debug_info", ".debug_abbrev", ".debug_line", ".debug_aranges"]
)
def test_garbled_dwarf_falls_back_to_the_symbol_table(run: Run, tmp_path: Path, section: str):
    library = Path(run.object_of("libwork.so")["path"])
    data = bytearray(library.read_bytes())
    offset, size = section_extent(library, section)
    data[offset : offset + size] = bytes([0xFF]) * size
    broken = tmp_path / "libwork.so"
    broken.write_bytes(data)
    frames = resolve(run.moved({"libwork.so": broken}), run.sites.values())
    for tag in LIBRARY_TAGS:
        frame = frames[run.sites[tag]]
        assert frame.function == EXPECTED[tag][0], (tag, frame)
        assert frame.line in (None, LINES[tag])
        assert (frame.reason is None) == (frame.line is not None), frame


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "compressed"])
def test_randomly_corrupted_files_never_raise(run: Run, tmp_path: Path, compressed: bool):
    """Bytes of the program's DWARF, symbol and note sections overwritten at random (a fixed
    seed), its DWARF as written or compressed: every address still gets a Frame, none raises."""
    executable = tmp_path / "original"
    shutil.copy(run.object_of("program")["path"], executable)
    if compressed:
        execute(tool("objcopy"), "--compress-debug-sections=zlib", executable)
    original = executable.read_bytes()
    with open(executable, "rb") as stream:
        sections = [
            (section["sh_offset"], section["sh_size"])
            for section in ELFFile(stream).iter_sections()
            if section.name.startswith((".debug", ".symtab", ".strtab", ".dynsym", ".note"))
        ]
    broken = tmp_path / "program"
    objects = run.moved({"program": broken})
    addresses = {run.sites[tag] for tag in EXPECTED}  # not libc's: reading its DWARF takes 0.1 s
    rng = random.Random(31)
    for _ in range(FUZZ_TRIALS):
        data = bytearray(original)
        offset, size = rng.choice(sections)
        for _ in range(rng.randint(1, 8)):
            data[offset + rng.randrange(size)] = rng.randrange(256)
        broken.write_bytes(data)
        frames = resolve(objects, addresses)
        assert set(frames) == addresses
        for frame in frames.values():
            assert isinstance(frame.label(), str)


def test_addresses_outside_every_object_and_malformed_objects(run: Run):
    outside = [16, 0, -5, 2**64]
    frames = resolve(run.objects, outside)
    assert [frames[address] for address in outside] == [
        Frame("", address, reason=NOT_LOADED) for address in outside
    ]
    assert frames[16].label() == "0x10 (not in any loaded object)"
    malformed = [None, "x", {"path": 3}, {"path": "/x", "base": "0", "segments": [[1, 9]]}]
    malformed += [{"path": "/x", "base": 0, "build_id": 7, "segments": [[1], [9, 2], "s"]}]
    assert resolve(malformed, [5]) == {5: Frame("", 5, reason=NOT_LOADED)}
    assert resolve(run.objects, ["12", 1.5, True]) == {}


def test_each_object_is_opened_once_and_only_when_it_holds_an_address(
    program: Program, monkeypatch: pytest.MonkeyPatch
):
    opened: list[str] = []

    class Counted(loaded_object.ElfImage):
        def __init__(self, path: str | Path):
            opened.append(str(path))
            super().__init__(path)

    monkeypatch.setattr(loaded_object, "ElfImage", Counted)
    runs = [program.run(), program.run()]
    with Resolver() as resolver:
        for one in runs:
            resolver.resolve(one.objects, [one.sites[tag] for tag in EXPECTED])
    assert sorted(opened) == sorted(
        runs[0].object_of(name)["path"] for name in ("program", "libwork.so")
    )


def test_a_site_in_libc_resolves_with_its_debug_package_when_installed(run: Run):
    """The qsort comparator's return address is in libc; Debian's libc6-dbg installs its DWARF
    by build-id. addr2line (binutils) reads the same file: both must agree."""
    libc = next(entry for entry in run.objects if Path(entry["path"]).name.startswith("libc.so"))
    frame = resolve(run.objects, [run.sites["libc"]])[run.sites["libc"]]
    assert frame.object == libc["path"]
    build_id = libc["build_id"] or ""
    debug_file = Path(f"/usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug")
    if not debug_file.is_file():
        assert frame.reason in (NO_DEBUG_INFO, STRIPPED)
        return
    assert frame.reason is None and frame.line
    done = subprocess.run(
        [tool("addr2line"), "-f", "-e", str(debug_file), f"{frame.offset - 1:#x}"],
        capture_output=True,
        text=True,
        check=True,
    )
    function, place = done.stdout.splitlines()[:2]
    assert (frame.function, Path(frame.file).name, frame.line) == (
        function,
        Path(place.split(":")[0]).name,
        int(place.split(":")[1].split()[0]),
    )


def test_a_dwz_supplementary_file_is_read(run: Run, tmp_path: Path):
    """dwz (Debian's debug packages) moves what files share into a supplementary file."""
    dwz = tool("dwz")
    copies = {}
    for name in ("program", "libwork.so"):
        copies[name] = tmp_path / name
        shutil.copy(run.object_of(name)["path"], copies[name])
    common = tmp_path / "common.debug"
    execute(dwz, "-m", common, "-M", common, *copies.values())
    objects = run.moved(copies)
    frames = resolve(objects, [run.sites[tag] for tag in EXPECTED])
    for tag in EXPECTED:
        assert seen(frames[run.sites[tag]])[:4] == expected_frame(run, tag)[:4], tag
    common.unlink()
    frames = resolve(objects, [run.sites[tag] for tag in EXPECTED])
    for tag in EXPECTED:
        assert seen(frames[run.sites[tag]])[:4] == expected_frame(run, tag)[:4], tag


def test_the_fast_readers_agree_with_pyelftools(variant: Program):
    """The readers of line programs (line_header, line_table), DIEs (die_skim, abbreviations)
    and range lists against pyelftools' own, over every unit of the program and its library."""
    for binary in (variant.executable, variant.library):
        with open(binary, "rb") as stream:
            info = ELFFile(stream).get_dwarf_info(relocate_dwarf_sections=False)
            sections = DwarfSections(info)
            for header in unit_headers(sections.debug_info, True):
                unit = Unit(sections, header)
                try:
                    program = info.line_program_for_CU(unit.cu)
                except KeyError as error:  # before 0.30: clang's MD5s, in DW_FORM_data16
                    pytest.skip(f"pyelftools {elftools.__version__} cannot read it: {error}")
                ours = unit.line_header
                assert decode_rows(sections.debug_line, ours, True) == reference_rows(program)
                files = [(entry.name.decode(), entry.dir_index) for entry in program["file_entry"]]
                assert list(ours.files) == files
                directories = [folder.decode() for folder in program["include_directory"]]
                assert list(ours.directories) == directories
                assert_skims_alike(unit, unit.skimmer.top, unit.top)


def reference_rows(program: LineProgram) -> list[list[tuple[int, int, int]]]:
    sequences, rows = [], []
    for entry in program.get_entries():
        if entry.state is not None:
            rows.append((entry.state.address, entry.state.file, entry.state.line))
            if entry.state.end_sequence:
                sequences.append(rows)
                rows = []
    return sequences


def reference_ranges(unit: Unit, die: DIE) -> list[tuple[int, int]]:
    """A DIE's code ranges as pyelftools reads them."""
    attributes = die.attributes
    if "DW_AT_ranges" in attributes:
        base = unit.top.attributes["DW_AT_low_pc"].value
        found = []
        lists = unit.sections.info.range_lists()
        for entry in lists.get_range_list_at_offset(attributes["DW_AT_ranges"].value, cu=unit.cu):
            if isinstance(entry, BaseAddressEntry):
                base = entry.base_address
            else:
                offset = 0 if entry.is_absolute else base
                found.append((offset + entry.begin_offset, offset + entry.end_offset))
        return found
    if "DW_AT_low_pc" not in attributes or "DW_AT_high_pc" not in attributes:
        return []
    low, high = attributes["DW_AT_low_pc"].value, attributes["DW_AT_high_pc"]
    return [(low, high.value if high.form.startswith("DW_FORM_addr") else low + high.value)]


def assert_skims_alike(unit: Unit, skimmed: Skimmed, die: DIE) -> None:
    assert (skimmed.offset, skimmed.tag) == (die.offset, ENUM_DW_TAG[die.tag])
    assert unit.skimmer.ranges(skimmed) == reference_ranges(unit, die)
    assert (skimmed.children_at is not None) == die.has_children
    if die.has_children:
        children = list(die.iter_children())
        skimmed_children = list(unit.skimmer.children(skimmed.children_at))
        assert len(skimmed_children) == len(children)
        for mine, theirs in zip(skimmed_children, children):
            assert_skims_alike(unit, mine, theirs)
