/* pa-hwloc-export: the topology as hwloc XML, with measured memory attributes (hwloc memattrs).
 *
 * Loads the topology (this machine's, or the one HWLOC_XMLFILE names: perfatlas passes the XML
 * stored with a run), sets the values a `values=FILE` lists through hwloc's API and writes the
 * result with hwloc_topology_export_xml to `xml=FILE`. The lines of the values file, tab-separated:
 *
 *   value  ATTRIBUTE  INITIATOR-CPUS  NUMA-NODE  INTEGER   hwloc_memattr_set_value: ATTRIBUTE is a
 *          memattr name (Latency in ns, Bandwidth, ReadBandwidth, WriteBandwidth in MiB/s, as
 *          hwloc/memattrs.h defines them), the initiator a cpuset (HWLOC_LOCATION_TYPE_CPUSET,
 *          a list such as 0-3), the target the NUMA node of that OS index
 *   info   root|NUMA-NODE  NAME  VALUE                    hwloc_obj_add_info on that object
 *
 * Without values= the topology is exported as it is (what perfatlas stores with every run). The
 * JSON document on stdout (or json=FILE) counts what was set. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "args.h"
#include "files.h"
#include "json.h"

static const pa_param params[] = {
    {"xml", PA_STRING, "", "the hwloc XML file to write", NULL, 0, 0},
    {"values", PA_STRING, "", "memory attributes and infos to set (tab-separated lines)", NULL, 0,
     0},
};

typedef struct {
    long values, infos;
} counts;

static hwloc_obj_t numa_node(hwloc_topology_t topo, const char *word, const char *file, int line)
{
    char *end;
    errno = 0;
    unsigned long index = strtoul(word, &end, 10);
    hwloc_obj_t node = NULL;
    if (!errno && isdigit((unsigned char)word[0]) && !*end && index <= UINT_MAX)
        node = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)index);
    if (!node)
        pa_fail(2, "%s line %d: NUMA node '%s' is not in this topology", file, line, word);
    return node;
}

static void set_value(hwloc_topology_t topo, char **field, const char *file, int line)
{
    hwloc_memattr_id_t id;
    if (hwloc_memattr_get_by_name(topo, field[1], &id))
        pa_fail(2, "%s line %d: hwloc has no memory attribute '%s'", file, line, field[1]);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    if (!cpus || hwloc_bitmap_list_sscanf(cpus, field[2]) || hwloc_bitmap_iszero(cpus))
        pa_fail(2, "%s line %d: '%s' is not a CPU list", file, line, field[2]);
    hwloc_obj_t target = numa_node(topo, field[3], file, line);
    char *end;
    errno = 0;
    unsigned long long value = strtoull(field[4], &end, 10); /* it would negate "-5" */
    if (errno || !isdigit((unsigned char)field[4][0]) || *end)
        pa_fail(2, "%s line %d: '%s' is not an unsigned integer", file, line, field[4]);
    struct hwloc_location initiator = {.type = HWLOC_LOCATION_TYPE_CPUSET, .location.cpuset = cpus};
    if (hwloc_memattr_set_value(topo, id, target, &initiator, 0, (hwloc_uint64_t)value))
        pa_fail(2, "%s line %d: hwloc refused %s=%llu from cpus %s to node %s: %s", file, line,
                field[1], value, field[2], field[3], strerror(errno));
    hwloc_bitmap_free(cpus);
}

static void add_info(hwloc_topology_t topo, char **field, const char *file, int line)
{
    hwloc_obj_t obj = strcmp(field[1], "root") == 0 ? hwloc_get_root_obj(topo)
                                                    : numa_node(topo, field[1], file, line);
    if (hwloc_obj_add_info(obj, field[2], field[3]))
        pa_fail(2, "%s line %d: hwloc refused the info %s: %s", file, line, field[2],
                strerror(errno));
}

/* Splits a line at tabs into at most `max` fields; returns how many. */
static int split(char *text, char **field, int max)
{
    text[strcspn(text, "\n")] = '\0';
    int n = 0;
    for (char *word = text; word && n < max; n++) {
        field[n] = word;
        word = strchr(word, '\t');
        if (word)
            *word++ = '\0';
    }
    return n;
}

static counts apply_values(hwloc_topology_t topo, const char *file)
{
    counts done = {0, 0};
    char why[1024];
    FILE *in = pa_open_regular(file, "the values file", "give the values file perfatlas writes",
                               why, sizeof why);
    if (!in)
        pa_fail(2, "%s", why);
    char text[4096];
    for (int line = 1; fgets(text, sizeof text, in); line++) {
        if (!strchr(text, '\n') && !feof(in))
            pa_fail(2, "%s line %d is longer than %zu characters", file, line, sizeof text - 2);
        char *field[6];
        int n = split(text, field, 6);
        if (n == 5 && strcmp(field[0], "value") == 0) {
            set_value(topo, field, file, line);
            done.values++;
        } else if (n == 4 && strcmp(field[0], "info") == 0) {
            add_info(topo, field, file, line);
            done.infos++;
        } else
            pa_fail(2, "%s line %d: neither a 'value' line (5 fields) nor an 'info' line (4)", file,
                    line);
    }
    fclose(in);
    return done;
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-hwloc-export",
                  "the topology as hwloc XML, with measured memory attributes", params,
                  sizeof params / sizeof *params, argc, argv);
    const char *xml = pa_arg_text(&args, "xml");
    const char *values = pa_arg_text(&args, "values");
    if (!*xml)
        pa_fail(2, "xml=FILE is required: where the hwloc XML goes");
    hwloc_topology_t topo = pa_topology();
    counts done = *values ? apply_values(topo, values) : (counts){0, 0};
    if (hwloc_topology_export_xml(topo, xml, 0))
        pa_fail(2, "hwloc cannot write the topology to %s: %s", xml, strerror(errno));

    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "schema", "perfatlas.hwloc_export/1");
    pa_json_key_string(&json, "hwloc_version", HWLOC_VERSION);
    pa_json_key_string(&json, "xml", xml);
    pa_json_key_int(&json, "values_set", done.values);
    pa_json_key_int(&json, "infos_added", done.infos);
    pa_json_key_bool(&json, "this_system", hwloc_topology_is_thissystem(topo));
    pa_json_end_object(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
