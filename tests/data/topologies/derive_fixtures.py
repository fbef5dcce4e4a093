"""Derive the memory-only (CXL), memory-side cache + HBM and GPU-memory fixtures from
24em64t-2n6c2t-pci.xml: python3 derive_fixtures.py (rewrites the three files)."""

from pathlib import Path

here = Path(__file__).parent
base = (here / "24em64t-2n6c2t-pci.xml").read_text()
end_machine = "  </object>\n  <distances2"
dist_old = """  <distances2 type="NUMANode" nbobjs="2" kind="5" name="NUMALatency" indexing="os">
    <indexes length="4">0 1 </indexes>
    <u64values length="12">10 20 20 10 </u64values>
  </distances2>"""
assert end_machine in base and dist_old in base


def node(os_index, cpuset, memory, subtype, gp, indent="    "):
    return (
        f'{indent}<object type="NUMANode" os_index="{os_index}" cpuset="{cpuset}" '
        f'complete_cpuset="{cpuset}" nodeset="{hex(1 << os_index)}" '
        f'complete_nodeset="{hex(1 << os_index)}" gp_index="{gp}" local_memory="{memory}" '
        f'subtype="{subtype}">\n{indent}  <page_type size="4096" count="{memory // 4096}"/>\n'
        f"{indent}</object>\n"
    )


def distances(matrix):
    n = len(matrix)
    values = " ".join(str(v) for row in matrix for v in row)
    return (
        f'  <distances2 type="NUMANode" nbobjs="{n}" kind="5" name="NUMALatency" indexing="os">\n'
        f'    <indexes length="{2 * n}">{" ".join(map(str, range(n)))} </indexes>\n'
        f'    <u64values length="{len(values) + 1}">{values} </u64values>\n'
        "  </distances2>"
    )


def nodesets(text, mask):
    """The Machine's nodesets, widened to the added nodes."""
    old = 'nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003"'
    new = f'nodeset="{mask}" complete_nodeset="{mask}" allowed_nodeset="{mask}"'
    assert text.count(old) == 1
    return text.replace(old, new)


# 1. A CXL memory expander: node 2, no CPUs (empty cpuset), farther than the other socket.
cxl = base.replace(end_machine, node(2, "0x0", 64 * 2**30, "CXL-DRAM", 900) + end_machine)
cxl = nodesets(
    cxl.replace(dist_old, distances([[10, 20, 30], [20, 10, 30], [30, 30, 10]])), "0x00000007"
)
(here / "24em64t-2n6c2t-cxl.xml").write_text(cxl)

# 2. Package 0's DRAM behind a 16 GiB memory-side cache (hwloc MemCache, as DRAM caching NVM or
#    MCDRAM in cache mode), and package 1 with HBM in flat mode: node 2, same locality as node 1.
old0 = base[base.index('      <object type="NUMANode" os_index="0"') :]
old0 = old0[: old0.index("      </object>\n") + len("      </object>\n")]
cached = (
    '      <object type="MemCache" cpuset="0x00555555" complete_cpuset="0x00555555" '
    'nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="901" '
    'cache_size="17179869184" depth="1" cache_linesize="64" cache_associativity="1" '
    'cache_type="0">\n'
    + "\n".join("  " + line if line else line for line in old0.split("\n"))
    + "      </object>\n"
)
memcache = base.replace(old0, cached)
old1 = '      <object type="NUMANode" os_index="1"'
memcache = memcache.replace(
    old1, node(2, "0x00aaaaaa", 16 * 2**30, "HBM", 902, indent="      ") + old1
)
memcache = nodesets(
    memcache.replace(dist_old, distances([[10, 20, 23], [20, 10, 13], [23, 13, 10]])), "0x00000007"
)
(here / "24em64t-2n6c2t-memcache-hbm.xml").write_text(memcache)

# 3. GPU memory exposed as NUMA nodes (as on POWER9 + V100 or Grace Hopper): nodes 2 and 3, one
#    per package, same locality as the package's DRAM, subtype GPUMemory.
old1_pkg = '      <object type="NUMANode" os_index="1"'
gpu = base.replace(
    old0, old0 + node(2, "0x00555555", 32 * 2**30, "GPUMemory", 903, indent="      ")
)
gpu = gpu.replace(
    old1_pkg, node(3, "0x00aaaaaa", 32 * 2**30, "GPUMemory", 904, indent="      ") + old1_pkg
)
gpu = nodesets(
    gpu.replace(
        dist_old,
        distances([[10, 20, 80, 80], [20, 10, 80, 80], [80, 80, 10, 80], [80, 80, 80, 10]]),
    ),
    "0x0000000f",
)
(here / "24em64t-2n6c2t-gpu-numa.xml").write_text(gpu)
