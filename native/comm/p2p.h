/* The point-to-point kernels that ping-pong, distance and complement share (OSU-style methods).
 *
 * Latency, unidirectional: the initiator sends `bytes`, the responder answers with `bytes`; one
 * iteration is a round trip and the latency is half of it. Bidirectional: both ranks send
 * `bytes` at once (MPI_Isend + MPI_Irecv, MPI_Waitall); one iteration is that exchange.
 * Bandwidth, unidirectional: the initiator keeps a window of `window` nonblocking sends in flight,
 * the responder pre-posts as many receives (each into its own slot) and acknowledges the window
 * with an empty message; one iteration is one window. Bidirectional: both ranks send a window to
 * each other at once, and the bytes of both directions count.
 * Every payload carries a pattern that names its sender and size; the receiving rank checks it. */
#ifndef PA_P2P_H
#define PA_P2P_H

#include <stddef.h>

#include "comm.h"

typedef struct {
    MPI_Comm comm; /* the two ranks of the pair: 0 initiates, 1 responds */
    int me;        /* this rank's position in comm */
    size_t bytes;  /* message size */
    int window;    /* messages in flight per bandwidth iteration */
    int bidirectional;
    unsigned char *send; /* max_bytes */
    unsigned char *recv; /* max_window slots of max_bytes */
    MPI_Request *requests;
} pa_p2p;

/* Buffers for messages up to max_bytes and windows of `recv_bytes` in all (on both ranks). */
void pa_p2p_init(pa_p2p *p2p, MPI_Comm comm, size_t max_bytes, size_t recv_bytes, int max_window);
/* The receive space a window needs for every size up to max_bytes. */
size_t pa_p2p_recv_bytes(size_t max_bytes, int window, size_t window_bytes);
void pa_p2p_free(pa_p2p *p2p);
/* Prepares messages of `bytes` with `window` slots: fills the send pattern, clears the slots. */
void pa_p2p_size(pa_p2p *p2p, size_t bytes, int window, int bidirectional);

/* The window for `bytes`: `window`, but no more than window_bytes in flight, at least one. */
int pa_p2p_window(size_t bytes, int window, size_t window_bytes);

pa_batch_fn pa_p2p_latency;
pa_batch_fn pa_p2p_bandwidth;

/* Did the last latency (bandwidth = 0) or bandwidth exchange deliver the peer's pattern into
 * every slot this rank receives? Aborts with status 3 and one sentence if not; then clears the
 * slots so that the next check sees only new data. */
void pa_p2p_verify(const pa_p2p *p2p, int bandwidth, const char *what);

/* Bytes one iteration moves: 2 x bytes for a round trip or an exchange; window x bytes for a
 * window, twice that bidirectionally. */
double pa_p2p_latency_bytes(const pa_p2p *p2p);
double pa_p2p_bandwidth_bytes(const pa_p2p *p2p);

/* What a pair measured: latency, and bandwidth when asked for (never for empty messages). */
typedef struct {
    int bidirectional, has_bandwidth;
    size_t latency_message, bandwidth_message; /* message sizes in bytes */
    int window;
    double latency_bytes, bandwidth_bytes; /* bytes per iteration */
    pa_series latency, bandwidth;          /* the initiator's */
    pa_histogram latency_histogram, bandwidth_histogram;
} pa_p2p_result;

/* Latency (then bandwidth) of messages of `bytes` on the pair (both ranks call these); `agree`
 * is the communicator whose ranks share iteration counts (the pair, or every pair of a pattern).
 * The received data are verified after each. The result is meaningful on the initiator. */
void pa_p2p_measure_latency(pa_p2p *p2p, MPI_Comm agree, size_t bytes, int bidirectional,
                            const pa_timing *timing, pa_p2p_result *result);
void pa_p2p_measure_bandwidth(pa_p2p *p2p, MPI_Comm agree, size_t bytes, int window,
                              int bidirectional, const pa_timing *timing, pa_p2p_result *result);
void pa_p2p_result_free(pa_p2p_result *result);

/* Moves a result from world rank `from` to world rank 0 (both call it; others must not). */
void pa_p2p_result_to_root(pa_p2p_result *result, int from, int me);

/* "samples" (latency_ns; bandwidth_Bps when measured), "units", "sample_seconds", then
 * "derived": {direction, latency: {...}, bandwidth: {...}, verified, ...  (left open: the caller
 * may add keys, then closes it with pa_json_end_object). */
void pa_p2p_result_json(pa_json *json, const pa_p2p_result *result);

/* The parameters of distance and complement: a latency and a bandwidth message size, the window
 * and its byte bound. */
#define PA_P2P_PAIR_PARAMS(window_bytes_help)                                                  \
    {"latency_bytes", PA_SIZE, "8", "message size of the latency ping-pong", NULL, 0, 0x1p30}, \
        {"bandwidth_bytes",                                                                    \
         PA_SIZE,                                                                              \
         "1MiB",                                                                               \
         "message size of the bandwidth windows",                                              \
         NULL,                                                                                 \
         1,                                                                                    \
         0x1p30},                                                                              \
        {"window", PA_INT, "64", "nonblocking sends in flight per bandwidth iteration",        \
         NULL,     1,      4096},                                                              \
    {                                                                                          \
        "window_bytes", PA_SIZE, "4MiB", window_bytes_help, NULL, 1, 0x1p34                    \
    }
typedef struct {
    size_t latency_bytes, bandwidth_bytes;
    int window; /* pa_p2p_window of window and window_bytes */
} pa_p2p_pair;
void pa_p2p_pair_from_args(pa_p2p_pair *pair, const pa_args *args);
/* Latency, then bandwidth, of the pair `comm` (both ranks call it); `agree` as above. */
void pa_p2p_measure_pair(const pa_p2p_pair *pair, MPI_Comm comm, MPI_Comm agree,
                         const pa_timing *timing, pa_p2p_result *result);

#endif
