#include "p2p.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#include "timer.h"

enum {
    TAG_DATA = 11,
    TAG_ACK = 12
};

/* Byte i of a message of `bytes` from pair position `sender`. */
static unsigned char pattern(size_t i, size_t bytes, int sender)
{
    return (unsigned char)((i * 131u + bytes * 7u + (unsigned)sender * 61u + 17u) & 0xffu);
}

void pa_p2p_init(pa_p2p *p2p, MPI_Comm comm, size_t max_bytes, size_t recv_bytes, int max_window)
{
    memset(p2p, 0, sizeof *p2p);
    p2p->comm = comm;
    MPI_Comm_rank(comm, &p2p->me);
    p2p->send = pa_comm_alloc(max_bytes);
    p2p->recv = pa_comm_alloc(recv_bytes);
    p2p->requests = pa_calloc(2 * (size_t)max_window, sizeof(MPI_Request), "the MPI requests");
}

void pa_p2p_free(pa_p2p *p2p)
{
    free(p2p->send);
    free(p2p->recv);
    free(p2p->requests);
}

void pa_p2p_size(pa_p2p *p2p, size_t bytes, int window, int bidirectional)
{
    p2p->bytes = bytes;
    p2p->window = window;
    p2p->bidirectional = bidirectional;
    for (size_t i = 0; i < bytes; i++)
        p2p->send[i] = pattern(i, bytes, p2p->me);
    memset(p2p->recv, 0, bytes * (size_t)window);
}

size_t pa_p2p_recv_bytes(size_t max_bytes, int window, size_t window_bytes)
{
    /* a window holds window x bytes, or at most window_bytes, but always one message */
    size_t most = (size_t)window * max_bytes;
    most = most > window_bytes ? window_bytes : most;
    return most > max_bytes ? most : max_bytes;
}

int pa_p2p_window(size_t bytes, int window, size_t window_bytes)
{
    if (bytes > 0 && (size_t)window * bytes > window_bytes)
        window = (int)(window_bytes / bytes);
    return window < 1 ? 1 : window;
}

double pa_p2p_latency(void *context, long iterations, uint64_t *laps)
{
    pa_p2p *p = context;
    int other = 1 - p->me, n = (int)p->bytes;
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        if (p->bidirectional) {
            MPI_Irecv(p->recv, n, MPI_BYTE, other, TAG_DATA, p->comm, &p->requests[0]);
            MPI_Isend(p->send, n, MPI_BYTE, other, TAG_DATA, p->comm, &p->requests[1]);
            MPI_Waitall(2, p->requests, MPI_STATUSES_IGNORE);
        } else if (p->me == 0) {
            MPI_Send(p->send, n, MPI_BYTE, other, TAG_DATA, p->comm);
            MPI_Recv(p->recv, n, MPI_BYTE, other, TAG_DATA, p->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p->recv, n, MPI_BYTE, other, TAG_DATA, p->comm, MPI_STATUS_IGNORE);
            MPI_Send(p->send, n, MPI_BYTE, other, TAG_DATA, p->comm);
        }
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

double pa_p2p_bandwidth(void *context, long iterations, uint64_t *laps)
{
    pa_p2p *p = context;
    int other = 1 - p->me, n = (int)p->bytes, w = p->window;
    int sends = p->bidirectional || p->me == 0, receives = p->bidirectional || p->me == 1;
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        int posted = 0;
        for (int s = 0; receives && s < w; s++)
            MPI_Irecv(p->recv + (size_t)s * p->bytes, n, MPI_BYTE, other, TAG_DATA, p->comm,
                      &p->requests[posted++]);
        for (int s = 0; sends && s < w; s++)
            MPI_Isend(p->send, n, MPI_BYTE, other, TAG_DATA, p->comm, &p->requests[posted++]);
        MPI_Waitall(posted, p->requests, MPI_STATUSES_IGNORE);
        if (!p->bidirectional) { /* the window has arrived when the receiver says so */
            if (p->me == 0)
                MPI_Recv(NULL, 0, MPI_BYTE, other, TAG_ACK, p->comm, MPI_STATUS_IGNORE);
            else
                MPI_Send(NULL, 0, MPI_BYTE, other, TAG_ACK, p->comm);
        }
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

void pa_p2p_verify(const pa_p2p *p, int bandwidth, const char *what)
{
    int slots = bandwidth ? p->window : 1;
    int receives = p->bidirectional || !bandwidth || p->me == 1;
    int other = 1 - p->me;
    for (int s = 0; receives && s < slots; s++)
        for (size_t i = 0; i < p->bytes; i++)
            if (p->recv[(size_t)s * p->bytes + i] != pattern(i, p->bytes, other))
                pa_comm_wrong("%s of %zu bytes delivered a wrong byte %zu in slot %d: the message "
                              "data are corrupt",
                              what, p->bytes, i, s);
    memset(p->recv, 0, p->bytes * (size_t)slots); /* the next check sees only new data */
}

double pa_p2p_latency_bytes(const pa_p2p *p) { return 2.0 * (double)p->bytes; }

double pa_p2p_bandwidth_bytes(const pa_p2p *p)
{
    return (double)p->window * (double)p->bytes * (p->bidirectional ? 2.0 : 1.0);
}

void pa_p2p_measure_latency(pa_p2p *p, MPI_Comm agree, size_t bytes, int bidirectional,
                            const pa_timing *timing, pa_p2p_result *result)
{
    memset(result, 0, sizeof *result);
    result->bidirectional = bidirectional;
    result->latency_message = bytes;
    pa_p2p_size(p, bytes, 1, bidirectional);
    result->latency_bytes = pa_p2p_latency_bytes(p);
    pa_comm_measure(agree, pa_p2p_latency, p, timing, &result->latency, &result->latency_histogram);
    pa_p2p_verify(p, 0, "a ping-pong");
}

void pa_p2p_measure_bandwidth(pa_p2p *p, MPI_Comm agree, size_t bytes, int window,
                              int bidirectional, const pa_timing *timing, pa_p2p_result *result)
{
    result->has_bandwidth = 1;
    result->bandwidth_message = bytes;
    result->window = window;
    pa_p2p_size(p, bytes, window, bidirectional);
    result->bandwidth_bytes = pa_p2p_bandwidth_bytes(p);
    pa_comm_measure(agree, pa_p2p_bandwidth, p, timing, &result->bandwidth,
                    &result->bandwidth_histogram);
    pa_p2p_verify(p, 1, "a window of messages");
}

void pa_p2p_result_free(pa_p2p_result *result)
{
    pa_series_free(&result->latency);
    pa_series_free(&result->bandwidth);
}

static void series_to_root(pa_series *series, int from, int me)
{
    long header[4] = {series->iterations, series->requested, series->count, series->warmed};
    if (me == from) {
        MPI_Send(header, 4, MPI_LONG, 0, 21, MPI_COMM_WORLD);
        MPI_Send(series->seconds, series->count, MPI_DOUBLE, 0, 22, MPI_COMM_WORLD);
    } else {
        MPI_Recv(header, 4, MPI_LONG, from, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        series->iterations = header[0];
        series->requested = (int)header[1];
        series->count = (int)header[2];
        series->warmed = (int)header[3];
        free(series->seconds);
        series->seconds = pa_calloc((size_t)series->count + 1, sizeof(double), "seconds");
        MPI_Recv(series->seconds, series->count, MPI_DOUBLE, from, 22, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
}

void pa_p2p_result_to_root(pa_p2p_result *result, int from, int me)
{
    if (from == 0)
        return;
    /* the scalars and histograms travel as bytes; the series' arrays follow */
    pa_p2p_result copy = *result;
    MPI_Sendrecv_replace(&copy, (int)sizeof copy, MPI_BYTE, me == from ? 0 : from, 20,
                         me == from ? 0 : from, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (me == 0) {
        pa_series latency = result->latency, bandwidth = result->bandwidth;
        *result = copy;
        result->latency = latency;
        result->bandwidth = bandwidth;
    }
    series_to_root(&result->latency, from, me);
    if (result->has_bandwidth)
        series_to_root(&result->bandwidth, from, me);
}

static void per_iteration(pa_json *json, const char *definition, size_t message, double bytes,
                          const pa_series *series, const pa_histogram *histogram, double scale,
                          int window)
{
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition", definition);
    pa_json_key_int(json, "message_bytes", (long long)message);
    pa_json_key_double(json, "bytes_per_iteration", bytes);
    if (window) {
        pa_json_key_int(json, "window", window);
    }
    pa_json_key_int(json, "iterations_per_sample", series->iterations);
    pa_json_key_int(json, "samples_requested", series->requested);
    pa_json_key_int(json, "samples_taken", series->count);
    pa_histogram_json(json, histogram, scale);
    pa_json_end_object(json);
}

void pa_p2p_result_json(pa_json *json, const pa_p2p_result *r)
{
    int n = r->latency.count, m = r->has_bandwidth ? r->bandwidth.count : 0;
    double *latency = pa_calloc((size_t)n + 1, sizeof(double), "latency");
    double *bandwidth = pa_calloc((size_t)m + 1, sizeof(double), "bandwidth");
    double *seconds = pa_calloc((size_t)(n + m) + 1, sizeof(double), "seconds");
    /* unidirectional latency is half a round trip; a bidirectional exchange counts whole */
    double half = r->bidirectional ? 1.0 : 0.5;
    for (int i = 0; i < n; i++) {
        latency[i] = r->latency.seconds[i] * 1e9 * half / (double)r->latency.iterations;
        seconds[i] = r->latency.seconds[i];
    }
    for (int i = 0; i < m; i++) {
        bandwidth[i] =
            r->bandwidth_bytes * (double)r->bandwidth.iterations / r->bandwidth.seconds[i];
        seconds[n + i] = r->bandwidth.seconds[i];
    }
    pa_metric metrics[2] = {{"latency_ns", "ns", latency, n},
                            {"bandwidth_Bps", "byte/s", bandwidth, m}};
    pa_comm_doc_samples(json, metrics, r->has_bandwidth ? 2 : 1, seconds, n + m);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "direction", r->bidirectional ? "bi" : "uni");
    pa_json_key(json, "latency");
    per_iteration(
        json,
        r->bidirectional ? "time of one simultaneous exchange of `bytes` in each direction"
                         : "half the round-trip time of `bytes` there and `bytes` back",
        r->latency_message, r->latency_bytes, &r->latency, &r->latency_histogram, half, 0);
    if (r->has_bandwidth) {
        pa_json_key(json, "bandwidth");
        per_iteration(json,
                      r->bidirectional ? "bytes of both directions per window / time of the window"
                                       : "bytes of one window / time from its first send to its "
                                         "acknowledgement",
                      r->bandwidth_message, r->bandwidth_bytes, &r->bandwidth,
                      &r->bandwidth_histogram, 1.0, r->window);
    }
    pa_json_key_bool(json, "verified", 1);
    free(latency);
    free(bandwidth);
    free(seconds);
}

void pa_p2p_pair_from_args(pa_p2p_pair *pair, const pa_args *args)
{
    pair->latency_bytes = pa_arg_size(args, "latency_bytes");
    pair->bandwidth_bytes = pa_arg_size(args, "bandwidth_bytes");
    pair->window = pa_p2p_window(pair->bandwidth_bytes, (int)pa_arg_int(args, "window"),
                                 pa_arg_size(args, "window_bytes"));
}

void pa_p2p_measure_pair(const pa_p2p_pair *pair, MPI_Comm comm, MPI_Comm agree,
                         const pa_timing *timing, pa_p2p_result *result)
{
    size_t largest =
        pair->latency_bytes > pair->bandwidth_bytes ? pair->latency_bytes : pair->bandwidth_bytes;
    pa_p2p p2p;
    pa_p2p_init(&p2p, comm, largest, (size_t)pair->window * pair->bandwidth_bytes, pair->window);
    pa_p2p_measure_latency(&p2p, agree, pair->latency_bytes, 0, timing, result);
    pa_p2p_measure_bandwidth(&p2p, agree, pair->bandwidth_bytes, pair->window, 0, timing, result);
    pa_p2p_free(&p2p);
}
