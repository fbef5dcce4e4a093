/* The banner rank 0 prints to stderr at MPI_Finalize, in the spirit of IPM's: the program, its
 * wallclock, %comm and %i/o, memory, the categories per region over ranks, and the top calls. */
#include <stdlib.h>

#include "aggregate.h"

#define PA_IPM_TOP_CALLS 10

static double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

static void print_command(FILE *out)
{
    char **words;
    int count;
    pa_ipm_command_words(&words, &count);
    fputs("# command   :", out);
    for (int i = 0; i < count; i++)
        fprintf(out, " %s", words[i]);
    fputc('\n', out);
}

static void print_totals(const pa_ipm_profile_t *profile, FILE *out)
{
    const pa_ipm_spread_t *program = &profile->region[0];
    double wall = program[PA_IPM_Q_WALL].sum, tasks = profile->tasks;
    int hosts = 0;
    for (int rank = 0; rank < profile->tasks; rank++)
        hosts += pa_ipm_first_on_host(profile, rank);
    double comm = program[PA_IPM_Q_MPI].sum + program[PA_IPM_Q_LBST].sum;
    char tasks_text[64];
    snprintf(tasks_text, sizeof tasks_text, "%d on %d host%s", profile->tasks, hosts,
             hosts == 1 ? "" : "s");
    fprintf(out, "# mpi_tasks : %-22s %%comm     : %.2f\n", tasks_text, percent(comm, wall));
    fprintf(out, "# wallclock : %-22.6g %%i/o      : %.2f\n", program[PA_IPM_Q_WALL].max,
            percent(program[PA_IPM_Q_IO].sum, wall));
    fprintf(out, "# mem [GB]  : %-22.4g gflop/sec : ", profile->maxrss.sum / 1e9);
    if (profile->counted)
        fprintf(out, "%.4g\n", profile->counter.sum / 1e9 / program[PA_IPM_Q_WALL].max);
    else
        fputs("unavailable (the profile says why)\n", out);
    fprintf(out, "#\n#%26s %12s %12s %12s %12s\n", "", "[total]", "<avg>", "min", "max");
    for (int q = 0; q < PA_IPM_NQ; q++)
        fprintf(out, "# %-25s %12.4g %12.4g %12.4g %12.4g\n", pa_ipm_quantity_names[q],
                program[q].sum, program[q].sum / tasks, program[q].min, program[q].max);
}

static void print_regions(const pa_ipm_profile_t *profile, FILE *out)
{
    fprintf(out, "#\n# %-25s %12s %8s %8s %8s %8s\n", "region", "<wall>", "%calc", "%mpi", "%i/o",
            "%lbst");
    for (int id = 0; id < profile->regions; id++) {
        const pa_ipm_spread_t *q = &profile->region[id * PA_IPM_NQ];
        double wall = q[PA_IPM_Q_WALL].sum, ranks = profile->region_ranks[id];
        const char *path = id == 0 ? "(whole program)" : profile->paths[id];
        int shown = (int)pa_ipm_whole_characters(path, 25); /* never half a UTF-8 character */
        fprintf(out, "# %-25.*s %12.4g %8.2f %8.2f %8.2f %8.2f\n", shown, path,
                ranks > 0 ? wall / ranks : 0, percent(q[PA_IPM_Q_CALC].sum, wall),
                percent(q[PA_IPM_Q_MPI].sum, wall), percent(q[PA_IPM_Q_IO].sum, wall),
                percent(q[PA_IPM_Q_LBST].sum, wall));
    }
}

/* The calls with the most time over all regions and ranks. */
static void print_top_calls(const pa_ipm_profile_t *profile, FILE *out)
{
    double time[PA_IPM_NCALLS] = {0}, count[PA_IPM_NCALLS] = {0};
    for (int at = 0; at < profile->regions * PA_IPM_NCALLS; at++) {
        time[at % PA_IPM_NCALLS] += profile->call_time[at].sum;
        count[at % PA_IPM_NCALLS] += profile->call_count[at];
    }
    double wall = profile->region[PA_IPM_Q_WALL].sum;
    fprintf(out, "#\n# %-25s %12s %12s %8s\n", "call", "[time]", "[count]", "<%wall>");
    for (int shown = 0; shown < PA_IPM_TOP_CALLS; shown++) {
        int best = -1;
        for (int call = 0; call < PA_IPM_NCALLS; call++)
            if (count[call] > 0 && (best < 0 || time[call] > time[best]))
                best = call;
        if (best < 0)
            break;
        fprintf(out, "# %-25s %12.4g %12.0f %8.2f\n", pa_ipm_call_names[best], time[best],
                count[best], percent(time[best], wall));
        count[best] = 0;
    }
}

void pa_ipm_print_banner(const pa_ipm_profile_t *profile, FILE *out)
{
    fputs("##perfatlas-ipm################################################################\n#\n",
          out);
    print_command(out);
    print_totals(profile, out);
    print_regions(profile, out);
    print_top_calls(profile, out);
    if (profile->too_deep > 0)
        fprintf(out, "# %.0f regions nested deeper than %d levels: counted in the level above\n",
                profile->too_deep, PA_IPM_MAX_DEPTH);
    if (profile->overflow_count > 0)
        fprintf(out, "# %.0f events on %.0f ranks found the record table full: folded, not lost\n",
                profile->overflow_count, profile->overflow_ranks);
    fputs("###############################################################################\n", out);
    fflush(out);
}
